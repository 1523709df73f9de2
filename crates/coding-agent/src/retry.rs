//! Auto-retry of transient provider failures (seed 002 §5.8): which errors qualify, and the
//! exponential backoff from the settings.

use std::sync::LazyLock;

use regex::Regex;
use serde::Deserialize;

use pi_ai::{AssistantMessage, StopReason};

/// `retry` in settings.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct RetrySettings {
    pub enabled: bool,
    pub max_retries: u32,
    pub base_delay_ms: u64,
    /// pi 1.5: the cap on one retry's delay (60 s).
    pub max_agent_delay_ms: u64,
    /// Retries inside one provider request (the SDK-level retries).
    pub provider: Option<ProviderRetrySettings>,
}

/// `retry.provider` in settings.json: request timeout and the SDK-level retries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ProviderRetrySettings {
    pub timeout_ms: Option<u64>,
    pub max_retries: Option<u32>,
    pub max_retry_delay_ms: Option<u64>,
}

impl Default for RetrySettings {
    fn default() -> Self {
        Self {
            enabled: true,
            max_retries: 3,
            base_delay_ms: 2000,
            max_agent_delay_ms: 60_000,
            provider: None,
        }
    }
}

impl RetrySettings {
    /// `baseDelayMs × 2^(attempt-1)`: 2 s, 4 s, 8 s by default, at most `maxAgentDelayMs`.
    pub fn delay_ms(&self, attempt: u32) -> u64 {
        self.base_delay_ms
            .saturating_mul(1u64 << attempt.saturating_sub(1).min(32))
            .min(self.max_agent_delay_ms)
    }
}

/// pi-ai 1.6's `RETRYABLE_PROVIDER_ERROR_PATTERN`; its `(?<![a-z0-9])…(?![a-z0-9])`
/// guards are written as "not a letter or digit, or the end" (the regex crate has no
/// look-around), which matches the same texts.
static RETRYABLE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)overloaded|server_busy|servers are currently busy|currently experiencing high demand",
        r"|model is at capacity|rate.?limit|too many requests",
        r"|(?:^|[^a-z0-9])(?:429|500|502|503|504|520|524)(?:[^a-z0-9]|$)",
        r"|service.?(?:is.?)?(?:temporarily.?)?unavailable|server.?error|internal.?error",
        r"|provider.?returned.?(?:an.?)?error|exceeded request buffer limit while retrying upstream",
        r"|unable to forward upstream|upstream.?request.?failed|upstream_stream_read_error",
        r"|stream was interrupted|http/?2 stream failed|network.?error|connection.?error",
        r"|connection.?refused|connection.?lost|connection.?closed|other side closed|fetch failed",
        r"|request to \S+ failed, reason:|getaddrinfo",
        r"|(?:^|[^a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?:[^a-z0-9_]|$)",
        r"|connection reset by peer|ENOTFOUND|EAI_AGAIN|upstream.?connect|reset before headers",
        r"|socket hang up|socket connection was closed|timed? out|timeout|terminated",
        r"|websocket.?closed|websocket.?error|websocket.?connection.?limit.?reached|ended without",
        r"|stream ended before message_stop|stream ended before a terminal response event",
        r"|http2 request did not get a response|stream disconnected before completion",
        r"|cut short after the reply had begun|pending stream has been canceled|retry delay",
        r"|you can retry your request|try your request again|please retry your request",
        r"|ResourceExhausted|subscription_sharing_usage_unavailable",
        r"|subscription_sharing_user_unavailable",
    ))
    .ok()
});

/// pi-ai 1.6's `NON_RETRYABLE_PROVIDER_LIMIT_ERROR_PATTERN`: spent quotas and budgets, which
/// no wait fixes, even when the text also says "rate limit" or 429.
static NON_RETRYABLE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(concat!(
        r"(?i)GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance",
        r"|insufficient_quota|out of budget|quota exceeded|billing",
        r"|subscription_sharing_usage_limit_exceeded",
        r"|subscription_sharing_workplace_individual_usage_limit_exceeded",
        r#"|"code"\s*:\s*"?1308(?:[^0-9]|$)"#,
    ))
    .ok()
});

/// Whether a failed message is worth retrying (pi 1.6's `_isRetryableError`): an `error`
/// (not an abort) with a transient cause, never a spent quota, and never a context
/// overflow (compaction handles those).
pub fn is_retryable(message: &AssistantMessage, context_window: u64) -> bool {
    let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) else {
        return false;
    };
    if message.stop_reason != StopReason::Error
        || pi_ai::is_context_overflow(message, Some(context_window))
        || NON_RETRYABLE.as_ref().is_some_and(|re| re.is_match(text))
    {
        return false;
    }
    RETRYABLE.as_ref().is_some_and(|re| re.is_match(text))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failed(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.into()),
            ..Default::default()
        }
    }

    #[test]
    fn delays_double_up_to_the_agent_cap() {
        let settings = RetrySettings::default();
        assert_eq!(
            (1..=7).map(|a| settings.delay_ms(a)).collect::<Vec<_>>(),
            [2000, 4000, 8000, 16000, 32000, 60000, 60000]
        );
        let capped: RetrySettings =
            serde_json::from_str(r#"{"baseDelayMs": 100, "maxAgentDelayMs": 250}"#).unwrap();
        assert_eq!(capped.delay_ms(3), 250);
    }

    #[test]
    fn transient_errors_retry_and_overflow_does_not() {
        for text in [
            // Mistral's finish_reason "error" (pi 1.6 words it so that it is retried).
            "Provider stopped with: error (server error)",
            "Connection error.",
            "429 Rate limit reached",
            "529 {\"type\":\"overloaded_error\"}",
            "Request timed out.",
            r#"429: {"message":"Rate limit reached for requests","code":"rate_limit_exceeded"}"#,
            "520 upstream error",
            "read ECONNRESET",
            // pi 1.6.0 retries these too: a closed connection and bare socket error codes.
            "Connection closed.",
            "write EPIPE",
            "connect ETIMEDOUT",
            "The server is server_busy, try your request again",
            "Server requested 120s retry delay (max: 60s). 429 Too Many Requests",
        ] {
            assert!(is_retryable(&failed(text), 128_000), "{text}");
        }
        for text in [
            "400 Bad request",
            "prompt is too long: 300000 tokens > 200000 maximum",
            "",
            // A status number inside another number is not that status.
            "400 invalid request id 15029",
            // Spent quotas are final even when they say 429 or rate limit.
            "429 You exceeded your current quota: insufficient_quota",
            "429 rate limit: Monthly usage limit reached",
            r#"429 {"error":{"code":"1308","message":"limit"}}"#,
        ] {
            assert!(!is_retryable(&failed(text), 128_000), "{text}");
        }
        let mut aborted = failed("Connection error.");
        aborted.stop_reason = StopReason::Aborted;
        assert!(!is_retryable(&aborted, 128_000));
        let settings = RetrySettings::default();
        assert_eq!(
            (
                settings.delay_ms(1),
                settings.delay_ms(2),
                settings.delay_ms(3)
            ),
            (2000, 4000, 8000)
        );
    }
}
