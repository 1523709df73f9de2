//! Failure classification: turns a failed assistant message (its HTTP status and the
//! provider's error text) into the [`FailureKind`] that decides the runner's recovery.

use serde::Serialize;

use pi_ai::{AssistantMessage, StopReason, ThinkingLevel};

/// Why an attempt failed, as far as recovery is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The prompt did not fit the model's context window.
    ContextOverflow,
    /// The key was rejected (401/403, invalid key).
    Auth,
    /// Throttled or overloaded (429, 529, "rate limit").
    RateLimit,
    /// Out of credits or quota (402, "insufficient_quota").
    Billing,
    /// The model refused the requested reasoning level.
    ThinkingUnsupported,
    /// No answer in time (idle stream, header or gateway timeout, dropped connection).
    Timeout,
    /// The transcript's roles are in an order the provider rejects.
    RoleOrdering,
    /// An image exceeds the provider's size or dimension limits.
    ImageTooLarge,
    /// The run was aborted by its caller.
    Aborted,
    /// Anything else.
    Other,
}

impl FailureKind {
    /// The kind's wire name (`context_overflow`, `rate_limit`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ContextOverflow => "context_overflow",
            Self::Auth => "auth",
            Self::RateLimit => "rate_limit",
            Self::Billing => "billing",
            Self::ThinkingUnsupported => "thinking_unsupported",
            Self::Timeout => "timeout",
            Self::RoleOrdering => "role_ordering",
            Self::ImageTooLarge => "image_too_large",
            Self::Aborted => "aborted",
            Self::Other => "other",
        }
    }

    /// Whether a failure of this kind puts the auth profile in cooldown.
    pub fn cools_down_profile(self) -> bool {
        matches!(self, Self::Auth | Self::RateLimit | Self::Billing)
    }

    /// Whether a failure of this kind moves on to the next auth profile.
    pub fn rotates_profile(self) -> bool {
        self.cools_down_profile() || self == Self::Timeout
    }
}

impl std::fmt::Display for FailureKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The HTTP status a provider error text starts with (`"429 Rate limit…"`), if any.
pub fn http_status(text: &str) -> Option<u16> {
    let trimmed = text.trim_start();
    let digits: String = trimmed.chars().take_while(char::is_ascii_digit).collect();
    if digits.len() != 3 {
        return None;
    }
    let rest = &trimmed[3..];
    if !(rest.is_empty() || rest.starts_with(|c: char| !c.is_ascii_alphanumeric())) {
        return None;
    }
    digits.parse().ok().filter(|s| (100..600).contains(s))
}

fn contains_any(text: &str, needles: &[&str]) -> bool {
    needles.iter().any(|n| text.contains(n))
}

const ROLE_ORDERING: &[&str] = &[
    "roles must alternate",
    "must alternate between",
    "incorrect role information",
    "unexpected role",
    "message ordering",
    "messages must start with a user",
    "first message must use the \"user\" role",
    "must be followed by a tool",
    "tool_use` ids were found without `tool_result`",
    "tool_use ids were found without tool_result",
    "unexpected `tool_use_id`",
    "tool_call_id is not found",
    "must be a response to a preceeding message with 'tool_calls'",
    "must be a response to a preceding message with 'tool_calls'",
];

const IMAGE_TOO_LARGE: &[&str] = &[
    "image exceeds",
    "image too large",
    "image is too large",
    "image size exceeds",
    "image dimensions exceed",
    "image_too_large",
    "exceeds the maximum image",
    "maximum allowed image",
];

const THINKING_SUBJECTS: &[&str] = &["reasoning", "thinking", "reasoning_effort", "budget_tokens"];

const UNSUPPORTED: &[&str] = &[
    "not supported",
    "unsupported",
    "does not support",
    "is not available",
    "not available for",
    "invalid value",
    "not allowed",
];

const BILLING: &[&str] = &[
    "insufficient_quota",
    "insufficient quota",
    "insufficient credit",
    "insufficient balance",
    "credit balance is too low",
    "exceeded your current quota",
    "payment required",
    "billing",
    "out of credits",
];

const RATE_LIMIT: &[&str] = &[
    "rate limit",
    "rate_limit",
    "ratelimit",
    "too many requests",
    "overloaded",
    "resource_exhausted",
    "resource exhausted",
    "throttl",
    "quota exceeded",
    "service unavailable",
];

const AUTH: &[&str] = &[
    "invalid api key",
    "invalid_api_key",
    "incorrect api key",
    "invalid x-api-key",
    "api key not valid",
    "authentication",
    "unauthorized",
    "permission denied",
    "permission_denied",
    "forbidden",
    "no api key",
    "invalid bearer",
    "expired token",
    "token has expired",
];

const TIMEOUT: &[&str] = &[
    "timed out",
    "timeout",
    "etimedout",
    "deadline exceeded",
    "gateway time-out",
    "connection error",
    "socket hang up",
    "econnreset",
];

/// Classifies a provider error text; overflow detection is pi-ai's.
pub fn classify_error_text(text: &str) -> FailureKind {
    let lower = text.to_lowercase();
    let status = http_status(text);
    if pi_ai::overflow::is_overflow_error_text(text) || lower.contains("context_length_exceeded") {
        return FailureKind::ContextOverflow;
    }
    if contains_any(&lower, ROLE_ORDERING) {
        return FailureKind::RoleOrdering;
    }
    if contains_any(&lower, IMAGE_TOO_LARGE) {
        return FailureKind::ImageTooLarge;
    }
    if contains_any(&lower, THINKING_SUBJECTS) && contains_any(&lower, UNSUPPORTED) {
        return FailureKind::ThinkingUnsupported;
    }
    if status == Some(402) || contains_any(&lower, BILLING) {
        return FailureKind::Billing;
    }
    if matches!(status, Some(429 | 503 | 529)) || contains_any(&lower, RATE_LIMIT) {
        return FailureKind::RateLimit;
    }
    if matches!(status, Some(401 | 403)) || contains_any(&lower, AUTH) {
        return FailureKind::Auth;
    }
    if matches!(status, Some(408 | 502 | 504)) || contains_any(&lower, TIMEOUT) {
        return FailureKind::Timeout;
    }
    FailureKind::Other
}

/// Classifies a finished assistant message; `None` when it did not fail. An overflow that a
/// provider reports only through usage beyond the window counts when the message errored.
pub fn classify_failure(
    message: &AssistantMessage,
    context_window: Option<u64>,
) -> Option<FailureKind> {
    match message.stop_reason {
        StopReason::Aborted => Some(FailureKind::Aborted),
        StopReason::Error => {
            if pi_ai::is_context_overflow(message, context_window) {
                return Some(FailureKind::ContextOverflow);
            }
            Some(classify_error_text(
                message.error_message.as_deref().unwrap_or_default(),
            ))
        }
        _ => None,
    }
}

/// The start of the error of a context overflow that no recovery fixed.
pub const CONTEXT_OVERFLOW_ERROR: &str = "Context overflow: prompt too large for the model";

/// What the user is told for a failure that is not retried (or whose retries ran out).
pub fn friendly_message(kind: FailureKind, raw: &str) -> String {
    match kind {
        FailureKind::ContextOverflow => format!(
            "{CONTEXT_OVERFLOW_ERROR}. Start a new session or switch to a model with a larger context window."
        ),
        FailureKind::RoleOrdering => {
            "The conversation history is out of order for this provider (its messages must alternate between user and assistant). Please try again; if it keeps happening, start a new session.".to_owned()
        }
        FailureKind::ImageTooLarge => {
            "An image in this conversation is larger than the model accepts. Send a smaller or downscaled image and try again.".to_owned()
        }
        FailureKind::Billing => format!(
            "The provider declined the request for billing reasons (credits or quota used up). Check the account's billing or add another auth profile. ({raw})"
        ),
        FailureKind::Aborted => "The run was aborted.".to_owned(),
        _ if raw.is_empty() => "The request failed.".to_owned(),
        _ => raw.to_owned(),
    }
}

/// The next lower thinking level: max → xhigh → high → medium → low → minimal → off.
pub fn downgrade_thinking(level: ThinkingLevel) -> Option<ThinkingLevel> {
    match level {
        ThinkingLevel::Max => Some(ThinkingLevel::Xhigh),
        ThinkingLevel::Xhigh => Some(ThinkingLevel::High),
        ThinkingLevel::High => Some(ThinkingLevel::Medium),
        ThinkingLevel::Medium => Some(ThinkingLevel::Low),
        ThinkingLevel::Low => Some(ThinkingLevel::Minimal),
        ThinkingLevel::Minimal => Some(ThinkingLevel::Off),
        ThinkingLevel::Off => None,
    }
}

/// The level to fall back to after `current` was refused: the highest level below it that
/// the error text lists as supported (`"supported values are: 'low', 'medium'"`), else the
/// next lower one.
pub fn fallback_thinking_level(current: ThinkingLevel, error_text: &str) -> Option<ThinkingLevel> {
    let lower = error_text.to_lowercase();
    let listed_from = [
        "supported values",
        "supported levels",
        "one of",
        "supported:",
    ]
    .iter()
    .filter_map(|k| lower.find(k))
    .min();
    if let Some(at) = listed_from {
        let tail = &lower[at..];
        let listed: Vec<ThinkingLevel> = tail
            .split(|c: char| !c.is_ascii_alphanumeric())
            .filter_map(ThinkingLevel::parse)
            .filter(|l| *l < current)
            .collect();
        if let Some(best) = listed.into_iter().max() {
            return Some(best);
        }
    }
    downgrade_thinking(current)
}

/// Like [`fallback_thinking_level`], but only a level in `supported` (the model's levels):
/// levels the model does not offer are passed over on the way down, since the provider
/// layer would clamp them back up to the refused one.
pub fn supported_fallback_thinking_level(
    current: ThinkingLevel,
    error_text: &str,
    supported: &[ThinkingLevel],
) -> Option<ThinkingLevel> {
    let mut level = fallback_thinking_level(current, error_text)?;
    while !supported.contains(&level) {
        level = downgrade_thinking(level)?;
    }
    Some(level)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_provider_texts() {
        let cases = [
            (
                "400 This model's maximum context length is 4000 tokens.",
                FailureKind::ContextOverflow,
            ),
            (
                "prompt is too long: 213462 tokens > 200000 maximum",
                FailureKind::ContextOverflow,
            ),
            ("401 Incorrect API key provided", FailureKind::Auth),
            ("403 You are not allowed", FailureKind::Auth),
            (
                "429 Rate limit reached for requests",
                FailureKind::RateLimit,
            ),
            (
                "429 Rate limit reached: too many tokens per minute",
                FailureKind::RateLimit,
            ),
            ("529 Overloaded", FailureKind::RateLimit),
            ("402 Mock error", FailureKind::Billing),
            (
                "429 You exceeded your current quota, please check your plan and billing details",
                FailureKind::Billing,
            ),
            (
                "400 Reasoning level 'xhigh' is not supported for this model",
                FailureKind::ThinkingUnsupported,
            ),
            (
                "400 Unsupported value: 'reasoning_effort' does not support 'minimal'",
                FailureKind::ThinkingUnsupported,
            ),
            (
                "Request timed out: no data from the provider for 0.3s",
                FailureKind::Timeout,
            ),
            ("Request timed out.", FailureKind::Timeout),
            (
                "400 messages: roles must alternate between \"user\" and \"assistant\"",
                FailureKind::RoleOrdering,
            ),
            (
                "400 messages.0.content.1.image.source.base64: image exceeds 5 MB maximum",
                FailureKind::ImageTooLarge,
            ),
            ("500 The server had an error", FailureKind::Other),
            ("400 Bad request", FailureKind::Other),
        ];
        for (text, kind) in cases {
            assert_eq!(classify_error_text(text), kind, "{text}");
        }
    }

    #[test]
    fn status_prefix_needs_three_digits_and_a_break() {
        assert_eq!(http_status("429 Too many"), Some(429));
        assert_eq!(http_status("402"), Some(402));
        assert_eq!(http_status("4290 x"), None);
        assert_eq!(http_status("12 x"), None);
        assert_eq!(http_status("Request timed out."), None);
    }

    #[test]
    fn failures_come_only_from_failed_messages() {
        let ok = AssistantMessage::default();
        assert_eq!(classify_failure(&ok, Some(1000)), None);
        let failed = AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some("401 Incorrect API key provided".into()),
            ..Default::default()
        };
        assert_eq!(classify_failure(&failed, None), Some(FailureKind::Auth));
        let aborted = AssistantMessage {
            stop_reason: StopReason::Aborted,
            ..Default::default()
        };
        assert_eq!(classify_failure(&aborted, None), Some(FailureKind::Aborted));
    }

    #[test]
    fn thinking_falls_back_one_level_or_to_a_listed_one() {
        use ThinkingLevel::*;
        let chain: Vec<_> =
            std::iter::successors(Some(Xhigh), |l| downgrade_thinking(*l)).collect();
        assert_eq!(chain, [Xhigh, High, Medium, Low, Minimal, Off]);
        assert_eq!(fallback_thinking_level(High, "not supported"), Some(Medium));
        assert_eq!(
            fallback_thinking_level(
                Xhigh,
                "Unsupported value 'xhigh'. Supported values are: 'low', 'medium'."
            ),
            Some(Medium)
        );
        assert_eq!(fallback_thinking_level(Off, "thinking not supported"), None);
    }

    #[test]
    fn the_fallback_passes_over_levels_the_model_lacks() {
        use ThinkingLevel::*;
        let all = [Off, Minimal, Low, Medium, High];
        assert_eq!(
            supported_fallback_thinking_level(High, "not supported", &all),
            Some(Medium)
        );
        let no_minimal = [Off, Low, Medium, High];
        assert_eq!(
            supported_fallback_thinking_level(Low, "not supported", &no_minimal),
            Some(Off)
        );
        let must_think = [Low, Medium, High];
        assert_eq!(
            supported_fallback_thinking_level(Low, "not supported", &must_think),
            None
        );
    }
}
