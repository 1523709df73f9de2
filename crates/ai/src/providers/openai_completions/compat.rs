//! Compatibility settings of OpenAI-compatible servers: detected from the provider and base
//! URL, overridden field by field by the model's `compat`.

use serde_json::{Map, Value};

use crate::types::{MaxTokensField, Model, ThinkingFormat};

/// Every compat flag, resolved.
#[derive(Debug, Clone, PartialEq)]
pub struct Compat {
    pub supports_store: bool,
    pub supports_developer_role: bool,
    pub supports_reasoning_effort: bool,
    pub supports_usage_in_streaming: bool,
    /// Streamed answers carry `finish_reason` (when not, the end of the stream decides).
    pub supports_finish_reason: bool,
    pub max_tokens_field: MaxTokensField,
    pub requires_tool_result_name: bool,
    pub requires_assistant_after_tool_result: bool,
    pub requires_non_null_assistant_content: bool,
    pub requires_tools_with_tool_history: bool,
    pub requires_thinking_as_text: bool,
    pub requires_reasoning_content_on_assistant_messages: bool,
    /// The top-level field carrying the thinking budget (vLLM's `thinking_token_budget`).
    pub thinking_token_budget_field: Option<String>,
    /// Whether `prompt_cache_key` is sent: `None` decides as pi-ai does (`auto`).
    pub prompt_cache_key: Option<bool>,
    /// vLLM's scheduler priority (the body's `priority`).
    pub vllm_priority: Option<serde_json::Number>,
    pub thinking_format: ThinkingFormat,
    /// `chatTemplateKwargs` / `chatTemplateArgs` of pi 1.6's template thinking formats.
    pub chat_template_kwargs: Option<Map<String, Value>>,
    pub chat_template_args: Option<Map<String, Value>>,
    pub open_router_routing: Option<Value>,
    pub vercel_gateway_routing: Option<Value>,
    pub zai_tool_stream: bool,
    pub supports_strict_mode: bool,
    pub anthropic_cache_control: bool,
    pub send_session_affinity_headers: bool,
    /// Which session headers: `openai` (`session_id`, `x-client-request-id`,
    /// `x-session-affinity`), `openai-nosession` (the last two) or `openrouter`
    /// (`x-session-id`).
    pub session_affinity_format: String,
    pub supports_long_cache_retention: bool,
}

/// What the provider and URL imply (OpenAI itself, Groq, Cerebras, xAI, DeepSeek, OpenRouter,
/// z.ai, Moonshot, Cloudflare, …); plain servers such as Ollama, vLLM, LM Studio and
/// llama.cpp get the OpenAI defaults.
pub fn detect(model: &Model) -> Compat {
    let provider = model.provider.as_str();
    let url = model.base_url.as_str();
    let is_zai = matches!(provider, "zai" | "zai-coding-cn")
        || url.contains("api.z.ai")
        || url.contains("open.bigmodel.cn");
    let is_moonshot =
        matches!(provider, "moonshotai" | "moonshotai-cn") || url.contains("api.moonshot.");
    let is_cf_workers = provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
    let is_cf_gateway =
        provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
    let is_grok = provider == "xai" || url.contains("api.x.ai");
    let is_deepseek = provider == "deepseek" || url.to_ascii_lowercase().contains("deepseek.com");
    // Providers new in pi 1.6, detected as its `detectCompat` does.
    let is_together = provider == "together"
        || url.contains("api.together.ai")
        || url.contains("api.together.xyz");
    let is_nvidia = provider == "nvidia" || url.contains("integrate.api.nvidia.com");
    let is_ant_ling = provider == "ant-ling" || url.contains("api.ant-ling.com");
    let new_in_16 = is_together || is_nvidia || is_ant_ling;
    let non_standard = provider == "cerebras"
        || url.contains("cerebras.ai")
        || is_grok
        || url.contains("chutes.ai")
        || is_deepseek
        || is_zai
        || is_moonshot
        || provider == "opencode"
        || url.contains("opencode.ai")
        || is_cf_workers
        || is_cf_gateway
        || new_in_16;
    let use_max_tokens = url.contains("chutes.ai")
        || is_deepseek
        || is_moonshot
        || is_cf_gateway
        || is_zai
        || new_in_16;
    let is_openrouter = provider == "openrouter" || url.contains("openrouter.ai");
    // pi-ai 1.6 sends instructions with the `developer` role to OpenAI only: other servers
    // (Groq, llama.cpp's chat templates, …) know `system`.
    let is_openai = provider == "openai" || url.contains("api.openai.com");
    let thinking_format = if is_deepseek {
        ThinkingFormat::Deepseek
    } else if is_zai {
        ThinkingFormat::Zai
    } else if is_together {
        ThinkingFormat::Together
    } else if is_ant_ling {
        ThinkingFormat::AntLing
    } else if is_openrouter {
        ThinkingFormat::Openrouter
    } else {
        ThinkingFormat::Openai
    };
    Compat {
        supports_store: !non_standard,
        supports_developer_role: is_openai,
        supports_reasoning_effort: !is_grok
            && !is_zai
            && !is_moonshot
            && !is_cf_gateway
            && !new_in_16,
        supports_usage_in_streaming: true,
        supports_finish_reason: true,
        max_tokens_field: if use_max_tokens {
            MaxTokensField::MaxTokens
        } else {
            MaxTokensField::MaxCompletionTokens
        },
        requires_tool_result_name: false,
        requires_assistant_after_tool_result: false,
        requires_non_null_assistant_content: false,
        requires_tools_with_tool_history: false,
        requires_thinking_as_text: false,
        requires_reasoning_content_on_assistant_messages: is_deepseek,
        thinking_token_budget_field: None,
        prompt_cache_key: None,
        vllm_priority: None,
        thinking_format,
        chat_template_kwargs: None,
        chat_template_args: None,
        open_router_routing: None,
        vercel_gateway_routing: None,
        zai_tool_stream: false,
        // As in pi-ai 1.6: OpenAI compatibility alone does not make strict JSON-schema tools
        // supported, so tools carry no `strict` unless `compat.supportsStrictMode` says so.
        supports_strict_mode: false,
        anthropic_cache_control: provider == "openrouter" && model.id.starts_with("anthropic/"),
        send_session_affinity_headers: is_openrouter,
        session_affinity_format: if is_openrouter {
            "openrouter"
        } else {
            "openai"
        }
        .into(),
        supports_long_cache_retention: !(is_cf_workers || is_cf_gateway || new_in_16),
    }
}

/// The detected settings with the model's explicit `compat` applied.
pub fn resolve(model: &Model) -> Compat {
    let mut c = detect(model);
    let Some(o) = &model.compat else { return c };
    let set = |target: &mut bool, value: Option<bool>| {
        if let Some(v) = value {
            *target = v;
        }
    };
    set(&mut c.supports_store, o.supports_store);
    set(&mut c.supports_developer_role, o.supports_developer_role);
    set(
        &mut c.supports_reasoning_effort,
        o.supports_reasoning_effort,
    );
    set(
        &mut c.supports_usage_in_streaming,
        o.supports_usage_in_streaming,
    );
    set(
        &mut c.requires_tool_result_name,
        o.requires_tool_result_name,
    );
    set(
        &mut c.requires_assistant_after_tool_result,
        o.requires_assistant_after_tool_result,
    );
    set(
        &mut c.requires_thinking_as_text,
        o.requires_thinking_as_text,
    );
    set(&mut c.supports_finish_reason, o.supports_finish_reason);
    set(
        &mut c.requires_non_null_assistant_content,
        o.requires_non_null_assistant_content,
    );
    set(
        &mut c.requires_tools_with_tool_history,
        o.requires_tools_with_tool_history,
    );
    if let Some(field) = &o.thinking_token_budget_field {
        c.thinking_token_budget_field = Some(field.clone());
    } else if o.supports_thinking_token_budget == Some(true) {
        c.thinking_token_budget_field = Some("thinking_token_budget".into());
    }
    c.prompt_cache_key = match o.prompt_cache_key_mode.as_deref() {
        Some("enabled") => Some(true),
        Some("disabled") => Some(false),
        _ => None,
    };
    c.vllm_priority = o.vllm_priority.clone();
    if let Some(format) = &o.session_affinity_format {
        c.session_affinity_format = format.clone();
    }
    set(
        &mut c.requires_reasoning_content_on_assistant_messages,
        o.requires_reasoning_content_on_assistant_messages,
    );
    set(&mut c.zai_tool_stream, o.zai_tool_stream);
    set(&mut c.supports_strict_mode, o.supports_strict_mode);
    set(
        &mut c.send_session_affinity_headers,
        o.send_session_affinity_headers,
    );
    set(
        &mut c.supports_long_cache_retention,
        o.supports_long_cache_retention,
    );
    if let Some(field) = o.max_tokens_field {
        c.max_tokens_field = field;
    }
    if let Some(format) = o.thinking_format {
        c.thinking_format = format;
    }
    if o.chat_template_kwargs.is_some() {
        c.chat_template_kwargs = o.chat_template_kwargs.clone();
    }
    if o.chat_template_args.is_some() {
        c.chat_template_args = o.chat_template_args.clone();
    }
    if let Some(format) = &o.cache_control_format {
        c.anthropic_cache_control = format == "anthropic";
    }
    c.open_router_routing = o.open_router_routing.clone();
    if o.vercel_gateway_routing.is_some() {
        c.vercel_gateway_routing = o.vercel_gateway_routing.clone();
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::ModelCompat;

    fn model(provider: &str, url: &str) -> Model {
        let mut m = crate::models::get_models("groq").remove(0);
        m.provider = provider.into();
        m.base_url = url.into();
        m.compat = None;
        m
    }

    #[test]
    fn plain_servers_get_openai_defaults() {
        for url in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8080/v1",
            "http://localhost:1234/v1",
        ] {
            let c = resolve(&model("local", url));
            assert!(c.supports_store && c.supports_usage_in_streaming);
            // As pi 1.6.0: `system`, not `developer`, for every server but OpenAI's.
            assert!(!c.supports_developer_role);
            assert_eq!(c.max_tokens_field, MaxTokensField::MaxCompletionTokens);
            assert_eq!(c.thinking_format, ThinkingFormat::Openai);
        }
    }

    #[test]
    fn known_providers_are_detected() {
        let xai = resolve(&model("xai", "https://api.x.ai/v1"));
        assert!(
            !xai.supports_store && !xai.supports_developer_role && !xai.supports_reasoning_effort
        );
        let deepseek = resolve(&model("deepseek", "https://api.deepseek.com"));
        assert_eq!(deepseek.thinking_format, ThinkingFormat::Deepseek);
        assert!(deepseek.requires_reasoning_content_on_assistant_messages);
        let router = resolve(&model("openrouter", "https://openrouter.ai/api/v1"));
        assert_eq!(router.thinking_format, ThinkingFormat::Openrouter);
        let cerebras = resolve(&model("cerebras", "https://api.cerebras.ai/v1"));
        assert!(!cerebras.supports_store);
        let moonshot = resolve(&model("moonshotai", "https://api.moonshot.ai/v1"));
        assert_eq!(moonshot.max_tokens_field, MaxTokensField::MaxTokens);
        let llama = resolve(&model("llama.cpp", "http://127.0.0.1:9931/v1"));
        assert!(!llama.supports_developer_role && llama.supports_store);
        let groq = resolve(&model("groq", "https://api.groq.com/openai/v1"));
        assert!(!groq.supports_developer_role);
        for (provider, url) in [
            ("openai", "https://api.openai.com/v1"),
            ("openai", "https://proxy.example/v1"),
            ("custom", "https://api.openai.com/v1"),
        ] {
            assert!(
                resolve(&model(provider, url)).supports_developer_role,
                "{provider} {url}"
            );
        }
    }

    #[test]
    fn explicit_compat_overrides_detection() {
        let mut m = model("local", "http://localhost:8080/v1");
        m.compat = Some(ModelCompat {
            supports_developer_role: Some(false),
            max_tokens_field: Some(MaxTokensField::MaxTokens),
            supports_usage_in_streaming: Some(false),
            ..Default::default()
        });
        let c = resolve(&m);
        assert!(!c.supports_developer_role && !c.supports_usage_in_streaming);
        assert_eq!(c.max_tokens_field, MaxTokensField::MaxTokens);
        assert!(c.supports_store);
    }
}
