//! The events of a coding-agent session: the agent's, plus queue, compaction, auto-retry
//! and session changes.

use serde::Serialize;

use pi_agent_core::AgentEvent;
use pi_ai::ThinkingLevel;

use crate::compaction::CompactionResult;

/// What started a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CompactionReason {
    Manual,
    Threshold,
    Overflow,
}

/// What a summary request is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub enum SummarySource {
    Compaction,
    BranchSummary,
}

/// Events only the session emits.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(
    tag = "type",
    rename_all = "snake_case",
    rename_all_fields = "camelCase"
)]
pub enum SessionOnlyEvent {
    AutoRetryStart {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    AutoRetryEnd {
        success: bool,
        attempt: u32,
        #[serde(skip_serializing_if = "Option::is_none")]
        final_error: Option<String>,
    },
    /// The texts waiting in the steering and follow-up queues changed.
    QueueUpdate {
        steering: Vec<String>,
        follow_up: Vec<String>,
    },
    CompactionStart {
        reason: CompactionReason,
    },
    CompactionEnd {
        reason: CompactionReason,
        #[serde(skip_serializing_if = "Option::is_none")]
        result: Option<CompactionResult>,
        aborted: bool,
        will_retry: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        error_message: Option<String>,
    },
    /// pi 1.x: a compaction's or branch summary's request failed transiently and is sent
    /// again after `delay_ms`.
    SummarizationRetryScheduled {
        attempt: u32,
        max_attempts: u32,
        delay_ms: u64,
        error_message: String,
    },
    /// The retried summary request starts; `source` is `compaction` (with its `reason`)
    /// or `branchSummary`.
    SummarizationRetryAttemptStart {
        source: SummarySource,
        #[serde(skip_serializing_if = "Option::is_none")]
        reason: Option<CompactionReason>,
    },
    /// The summary request retries no more.
    SummarizationRetryFinished,
    SessionInfoChanged {
        #[serde(skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    ThinkingLevelChanged {
        level: ThinkingLevel,
    },
    /// The last event of a run (pi 1.5): nothing more starts on its own (retries,
    /// compaction recovery and queued messages are done).
    AgentSettled {
        aborted: bool,
    },
    /// pi 1.5: an entry appended outside the message flow (an extension's `appendEntry`,
    /// a retry's context edit), as stored.
    EntryAppended {
        entry: serde_json::Value,
    },
}

/// Any event of a session, serialized as its own JSON object.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
// Agent events are nearly all of them; boxing would cost an allocation per event.
#[allow(clippy::large_enum_variant)]
pub enum AgentSessionEvent {
    Agent(AgentEvent),
    Session(SessionOnlyEvent),
}
