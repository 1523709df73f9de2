//! Options of a streaming call.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::model::Model;
use super::thinking::{ThinkingBudgets, ThinkingLevel};

/// How long a provider should keep the prompt cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheRetention {
    None,
    #[default]
    Short,
    Long,
}

impl CacheRetention {
    /// The explicit choice, else `long` when `PI_CACHE_RETENTION=long` (in the provider's
    /// scoped `env` first, then the process environment), else `short`.
    pub fn resolve(
        explicit: Option<CacheRetention>,
        env: Option<&BTreeMap<String, String>>,
    ) -> CacheRetention {
        explicit.unwrap_or_else(|| {
            match crate::env_keys::provider_env("PI_CACHE_RETENTION", env).as_deref() {
                Some("long") => CacheRetention::Long,
                _ => CacheRetention::Short,
            }
        })
    }
}

/// Which tool the model must (or must not) call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// The model decides.
    Auto,
    /// No tool calls.
    None,
    /// At least one tool call (OpenAI `required`, Anthropic `any`).
    Required,
    /// This named tool.
    Tool(String),
}

/// Anthropic extended-thinking settings, as `stream_simple` derives them from a level.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AnthropicThinking {
    /// Send `thinking` at all (`false` sends `{"type":"disabled"}` to reasoning models).
    pub enabled: bool,
    /// Budget for budget-based models.
    pub budget_tokens: Option<u64>,
    /// Effort for adaptive models (`low`, `medium`, `high`, `xhigh`, `max`).
    pub effort: Option<String>,
    /// `summarized` (default) or `omitted`.
    pub display: Option<String>,
}

/// Inspects or rewrites the provider request body before it is sent.
pub type PayloadHook = Arc<dyn Fn(&Model, &mut Value) + Send + Sync>;

/// Sees the status and headers of the provider's response before its body is read.
pub type ResponseHook = Arc<dyn Fn(u16, &BTreeMap<String, String>) + Send + Sync>;

/// Sees each parsed provider stream event before it is decoded (the extension event
/// `provider_stream_event`); awaited in stream order, so a slow hook slows the stream.
pub type StreamEventHook =
    Arc<dyn Fn(&Model, Value) -> futures_core::future::BoxFuture<'static, ()> + Send + Sync>;

/// Options every provider understands, plus provider-specific fields each reads as needed.
#[derive(Clone, Default)]
pub struct StreamOptions {
    pub temperature: Option<f64>,
    pub max_tokens: Option<u64>,
    /// The key to send; without it the provider's environment variable is used.
    pub api_key: Option<String>,
    /// Extra HTTP headers, applied last so they override defaults.
    pub headers: BTreeMap<String, String>,
    /// Headers left out of the request even when the provider or model adds them (an
    /// extension's `before_provider_headers` set them to `null`).
    pub removed_headers: Vec<String>,
    /// Session id for providers with session-based caching or routing.
    pub session_id: Option<String>,
    pub cache_retention: Option<CacheRetention>,
    /// Cancels the request; the stream then ends with `stopReason: "aborted"`.
    pub cancel: Option<CancellationToken>,
    pub on_payload: Option<PayloadHook>,
    /// Whether `on_payload` has anything to do with this request (unset: it always has); a
    /// body it does not see is not built as a JSON tree for it.
    pub payload_wanted: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
    pub on_response: Option<ResponseHook>,
    pub on_stream_event: Option<StreamEventHook>,
    /// Whether `on_stream_event` wants this request's events (unset: it does); events it
    /// does not want are not parsed into JSON trees for it.
    pub stream_events_wanted: Option<Arc<dyn Fn() -> bool + Send + Sync>>,
    /// Longest server-requested retry delay to honour; a longer one fails at once with the
    /// delay in the error. Default 60 000 ms; 0 means no cap.
    pub max_retry_delay_ms: Option<u64>,
    /// Client-side retries of a failed request before any output (default 2).
    pub max_retries: Option<u32>,
    /// Time allowed until response headers arrive (default 10 minutes).
    pub timeout_ms: Option<u64>,
    /// Longest silence allowed between chunks of a streaming body (default 10 minutes).
    pub idle_timeout_ms: Option<u64>,
    /// Request metadata; Anthropic reads `user_id`.
    pub metadata: Option<serde_json::Map<String, Value>>,
    pub tool_choice: Option<ToolChoice>,
    /// OpenAI-compatible reasoning effort (`None` = reasoning off).
    pub reasoning_effort: Option<ThinkingLevel>,
    /// Anthropic thinking configuration.
    pub anthropic_thinking: Option<AnthropicThinking>,
    /// OpenAI Responses, Azure and Codex settings.
    pub openai_responses: Option<OpenAiResponsesOptions>,
    /// Send the whole request even where the provider could continue a previous response
    /// (a cache refresh must not move the session's Anthropic message thread).
    pub disable_continuation: bool,
    /// How requests travel where a provider has a choice (OpenAI Codex); default `auto`.
    pub transport: Option<Transport>,
    /// Longest wait for a WebSocket to open (default 15 000 ms; 0: no limit).
    pub websocket_connect_timeout_ms: Option<u64>,
    /// Provider-scoped environment (an `auth.json` key's `env`): its values beat the process
    /// environment for this request's provider configuration, which it never changes.
    pub env: Option<Arc<BTreeMap<String, String>>>,
}

/// The `transport` setting: how OpenAI Codex requests travel.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Transport {
    /// A WebSocket kept per session, sending only new items where it can; SSE when the
    /// WebSocket fails before the reply starts.
    #[default]
    Auto,
    /// Server-sent events over HTTP only.
    Sse,
    /// A WebSocket kept per session, every request whole.
    Websocket,
    /// As `auto`.
    WebsocketCached,
}

/// Settings of the OpenAI Responses APIs (`openai-responses`, `azure-openai-responses`,
/// `openai-codex-responses`) beyond the common options.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenAiResponsesOptions {
    /// `reasoning.summary`: `auto` (default), `concise`, `detailed` (Codex also `on`, `off`).
    pub reasoning_summary: Option<String>,
    /// `service_tier` (`auto`, `default`, `flex`, `priority`, …); flex and priority reprice.
    pub service_tier: Option<String>,
    /// Codex `text.verbosity` (`low` by default, `medium`, `high`).
    pub text_verbosity: Option<String>,
    /// Azure `api-version` (else `AZURE_OPENAI_API_VERSION`, else `v1`).
    pub azure_api_version: Option<String>,
    /// Azure resource name (else `AZURE_OPENAI_RESOURCE_NAME`).
    pub azure_resource_name: Option<String>,
    /// Azure base URL (else `AZURE_OPENAI_BASE_URL`).
    pub azure_base_url: Option<String>,
    /// Azure deployment name (else `AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, else the model id).
    pub azure_deployment_name: Option<String>,
}

impl StreamOptions {
    /// The stream event hook, when it wants this request's events.
    pub fn stream_event_hook(&self) -> Option<&StreamEventHook> {
        self.on_stream_event.as_ref().filter(|_| {
            self.stream_events_wanted
                .as_ref()
                .is_none_or(|wanted| wanted())
        })
    }

    /// The payload hook, when it wants to see this request's body.
    pub fn payload_hook(&self) -> Option<&PayloadHook> {
        self.on_payload
            .as_ref()
            .filter(|_| self.payload_wanted.as_ref().is_none_or(|wanted| wanted()))
    }
}

impl fmt::Debug for StreamOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The API key is deliberately absent: secrets never reach logs.
        f.debug_struct("StreamOptions")
            .field("temperature", &self.temperature)
            .field("max_tokens", &self.max_tokens)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("session_id", &self.session_id)
            .field("cache_retention", &self.cache_retention)
            .field("max_retries", &self.max_retries)
            .field("max_retry_delay_ms", &self.max_retry_delay_ms)
            .field("timeout_ms", &self.timeout_ms)
            .field("idle_timeout_ms", &self.idle_timeout_ms)
            .field("tool_choice", &self.tool_choice)
            .field("reasoning_effort", &self.reasoning_effort)
            .field("anthropic_thinking", &self.anthropic_thinking)
            .field("transport", &self.transport)
            .field(
                "websocket_connect_timeout_ms",
                &self.websocket_connect_timeout_ms,
            )
            .finish_non_exhaustive()
    }
}

/// Options of `stream_simple`: a provider-neutral reasoning level on top of [`StreamOptions`].
#[derive(Clone, Debug, Default)]
pub struct SimpleStreamOptions {
    pub stream: StreamOptions,
    /// Reasoning level; `None` or `off` disables reasoning.
    pub reasoning: Option<ThinkingLevel>,
    /// Custom budgets for budget-based providers.
    pub thinking_budgets: Option<ThinkingBudgets>,
}
