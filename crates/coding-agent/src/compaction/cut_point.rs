//! Where to cut a session for compaction: keep roughly the newest `keep_recent_tokens`,
//! never separating a tool result from the call that produced it.

use pi_agent_core::AgentMessage;

use super::tokens::estimate_tokens;
use crate::session::context::projected_messages;
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

/// Each entry's message after the branch's context edits, as compaction sees it. A system
/// message counts toward what is kept and stops the cut moving back, as in pi 1.6.0's
/// projection, though no cut falls on it.
fn projected(entries: &[SessionEntry]) -> Vec<Option<AgentMessage>> {
    projected_messages(entries)
}

/// A message a cut may fall on: never a tool result (it must stay with its call).
fn is_cut_point_message(message: &AgentMessage) -> bool {
    matches!(
        message.role(),
        "user" | "assistant" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary"
    )
}

/// A message that starts a turn.
fn is_turn_start_message(message: &AgentMessage) -> bool {
    matches!(
        message.role(),
        "user" | "bashExecution" | "custom" | "branchSummary" | "compactionSummary"
    )
}

/// Whether entry `i` is a cut point / turn start: judged by what the model sees of it, so
/// an entry a context edit leaves out is neither; a compaction entry never is.
fn projected_is(
    entries: &[SessionEntry],
    projected: &[Option<AgentMessage>],
    i: usize,
    test: fn(&AgentMessage) -> bool,
) -> bool {
    !matches!(entries[i].kind, EntryKind::Compaction { .. })
        && projected[i].as_ref().is_some_and(test)
}

/// Indices in `start..end` where a cut may fall: entries whose visible message is a user,
/// assistant, `bashExecution`, `custom`, `branchSummary` or `compactionSummary` message.
pub fn find_valid_cut_points(entries: &[SessionEntry], start: usize, end: usize) -> Vec<usize> {
    cut_points(entries, &projected(entries), start, end)
}

fn cut_points(
    entries: &[SessionEntry],
    projected: &[Option<AgentMessage>],
    start: usize,
    end: usize,
) -> Vec<usize> {
    (start..end.min(entries.len()))
        .filter(|&i| projected_is(entries, projected, i, is_cut_point_message))
        .collect()
}

/// The entry that starts the turn holding `entry_index`, searching back to `start_index`:
/// one whose visible message is a user, `bashExecution`, custom or summary message.
pub fn find_turn_start_index(
    entries: &[SessionEntry],
    entry_index: usize,
    start_index: usize,
) -> Option<usize> {
    turn_start(entries, &projected(entries), entry_index, start_index)
}

fn turn_start(
    entries: &[SessionEntry],
    projected: &[Option<AgentMessage>],
    entry_index: usize,
    start_index: usize,
) -> Option<usize> {
    if entries.is_empty() || entry_index < start_index {
        return None;
    }
    let last = entry_index.min(entries.len() - 1);
    (start_index..=last)
        .rev()
        .find(|&i| projected_is(entries, projected, i, is_turn_start_message))
}

/// Finds the cut in `start..end` that keeps about `keep_recent_tokens`, as pi 1.6.0's
/// `findProjectedCutPoint` does: walks back from the newest message summing the estimates
/// of what the model sees; once the sum reaches the budget, cuts at the first cut point at
/// or after that message (the last one if none follows). A cut followed only by a recovery
/// attempt the context leaves out (a reply cut short, and its edit) moves past it. Then the
/// cut moves back over entries the model does not see, up to a message or compaction.
pub fn find_cut_point(
    entries: &[SessionEntry],
    start: usize,
    end: usize,
    keep_recent_tokens: u64,
) -> CutPointResult {
    let end = end.min(entries.len());
    let projected = projected(entries);
    let cut_points = cut_points(entries, &projected, start, end);
    let (Some(&first_cut_point), Some(&last_cut_point)) = (cut_points.first(), cut_points.last())
    else {
        return CutPointResult {
            first_kept_entry_index: start,
            turn_start_index: None,
            is_split_turn: false,
        };
    };

    let mut accumulated = 0u64;
    let mut cut_index = first_cut_point;
    let mut exceeded_budget = false;
    for i in (start..end).rev() {
        let tokens = projected[i].as_ref().map_or(0, estimate_tokens);
        if tokens == 0 {
            continue;
        }
        accumulated += tokens;
        if accumulated >= keep_recent_tokens {
            exceeded_budget = true;
            cut_index = cut_points
                .iter()
                .copied()
                .find(|&c| c >= i)
                .unwrap_or(last_cut_point);
            break;
        }
    }

    if exceeded_budget && is_recovery_omission(entries, &projected, cut_index + 1, end) {
        cut_index += 1;
    }

    while cut_index > start {
        let before = cut_index - 1;
        if matches!(entries[before].kind, EntryKind::Compaction { .. })
            || projected[before].is_some()
        {
            break;
        }
        cut_index -= 1;
    }

    let starts_turn = projected_is(entries, &projected, cut_index, is_turn_start_message);
    let turn_start_index = if starts_turn {
        None
    } else {
        turn_start(entries, &projected, cut_index, start)
    };
    CutPointResult {
        first_kept_entry_index: cut_index,
        turn_start_index,
        is_split_turn: turn_start_index.is_some(),
    }
}

/// Whether `from..end` holds only a recovery attempt the context leaves out: an omitted
/// assistant reply, with nothing visible and no edit replacing anything else.
fn is_recovery_omission(
    entries: &[SessionEntry],
    projected: &[Option<AgentMessage>],
    from: usize,
    end: usize,
) -> bool {
    let suffix = from..end;
    let visible_unedited = |i: usize| match &entries[i].kind {
        EntryKind::Message { message } => message.role() != "system",
        EntryKind::CustomMessage { .. } | EntryKind::Compaction { .. } => true,
        EntryKind::BranchSummary { summary, .. } => !summary.is_empty(),
        _ => false,
    };
    let omitted = |i: usize| visible_unedited(i) && projected[i].is_none();
    let omitted_ids: Vec<&str> = suffix
        .clone()
        .filter(|&i| omitted(i))
        .map(|i| entries[i].id.as_str())
        .collect();
    let replaces_other = suffix.clone().any(|i| {
        matches!(&entries[i].kind, EntryKind::ContextEdit { target_id, replacement: Some(_) }
            if !omitted_ids.contains(&target_id.as_str()))
    });
    let omitted_reply = suffix.clone().any(|i| {
        omitted(i) && matches!(&entries[i].kind, EntryKind::Message { message } if message.role() == "assistant")
    });
    !replaces_other
        && omitted_reply
        && suffix.clone().all(|i| {
            !matches!(entries[i].kind, EntryKind::Compaction { .. })
                && (!visible_unedited(i) || omitted(i))
        })
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
    fn the_system_message_stops_the_cut_but_is_no_cut_point() {
        // Under budget: the cut is the first cut point, and moving back it stops at the
        // system message, which the model sees (pi 1.6.0's projection).
        let entries = vec![
            thinking_change("k1"),
            system("s1"),
            user("u1", "hello"),
            assistant_text("a1", "hi"),
        ];
        let cut = find_cut_point(&entries, 0, entries.len(), 1000);
        assert_eq!(cut.first_kept_entry_index, 2);
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
    fn no_cut_point_after_the_budget_takes_the_last() {
        // The budget is reached at the tool result, after the last cut point: pi 1.6.0
        // cuts at that last one (the call), splitting its turn.
        let big = "x".repeat(400);
        let entries = vec![
            user("u1", "start"),
            assistant_call("a1", "read", "a.rs"),
            tool_result("t1", &big),
        ];
        let cut = find_cut_point(&entries, 0, entries.len(), 50);
        assert_eq!(cut.first_kept_entry_index, 1);
        assert_eq!(cut.turn_start_index, Some(0));
        assert!(cut.is_split_turn);
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
