//! The OpenAI Responses APIs: `openai-responses` (OpenAI and compatible gateways),
//! `azure-openai-responses` (Azure OpenAI) and `openai-codex-responses` (the ChatGPT Codex
//! backend), as pi's TypeScript providers drive them.
//!
//! All three send the conversation as Responses `input` items and read the same
//! `response.*` event stream; reasoning comes back as a reasoning item whose JSON (with its
//! `encrypted_content`) is kept as the thinking block's signature and replayed next turn.

pub mod azure;
pub mod codex;
pub mod codex_ws;
mod codex_ws_run;
mod decode;
pub mod request;

use bytes::Bytes;
use futures_core::Stream;
use tokio_util::sync::CancellationToken;

use super::cloudflare;
use super::common::{self, base_options, join_url, missing_key, resolve_api_key};
use super::sampling::WithSampling;
use crate::api_provider::ApiProvider;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{ErrorStyle, HttpRequest, RetryPolicy};
use crate::models::clamp_thinking_level;
use crate::sse::{self, StreamControl};
use crate::types::{
    CacheRetention, Context, Message, Model, SimpleStreamOptions, StreamOptions, ThinkingLevel, api,
};

pub use azure::AzureOpenAiResponses;
pub use codex::OpenAiCodexResponses;
pub use decode::{Decoder, Flavor};

const MISSING_OPENAI_KEY: &str = "OpenAI API key is required. Set OPENAI_API_KEY environment variable or pass it as an argument.";

/// `openai-responses`: the OpenAI Responses API.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiResponses;

impl ApiProvider for OpenAiResponses {
    fn api(&self) -> &str {
        api::OPENAI_RESPONSES
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let api_key = resolve_api_key(model, &options).or_else(|| env_var("OPENAI_API_KEY"));
        let chatgpt = api_key
            .as_deref()
            .is_some_and(|key| chatgpt_sign_in(model, key));
        let request = match api_key {
            Some(key) => build_request(model, context, &options, &key),
            None => Err(MISSING_OPENAI_KEY.to_owned()),
        };
        let tier = service_tier(&options);
        // pi 1.6.0 names the provider before a status error's text.
        let named = match model.provider.as_str() {
            "openai" => "OpenAI",
            other => other,
        };
        let events = sse::run(
            model.clone(),
            request,
            RetryPolicy::from_options(&options),
            StreamControl::from_options(&options).with_error_prefix(format!("{named} API error")),
            ErrorStyle::OpenAi,
            Decoder::new(model.clone(), Flavor::OpenAi, tier)
                .with_provider_thinking_level(configuration_effort(model, &options, chatgpt)),
        );
        AssistantMessageEventStream::new(futures_util::StreamExt::map(events, |mut event| {
            with_usage_limit_hint(&mut event);
            event
        }))
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        match simple_options(model, context, &options) {
            Some(base) => self.stream(model, context, base),
            None => missing_key(model),
        }
    }
}

const CHATGPT_USAGE_URL: &str = "https://chatgpt.com/settings/usage";
const CHATGPT_WORKSPACE_LIMIT_HINT: &str = "You've reached your ChatGPT workspace's usage limit. Ask your workspace admin to increase it at admin.openai.com \u{2192} Workspace \u{2192} Usage limits.";

/// A ChatGPT subscription's spent usage says where to look (pi-ai 1.6): the user's own
/// usage page, or, for a Business workspace member, the workspace admin.
fn with_usage_limit_hint(event: &mut crate::types::AssistantMessageEvent) {
    let crate::types::AssistantMessageEvent::Error { error, .. } = event else {
        return;
    };
    let Some(text) = error.error_message.as_deref() else {
        return;
    };
    let hint = if text.contains("subscription_sharing_usage_limit_exceeded") {
        format!("\nCheck your ChatGPT usage: {CHATGPT_USAGE_URL}")
    } else if text.contains("subscription_sharing_workplace_individual_usage_limit_exceeded") {
        format!("\n{CHATGPT_WORKSPACE_LIMIT_HINT}")
    } else {
        return;
    };
    let mut message = (**error).clone();
    message.error_message = Some(format!("{text}{hint}"));
    *error = std::sync::Arc::new(message);
}

/// A non-empty environment variable.
pub(crate) fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The options `stream_simple` passes on: the base options with the key resolved and the
/// reasoning level clamped to the model (`off` meaning no effort); `None` without a key.
pub(crate) fn simple_options(
    model: &Model,
    context: &Context,
    options: &SimpleStreamOptions,
) -> Option<StreamOptions> {
    let key = resolve_api_key(model, &options.stream)?;
    let mut base = base_options(model, context, options);
    base.api_key = Some(key);
    base.reasoning_effort = options
        .reasoning
        .map(|level| clamp_thinking_level(model, level))
        .filter(|level| *level != ThinkingLevel::Off);
    Some(base)
}

/// The requested service tier, if any.
pub(crate) fn service_tier(options: &StreamOptions) -> Option<String> {
    options
        .openai_responses
        .as_ref()
        .and_then(|o| o.service_tier.clone())
}

/// The tools' `strict` field: `false` where the model's compat (else `default`) says strict
/// mode is supported, absent otherwise (pi-ai 1.6's `supportsStrictMode`).
pub(crate) fn strict_field(model: &Model, default: bool) -> Option<Option<bool>> {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_strict_mode)
        .unwrap_or(default)
        .then_some(Some(false))
}

/// Whether the request goes to OpenAI with a Sign in with ChatGPT token (not an `sk-` key):
/// that endpoint takes no cache retention, output cap or temperature (pi-ai 1.6).
/// The effort this request sends as a configuration update (not with Sign in with
/// ChatGPT, pi-ai 1.3).
fn configuration_effort(model: &Model, options: &StreamOptions, chatgpt: bool) -> Option<String> {
    let level = options
        .reasoning_effort
        .filter(|level| *level != crate::types::ThinkingLevel::Off);
    request::configuration_effort(model, level, false).filter(|_| !chatgpt)
}

fn chatgpt_sign_in(model: &Model, api_key: &str) -> bool {
    model.provider == "openai"
        && model.base_url == "https://api.openai.com/v1"
        && !api_key.is_empty()
        && !api_key.starts_with("sk-")
}

/// The `openai-responses` body for `messages` (the conversation prepared for this API);
/// `chatgpt`: see [`chatgpt_sign_in`].
fn build_body<'a>(
    model: &'a Model,
    context: &'a Context,
    messages: &'a [Message],
    options: &'a StreamOptions,
    chatgpt: bool,
) -> request::Body<'a> {
    let retention = CacheRetention::resolve(options.cache_retention, options.env.as_deref());
    let long_retention = model
        .compat
        .as_ref()
        .and_then(|c| c.supports_long_cache_retention)
        .unwrap_or(true);
    // GPT-5.6+ ask for long caching with `prompt_cache_options` (pi 0.85.1).
    let explicit_cache = model
        .compat
        .as_ref()
        .and_then(|c| c.supports_explicit_prompt_cache_mode)
        .unwrap_or(false);
    let cache_options = match retention {
        _ if !explicit_cache => None,
        CacheRetention::None => Some(serde_json::json!({"mode": "explicit"})),
        CacheRetention::Long if long_retention => Some(serde_json::json!({"ttl": "30m"})),
        _ => None,
    };
    let extra = options.openai_responses.as_ref();
    let session = options
        .session_id
        .as_deref()
        .filter(|_| retention != CacheRetention::None);
    let (mut reasoning, include) = request::reasoning_param(
        model,
        options.reasoning_effort,
        extra.and_then(|o| o.reasoning_summary.as_deref()),
        model.provider != "github-copilot",
    );
    let configuration = configuration_effort(model, options, chatgpt);
    if let (Some(_), Some(reasoning)) = (&configuration, reasoning.as_mut())
        && options.reasoning_effort.is_some()
    {
        reasoning.effort = request::CONFIGURATION_UPDATE_REQUEST_EFFORT.to_owned();
    }
    request::Body {
        model: &model.id,
        input: request::convert_context(model, context, messages, configuration.as_deref()),
        stream: true,
        // pi-ai 1.6: `compat.promptCacheKeyMode: "disabled"` never sends the key.
        prompt_cache_key: session
            .filter(|_| {
                model
                    .compat
                    .as_ref()
                    .and_then(|c| c.prompt_cache_key_mode.as_deref())
                    != Some("disabled")
            })
            .map(common::clamp_prompt_cache_key),
        prompt_cache_retention: (retention == CacheRetention::Long
            && long_retention
            && !explicit_cache
            && !chatgpt)
            .then_some("24h"),
        prompt_cache_options: cache_options.filter(|_| !chatgpt),
        store: Some(false),
        max_output_tokens: options
            .max_tokens
            .filter(|m| *m > 0 && !chatgpt && accepts_max_output_tokens(model))
            .map(|m| m.max(request::MIN_OUTPUT_TOKENS)),
        temperature: options.temperature.filter(|_| !chatgpt),
        service_tier: extra.and_then(|o| o.service_tier.as_deref()),
        tools: (!context.tools.is_empty())
            .then(|| request::convert_tools(&context.tools, strict_field(model, false))),
        tool_choice: options.tool_choice.as_ref().map(request::tool_choice),
        reasoning,
        // xAI replays encrypted reasoning whatever the effort (pi 0.84.3).
        include: (include || (model.reasoning && model.provider == "xai"))
            .then_some(request::INCLUDE_ENCRYPTED_REASONING),
    }
}

/// Builds the `openai-responses` request: URL, headers (SDK defaults, the model's, Copilot's,
/// session affinity, then the caller's) and body.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, String> {
    let retention = CacheRetention::resolve(options.cache_retention, options.env.as_deref());
    // pi 1.6's `compat.sessionAffinityFormat` (its `sendSessionIdHeader` is gone):
    // `openrouter` by default for OpenRouter, else `openai`.
    let is_openrouter = model.provider == "openrouter" || model.base_url.contains("openrouter.ai");
    let affinity = model
        .compat
        .as_ref()
        .and_then(|c| c.session_affinity_format.as_deref())
        .unwrap_or(if is_openrouter {
            "openrouter"
        } else {
            "openai"
        });
    let session = options
        .session_id
        .as_deref()
        .filter(|_| retention != CacheRetention::None);
    let mut frame = common::frame_of(context);
    let messages = request::prepare_placing(
        model,
        context,
        &mut frame,
        request::OPENAI_TOOL_CALL_PROVIDERS,
    );
    let parts = (
        model.clone(),
        frame,
        messages,
        (options.clone(), chatgpt_sign_in(model, api_key)),
    );
    let body = common::written_body(model, options, parts, |parts, out| {
        let (model, context, messages, (options, chatgpt)) = parts;
        let body = build_body(model, context, messages, options, *chatgpt);
        // pi-ai 1.6 lays the model's sampling fields over the OpenAI body (not Codex's).
        serde_json::to_writer(out, &WithSampling::new(&body, model, options))
    })?;

    let base_url = cloudflare::request_base_url(model, options)?;
    let mut request = HttpRequest {
        url: join_url(&base_url, "responses"),
        headers: vec![
            ("authorization".into(), format!("Bearer {api_key}")),
            ("content-type".into(), "application/json".into()),
            ("accept".into(), "application/json".into()),
        ],
        body,
    };
    crate::identity::apply_identity(&mut request, model);
    request.apply_overrides(model.headers.iter().flatten());
    crate::identity::apply_opencode_session(&mut request, model, options.session_id.as_deref());
    if model.provider == "github-copilot" {
        for (name, value) in super::copilot::copilot_headers(&context.messages) {
            request.set_header(name, value);
        }
    }
    if let Some(session) = session.filter(|s| !s.is_empty()) {
        // OpenRouter's own header; OpenAI's pair (`openai-nosession`: no `session-id`).
        if affinity == "openrouter" {
            request.set_header("x-session-id", session);
        } else {
            if affinity == "openai" {
                request.set_header("session-id", session);
            }
            request.set_header("x-client-request-id", session);
        }
    }
    request.apply_option_headers(options);
    cloudflare::apply_gateway_auth(&mut request, model, options, api_key);
    Ok(request)
}

/// Decodes a recorded Responses SSE body (replay tests and benchmarks), with the client
/// behaviour of the model's API.
pub fn decode_sse_bytes<S, E>(
    model: &Model,
    bytes: S,
    cancel: CancellationToken,
) -> AssistantMessageEventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    let flavor = match model.api.as_str() {
        api::OPENAI_CODEX_RESPONSES => Flavor::Codex,
        api::AZURE_OPENAI_RESPONSES => Flavor::Azure,
        _ => Flavor::OpenAi,
    };
    sse::replay(
        model,
        bytes,
        cancel,
        Decoder::new(model.clone(), flavor, None),
    )
}

/// Whether the model's server takes `max_output_tokens` (`compat.supportsMaxOutputTokens`).
pub(crate) fn accepts_max_output_tokens(model: &Model) -> bool {
    model
        .compat
        .as_ref()
        .and_then(|c| c.supports_max_output_tokens)
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, ToolResultMessage, UserMessage};

    #[test]
    fn copilot_initiator_and_vision() {
        let user = Message::User(UserMessage::text("hi"));
        assert_eq!(
            super::super::copilot::copilot_headers(std::slice::from_ref(&user))[0],
            ("X-Initiator", "user")
        );
        let tool = Message::ToolResult(
            ToolResultMessage {
                content: vec![crate::types::InputBlock::Image(
                    crate::types::ImageContent::new("aGk=", "image/png"),
                )]
                .into(),
                ..Default::default()
            }
            .into(),
        );
        let headers = super::super::copilot::copilot_headers(&[user, tool]);
        assert_eq!(headers[0], ("X-Initiator", "agent"));
        assert_eq!(headers[2], ("Copilot-Vision-Request", "true"));
        let assistant = Message::Assistant(AssistantMessage::empty("a", "b", "c").into());
        assert_eq!(
            super::super::copilot::copilot_headers(&[assistant])[0],
            ("X-Initiator", "agent")
        );
    }
}
