//! `anthropic-messages`: Anthropic's Messages API (and compatible endpoints).

mod decode;
pub mod federation;
pub mod request;
mod strict_retry;
mod thinking;
mod thread_stream;
pub mod threads;
mod tools;

use bytes::Bytes;
use futures_core::Stream;
use tokio_util::sync::CancellationToken;

use super::cloudflare;
use super::common::{base_options, frame_of, join_url, missing_key, resolve_api_key, written_body};
use super::strict_limits::{self, Transport};
use crate::api_provider::ApiProvider;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{HttpRequest, RetryPolicy};
use crate::sse::{self, StreamControl};
use crate::types::{
    AnthropicThinking, CacheRetention, Context, Model, SimpleStreamOptions, StreamOptions,
    ThinkingBudgets, ThinkingLevel, api,
};

pub use decode::Decoder;

const API_VERSION: &str = "2023-06-01";
const FINE_GRAINED_TOOL_STREAMING_BETA: &str = "fine-grained-tool-streaming-2025-05-14";
const INTERLEAVED_THINKING_BETA: &str = "interleaved-thinking-2025-05-14";
const SERVER_SIDE_FALLBACK_BETA: &str = "server-side-fallback-2026-07-01";
const MID_CONVERSATION_OUTPUT_CONFIG_BETA: &str = "mid-conversation-output-config-2026-07-01";
const THINKING_BINDING_CONTROLS_BETA: &str = "thinking-binding-controls-2026-08-01";
/// Tools declared inline in the conversation (`compat.supportsMidConvoToolChanges`).
const INLINE_TOOLS_BETA: &str = "inline-tools-2026-09-15";
/// The Claude Code version OAuth requests name in their user agent (pi-ai 1.6's
/// `claudeCodeVersion`): subscription tokens are only served to current Claude Code clients.
const CLAUDE_CODE_VERSION: &str = "2.1.322";

/// The `anthropic-messages` provider.
#[derive(Debug, Clone, Copy, Default)]
pub struct AnthropicMessages;

/// Whether a key is a Claude subscription OAuth token (sent as a bearer token).
pub fn is_oauth_token(key: &str) -> bool {
    key.contains("sk-ant-oat")
}

impl ApiProvider for AnthropicMessages {
    fn api(&self) -> &str {
        api::ANTHROPIC_MESSAGES
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        if let Some(federation) = federated(model, &options) {
            return federated_stream(self, model, context, options, federation);
        }
        // Without a key, credentials in the headers (`ANTHROPIC_AUTH_TOKEN`'s bearer token)
        // authenticate alone, as in pi-ai 1.6: no key from the environment is added.
        let keyless = options.api_key.as_deref().is_none_or(str::is_empty)
            && crate::env_keys::has_request_auth(None, &options.headers);
        let api_key = match resolve_api_key(model, &options) {
            _ if keyless => String::new(),
            Some(key) => key,
            None => return missing_key(model),
        };
        let oauth = is_oauth_token(&api_key);
        let tool_names = context.tools.iter().map(|t| t.name.clone()).collect();
        let decoder = Decoder::new(model.clone(), oauth, tool_names)
            .with_provider_thinking_level(request::mid_convo_effort(model, &options));
        let policy = RetryPolicy::from_options(&options);
        let control = StreamControl::from_options(&options);
        let parts = Parts::new(model, context, options, api_key);
        let disabled = strict_limits::exceeded(Transport::Anthropic, parts.session());
        // A request with tools that only prefer strictness may be refused for Claude's
        // strict-tool limits; it is then sent once more with them plain (pi-ai 1.2).
        let may_retry = !disabled && request::has_preferred_strict_tools(model, context);
        let session_id = parts.session().map(str::to_owned);
        if let Some(session) = thread_session(model, &parts.options) {
            let threaded = parts.threaded(&session, disabled).map(|mut threaded| {
                if may_retry {
                    let parts = parts.clone();
                    threaded.strict_retry = Some(strict_retry::Retry::new(
                        Transport::Anthropic,
                        session_id,
                        Box::new(move || parts.threaded(&session, true)),
                    ));
                }
                threaded
            });
            return match threaded {
                Ok(threaded) => thread_stream::run(threaded, policy, control, decoder),
                Err(message) => {
                    let model = model.clone();
                    AssistantMessageEventStream::new(async_stream::stream! {
                        yield crate::assembler::Assembler::new(&model).fail(false, message);
                    })
                }
            };
        }
        let first = parts.build(disabled);
        let retry = may_retry.then(|| {
            strict_retry::Retry::new(
                Transport::Anthropic,
                session_id,
                Box::new(move || parts.build(true)),
            )
        });
        strict_retry::run(model.clone(), first, retry, policy, control, decoder)
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        let mut base = base_options(model, context, &options);
        base.anthropic_thinking = Some(simple_thinking(
            model,
            context,
            &options,
            &mut base.max_tokens,
        ));
        self.stream(model, context, base)
    }
}

/// The workload identity federation that authenticates a request to Anthropic itself
/// when it has no key or credential header (pi-ai 1.6's `getAnthropicFederation`).
fn federated(model: &Model, options: &StreamOptions) -> Option<federation::Federation> {
    let has_auth = crate::env_keys::has_request_auth(options.api_key.as_deref(), &options.headers);
    (model.provider == "anthropic" && !has_auth)
        .then(|| federation::Federation::from_env(options.env.as_deref()))
        .flatten()
}

/// Exchanges the identity token (or takes the kept access token), then streams with it as
/// the bearer credential; a 401 makes the next request exchange again.
fn federated_stream(
    provider: &AnthropicMessages,
    model: &Model,
    context: &Context,
    mut options: StreamOptions,
    federation: federation::Federation,
) -> AssistantMessageEventStream {
    let (provider, model, context) = (*provider, model.clone(), context.clone());
    AssistantMessageEventStream::new(async_stream::stream! {
        let token = match federation::bearer_token(&federation, &model.base_url).await {
            Ok(token) => token,
            Err(message) => {
                yield crate::assembler::Assembler::new(&model).fail(false, message);
                return;
            }
        };
        options
            .headers
            .insert("Authorization".into(), format!("Bearer {token}"));
        let mut events = provider.stream(&model, &context, options);
        while let Some(event) = futures_util::StreamExt::next(&mut events).await {
            if let crate::types::AssistantMessageEvent::Error { error, .. } = &event
                && error
                    .error_message
                    .as_deref()
                    .is_some_and(|m| m.starts_with("401"))
            {
                federation::invalidate(&federation, &model.base_url);
            }
            yield event;
        }
    })
}

/// Maps a reasoning level to Anthropic thinking: adaptive effort for Opus/Sonnet 4.6+, else
/// a token budget added on top of `max_tokens` (capped at the model's limit).
fn simple_thinking(
    model: &Model,
    context: &Context,
    options: &SimpleStreamOptions,
    max_tokens: &mut Option<u64>,
) -> AnthropicThinking {
    let Some(level) = options.reasoning.filter(|l| *l != ThinkingLevel::Off) else {
        return AnthropicThinking {
            enabled: false,
            ..Default::default()
        };
    };
    if request::supports_adaptive_thinking(model) {
        let effort = match model.thinking_level_value(level) {
            Some(Some(mapped)) => mapped.to_owned(),
            _ => match level {
                ThinkingLevel::Minimal | ThinkingLevel::Low => "low",
                ThinkingLevel::Medium => "medium",
                _ => "high",
            }
            .to_owned(),
        };
        return AnthropicThinking {
            enabled: true,
            effort: Some(effort),
            ..Default::default()
        };
    }
    let budgets = options.thinking_budgets.unwrap_or_default();
    let (adjusted, budget) =
        adjust_max_tokens_for_thinking(max_tokens.unwrap_or(0), model.max_tokens, level, &budgets);
    // Fitted into the window again, the budget leaving 1024 tokens to answer (pi-ai 1.6).
    let adjusted = super::context_fit::clamp_max_tokens_to_context(model, context, adjusted);
    let budget = budget.min(adjusted.saturating_sub(1024));
    *max_tokens = Some(adjusted);
    AnthropicThinking {
        enabled: true,
        budget_tokens: Some(budget),
        ..Default::default()
    }
}

/// `(maxTokens, thinkingBudget)`: the budget is added to the output allowance, and shrunk
/// when the model's limit leaves too little room for an answer (at least 1024 tokens).
pub fn adjust_max_tokens_for_thinking(
    base_max_tokens: u64,
    model_max_tokens: u64,
    level: ThinkingLevel,
    budgets: &ThinkingBudgets,
) -> (u64, u64) {
    const MIN_OUTPUT_TOKENS: u64 = 1024;
    let mut budget = budgets.budget_for(level);
    let max_tokens = (base_max_tokens + budget).min(model_max_tokens);
    if max_tokens <= budget {
        budget = max_tokens.saturating_sub(MIN_OUTPUT_TOKENS);
    }
    (max_tokens, budget)
}

/// The session whose message thread the request belongs to: threads are on for the model,
/// the request has a session id and caching is not off.
fn thread_session(model: &Model, options: &StreamOptions) -> Option<String> {
    let session = options.session_id.as_deref().filter(|s| !s.is_empty())?;
    (threads::supported(model)
        && CacheRetention::resolve(options.cache_retention, options.env.as_deref())
            != CacheRetention::None)
        .then(|| session.to_owned())
}

/// What a request is built from, kept so that it can be built again (non-strict) after
/// Claude refused its strict tools: the transcript is prepared once and shared.
#[derive(Clone)]
struct Parts {
    model: Model,
    frame: Context,
    messages: std::sync::Arc<Vec<crate::types::Message>>,
    options: StreamOptions,
    api_key: String,
}

impl Parts {
    fn new(model: &Model, context: &Context, options: StreamOptions, api_key: String) -> Self {
        let mut frame = frame_of(context);
        let messages = request::prepare_placing(model, context, &mut frame);
        Self {
            model: model.clone(),
            frame,
            messages: std::sync::Arc::new(messages),
            options,
            api_key,
        }
    }

    fn session(&self) -> Option<&str> {
        self.options.session_id.as_deref().filter(|s| !s.is_empty())
    }

    /// The request, with tools that only prefer strictness sent plain when
    /// `disable_preferred_strict`.
    fn build(&self, disable_preferred_strict: bool) -> Result<HttpRequest, String> {
        let oauth = is_oauth_token(&self.api_key);
        let parts = (
            self.model.clone(),
            self.frame.clone(),
            self.messages.clone(),
            self.options.clone(),
            (oauth, disable_preferred_strict),
        );
        let body = written_body(&self.model, &self.options, parts, |parts, out| {
            let (model, context, messages, options, (oauth, disable)) = parts;
            serde_json::to_writer(
                out,
                &request::build_body(model, context, messages, options, *oauth, *disable),
            )
        })?;
        let threaded = thread_session(&self.model, &self.options).is_some();
        finish_request(
            &self.model,
            &self.frame,
            &self.messages,
            &self.options,
            &self.api_key,
            body,
            threaded,
        )
    }

    /// A request of a threaded session: the full body as JSON (after the payload hook),
    /// which the thread's body is made from.
    fn threaded(
        &self,
        session: &str,
        disable_preferred_strict: bool,
    ) -> Result<thread_stream::Threaded, String> {
        let (model, options) = (&self.model, &self.options);
        let oauth = is_oauth_token(&self.api_key);
        let mut params = serde_json::to_value(request::build_body(
            model,
            &self.frame,
            &self.messages,
            options,
            oauth,
            disable_preferred_strict,
        ))
        .map_err(|e| format!("Could not encode the request: {e}"))?;
        if let Some(hook) = options.payload_hook() {
            hook(model, &mut params);
        }
        let body = serde_json::to_vec(&params)
            .map_err(|e| format!("Could not encode the request: {e}"))?;
        let request = finish_request(
            model,
            &self.frame,
            &self.messages,
            options,
            &self.api_key,
            body.into(),
            true,
        )?;
        let betas = request
            .headers
            .iter()
            .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"))
            .map(|(_, value)| value.clone())
            .unwrap_or_default();
        Ok(thread_stream::Threaded {
            model: model.clone(),
            request,
            params,
            betas,
            session: session.to_owned(),
            may_continue: !options.disable_continuation,
            oauth,
            allow_empty_signature: model
                .compat
                .as_ref()
                .and_then(|c| c.allow_empty_signature)
                .unwrap_or(false),
            strict_retry: None,
        })
    }
}

/// Builds the HTTP request: URL, auth (API key or OAuth bearer), beta headers and body.
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    api_key: &str,
) -> Result<HttpRequest, String> {
    Parts::new(model, context, options.clone(), api_key.to_owned()).build(false)
}

/// The request around `body`: URL, auth, beta headers (the message-threads beta for a
/// threaded session) and the other headers.
fn finish_request(
    model: &Model,
    context: &Context,
    messages: &[crate::types::Message],
    options: &StreamOptions,
    api_key: &str,
    body: crate::request_body::RequestBody,
    threaded: bool,
) -> Result<HttpRequest, String> {
    let oauth = is_oauth_token(api_key);
    let mut betas: Vec<&str> = Vec::new();
    if !context.tools.is_empty() && !request::supports_eager_tool_streaming(model) {
        betas.push(FINE_GRAINED_TOOL_STREAMING_BETA);
    }
    // As in pi-ai 1.6: only a request that thinks asks for interleaved thinking.
    let thinking = options
        .anthropic_thinking
        .as_ref()
        .is_some_and(|t| t.enabled);
    if model.reasoning && thinking && !request::supports_adaptive_thinking(model) {
        betas.push(INTERLEAVED_THINKING_BETA);
    }
    if request::allowed_fallback_models(model).is_some() {
        betas.push(SERVER_SIDE_FALLBACK_BETA);
    }
    if request::supports_mid_convo_effort(model) {
        betas.push(MID_CONVERSATION_OUTPUT_CONFIG_BETA);
        betas.push(THINKING_BINDING_CONTROLS_BETA);
    }
    if request::uses_inline_tools(model, context) {
        betas.push(INLINE_TOOLS_BETA);
    }
    if threaded {
        betas.push(threads::MESSAGE_THREADS_BETA);
    }
    let mut headers: Vec<(String, String)> = vec![
        ("content-type".into(), "application/json".into()),
        ("accept".into(), "application/json".into()),
        ("anthropic-version".into(), API_VERSION.into()),
        (
            "anthropic-dangerous-direct-browser-access".into(),
            "true".into(),
        ),
    ];
    if oauth {
        headers.push(("authorization".into(), format!("Bearer {api_key}")));
        let mut all = vec!["claude-code-20250219", "oauth-2025-04-20"];
        all.extend(betas.iter().copied());
        headers.push(("anthropic-beta".into(), all.join(",")));
        headers.push((
            "user-agent".into(),
            format!("claude-cli/{CLAUDE_CODE_VERSION}"),
        ));
        headers.push(("x-app".into(), "cli".into()));
    } else {
        let copilot = model.provider == "github-copilot";
        if copilot {
            // Copilot's Anthropic endpoint takes its token as a bearer, as pi-ai 1.6 sends it.
            headers.push(("authorization".into(), format!("Bearer {api_key}")));
        } else if !api_key.is_empty() {
            headers.push(("x-api-key".into(), api_key.to_owned()));
        }
        if !betas.is_empty() {
            headers.push(("anthropic-beta".into(), betas.join(",")));
        }
    }
    let base_url = cloudflare::request_base_url(model, options)?;
    let mut request = HttpRequest {
        url: join_url(&base_url, "v1/messages"),
        headers,
        body,
    };
    if !oauth
        && model.provider != "github-copilot"
        && let Some((name, session)) = session_affinity(model, options)
    {
        request.set_header(name, session);
    }
    if !oauth {
        crate::identity::apply_identity(&mut request, model);
    }
    request.apply_overrides(model.headers.iter().flatten());
    if model.provider == "github-copilot" {
        for (name, value) in super::copilot::copilot_headers(messages) {
            request.set_header(name, value);
        }
    }
    crate::identity::apply_opencode_session(&mut request, model, options.session_id.as_deref());
    request.apply_option_headers(options);
    cloudflare::apply_gateway_auth(&mut request, model, options, api_key);
    Ok(request)
}

/// The session-affinity header pi-ai 1.6 sends Anthropic-compatible routers that ask for one
/// (OpenRouter by default: `x-session-id`; others `x-session-affinity`), with the session id,
/// unless prompt caching is off.
fn session_affinity<'a>(
    model: &Model,
    options: &'a StreamOptions,
) -> Option<(&'static str, &'a str)> {
    let session = options.session_id.as_deref().filter(|s| !s.is_empty())?;
    if CacheRetention::resolve(options.cache_retention, options.env.as_deref())
        == CacheRetention::None
    {
        return None;
    }
    let is_openrouter = model.provider == "openrouter" || model.base_url.contains("openrouter.ai");
    let compat = model.compat.as_ref();
    let send = compat
        .and_then(|c| c.send_session_affinity_headers)
        .unwrap_or(is_openrouter);
    if !send {
        return None;
    }
    let format = compat
        .and_then(|c| c.session_affinity_format.as_deref())
        .or(is_openrouter.then_some("openrouter"));
    let name = if format == Some("openrouter") {
        "x-session-id"
    } else {
        "x-session-affinity"
    };
    Some((name, session))
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
    sse::replay(
        model,
        bytes,
        cancel,
        Decoder::new(model.clone(), false, Vec::new()),
    )
}
