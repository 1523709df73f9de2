//! `openai-completions`: OpenAI Chat Completions and every server that speaks it (Ollama,
//! vLLM, LM Studio, llama.cpp, OpenRouter, Groq, Cerebras, xAI, DeepSeek, Mistral, …).

pub mod compat;
mod decode;
mod reasoning_details;
pub mod request;
mod thinking;

use bytes::Bytes;
use futures_core::Stream;
use tokio_util::sync::CancellationToken;

use super::cloudflare;
use super::common::{base_options, frame_of, join_url, missing_key, resolve_api_key, written_body};
use super::openai_responses::azure;
use crate::api_provider::ApiProvider;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{ErrorStyle, HttpRequest, RetryPolicy};
use crate::models::clamp_thinking_level;
use crate::sse::{self, StreamControl};
use crate::types::{
    CacheRetention, Context, Model, SimpleStreamOptions, StreamOptions, ThinkingLevel, api,
};

pub use decode::Decoder;

/// The `openai-completions` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiCompletions;

impl ApiProvider for OpenAiCompletions {
    fn api(&self) -> &str {
        api::OPENAI_COMPLETIONS
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        // pi-ai 1.6's `getClientApiKey`: an `authorization` (or Cloudflare gateway) header
        // authenticates without a key, and replaces the placeholder bearer token.
        let header_auth = || {
            options.headers.iter().any(|(name, value)| {
                (name.eq_ignore_ascii_case("authorization")
                    || name.eq_ignore_ascii_case("cf-aig-authorization"))
                    && !value.trim().is_empty()
            })
        };
        let Some(api_key) =
            resolve_api_key(model, &options).or_else(|| header_auth().then(|| "unused".to_owned()))
        else {
            return missing_key(model);
        };
        let request = build_request(model, context, &options, &api_key);
        sse::run(
            model.clone(),
            request,
            RetryPolicy::from_options(&options),
            StreamControl::from_options(&options),
            ErrorStyle::OpenAi,
            Decoder::new(model.clone()),
        )
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        let mut base = base_options(model, context, &options);
        base.reasoning_effort = options
            .reasoning
            .map(|level| clamp_thinking_level(model, level))
            .filter(|level| *level != ThinkingLevel::Off);
        self.stream(model, context, base)
    }
}

/// The base URL of a request and the model its body names. Azure's Foundry Chat Completions
/// deployments (pi 1.6's `azure` provider, e.g. `azure/deepseek-v4-pro`) take the Azure
/// endpoint (`AZURE_OPENAI_BASE_URL`, `AZURE_OPENAI_RESOURCE_NAME`, or the options) and send the
/// deployment (`AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, or the options) as the model; Cloudflare's
/// account placeholders are filled; others go as they are.
fn endpoint(model: &Model, options: &StreamOptions) -> Result<(String, Model), String> {
    if model.provider != "azure" {
        return Ok((cloudflare::request_base_url(model, options)?, model.clone()));
    }
    let azure_options = options.openai_responses.as_ref();
    // The key's scoped env (auth.json `env`) comes before the process environment.
    let env = |name: &str| crate::env_keys::provider_env(name, options.env.as_deref());
    let (base_url, _) = azure::resolve_config(model, azure_options, &env)?;
    let mut body_model = model.clone();
    body_model.id = azure::deployment_name(model, azure_options, &env);
    Ok((base_url, body_model))
}

/// Builds the HTTP request: URL, headers (model, session affinity, then option overrides) and body.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, String> {
    let compat = compat::resolve(model);
    let retention = CacheRetention::resolve(options.cache_retention, options.env.as_deref());
    let (base_url, body_model) = endpoint(model, options)?;
    let mut frame = frame_of(context);
    let messages = request::prepare_placing(model, context, &mut frame);
    let parts = (
        body_model,
        frame,
        messages,
        options.clone(),
        compat.clone(),
        retention,
    );
    let body = written_body(model, options, parts, |parts, out| {
        let (model, context, messages, options, compat, retention) = parts;
        let body = request::build_body(model, context, messages, options, compat, *retention);
        serde_json::to_writer(out, &body)
    })?;

    let headers: Vec<(String, String)> = vec![
        ("authorization".into(), format!("Bearer {api_key}")),
        ("content-type".into(), "application/json".into()),
        ("accept".into(), "application/json".into()),
    ];
    let mut request = HttpRequest {
        url: join_url(&base_url, "chat/completions"),
        headers,
        body,
    };
    crate::identity::apply_identity(&mut request, model);
    request.apply_overrides(model.headers.iter().flatten());
    if model.provider == "github-copilot" {
        for (name, value) in super::copilot::copilot_headers(&context.messages) {
            request.set_header(name, value);
        }
    }
    crate::identity::apply_opencode_session(&mut request, model, options.session_id.as_deref());
    if compat.send_session_affinity_headers
        && retention != CacheRetention::None
        && let Some(session) = options.session_id.as_deref()
    {
        if compat.session_affinity_format == "openrouter" {
            request.set_header("x-session-id", session);
        } else {
            if compat.session_affinity_format == "openai" {
                request.set_header("session_id", session);
            }
            request.set_header("x-client-request-id", session);
            request.set_header("x-session-affinity", session);
        }
    }
    request.apply_option_headers(options);
    cloudflare::apply_gateway_auth(&mut request, model, options, api_key);
    Ok(request)
}

/// Decodes a recorded SSE body of this API (replay tests and benchmarks).
pub fn decode_sse_bytes<S, E>(
    model: &Model,
    bytes: S,
    cancel: CancellationToken,
) -> AssistantMessageEventStream
where
    S: Stream<Item = Result<Bytes, E>> + Send + 'static,
    E: std::error::Error + Send + Sync + 'static,
{
    sse::replay(model, bytes, cancel, Decoder::new(model.clone()))
}
