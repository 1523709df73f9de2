//! `mistral-conversations`: Mistral's own chat completions API (`POST /v1/chat/completions`,
//! streamed), as pi's TypeScript provider drives it through the `@mistralai/mistralai` SDK.

mod decode;
pub mod ids;
pub mod request;

use bytes::Bytes;
use futures_core::Stream;
use tokio_util::sync::CancellationToken;

use super::common::{base_options, frame_of, join_url, missing_key, resolve_api_key, written_body};
use crate::api_provider::ApiProvider;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{ErrorStyle, HttpRequest, RetryPolicy};
use crate::models::clamp_thinking_level;
use crate::sse::{self, StreamControl};
use crate::types::{Context, Model, SimpleStreamOptions, StreamOptions, ThinkingLevel, api};

pub use decode::Decoder;

/// How long pi-ai 1.6's Mistral provider waits for the response headers when no timeout is
/// given (60 s); the stream after them is not timed.
const SDK_TIMEOUT_MS: u64 = 60_000;

/// `mistral-conversations`: Mistral's chat API.
#[derive(Debug, Clone, Copy, Default)]
pub struct MistralConversations;

impl ApiProvider for MistralConversations {
    fn api(&self) -> &str {
        api::MISTRAL_CONVERSATIONS
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let Some(api_key) = resolve_api_key(model, &options) else {
            return missing_key(model);
        };
        let request = build_request(model, context, &options, &api_key);
        let policy = retry_policy(&options);
        let waited = policy.timeout_ms;
        let events = sse::run(
            model.clone(),
            request,
            policy,
            StreamControl::from_options(&options),
            ErrorStyle::Mistral,
            Decoder::new(model.clone()),
        );
        AssistantMessageEventStream::new(futures_util::StreamExt::map(events, move |mut event| {
            name_header_timeout(&mut event, waited);
            event
        }))
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

/// A request whose headers did not come in time fails as pi-ai 1.6 words it:
/// `Mistral response headers timed out after <ms>ms`.
fn name_header_timeout(event: &mut crate::types::AssistantMessageEvent, waited_ms: u64) {
    if let crate::types::AssistantMessageEvent::Error { error, .. } = event
        && error.error_message.as_deref() == Some(crate::http::TIMED_OUT)
    {
        std::sync::Arc::make_mut(error).error_message = Some(format!(
            "Mistral response headers timed out after {waited_ms}ms"
        ));
    }
}

/// pi runs the Mistral SDK with retries off (the common default) and its 60-second timeout;
/// explicit `max_retries` / `timeout_ms` options still apply.
fn retry_policy(options: &StreamOptions) -> RetryPolicy {
    let mut policy = RetryPolicy::from_options(options);
    if options.timeout_ms.is_none() {
        policy.timeout_ms = SDK_TIMEOUT_MS;
    }
    policy
}

/// Builds the HTTP request: `{baseUrl}/v1/chat/completions`, bearer auth, the model's and the
/// caller's headers, and `x-affinity` (Mistral's KV-cache routing) from the session id
/// unless caching is off.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, String> {
    let parts = (
        model.clone(),
        frame_of(context),
        request::prepare_messages(model, context),
        options.clone(),
    );
    let body = written_body(model, options, parts, |parts, out| {
        let (model, context, messages, options) = parts;
        serde_json::to_writer(out, &request::build_body(model, context, messages, options))
    })?;

    let headers: Vec<(String, String)> = vec![
        ("content-type".into(), "application/json".into()),
        ("accept".into(), "text/event-stream".into()),
        ("authorization".into(), format!("Bearer {api_key}")),
    ];
    let mut request = HttpRequest {
        url: join_url(&model.base_url, "v1/chat/completions"),
        headers,
        body,
    };
    crate::identity::apply_identity(&mut request, model);
    request.apply_overrides(model.headers.iter().flatten());
    crate::identity::apply_opencode_session(&mut request, model, options.session_id.as_deref());
    request.apply_option_headers(options);
    let has_affinity = model
        .headers
        .iter()
        .flatten()
        .chain(&options.headers)
        .any(|(name, _)| name.eq_ignore_ascii_case("x-affinity"));
    let caching = options.cache_retention != Some(crate::types::CacheRetention::None);
    if !has_affinity
        && caching
        && let Some(session) = options.session_id.as_deref().filter(|s| !s.is_empty())
    {
        request.set_header("x-affinity", session);
    }
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
