//! Everything a compaction needs, worked out from the session path before any model call.

use pi_agent_core::AgentMessage;

use super::cut_point::find_cut_point;
use super::file_ops::FileOperations;
use super::settings::CompactionSettings;
use super::tokens::estimate_context_tokens;
use crate::session::context::{
    branch_summary_message, build_session_context, compaction_summary_message, custom_message,
    projected_messages,
};
use crate::session::{EntryKind, SessionEntry};

/// What to summarize and what to keep.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionPreparation {
    /// Id of the first entry kept after the compaction.
    pub first_kept_entry_id: String,
    /// Messages before the cut (or before the split turn) that the summary replaces.
    pub messages_to_summarize: Vec<AgentMessage>,
    /// With a split turn: the turn's messages before the cut, summarized separately.
    pub turn_prefix_messages: Vec<AgentMessage>,
    /// Whether the cut falls inside a turn.
    pub is_split_turn: bool,
    /// Estimated context tokens before compacting.
    pub tokens_before: u64,
    /// The previous compaction's summary, to be updated rather than restarted.
    pub previous_summary: Option<String>,
    /// Files read and changed in the summarized messages (and earlier compactions).
    pub file_ops: FileOperations,
    /// The settings in effect.
    pub settings: CompactionSettings,
}

/// The message an entry contributes to the conversation: messages as they are, custom
/// messages, branch summaries and compaction summaries as their message kinds.
pub fn message_from_entry(entry: &SessionEntry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message { message } => Some(message.clone()),
        EntryKind::CustomMessage {
            custom_type,
            content,
            details,
            display,
        } => Some(custom_message(
            custom_type,
            content,
            *display,
            details.as_ref(),
            &entry.timestamp,
        )),
        EntryKind::BranchSummary {
            from_id, summary, ..
        } => Some(branch_summary_message(summary, from_id, &entry.timestamp)),
        EntryKind::Compaction {
            summary,
            tokens_before,
            ..
        } => Some(compaction_summary_message(
            summary,
            *tokens_before,
            &entry.timestamp,
        )),
        _ => None,
    }
}

/// Works out a compaction of `path_entries` (root to leaf): starts after the previous
/// compaction's kept boundary, cuts to keep `keep_recent_tokens`, and gathers the messages
/// and file operations to summarize. `None` when the path ends with a compaction or there
/// is nothing to keep.
pub fn prepare_compaction(
    path_entries: &[SessionEntry],
    settings: &CompactionSettings,
) -> Option<CompactionPreparation> {
    if matches!(
        path_entries.last().map(|e| &e.kind),
        Some(EntryKind::Compaction { .. })
    ) {
        return None;
    }

    let previous = path_entries
        .iter()
        .enumerate()
        .rev()
        .find_map(|(i, entry)| match &entry.kind {
            EntryKind::Compaction {
                summary,
                first_kept_entry_id,
                details,
                from_hook,
                ..
            } => Some((i, summary, first_kept_entry_id, details, from_hook)),
            _ => None,
        });

    let mut previous_summary = None;
    let mut boundary_start = 0;
    if let Some((index, summary, first_kept_entry_id, _, _)) = previous {
        previous_summary = Some(summary.clone());
        boundary_start = path_entries
            .iter()
            .position(|e| &e.id == first_kept_entry_id)
            .unwrap_or(index + 1);
    }
    let boundary_end = path_entries.len();

    let tokens_before =
        estimate_context_tokens(&build_session_context(path_entries, None).messages).tokens;

    let cut = find_cut_point(
        path_entries,
        boundary_start,
        boundary_end,
        settings.keep_recent_tokens,
    );
    let first_kept_entry_id = path_entries
        .get(cut.first_kept_entry_index)
        .map(|e| e.id.clone())
        .filter(|id| !id.is_empty())?;

    let turn_start = cut.turn_start_index.filter(|_| cut.is_split_turn);
    let history_end = turn_start.unwrap_or(cut.first_kept_entry_index);
    // What the model saw of each entry: a message a context edit left out is not
    // summarized, an edited one is summarized as edited (pi 1.6.0's projection).
    let projected = projected_messages(path_entries);
    let collect = |from: usize, to: usize| -> Vec<AgentMessage> {
        (from..to.min(path_entries.len()))
            .filter(|&i| !matches!(path_entries[i].kind, EntryKind::Compaction { .. }))
            .filter_map(|i| projected[i].clone())
            .filter(|message| message.role() != "system")
            .collect()
    };
    let messages_to_summarize = collect(boundary_start, history_end);
    let turn_prefix_messages = turn_start
        .map(|start| collect(start, cut.first_kept_entry_index))
        .unwrap_or_default();
    // Everything is kept: nothing to summarize (pi 1.6.0 says the session is too small).
    if messages_to_summarize.is_empty() && turn_prefix_messages.is_empty() {
        return None;
    }

    let mut file_ops = FileOperations::new();
    if let Some((_, _, _, Some(details), from_hook)) = previous
        && *from_hook != Some(true)
    {
        file_ops.add_details(details);
    }
    for message in messages_to_summarize.iter().chain(&turn_prefix_messages) {
        file_ops.extract_from_message(message);
    }

    Some(CompactionPreparation {
        first_kept_entry_id,
        messages_to_summarize,
        turn_prefix_messages,
        is_split_turn: cut.is_split_turn,
        tokens_before,
        previous_summary,
        file_ops,
        settings: *settings,
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use pi_ai::StopReason;
    use serde_json::json;

    fn roles(messages: &[AgentMessage]) -> Vec<&str> {
        messages.iter().map(AgentMessage::role).collect()
    }

    fn settings(keep: u64) -> CompactionSettings {
        CompactionSettings {
            keep_recent_tokens: keep,
            ..CompactionSettings::default()
        }
    }

    #[test]
    fn nothing_to_do_after_a_compaction_or_on_an_empty_path() {
        assert_eq!(prepare_compaction(&[], &settings(10)), None);
        let entries = linked(vec![user("u1", "hi"), compaction_entry("c1", "s", "u1")]);
        assert_eq!(prepare_compaction(&entries, &settings(10)), None);
    }

    #[test]
    fn summarizes_history_before_a_user_cut() {
        let big = "x".repeat(400);
        let entries = linked(vec![
            user("u1", &big),
            assistant_call("a1", "read", "src/a.rs"),
            tool_result("t1", "contents"),
            assistant_text("a2", &big),
            user("u2", &big),
            with_usage(assistant_text("a3", &big), 5000, StopReason::Stop),
        ]);
        let prep = prepare_compaction(&entries, &settings(150)).unwrap();
        assert_eq!(prep.first_kept_entry_id, "u2");
        assert!(!prep.is_split_turn);
        assert_eq!(
            roles(&prep.messages_to_summarize),
            ["user", "assistant", "toolResult", "assistant"]
        );
        assert!(prep.turn_prefix_messages.is_empty());
        assert_eq!(prep.previous_summary, None);
        assert_eq!(prep.file_ops.read.iter().collect::<Vec<_>>(), ["src/a.rs"]);
        // The last assistant's usage report.
        assert_eq!(prep.tokens_before, 5000);
        assert_eq!(prep.settings, settings(150));
    }

    #[test]
    fn split_turn_separates_the_turn_prefix() {
        let big = "x".repeat(400);
        let entries = linked(vec![
            user("u0", "earlier"),
            assistant_text("a0", "answer"),
            user("u1", "start"),
            assistant_call("a1", "edit", "src/e.rs"),
            tool_result("t1", &big),
            assistant_call("a2", "write", "src/w.rs"),
            tool_result("t2", &big),
            assistant_text("a3", "done"),
        ]);
        let prep = prepare_compaction(&entries, &settings(150)).unwrap();
        assert!(prep.is_split_turn);
        assert_eq!(prep.first_kept_entry_id, "a2");
        assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
        assert_eq!(
            roles(&prep.turn_prefix_messages),
            ["user", "assistant", "toolResult"]
        );
        // File operations of the turn prefix count too; the kept part's do not.
        assert_eq!(
            prep.file_ops.edited.iter().collect::<Vec<_>>(),
            ["src/e.rs"]
        );
        assert!(prep.file_ops.written.is_empty());
    }

    #[test]
    fn continues_from_the_previous_compaction() {
        let big = "x".repeat(400);
        let mut compaction = compaction_entry("c1", "old summary", "u2");
        if let EntryKind::Compaction { details, .. } = &mut compaction.kind {
            *details = Some(json!({"readFiles": ["old/r.rs"], "modifiedFiles": ["old/m.rs"]}));
        }
        let entries = linked(vec![
            user("u1", &big),
            assistant_text("a1", &big),
            user("u2", &big),
            assistant_call("a2", "read", "new.rs"),
            compaction,
            user("u3", &big),
            with_usage(assistant_text("a3", &big), 1234, StopReason::Stop),
            user("u4", &big),
            with_usage(assistant_text("a4", &big), 9999, StopReason::Aborted),
        ]);
        let prep = prepare_compaction(&entries, &settings(150)).unwrap();
        assert_eq!(prep.previous_summary.as_deref(), Some("old summary"));
        assert_eq!(prep.first_kept_entry_id, "u4");
        // From u2 (the old boundary) up to u4, the compaction entry itself left out.
        assert_eq!(
            roles(&prep.messages_to_summarize),
            ["user", "assistant", "user", "assistant"]
        );
        assert_eq!(
            prep.file_ops.read.iter().collect::<Vec<_>>(),
            ["new.rs", "old/r.rs"]
        );
        assert_eq!(
            prep.file_ops.edited.iter().collect::<Vec<_>>(),
            ["old/m.rs"]
        );
        // a3's usage, then estimates for u4 and the aborted a4.
        assert_eq!(prep.tokens_before, 1234 + 100 + 100);
    }

    #[test]
    fn hook_compaction_details_are_not_carried_over() {
        let mut compaction = compaction_entry("c1", "hook summary", "zz");
        if let EntryKind::Compaction {
            details, from_hook, ..
        } = &mut compaction.kind
        {
            *details = Some(json!({"readFiles": ["old/r.rs"]}));
            *from_hook = Some(true);
        }
        let big = "x".repeat(400);
        let entries = linked(vec![
            user("u1", &big),
            compaction,
            user("u2", "short"),
            assistant_text("a2", "short"),
            user("u3", &big),
            assistant_text("a3", &big),
        ]);
        let prep = prepare_compaction(&entries, &settings(150)).unwrap();
        // Unknown first kept id: start right after the compaction.
        assert_eq!(roles(&prep.messages_to_summarize), ["user", "assistant"]);
        assert_eq!(prep.first_kept_entry_id, "u3");
        assert!(prep.file_ops.read.is_empty());
    }

    #[test]
    fn entry_kinds_become_messages() {
        assert_eq!(
            message_from_entry(&branch_summary_entry("b", "s")).map(|m| m.role().to_owned()),
            Some("branchSummary".into())
        );
        assert_eq!(
            message_from_entry(&custom_message_entry("c", "n")).map(|m| m.role().to_owned()),
            Some("custom".into())
        );
        assert_eq!(
            message_from_entry(&compaction_entry("p", "s", "x")).map(|m| m.role().to_owned()),
            Some("compactionSummary".into())
        );
        assert_eq!(message_from_entry(&thinking_change("k")), None);
    }
}
