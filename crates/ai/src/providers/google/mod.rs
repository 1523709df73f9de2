//! Google's Gemini APIs: `google-generative-ai` (the Gemini API), `google-vertex` (Gemini on
//! Vertex AI) and `google-gemini-cli` (Cloud Code Assist). One request shape
//! ([`shared`]), one SSE decoder (`streamGenerateContent?alt=sse`); they differ in URL,
//! credentials and envelope.

pub mod auth;
mod decode;
pub mod gemini_cli;
pub mod shared;
pub mod vertex;

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use bytes::Bytes;
use futures_core::Stream;
use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::common::{base_options, frame_of, missing_key, resolve_api_key, written_body};
use crate::api_provider::ApiProvider;
use crate::assembler::Assembler;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{self, ErrorStyle, HttpRequest, RetryPolicy};
use crate::models::clamp_thinking_level;
use crate::sse::{self, StreamControl};
use crate::types::{
    AssistantMessage, AssistantMessageEvent, Context, Message, Model, SimpleStreamOptions,
    StreamOptions, ThinkingBudgets, ThinkingLevel, api,
};

pub use decode::{Decoder, EMPTY_RESPONSE, Envelope};
use shared::{
    Content, GenerationConfig, GoogleThinking, Part, SchemaForm, ToolConfig, ToolDeclarations,
};

/// The Gemini API's base URL (with its API version).
pub const DEFAULT_GEMINI_BASE_URL: &str = "https://generativelanguage.googleapis.com/v1beta";
/// Retries of a Cloud Code Assist stream that carried no content.
const MAX_EMPTY_STREAM_RETRIES: u32 = 2;
/// Cloud Code Assist (`google-gemini-cli`, gone from pi 1.6) keeps the request retries its
/// own client made in the pi that had it; the other APIs make none unless asked.
const CLOUD_CODE_ASSIST_RETRIES: u32 = 2;
const EMPTY_STREAM_BASE_DELAY_MS: u64 = 500;

/// `google-generative-ai`: the Gemini API (`x-goog-api-key`, `GEMINI_API_KEY`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleGenerativeAi;

/// `google-vertex`: Gemini on Vertex AI (API key, access token or Application Default
/// Credentials; see [`vertex`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleVertex;

/// `google-gemini-cli`: Gemini through the Cloud Code Assist endpoint (see [`gemini_cli`]).
#[derive(Debug, Clone, Copy, Default)]
pub struct GoogleGeminiCli;

/// The Gemini API / Vertex AI request body, keys in the order the Gen AI SDK sends them.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Body<'a> {
    pub contents: Vec<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub system_instruction: Option<Content<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<ToolDeclarations<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_config: Option<ToolConfig>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub generation_config: Option<GenerationConfig>,
}

/// Which API a request is for (they map thinking slightly differently).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Gemini,
    Vertex,
}

/// Builds the Gemini API / Vertex body for `messages` (the transformed conversation).
fn build_body<'a>(
    model: &Model,
    context: &'a Context,
    messages: &'a [Message],
    options: &StreamOptions,
    thinking: Option<&GoogleThinking>,
) -> Body<'a> {
    let strict_mode = shared::supports_strict_tools(&model.id);
    let tools = shared::convert_tools(&context.tools, SchemaForm::JsonSchema, strict_mode);
    let tool_config = tools.as_ref().and_then(|_| {
        shared::tool_config_for(&context.tools, options.tool_choice.as_ref(), strict_mode)
    });
    Body {
        contents: shared::convert_messages(model, messages),
        system_instruction: context
            .system_prompt
            .as_deref()
            .filter(|s| !s.is_empty())
            .map(|prompt| Content {
                role: Some("user"),
                parts: vec![Part {
                    text: Some(prompt.into()),
                    ..Part::default()
                }],
            }),
        tools,
        tool_config,
        generation_config: shared::generation_config(
            model,
            options.temperature,
            options.max_tokens,
            thinking,
            true,
        ),
    }
}

fn encoded_body(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    thinking: Option<&GoogleThinking>,
) -> Result<crate::request_body::RequestBody, String> {
    let parts = (
        model.clone(),
        frame_of(context),
        shared::prepare_messages(model, &context.messages),
        options.clone(),
        thinking.copied(),
    );
    written_body(model, options, parts, |parts, out| {
        let (model, context, messages, options, thinking) = parts;
        let body = build_body(model, context, messages, options, thinking.as_ref());
        serde_json::to_writer(out, &body)
    })
}

/// `{baseUrl}/models/{id}:streamGenerateContent?alt=sse`.
fn gemini_url(model: &Model) -> String {
    let base = match model.base_url.trim() {
        "" => DEFAULT_GEMINI_BASE_URL,
        base => base,
    };
    let id = &model.id;
    let path = if id.starts_with("models/") || id.starts_with("tunedModels/") {
        id.clone()
    } else {
        format!("models/{id}")
    };
    format!(
        "{}/{path}:streamGenerateContent?alt=sse",
        base.trim_end_matches('/')
    )
}

fn with_headers(
    model: &Model,
    options: &StreamOptions,
    url: String,
    auth: Vec<(String, String)>,
    body: crate::request_body::RequestBody,
) -> HttpRequest {
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    headers.extend(auth);
    let mut request = HttpRequest { url, headers, body };
    crate::identity::apply_identity(&mut request, model);
    request.apply_overrides(model.headers.iter().flatten());
    crate::identity::apply_opencode_session(&mut request, model, options.session_id.as_deref());
    request.apply_option_headers(options);
    request
}

/// Builds a Gemini API request: URL, `x-goog-api-key`, model and caller headers, body.
pub fn build_gemini_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    thinking: Option<&GoogleThinking>,
    api_key: &str,
) -> Result<HttpRequest, String> {
    let body = encoded_body(model, context, options, thinking)?;
    Ok(with_headers(
        model,
        options,
        gemini_url(model),
        vec![("x-goog-api-key".to_owned(), api_key.to_owned())],
        body,
    ))
}

/// Thinking for a reasoning level on the Gemini API or Vertex: the level is clamped to the
/// model's; models that take a thinking level (Gemini 3, Gemini 4+, Gemma 4) get the one
/// their `thinkingLevelMap` maps, older models a token budget.
fn simple_thinking(
    model: &Model,
    reasoning: Option<ThinkingLevel>,
    budgets: Option<&ThinkingBudgets>,
    flavor: Flavor,
) -> GoogleThinking {
    let Some(level) = reasoning.filter(|l| *l != ThinkingLevel::Off) else {
        return GoogleThinking::DISABLED;
    };
    let effort = match clamp_thinking_level(model, level) {
        ThinkingLevel::Off => ThinkingLevel::High,
        clamped => clamped.clamp_to_high(),
    };
    let gemini = flavor == Flavor::Gemini;
    if shared::uses_thinking_level(&model.id) {
        GoogleThinking {
            enabled: true,
            budget_tokens: None,
            level: Some(shared::mapped_thinking_level(model, effort)),
        }
    } else {
        GoogleThinking {
            enabled: true,
            budget_tokens: Some(shared::thinking_budget(&model.id, effort, budgets, gemini)),
            level: None,
        }
    }
}

fn failed(model: &Model, message: impl Into<String>) -> AssistantMessageEventStream {
    let mut error = AssistantMessage::empty(&model.api, &model.provider, &model.id);
    error.error_message = Some(message.into());
    AssistantMessageEventStream::failed(error)
}

/// Streams `model` with explicit Google thinking settings (the TypeScript
/// `GoogleOptions.thinking`); `None` leaves thinking to the model's default.
pub fn stream_with_thinking(
    model: &Model,
    context: &Context,
    options: StreamOptions,
    thinking: Option<GoogleThinking>,
) -> AssistantMessageEventStream {
    match model.api.as_str() {
        api::GOOGLE_VERTEX => stream_vertex(model, context, options, thinking),
        api::GOOGLE_GEMINI_CLI => stream_gemini_cli(model, context, options, thinking),
        _ => match resolve_api_key(model, &options) {
            None => missing_key(model),
            Some(key) => {
                let request =
                    build_gemini_request(model, context, &options, thinking.as_ref(), &key);
                run(
                    model.clone(),
                    Box::pin(std::future::ready(request)),
                    &options,
                    Envelope::Bare,
                )
            }
        },
    }
}

fn stream_vertex(
    model: &Model,
    context: &Context,
    options: StreamOptions,
    thinking: Option<GoogleThinking>,
) -> AssistantMessageEventStream {
    // The provider's scoped environment (auth.json `env`) first, as pi-ai 1.6 reads it.
    let scoped = options.env.clone();
    let env = move |name: &str| {
        scoped
            .as_deref()
            .and_then(|env| env.get(name))
            .filter(|v| !v.trim().is_empty())
            .cloned()
            .or_else(|| vertex::process_env(name))
    };
    let target = vertex::resolve(model, options.api_key.as_deref(), &env);
    let body = encoded_body(model, context, &options, thinking.as_ref());
    let prepare = {
        let model = model.clone();
        let options = options.clone();
        async move {
            let target = target?;
            let body = body?;
            let auth = auth::auth_headers(&target.credentials).await?;
            Ok(with_headers(&model, &options, target.url, auth, body))
        }
    };
    run(model.clone(), Box::pin(prepare), &options, Envelope::Bare)
}

fn stream_gemini_cli(
    model: &Model,
    context: &Context,
    options: StreamOptions,
    thinking: Option<GoogleThinking>,
) -> AssistantMessageEventStream {
    let credentials = match gemini_cli::parse_credentials(options.api_key.as_deref()) {
        Ok(credentials) => credentials,
        Err(message) => return failed(model, message),
    };
    let request =
        gemini_cli::build_request(model, context, &options, thinking.as_ref(), &credentials);
    run(
        model.clone(),
        Box::pin(std::future::ready(request)),
        &options,
        Envelope::CloudCodeAssist,
    )
}

impl ApiProvider for GoogleGenerativeAi {
    fn api(&self) -> &str {
        api::GOOGLE_GENERATIVE_AI
    }

    /// `reasoningEffort` (if set) turns thinking on at that level; otherwise the model decides.
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let thinking = options
            .reasoning_effort
            .map(|level| simple_thinking(model, Some(level), None, Flavor::Gemini));
        stream_with_thinking(model, context, options, thinking)
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        if resolve_api_key(model, &options.stream).is_none() {
            return missing_key(model);
        }
        let base = base_options(model, context, &options);
        let thinking = simple_thinking(
            model,
            options.reasoning,
            options.thinking_budgets.as_ref(),
            Flavor::Gemini,
        );
        stream_with_thinking(model, context, base, Some(thinking))
    }
}

impl ApiProvider for GoogleVertex {
    fn api(&self) -> &str {
        api::GOOGLE_VERTEX
    }

    /// `reasoningEffort` (if set) turns thinking on at that level; otherwise the model decides.
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let thinking = options
            .reasoning_effort
            .map(|level| simple_thinking(model, Some(level), None, Flavor::Vertex));
        stream_vertex(model, context, options, thinking)
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        let base = base_options(model, context, &options);
        let thinking = simple_thinking(
            model,
            options.reasoning,
            options.thinking_budgets.as_ref(),
            Flavor::Vertex,
        );
        stream_vertex(model, context, base, Some(thinking))
    }
}

impl ApiProvider for GoogleGeminiCli {
    fn api(&self) -> &str {
        api::GOOGLE_GEMINI_CLI
    }

    /// `reasoningEffort` (if set) turns thinking on at that level; otherwise the model decides.
    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let mut max_tokens = options.max_tokens;
        let thinking = options
            .reasoning_effort
            .map(|level| gemini_cli::simple_thinking(model, Some(level), None, &mut max_tokens));
        stream_gemini_cli(model, context, options, thinking)
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        if let Err(message) = gemini_cli::parse_credentials(options.stream.api_key.as_deref()) {
            return failed(model, message);
        }
        let mut base = base_options(model, context, &options);
        let thinking = gemini_cli::simple_thinking(
            model,
            options.reasoning,
            options.thinking_budgets.as_ref(),
            &mut base.max_tokens,
        );
        stream_gemini_cli(model, context, base, Some(thinking))
    }
}

type Prepare = Pin<Box<dyn Future<Output = Result<HttpRequest, String>> + Send>>;

/// Sends the prepared request and streams the response; Cloud Code Assist streams without
/// content are retried (after 0.5 s, then 1 s) before failing.
fn run(
    model: Model,
    prepare: Prepare,
    options: &StreamOptions,
    envelope: Envelope,
) -> AssistantMessageEventStream {
    let mut policy = RetryPolicy::from_options(options);
    if envelope == Envelope::CloudCodeAssist && options.max_retries.is_none() {
        policy.max_retries = CLOUD_CODE_ASSIST_RETRIES;
    }
    let control = StreamControl::from_options(options);
    AssistantMessageEventStream::new(async_stream::stream! {
        let prepared = tokio::select! {
            biased;
            _ = control.cancel.cancelled() => Err(None),
            request = prepare => request.map_err(Some),
        };
        let request = match prepared {
            Ok(request) => request,
            Err(None) => {
                yield Assembler::new(&model).fail(true, http::ABORTED_BEFORE_RESPONSE.to_owned());
                return;
            }
            Err(Some(message)) => {
                yield Assembler::new(&model).fail(false, message);
                return;
            }
        };
        let mut empty_retries = 0;
        loop {
            // The Anthropic style keeps the whole error body, from which the SDK texts are made.
            let response =
                match http::send(&request, policy, &control.cancel, ErrorStyle::Anthropic).await {
                    Ok(response) => {
                control.report_response(&response);
                response
            }
                    Err(failure) => {
                        let message = if failure.aborted {
                            failure.message
                        } else {
                            http_error_text(envelope, &failure.message)
                        };
                        yield Assembler::new(&model).fail(failure.aborted, message);
                        return;
                    }
                };
            let decoder = Decoder::new(model.clone(), envelope);
            let mut events = Box::pin(sse::decode(
                model.clone(),
                response.bytes_stream(),
                control.clone(),
                decoder,
            ));
            // Cloud Code Assist: `start` is held back until content arrives, so an empty
            // stream can be retried without a trace.
            let hold = envelope == Envelope::CloudCodeAssist;
            let mut held: Option<AssistantMessageEvent> = None;
            let mut retry = false;
            while let Some(event) = events.next().await {
                if hold && matches!(event, AssistantMessageEvent::Start { .. }) {
                    held = Some(event);
                    continue;
                }
                let empty = matches!(&event, AssistantMessageEvent::Error { error, .. }
                    if error.error_message.as_deref() == Some(EMPTY_RESPONSE));
                if empty && held.is_some() && empty_retries < MAX_EMPTY_STREAM_RETRIES {
                    retry = true;
                    break;
                }
                if let Some(start) = held.take() {
                    yield start;
                }
                yield event;
            }
            if !retry {
                return;
            }
            let delay = EMPTY_STREAM_BASE_DELAY_MS << empty_retries;
            empty_retries += 1;
            let cancelled = tokio::select! {
                biased;
                _ = control.cancel.cancelled() => true,
                _ = tokio::time::sleep(Duration::from_millis(delay)) => false,
            };
            if cancelled {
                yield Assembler::new(&model).fail(true, http::ABORTED.to_owned());
                return;
            }
        }
    })
}

/// The error text the TypeScript pi shows for an HTTP failure, from the `"<status> <body>"`
/// text of [`ErrorStyle::Anthropic`]: the Gen AI SDK's JSON of the error body for the Gemini
/// API and Vertex, `Cloud Code Assist API error (<status>): <message>` for Cloud Code Assist.
/// Transport failures (`Connection error.`, timeouts) pass through.
pub fn http_error_text(envelope: Envelope, message: &str) -> String {
    let (prefix, tail) = match message.find("). ") {
        Some(at) if message.starts_with("Server requested ") => message.split_at(at + 3),
        _ => ("", message),
    };
    let status = tail
        .get(..3)
        .filter(|_| tail.as_bytes().get(3) == Some(&b' '))
        .and_then(|code| code.parse::<u16>().ok());
    let (Some(status), Some(detail)) = (status, tail.get(4..)) else {
        return message.to_owned();
    };
    let body_text = if detail == "status code (no body)" {
        ""
    } else {
        detail
    };
    let json = serde_json::from_str::<Value>(body_text)
        .ok()
        .filter(Value::is_object);
    match envelope {
        Envelope::Bare => {
            let text = match json {
                Some(_) => body_text.to_owned(),
                None => {
                    let reason = reqwest::StatusCode::from_u16(status)
                        .ok()
                        .and_then(|s| s.canonical_reason())
                        .unwrap_or("");
                    serde_json::json!({"error": {"message": body_text, "code": status, "status": reason}})
                        .to_string()
                }
            };
            format!("{prefix}{text}")
        }
        Envelope::CloudCodeAssist => {
            let text = json
                .as_ref()
                .and_then(|v| v.pointer("/error/message"))
                .and_then(Value::as_str)
                .unwrap_or(body_text);
            if prefix.is_empty() {
                format!("Cloud Code Assist API error ({status}): {text}")
            } else {
                format!("{prefix}{text}")
            }
        }
    }
}

/// Decodes a recorded SSE body of these APIs (replay tests and benchmarks); chunks are
/// unwrapped from `response` when `model.api` is `google-gemini-cli`.
pub fn decode_sse_bytes<S, E>(
    model: &Model,
    bytes: S,
    cancel: CancellationToken,
) -> AssistantMessageEventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let envelope = if model.api == api::GOOGLE_GEMINI_CLI {
        Envelope::CloudCodeAssist
    } else {
        Envelope::Bare
    };
    sse::replay(model, bytes, cancel, Decoder::new(model.clone(), envelope))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_errors_read_like_the_typescript_pi() {
        let body = r#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED"}}"#;
        let style = format!("429 {body}");
        assert_eq!(http_error_text(Envelope::Bare, &style), body);
        assert_eq!(
            http_error_text(Envelope::CloudCodeAssist, &style),
            "Cloud Code Assist API error (429): Resource exhausted"
        );
        assert_eq!(
            http_error_text(Envelope::Bare, "502 Bad gateway"),
            r#"{"error":{"message":"Bad gateway","code":502,"status":"Bad Gateway"}}"#
        );
        assert_eq!(
            http_error_text(Envelope::Bare, "500 status code (no body)"),
            r#"{"error":{"message":"","code":500,"status":"Internal Server Error"}}"#
        );
        let capped = format!("Server requested 120s retry delay (max: 5s). 429 {body}");
        assert_eq!(
            http_error_text(Envelope::Bare, &capped),
            format!("Server requested 120s retry delay (max: 5s). {body}")
        );
        assert_eq!(
            http_error_text(Envelope::CloudCodeAssist, &capped),
            "Server requested 120s retry delay (max: 5s). Resource exhausted"
        );
        assert_eq!(
            http_error_text(Envelope::Bare, "Connection error."),
            "Connection error."
        );
        assert_eq!(
            http_error_text(Envelope::Bare, "Request timed out."),
            "Request timed out."
        );
    }
}
