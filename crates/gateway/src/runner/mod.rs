//! The embedded runner (seed 004): runs one prompt through an `AgentSession` and owns the
//! recovery around it — auth profile rotation with cooldowns, thinking-level fallback,
//! three-tier context-overflow recovery, and usage reporting without cache inflation.

pub mod auth_profiles;
pub mod classify;
pub mod compact;
mod params;
pub mod prompt;
mod run;
pub mod truncation;
pub mod usage;

pub use auth_profiles::{AuthProfile, AuthProfileStore, CooldownConfig};
pub use classify::{CONTEXT_OVERFLOW_ERROR, FailureKind, classify_error_text, classify_failure};
pub use params::{
    AttemptRecord, EmbeddedRunParams, EmbeddedRunResult, MAX_OVERFLOW_COMPACTIONS,
    MAX_RUN_LOOP_ITERATIONS, MIN_RUN_LOOP_ITERATIONS, Payload, RunError, RunMeta, RunnerConfig,
    default_max_run_loop_iterations,
};
pub use prompt::{PromptMode, PromptParams, build_system_prompt};
pub use run::run_embedded;
pub use truncation::truncate_oversized_tool_results;
pub use usage::{RunUsage, UsageAccumulator};
