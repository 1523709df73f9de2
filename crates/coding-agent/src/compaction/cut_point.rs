//! Where to cut a session for compaction: keep roughly the newest `keep_recent_tokens`,
//! never separating a tool result from the call that produced it.

use super::tokens::estimate_tokens;
use crate::session::context::{branch_summary_message, custom_message};
use crate::session::{EntryKind, SessionEntry};

/// Where a compaction cuts the entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CutPointResult {
    /// Index of the first entry kept.
    pub first_kept_entry_index: usize,
    /// When the cut splits a turn: index of the entry that started that turn.
    pub turn_start_index: Option<usize>,
    /// Whether the cut falls inside a turn (the first kept entry is not a user message).
    pub is_split_turn: bool,
}

fn message_role(entry: &SessionEntry) -> Option<&str> {
    match &entry.kind {
        EntryKind::Message { message } => Some(message.role()),
        _ => None,
    }
}

/// Indices in `start..end` where a cut may fall: user, assistant, `bashExecution`, `custom`,
/// `branchSummary` and `compactionSummary` messages, and `branch_summary` / `custom_message`
/// entries; never a tool result (it must stay with its call).
pub fn find_valid_cut_points(entries: &[SessionEntry], start: usize, end: usize) -> Vec<usize> {
    let end = end.min(entries.len());
    (start..end)
        .filter(|&i| match &entries[i].kind {
            EntryKind::Message { message } => matches!(
                message.role(),
                "bashExecution"
                    | "custom"
                    | "branchSummary"
                    | "compactionSummary"
                    | "user"
                    | "assistant"
            ),
            EntryKind::BranchSummary { .. } | EntryKind::CustomMessage { .. } => true,
            _ => false,
        })
        .collect()
}

/// The entry that starts the turn holding `entry_index`, searching back to `start_index`:
/// a user or `bashExecution` message, or a `branch_summary` / `custom_message` entry.
pub fn find_turn_start_index(
    entries: &[SessionEntry],
    entry_index: usize,
    start_index: usize,
) -> Option<usize> {
    if entries.is_empty() || entry_index < start_index {
        return None;
    }
    let last = entry_index.min(entries.len() - 1);
    (start_index..=last)
        .rev()
        .find(|&i| match &entries[i].kind {
            EntryKind::BranchSummary { .. } | EntryKind::CustomMessage { .. } => true,
            EntryKind::Message { message } => {
                matches!(message.role(), "user" | "bashExecution")
            }
            _ => false,
        })
}

/// Finds the cut in `start..end` that keeps about `keep_recent_tokens`: walks back from the
/// newest message summing estimates; once the sum reaches the budget, cuts at the first valid
/// cut point at or after that message (the first cut point if none follows), then moves back
/// over non-message entries (model or thinking changes, labels…, and pi 1.5's system
/// messages) up to a message or compaction.
pub fn find_cut_point(
    entries: &[SessionEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPointResult {
    let end = end.min(entries.len());
    let cut_points = find_valid_cut_points(entries, start, end);
    let Some(&first_cut_point) = cut_points.first() else {
        return CutPointResult {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };

    let mut accumulated = 0u64;
    let mut cut_index = first_cut_point;
    for i in (start..end).rev() {
        let tokens = context_tokens(&entries[i]);
        if tokens == 0 {
            continue;
        }
        accumulated += tokens;
        if accumulated >= keep_recent_tokens {
            if let Some(&c) = cut_points.iter().find(|&&c| c >= i) {
                cut_index = c;
            }
            break;
        }
    }

    while cut_index > start {
        let before = &entries[cut_index - 1];
        if matches!(before.kind, EntryKind::Compaction { .. }) || context_visible(before) {
            break;
        }
        cut_index -= 1;
    }

    let is_user_message = message_role(&entries[cut_index]) == Some("user");
    let turn_start_index = if is_user_message {
        None
    } else {
        find_turn_start_index(entries, cut_index, start)
    };
    CutPointResult {
        first_kept_entry_index: cut_index,
        turn_start_index,
        is_split_turn: turn_start_index.is_some(),
    }
}

/// Whether the model sees an entry: a message (not pi 1.5's system record), a
/// `custom_message` entry or a branch summary with text.
fn context_visible(entry: &SessionEntry) -> bool {
    match &entry.kind {
        EntryKind::Message { message } => message.role() != "system",
        EntryKind::CustomMessage { .. } => true,
        EntryKind::BranchSummary { summary, .. } => !summary.is_empty(),
        _ => false,
    }
}

/// The estimated tokens an entry puts in the context: its message, a `custom_message`
/// entry's or a branch summary's (pi 0.80.4 counts these too); 0 for entries the model
/// does not see, and for pi 1.5's system record, which is not conversation.
fn context_tokens(entry: &SessionEntry) -> u64 {
    match &entry.kind {
        EntryKind::Message { message } if message.role() == "system" => 0,
        EntryKind::Message { message } => estimate_tokens(message),
        EntryKind::CustomMessage {
            custom_type,
            content,
            details,
            display,
        } => estimate_tokens(&custom_message(
            custom_type,
            content,
            *display,
            details.as_ref(),
            &entry.timestamp,
        )),
        EntryKind::BranchSummary {
            from_id, summary, ..
        } if !summary.is_empty() => {
            estimate_tokens(&branch_summary_message(summary, from_id, &entry.timestamp))
        }
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn tool_results_are_never_cut_points() {
        let entries = vec![
            user("u1", "hello"),
            assistant_call("a1", "read", "x.rs"),
            tool_result("t1", "contents"),
            thinking_change("k1"),
            bash("b1", "ls", "out"),
            branch_summary_entry("s1", "sum"),
            custom_message_entry("c1", "note"),
            compaction_entry("p1", "sum", "u1"),
        ];
        assert_eq!(
            find_valid_cut_points(&entries, 0, entries.len()),
            vec![0, 1, 4, 5, 6]
        );
        assert_eq!(find_valid_cut_points(&entries, 2, 4), Vec::<usize>::new());
    }

    #[test]
    fn turn_start_is_user_bash_or_summary_entries() {
        let entries = vec![
            user("u1", "hello"),
            assistant_call("a1", "read", "x.rs"),
            tool_result("t1", "contents"),
            assistant_text("a2", "done"),
        ];
        assert_eq!(find_turn_start_index(&entries, 3, 0), Some(0));
        assert_eq!(find_turn_start_index(&entries, 3, 1), None);
        let entries = vec![
            user("u1", "hello"),
            bash("b1", "ls", "out"),
            assistant_text("a2", "done"),
        ];
        assert_eq!(find_turn_start_index(&entries, 2, 0), Some(1));
    }

    #[test]
    fn the_system_record_neither_counts_nor_stops_the_cut() {
        // Under budget: the cut moves back over the system message to the first entry, as
        // it does over a thinking-level change (0.73 cut here too).
        let entries = vec![
            thinking_change("k1"),
            system("s1"),
            user("u1", "hello"),
            assistant_text("a1", "hi"),
        ];
        let cut = find_cut_point(&entries, 0, entries.len(), 1000);
        assert_eq!(cut.first_kept_entry_index, 0);
        assert!(!cut.is_split_turn);
    }

    #[test]
    fn keeps_everything_when_under_budget() {
        let entries = vec![
            user("u1", "hello"),
            assistant_text("a1", "hi"),
            user("u2", "more"),
        ];
        let cut = find_cut_point(&entries, 0, entries.len(), 1000);
        assert_eq!(
            cut,
            CutPointResult {
                first_kept_entry_index: 0,
                turn_start_index: None,
                is_split_turn: false
            }
        );
    }

    #[test]
    fn cuts_at_user_message_when_budget_reached_there() {
        let big = "x".repeat(400); // 100 tokens
        let entries = vec![
            user("u1", &big),
            assistant_text("a1", &big),
            user("u2", &big),
            assistant_text("a2", &big),
        ];
        // From the end: a2 = 100, u2 = 200 ≥ 150 → cut at u2.
        let cut = find_cut_point(&entries, 0, entries.len(), 150);
        assert_eq!(cut.first_kept_entry_index, 2);
        assert!(!cut.is_split_turn);
        assert_eq!(cut.turn_start_index, None);
    }

    #[test]
    fn splits_turn_at_assistant_and_skips_tool_results() {
        let big = "x".repeat(400);
        let entries = vec![
            user("u1", "start"),
            assistant_call("a1", "read", "a.rs"),
            tool_result("t1", &big),
            assistant_call("a2", "read", "b.rs"),
            tool_result("t2", &big),
            assistant_text("a3", "done"),
        ];
        // a3 = 1, t2 = 101, t1 = 201 ≥ 150 at index 2 (a tool result) → next cut point is a2.
        let cut = find_cut_point(&entries, 0, entries.len(), 150);
        assert_eq!(
            cut,
            CutPointResult {
                first_kept_entry_index: 3,
                turn_start_index: Some(0),
                is_split_turn: true
            }
        );
    }

    #[test]
    fn no_cut_point_after_the_budget_falls_back_to_first() {
        let big = "x".repeat(400);
        let entries = vec![
            user("u1", "start"),
            assistant_call("a1", "read", "a.rs"),
            tool_result("t1", &big),
        ];
        let cut = find_cut_point(&entries, 0, entries.len(), 50);
        assert_eq!(cut.first_kept_entry_index, 0);
        assert!(!cut.is_split_turn);
    }

    #[test]
    fn cut_moves_back_over_settings_entries_but_not_past_compaction() {
        let big = "x".repeat(400);
        let entries = vec![
            user("u1", &big),
            assistant_text("a1", &big),
            thinking_change("k1"),
            user("u2", &big),
            assistant_text("a2", &big),
        ];
        let cut = find_cut_point(&entries, 0, entries.len(), 150);
        // The thinking change before u2 is kept with it; as in the TypeScript pi, the cut
        // entry is then not a user message, so the turn of u1 counts as split.
        assert_eq!(cut.first_kept_entry_index, 2);
        assert_eq!(cut.turn_start_index, Some(0));
        assert!(cut.is_split_turn);

        let entries = vec![
            user("u1", &big),
            compaction_entry("p1", "sum", "u1"),
            thinking_change("k1"),
            user("u2", &big),
        ];
        let cut = find_cut_point(&entries, 2, entries.len(), 10);
        assert_eq!(cut.first_kept_entry_index, 2);
        let cut = find_cut_point(&entries, 0, entries.len(), 10);
        assert_eq!(cut.first_kept_entry_index, 2);
    }

    #[test]
    fn empty_range_keeps_from_start() {
        let entries = vec![thinking_change("k1")];
        let cut = find_cut_point(&entries, 0, 1, 10);
        assert_eq!(cut.first_kept_entry_index, 0);
        assert!(!cut.is_split_turn);
    }
}
