//! Compaction: when the context nears the model's window, older messages are replaced by a
//! structured summary written by the model, and the newest ones are kept as they are.
//!
//! The steps are pure functions over the session path: [`prepare_compaction`] picks the cut
//! (never between a tool call and its result) and the messages to summarize, [`compact`] asks
//! the model for the summary. [`branch_summary`] does the same for a branch being left.

pub mod branch_summary;
pub mod cut_point;
pub mod file_ops;
pub mod prepare;
pub mod serialize;
pub mod settings;
pub mod summarize;
pub mod summary_retry;
pub mod tokens;

pub use branch_summary::{
    BranchPreparation, BranchSummaryDetails, BranchSummaryError, BranchSummaryResult,
    CollectEntriesResult, GenerateBranchSummaryOptions, collect_entries_for_branch_summary,
    generate_branch_summary, prepare_branch_entries,
};
pub use cut_point::{CutPointResult, find_cut_point, find_turn_start_index, find_valid_cut_points};
pub use file_ops::{CompactionDetails, FileOperations, compute_file_lists, format_file_operations};
pub use prepare::{CompactionPreparation, message_from_entry, prepare_compaction};
pub use serialize::serialize_conversation;
pub use settings::{BranchSummarySettings, CompactionConfig, CompactionSettings, TokenBudgets};
pub use summarize::{
    CompactionError, CompactionResult, Summarizer, compact, generate_summary,
    generate_turn_prefix_summary,
};
pub use summary_retry::{SummaryRetry, SummaryRetryEvent};
pub use tokens::{
    ContextUsageEstimate, calculate_context_tokens, estimate_context_tokens,
    estimate_projected_context_tokens, estimate_tokens, get_last_assistant_usage, should_compact,
};

/// Session entries for the unit tests.
#[cfg(test)]
pub(crate) mod test_support {
    use serde_json::{Value, json};

    use pi_agent_core::AgentMessage;

    use crate::session::{EntryKind, SessionEntry};

    fn entry(id: &str, kind: EntryKind) -> SessionEntry {
        SessionEntry {
            id: id.into(),
            parent_id: None,
            timestamp: "2025-01-01T00:00:00.000Z".into(),
            kind,
        }
    }

    fn message(id: &str, value: Value) -> SessionEntry {
        let message: AgentMessage = serde_json::from_value(value).unwrap();
        entry(id, EntryKind::Message { message })
    }

    /// Links each entry to the one before it.
    pub fn linked(mut entries: Vec<SessionEntry>) -> Vec<SessionEntry> {
        for i in 1..entries.len() {
            entries[i].parent_id = Some(entries[i - 1].id.clone());
        }
        entries
    }

    pub fn user(id: &str, text: &str) -> SessionEntry {
        message(id, json!({"role": "user", "content": text, "timestamp": 1}))
    }

    pub fn assistant_text(id: &str, text: &str) -> SessionEntry {
        message(
            id,
            json!({"role": "assistant", "content": [{"type": "text", "text": text}],
                "api": "a", "provider": "p", "model": "m", "stopReason": "stop", "timestamp": 1}),
        )
    }

    /// Gives an assistant entry a usage report and a stop reason.
    pub fn with_usage(
        mut entry: SessionEntry,
        total: u64,
        stop: pi_ai::StopReason,
    ) -> SessionEntry {
        if let EntryKind::Message {
            message: AgentMessage::Llm(pi_ai::Message::Assistant(a)),
        } = &mut entry.kind
        {
            let a = std::sync::Arc::make_mut(a);
            a.usage.total_tokens = total;
            a.stop_reason = stop;
        }
        entry
    }

    pub fn assistant_call(id: &str, tool: &str, path: &str) -> SessionEntry {
        message(
            id,
            json!({"role": "assistant",
                "content": [{"type": "toolCall", "id": format!("call-{id}"), "name": tool, "arguments": {"path": path}}],
                "api": "a", "provider": "p", "model": "m", "stopReason": "toolUse", "timestamp": 1}),
        )
    }

    pub fn tool_result(id: &str, text: &str) -> SessionEntry {
        message(
            id,
            json!({"role": "toolResult", "toolCallId": "c", "toolName": "read",
                "content": [{"type": "text", "text": text}], "isError": false, "timestamp": 1}),
        )
    }

    pub fn bash(id: &str, command: &str, output: &str) -> SessionEntry {
        message(
            id,
            json!({"role": "bashExecution", "command": command, "output": output, "exitCode": 0,
                "cancelled": false, "truncated": false, "timestamp": 1}),
        )
    }

    /// pi 1.5's system record with a long prompt.
    pub fn system(id: &str) -> SessionEntry {
        message(
            id,
            json!({"role": "system", "content": "", "sections": {"preamble": "x".repeat(40_000)},
                "timestamp": 1, "toolsAdded": []}),
        )
    }

    pub fn thinking_change(id: &str) -> SessionEntry {
        entry(
            id,
            EntryKind::ThinkingLevelChange {
                thinking_level: "high".into(),
            },
        )
    }

    pub fn branch_summary_entry(id: &str, summary: &str) -> SessionEntry {
        entry(
            id,
            EntryKind::BranchSummary {
                from_id: "elsewhere".into(),
                summary: summary.into(),
                details: None,
                usage: None,
                from_hook: None,
            },
        )
    }

    pub fn custom_message_entry(id: &str, text: &str) -> SessionEntry {
        entry(
            id,
            EntryKind::CustomMessage {
                custom_type: "note".into(),
                content: Value::String(text.into()),
                details: None,
                display: true,
            },
        )
    }

    pub fn compaction_entry(id: &str, summary: &str, first_kept: &str) -> SessionEntry {
        entry(
            id,
            EntryKind::Compaction {
                summary: summary.into(),
                first_kept_entry_id: first_kept.into(),
                tokens_before: 1000,
                details: None,
                usage: None,
                from_hook: None,
                system_message: None,
            },
        )
    }
}
