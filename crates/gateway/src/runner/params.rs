//! What a run takes and gives: its tunables and input, the loop cap, and the result with
//! payloads, meta, usage, counters and the record of every attempt.

use std::time::Duration;

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use pi_ai::{ImageContent, ThinkingLevel};
use pi_coding_agent::agent_session::AgentSession;
use pi_coding_agent::modes::system_prompt::ContextFile;

use super::auth_profiles::AuthProfileStore;
use super::classify::FailureKind;
use super::prompt::PromptMode;
use super::usage::RunUsage;

/// Compactions tried for context overflows in one run (never reset within the run).
pub const MAX_OVERFLOW_COMPACTIONS: u32 = 3;
/// Fewest loop iterations a run may take.
pub const MIN_RUN_LOOP_ITERATIONS: u32 = 32;
/// Most loop iterations a run may take, however many profiles there are.
pub const MAX_RUN_LOOP_ITERATIONS: u32 = 160;

/// The loop cap for a provider with `profiles` auth profiles: 24 + 8 per profile, within
/// [`MIN_RUN_LOOP_ITERATIONS`]..=[`MAX_RUN_LOOP_ITERATIONS`].
pub fn default_max_run_loop_iterations(profiles: usize) -> u32 {
    let profiles = u32::try_from(profiles).unwrap_or(u32::MAX);
    24u32
        .saturating_add(profiles.saturating_mul(8))
        .clamp(MIN_RUN_LOOP_ITERATIONS, MAX_RUN_LOOP_ITERATIONS)
}

/// Tunables of the runner.
#[derive(Debug, Clone)]
pub struct RunnerConfig {
    /// Cap on attempts; default from [`default_max_run_loop_iterations`].
    pub max_run_loop_iterations: Option<u32>,
    pub max_overflow_compactions: u32,
    /// Longest silence of a streaming response before the attempt times out.
    pub idle_timeout_ms: Option<u64>,
    /// Longest wait for response headers.
    pub request_timeout_ms: Option<u64>,
    /// Retries inside one provider request when an auth profile is in use (default 0: the
    /// runner rotates instead); without profiles the provider's own retry policy applies.
    pub provider_max_retries: Option<u32>,
    /// Tool results longer than this are truncated on overflow (default: 30% of the window).
    pub tool_result_max_chars: Option<usize>,
    /// Parts a too-large history is split into for summarizing.
    pub compaction_parts: usize,
    /// Pause before retrying a failed summary call.
    pub summary_retry_delay: Duration,
    /// Compact before the prompt when the context is past the session's threshold.
    pub compact_before_prompt: bool,
}

impl Default for RunnerConfig {
    fn default() -> Self {
        Self {
            max_run_loop_iterations: None,
            max_overflow_compactions: MAX_OVERFLOW_COMPACTIONS,
            idle_timeout_ms: Some(120_000),
            request_timeout_ms: None,
            provider_max_retries: Some(0),
            tool_result_max_chars: None,
            compaction_parts: crate::compaction_chunks::DEFAULT_PARTS,
            summary_retry_delay: Duration::from_millis(500),
            compact_before_prompt: true,
        }
    }
}

/// One run's input.
pub struct EmbeddedRunParams {
    pub session: AgentSession,
    /// The user's text (prompt templates and `/skill:` commands are expanded).
    pub prompt: String,
    pub images: Vec<ImageContent>,
    /// Keys to rotate through; without profiles for the provider the session's key is used.
    pub auth_profiles: AuthProfileStore,
    /// Thinking level for this run (clamped to the model); default: the session's.
    pub thinking_level: Option<ThinkingLevel>,
    /// Replaces the session's system prompt for this run.
    pub prompt_mode: Option<PromptMode>,
    /// Context files for [`PromptMode::Full`].
    pub context_files: Vec<ContextFile>,
    pub config: RunnerConfig,
    /// Aborts the run.
    pub cancel: Option<CancellationToken>,
}

impl EmbeddedRunParams {
    /// Params with defaults for everything but the session, prompt and profiles.
    pub fn new(
        session: AgentSession,
        prompt: impl Into<String>,
        auth_profiles: AuthProfileStore,
    ) -> Self {
        Self {
            session,
            prompt: prompt.into(),
            images: Vec::new(),
            auth_profiles,
            thinking_level: None,
            prompt_mode: None,
            context_files: Vec::new(),
            config: RunnerConfig::default(),
            cancel: None,
        }
    }
}

/// One piece of the reply.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Payload {
    pub text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
}

/// Why a run failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunError {
    pub kind: FailureKind,
    pub message: String,
}

/// Facts about a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RunMeta {
    pub duration_ms: u64,
    pub session_id: String,
    pub provider: String,
    pub model: String,
    /// The thinking level in effect at the end (after any downgrade).
    pub thinking_level: ThinkingLevel,
    /// The profile of the last attempt.
    pub profile_id: Option<String>,
    pub error: Option<RunError>,
}

/// One LLM attempt of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct AttemptRecord {
    pub profile_id: Option<String>,
    pub thinking_level: ThinkingLevel,
    /// `None` when the attempt succeeded.
    pub failure: Option<FailureKind>,
    pub error_message: Option<String>,
}

/// What a run produced.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EmbeddedRunResult {
    pub payloads: Vec<Payload>,
    pub meta: RunMeta,
    pub usage: Option<RunUsage>,
    /// Compactions made during the run (overflow and threshold).
    pub auto_compaction_count: u32,
    /// Overflow recoveries that went to compaction (the counter is never reset).
    pub overflow_compaction_attempts: u32,
    /// Tool results shortened by the last-resort truncation.
    pub truncated_tool_results: usize,
    pub attempts: Vec<AttemptRecord>,
}

impl EmbeddedRunResult {
    /// Whether the run ended without an error.
    pub fn is_ok(&self) -> bool {
        self.meta.error.is_none()
    }

    /// The texts of the non-error payloads, joined by blank lines.
    pub fn text(&self) -> String {
        self.payloads
            .iter()
            .filter(|p| !p.is_error)
            .map(|p| p.text.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_cap_grows_with_profiles_within_bounds() {
        assert_eq!(default_max_run_loop_iterations(0), 32);
        assert_eq!(default_max_run_loop_iterations(2), 40);
        assert_eq!(default_max_run_loop_iterations(10), 104);
        assert_eq!(default_max_run_loop_iterations(1000), 160);
    }
}
