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

static RETRYABLE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)overloaded|provider.?returned.?error|rate.?limit|too many requests|\b(?:429|500|502|503|504)\b|service.?unavailable|server.?error|internal.?error|network.?error|connection.?error|connection.?refused|connection.?lost|websocket.?closed|websocket.?error|other side closed|fetch failed|upstream.?connect|reset before headers|socket hang up|ended without|stream ended before|truncated event message|http2 request did not get a response|timed? out|timeout|terminated|retry delay",
    )
    .ok()
});

/// Whether a failed message is worth retrying: an `error` (not an abort) with a transient
/// cause, and never a context overflow (compaction handles those).
pub fn is_retryable(message: &AssistantMessage, context_window: u64) -> bool {
    let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) else {
        return false;
    };
    if message.stop_reason != StopReason::Error
        || pi_ai::is_context_overflow(message, Some(context_window))
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
            "Connection error.",
            "429 Rate limit reached",
            "529 {\"type\":\"overloaded_error\"}",
            "Request timed out.",
        ] {
            assert!(is_retryable(&failed(text), 128_000), "{text}");
        }
        for text in [
            "400 Bad request",
            "prompt is too long: 300000 tokens > 200000 maximum",
            "",
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
