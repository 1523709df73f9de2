//! Models: what a provider serves, what it costs, and how to talk to it (seed 002, Appendix E).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::thinking::ThinkingLevel;

/// The API identifiers of the built-in providers.
pub mod api {
    pub const OPENAI_COMPLETIONS: &str = "openai-completions";
    pub const OPENAI_RESPONSES: &str = "openai-responses";
    pub const AZURE_OPENAI_RESPONSES: &str = "azure-openai-responses";
    pub const OPENAI_CODEX_RESPONSES: &str = "openai-codex-responses";
    pub const ANTHROPIC_MESSAGES: &str = "anthropic-messages";
    pub const BEDROCK_CONVERSE_STREAM: &str = "bedrock-converse-stream";
    pub const GOOGLE_GENERATIVE_AI: &str = "google-generative-ai";
    pub const GOOGLE_GEMINI_CLI: &str = "google-gemini-cli";
    pub const GOOGLE_VERTEX: &str = "google-vertex";
    pub const MISTRAL_CONVERSATIONS: &str = "mistral-conversations";
}

/// An input modality a model accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InputKind {
    Text,
    Image,
}

/// Dollars per million tokens.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub input: f64,
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub output: f64,
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub cache_read: f64,
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub cache_write: f64,
    /// pi 1.6's request-wide price tiers: the one with the highest `inputTokensAbove` below
    /// a request's input (input + cache read + cache write) prices the whole request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tiers: Option<Vec<CostTier>>,
}

/// A price tier of [`ModelCost`]: its rates apply above `input_tokens_above` input tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostTier {
    #[serde(serialize_with = "crate::js_number::serialize")]
    pub input_tokens_above: f64,
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub input: f64,
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub output: f64,
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub cache_read: f64,
    #[serde(default, serialize_with = "crate::js_number::serialize")]
    pub cache_write: f64,
}

/// Per-level provider values; `None` marks a level the model does not support.
pub type ThinkingLevelMap = BTreeMap<ThinkingLevel, Option<String>>;

/// Compatibility overrides for provider quirks. Unset fields are auto-detected per provider.
///
/// One struct holds the flags of every API (OpenAI Completions, OpenAI Responses, Anthropic);
/// each provider reads the ones it knows.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelCompat {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_store: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_developer_role: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_reasoning_effort: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_usage_in_streaming: Option<bool>,
    /// `max_completion_tokens` or `max_tokens`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens_field: Option<MaxTokensField>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_tool_result_name: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_assistant_after_tool_result: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_thinking_as_text: Option<bool>,
    /// OpenAI-compatible (pi 1.5): `false` when streamed answers carry no `finish_reason`;
    /// the stop reason is then taken from how the stream ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_finish_reason: Option<bool>,
    /// OpenAI-compatible (pi 1.5): a replayed assistant message without text sends `""`
    /// instead of `null` content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_non_null_assistant_content: Option<bool>,
    /// OpenAI-compatible (pi 1.5): a request without tools sends `"tools": []` when the
    /// conversation has tool calls or results (some proxies in front of Anthropic need it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_tools_with_tool_history: Option<bool>,
    /// OpenAI-compatible (pi 1.x): the top-level field that caps reasoning tokens with the
    /// thinking budget (`thinking_token_budget` for vLLM).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_token_budget_field: Option<String>,
    /// Alias of `thinkingTokenBudgetField: "thinking_token_budget"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_thinking_token_budget: Option<bool>,
    /// OpenAI-compatible (pi 1.5): `"auto"`, `"enabled"` or `"disabled"`: whether requests
    /// carry `prompt_cache_key` (auto: OpenAI itself, or long retention where supported).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache_key_mode: Option<String>,
    /// OpenAI-compatible (pi 1.x): vLLM's scheduler priority, sent as the body's `priority`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vllm_priority: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires_reasoning_content_on_assistant_messages: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_format: Option<ThinkingFormat>,
    /// OpenRouter provider routing, sent verbatim as the body's `provider` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_router_routing: Option<Value>,
    /// Vercel AI Gateway routing (`only`, `order`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vercel_gateway_routing: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zai_tool_stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_strict_mode: Option<bool>,
    /// `"anthropic"`: Anthropic-style `cache_control` markers on an OpenAI-compatible API.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_control_format: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_session_affinity_headers: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_long_cache_retention: Option<bool>,
    /// OpenAI Responses before pi 1.6: send the `session_id` header. Kept as written; pi
    /// 1.6 dropped it for `sessionAffinityFormat` (`openai-nosession`), and so does ours.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_session_id_header: Option<bool>,
    /// Anthropic: per-tool `eager_input_streaming`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_eager_tool_input_streaming: Option<bool>,
    /// Anthropic (pi 1.6): the model thinks adaptively with an effort level instead of a
    /// token budget. Unset: ours guesses from the model id (Opus/Sonnet 4.6, Opus 4.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub force_adaptive_thinking: Option<bool>,
    /// pi 1.6: `false` when the API rejects a `temperature` (newer Claude models).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_temperature: Option<bool>,
    /// OpenAI-compatible (pi 1.6): `chat_template_args` values for `thinkingFormat: "baseten"`,
    /// each a literal or `{"$var": "thinking.enabled" | "thinking.effort" | "thinking.budget"}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_args: Option<Map<String, Value>>,
    /// The same for `chat_template_kwargs` (`thinkingFormat: "chat-template"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template_kwargs: Option<Map<String, Value>>,
    // pi 1.6 flags kept so nothing is lost, not acted on by ours yet (see the catalog notes
    // in `crate::models`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_mid_convo_system_messages: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_mid_convo_tool_changes: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_mid_convo_tool_additions: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_mid_convo_effort: Option<bool>,
    /// `false`: the server rejects `max_output_tokens` (some Codex-protocol gateways), so
    /// OpenAI Responses and Codex requests leave it out (pi 1.6; default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_max_output_tokens: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_strict_tools: Option<bool>,
    #[serde(
        rename = "supportsOpenAIGrammarTools",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub supports_openai_grammar_tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_additional_tools: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_tool_search: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_explicit_prompt_cache_mode: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_cache_control_on_tools: Option<bool>,
    /// Anthropic message threads (default: a base URL on api.anthropic.com).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub supports_message_threads: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow_empty_signature: Option<bool>,
    /// Anthropic server-side refusal fallbacks (`[{provider, model, cost}]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_fallback_models: Option<Value>,
    /// `"openai"`, `"openai-nosession"` or `"openrouter"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_affinity_format: Option<String>,
    /// Any other flag (of pi 1.6's compat schema or newer), kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// Which body field carries the output-token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MaxTokensField {
    MaxCompletionTokens,
    MaxTokens,
}

/// How an OpenAI-compatible server takes the reasoning setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ThinkingFormat {
    /// `reasoning_effort: "<level>"`.
    Openai,
    /// `reasoning: { effort }`.
    Openrouter,
    /// `thinking: { type }` plus `reasoning_effort`.
    Deepseek,
    /// `thinking: { type }` plus an optional `reasoning_effort`.
    Zai,
    /// Top-level `enable_thinking: bool`.
    Qwen,
    /// `chat_template_kwargs.enable_thinking`.
    QwenChatTemplate,
    /// `chat_template_kwargs` from the compat's `chatTemplateKwargs` (pi 1.6).
    ChatTemplate,
    /// `chat_template_args` from the compat's `chatTemplateArgs`, plus `reasoning_effort`
    /// (pi 1.6, Baseten).
    Baseten,
    /// `reasoning: { enabled }` plus `reasoning_effort` (pi 1.6, Together).
    Together,
    /// `reasoning: { effort }` with the mapped level, only when thinking (pi 1.6, Ant Ling).
    AntLing,
    /// `thinking: "<level>"` (pi 1.6).
    StringThinking,
}

/// pi 1.6's per-request input limits of a model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputLimits {
    /// The largest serialized request the provider takes, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_request_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<ImageInputLimits>,
}

/// Image limits of [`InputLimits`].
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageInputLimits {
    /// How images are resized before they enter the conversation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resize: Option<ImageResize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_message: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_per_request: Option<u64>,
}

/// The resize profile of [`ImageInputLimits`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageResize {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_width: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_height: Option<u64>,
    /// Largest base64 payload, in bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jpeg_quality: Option<u64>,
}

/// pi 1.6's prompt-cache lifetimes of a model, in seconds (`short` and `long` retention).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptCache {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub long: Option<u64>,
}

/// The catalog fields of pi 1.6 that ours keeps with a model but does not act on yet: they
/// round-trip (RPC, extensions) as pi writes them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelExtras {
    /// `"chat"` (the only type the built-in catalog holds; pi 1.6 also has `"image"` and
    /// `"classifier"` models).
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    pub model_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_limits: Option<InputLimits>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_cache: Option<PromptCache>,
    /// Radius: the lab that made the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lab: Option<String>,
    /// Radius: whether the account may use it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// Radius: the upstream providers serving it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub providers: Option<Vec<Value>>,
    /// Radius: free of charge.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub free: Option<bool>,
    /// Request sampling fields (`temperature`, `top_p`, `top_k`, …) merged into every
    /// OpenAI Completions / Responses body (pi 1.x `models.json`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params: Option<Map<String, Value>>,
    /// Per thinking level, sampling fields merged over `samplingParams` (pi 1.0.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling_params_by_thinking_level: Option<BTreeMap<ThinkingLevel, Map<String, Value>>>,
    /// Any other field (newer than pi 1.6), kept as written.
    #[serde(flatten)]
    pub other: BTreeMap<String, Value>,
}

/// A model of a provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    pub id: String,
    pub name: String,
    pub api: String,
    pub provider: String,
    pub base_url: String,
    pub reasoning: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level_map: Option<ThinkingLevelMap>,
    pub input: Vec<InputKind>,
    pub cost: ModelCost,
    pub context_window: u64,
    pub max_tokens: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub headers: Option<BTreeMap<String, String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compat: Option<ModelCompat>,
    /// pi 1.6's further fields (input limits, prompt cache, type, Radius facts).
    #[serde(flatten)]
    pub extras: ModelExtras,
}

impl Model {
    /// Whether the model accepts image input.
    pub fn supports_images(&self) -> bool {
        self.input.contains(&InputKind::Image)
    }

    /// The mapped provider value for a thinking level: `Some(Some(v))` mapped,
    /// `Some(None)` unsupported, `None` not configured.
    pub fn thinking_level_value(&self, level: ThinkingLevel) -> Option<Option<&str>> {
        self.thinking_level_map
            .as_ref()
            .and_then(|m| m.get(&level))
            .map(|v| v.as_deref())
    }

    /// `provider/id`, the form users type.
    /// The sampling fields a request at `level` (already clamped to the model) carries:
    /// `samplingParams`, then that level's override, later keys winning (pi-ai 1.6's
    /// resolveSamplingParams). `None` when the model sets none.
    pub fn sampling_params(&self, level: ThinkingLevel) -> Option<Map<String, Value>> {
        let by_level = self
            .extras
            .sampling_params_by_thinking_level
            .as_ref()
            .and_then(|levels| levels.get(&level));
        if self.extras.sampling_params.is_none() && by_level.is_none() {
            return None;
        }
        let mut merged = self.extras.sampling_params.clone().unwrap_or_default();
        if let Some(over) = by_level {
            merged.extend(over.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        Some(merged)
    }

    pub fn full_id(&self) -> String {
        format!("{}/{}", self.provider, self.id)
    }
}
