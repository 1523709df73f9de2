//! Context-overflow detection from each provider's error texts and usage.

use std::sync::LazyLock;

use regex::RegexSet;

use crate::types::{AssistantMessage, StopReason};

/// Error texts that mean "the prompt did not fit", one or more per provider: pi-ai 1.6's
/// list (`OVERFLOW_PATTERNS`), in its order.
static OVERFLOW: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    RegexSet::new([
        r"(?i)prompt (?:is )?too long", // Anthropic tokens, z.ai
        r"(?i)prompt exceeds max length", // z.ai (CN)
        r"(?i)request_too_large",       // Anthropic bytes (413)
        r"(?i)input is too long for requested model", // Amazon Bedrock
        r"(?i)exceeds the context window", // OpenAI
        r"(?i)exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))",
        r"(?i)context window exceeded",
        r"(?i)input token count.*exceeds the maximum", // Google Gemini
        r"(?i)maximum prompt length is \d+",            // xAI
        r"(?i)reduce the length of the messages",       // Groq
        r"(?i)maximum context length is \d+ tokens",    // OpenRouter, vLLM
        r"(?i)exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?",
        r"(?i)input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)",
        r"(?i)exceeds the limit of \d+",               // GitHub Copilot
        r"(?i)exceeds the available context size",     // llama.cpp server
        r"(?i)greater than the context length",        // LM Studio
        r"(?i)context window exceeds limit",           // MiniMax
        r"(?i)exceeded model token limit",             // Kimi
        r"(?i)too large for model with \d+ maximum context length", // Mistral
        r"(?i)prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?",
        r"(?i)model_context_window_exceeded",          // z.ai
        r"(?i)prompt too long; exceeded (?:max )?context length", // Ollama
        r"(?i)range of input length should be",       // Qwen
        r"(?i)context[_ ]length[_ ]exceeded",          // generic
        r"(?i)too many tokens",                        // generic
        r"(?i)token limit exceeded",                   // generic
        r"(?i)^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))", // a bare 413
    ])
    .ok()
});

/// Cerebras answers an oversized prompt with an empty 400 or 413 (its provider only).
static CEREBRAS_BODYLESS: LazyLock<Option<regex::Regex>> =
    LazyLock::new(|| regex::Regex::new(r"(?i)^4(?:00|13)\s*(?:status code)?\s*\(no body\)").ok());

/// Texts that look like overflow but are throttling.
static NOT_OVERFLOW: LazyLock<Option<RegexSet>> = LazyLock::new(|| {
    RegexSet::new([
        r"(?i)^(Throttling error|Service unavailable):",
        r"(?i)rate limit",
        r"(?i)too many requests",
    ])
    .ok()
});

/// Whether an error text reports a context overflow.
pub fn is_overflow_error_text(text: &str) -> bool {
    let matches = |set: &Option<RegexSet>| set.as_ref().is_some_and(|s| s.is_match(text));
    !matches(&NOT_OVERFLOW) && matches(&OVERFLOW)
}

/// Whether a message reports a context overflow: by its error text, or — for providers that
/// overflow silently — by input usage beyond `context_window`.
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    if message.stop_reason == StopReason::Error
        && let Some(text) = message.error_message.as_deref()
    {
        let cerebras = message.provider == "cerebras"
            && CEREBRAS_BODYLESS.as_ref().is_some_and(|r| r.is_match(text))
            && !NOT_OVERFLOW.as_ref().is_some_and(|s| s.is_match(text));
        if is_overflow_error_text(text) || cerebras {
            return true;
        }
    }
    let Some(window) = context_window.filter(|w| *w > 0) else {
        return false;
    };
    let input = message.usage.input + message.usage.cache_read;
    match message.stop_reason {
        StopReason::Stop => input > window,
        StopReason::Length => message.usage.output == 0 && input as f64 >= window as f64 * 0.99,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Usage;

    fn error(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.to_owned()),
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn detects_each_providers_overflow_text() {
        for text in [
            "400 {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"prompt is too long: 213462 tokens > 200000 maximum\"}}",
            "400 Your input exceeds the context window of this model",
            "The input token count (1196265) exceeds the maximum number of tokens allowed (1048575)",
            "This model's maximum prompt length is 131072 but the request contains 537812 tokens",
            "Please reduce the length of the messages or completion",
            "This endpoint's maximum context length is 128000 tokens. However, you requested about 200000 tokens",
            "400 the request exceeds the available context size, try increasing it",
            "tokens to keep from the initial prompt is greater than the context length",
            "413 status code (no body)",
            "400 Prompt too long",
            "Prompt exceeds max length",
            "Range of input length should be [1, 129024]",
            "Prompt contains 140000 tokens and 0 draft tokens, too large for model with 131072 maximum context length",
        ] {
            assert!(is_context_overflow(&error(text), None), "{text}");
        }
    }

    #[test]
    fn an_empty_400_is_overflow_from_cerebras_only() {
        let mut message = error("400 status code (no body)");
        assert!(!is_context_overflow(&message, None));
        message.provider = "cerebras".into();
        assert!(is_context_overflow(&message, None));
    }

    #[test]
    fn throttling_and_other_errors_are_not_overflow() {
        for text in [
            "Throttling error: Too many tokens, please wait before trying again.",
            "429 Rate limit reached: too many tokens per minute",
            "Connection error.",
            "500 Internal server error",
        ] {
            assert!(!is_context_overflow(&error(text), None), "{text}");
        }
    }

    #[test]
    fn silent_overflow_by_usage() {
        let mut m = AssistantMessage {
            usage: Usage::from_tokens(120_000, 10, 10_000, 0),
            ..Default::default()
        };
        assert!(is_context_overflow(&m, Some(128_000)));
        assert!(!is_context_overflow(&m, None));
        m.stop_reason = StopReason::Length;
        m.usage = Usage::from_tokens(127_000, 0, 0, 0);
        assert!(is_context_overflow(&m, Some(128_000)));
    }
}
