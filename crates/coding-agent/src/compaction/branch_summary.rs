//! Summaries of the branch being left when moving to another point of the session tree,
//! so what happened there is not lost.

use std::collections::{HashMap, HashSet};

use serde::Serialize;
use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::Model;

use super::file_ops::{
    CompactionDetails, FileOperations, compute_file_lists, format_file_operations,
};
use super::prepare::message_from_entry;
use super::serialize::serialize_conversation;
use super::summarize::{CallError, summary_call, summary_request_text, with_custom_instructions};
use super::tokens::estimate_tokens;
use crate::messages::convert_to_llm;
use crate::model_registry::RequestAuth;
use crate::session::context::{path_to, projected_messages};
use crate::session::{EntryKind, SessionEntry};

/// The file lists stored in a branch summary entry's `details` (same shape as compaction's).
pub type BranchSummaryDetails = CompactionDetails;

/// Put before every branch summary, telling the model what the summary is about.
pub const BRANCH_SUMMARY_PREAMBLE: &str =
    "The user went down another branch of this conversation and then came back here.
What happened on that branch:

";

/// Instructions for summarizing a branch.
pub const BRANCH_SUMMARY_PROMPT: &str = "Write a structured summary of the conversation branch above, \
so that what was done there is not lost once the conversation moves elsewhere.

Follow this layout exactly:

## Goal
[What the user was after in this branch]

## Constraints & Preferences
- [Requirements, restrictions or preferences that were stated]
- [Write \"(none)\" if there were none]

## Progress
### Done
- [x] [Finished work and changes made]

### In Progress
- [ ] [Work begun but not finished]

### Blocked
- [Whatever stopped progress, if anything did]

## Key Decisions
- **[Decision]**: [Why it was made, in a few words]

## Next Steps
1. [What would carry this work on]

Be brief in every section. Quote file paths, function names and error messages exactly as they appear.";

/// Entries of the branch being left, and where it meets the target's path.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectEntriesResult {
    /// Entries from just after the common ancestor to the old leaf, oldest first.
    pub entries: Vec<SessionEntry>,
    /// The deepest entry on both paths, if any.
    pub common_ancestor_id: Option<String>,
}

/// Messages chosen for a branch summary within a token budget.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchPreparation {
    /// Messages in chronological order.
    pub messages: Vec<AgentMessage>,
    /// Files read and changed along the whole branch.
    pub file_ops: FileOperations,
    /// Estimated tokens of `messages`.
    pub total_tokens: u64,
}

/// A finished branch summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct BranchSummaryResult {
    /// Preamble, the model's summary, then the file-list sections.
    pub summary: String,
    /// Files only read along the branch, sorted.
    pub read_files: Vec<String>,
    /// Files written or edited along the branch, sorted.
    pub modified_files: Vec<String>,
    /// What the summary call cost, stored in the `branch_summary` entry (pi 1.6).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<pi_ai::Usage>,
}

/// Why no branch summary was produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BranchSummaryError {
    /// The cancellation token fired.
    #[error("Branch summarization cancelled")]
    Aborted,
    /// The provider's error message, or why the answer is no summary (`Unknown error`
    /// when the provider gave none), worded as pi 1.6.0 reports it.
    #[error("Branch summarization failed: {0}")]
    Failed(String),
    /// The summarizer called a tool instead of summarizing.
    #[error("Branch summarization attempted to call a tool")]
    ToolCall,
}

/// How to call the model for a branch summary.
#[derive(Debug, Clone)]
pub struct GenerateBranchSummaryOptions<'a> {
    /// The model that writes the summary.
    pub model: &'a Model,
    /// API key and extra headers for the request.
    pub auth: &'a RequestAuth,
    /// Cancels the call; it then fails with [`BranchSummaryError::Aborted`].
    pub cancel: CancellationToken,
    /// Extra instructions, appended to the default prompt.
    pub custom_instructions: Option<&'a str>,
    /// With `custom_instructions`: use them instead of the default prompt.
    pub replace_instructions: bool,
    /// Tokens kept free for the prompt and reply (default 16384).
    pub reserve_tokens: u64,
    /// The session's thinking level, used when the model reasons and it is not `off`
    /// (pi 1.x: a reasoning model may refuse an effort of `none`).
    pub thinking_level: Option<pi_ai::ThinkingLevel>,
    /// Retries of transient failures; `None` sends the request once.
    pub retry: Option<super::SummaryRetry>,
}

impl<'a> GenerateBranchSummaryOptions<'a> {
    /// Default prompt and a reserve of 16384 tokens.
    pub fn new(model: &'a Model, auth: &'a RequestAuth, cancel: CancellationToken) -> Self {
        Self {
            model,
            auth,
            cancel,
            custom_instructions: None,
            replace_instructions: false,
            reserve_tokens: 16384,
            thinking_level: None,
            retry: None,
        }
    }
}

/// Collects the entries between the old leaf and the deepest ancestor it shares with
/// `target_id`, oldest first. Compactions on the way are included (their summaries count).
pub fn collect_entries_for_branch_summary(
    entries: &[SessionEntry],
    old_leaf_id: Option<&str>,
    target_id: &str,
) -> CollectEntriesResult {
    let Some(old_leaf_id) = old_leaf_id else {
        return CollectEntriesResult::default();
    };
    let by_id: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let old_path: HashSet<&str> = path_to(entries, &by_id, Some(old_leaf_id))
        .iter()
        .map(|e| e.id.as_str())
        .collect();
    let common_ancestor_id = path_to(entries, &by_id, Some(target_id))
        .iter()
        .rev()
        .find(|e| old_path.contains(e.id.as_str()))
        .map(|e| e.id.clone());

    let mut collected = Vec::new();
    let mut current = Some(old_leaf_id);
    while let Some(id) = current {
        if Some(id) == common_ancestor_id.as_deref() || collected.len() > entries.len() {
            break;
        }
        let Some(entry) = by_id.get(id).map(|&i| &entries[i]) else {
            break;
        };
        collected.push(entry.clone());
        current = entry.parent_id.as_deref();
    }
    collected.reverse();
    CollectEntriesResult {
        entries: collected,
        common_ancestor_id,
    }
}

/// The message an entry contributes to a branch summary: as for compaction, but tool
/// results are left out (the calls carry the context).
fn branch_message(entry: &SessionEntry) -> Option<AgentMessage> {
    match &entry.kind {
        EntryKind::Message { message } if message.role() == "toolResult" => None,
        _ => message_from_entry(entry),
    }
}

/// Chooses messages for a branch summary, newest first until `token_budget` (0 = no limit)
/// is reached; a summary entry that overflows is still taken while under 90% of the budget.
/// File operations come from every entry, including earlier branch summaries' `details`.
pub fn prepare_branch_entries(entries: &[SessionEntry], token_budget: u64) -> BranchPreparation {
    let mut file_ops = FileOperations::new();
    for entry in entries {
        if let EntryKind::BranchSummary {
            details: Some(details),
            from_hook,
            ..
        } = &entry.kind
            && *from_hook != Some(true)
        {
            file_ops.add_details(details);
        }
    }

    // Context edits hide or replace entries for the model; the summary sees what the model
    // saw (pi 1.5.0): the latest edit of each target among these entries applies.
    let edited: HashSet<&str> = entries
        .iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::ContextEdit { target_id, .. } => Some(target_id.as_str()),
            _ => None,
        })
        .collect();
    let projected = projected_messages(entries);
    let mut newest_first = Vec::new();
    let mut total_tokens = 0u64;
    for (index, entry) in entries.iter().enumerate().rev() {
        let editable = matches!(
            entry.kind,
            EntryKind::Message { .. } | EntryKind::CustomMessage { .. }
        );
        let message = match branch_message(entry) {
            Some(_) if editable && edited.contains(entry.id.as_str()) => projected[index].clone(),
            message => message,
        };
        let Some(message) = message else {
            continue;
        };
        file_ops.extract_from_message(&message);
        let tokens = estimate_tokens(&message);
        if token_budget > 0 && total_tokens + tokens > token_budget {
            let is_summary = matches!(
                entry.kind,
                EntryKind::Compaction { .. } | EntryKind::BranchSummary { .. }
            );
            if is_summary && (total_tokens as f64) < token_budget as f64 * 0.9 {
                newest_first.push(message);
                total_tokens += tokens;
            }
            break;
        }
        newest_first.push(message);
        total_tokens += tokens;
    }
    newest_first.reverse();
    BranchPreparation {
        messages: newest_first,
        file_ops,
        total_tokens,
    }
}

/// Summarizes the entries of a branch (oldest first) within the model's context window
/// minus the reserve; the result starts with [`BRANCH_SUMMARY_PREAMBLE`] and ends with the
/// file lists.
pub async fn generate_branch_summary(
    entries: &[SessionEntry],
    options: &GenerateBranchSummaryOptions<'_>,
) -> Result<BranchSummaryResult, BranchSummaryError> {
    let context_window = match options.model.context_window {
        0 => 128_000,
        window => window,
    };
    let token_budget = context_window.saturating_sub(options.reserve_tokens);
    let preparation = prepare_branch_entries(entries, token_budget);
    if preparation.messages.is_empty() {
        return Ok(BranchSummaryResult {
            summary: "No content to summarize".to_owned(),
            ..BranchSummaryResult::default()
        });
    }

    let conversation = serialize_conversation(&convert_to_llm(&preparation.messages));
    let instructions = match options.custom_instructions.filter(|c| !c.is_empty()) {
        Some(custom) if options.replace_instructions => custom.to_owned(),
        custom => with_custom_instructions(BRANCH_SUMMARY_PROMPT, custom),
    };
    let request = summary_request_text(&conversation, None, &instructions);
    let reasoning = options
        .thinking_level
        .filter(|level| options.model.reasoning && *level != pi_ai::ThinkingLevel::Off);
    let summarized = summary_call(
        options.model,
        options.auth,
        &options.cancel,
        request,
        reasoning,
        options.retry.as_ref(),
    )
    .await
    .map_err(|e| match e {
        CallError::Aborted => BranchSummaryError::Aborted,
        CallError::Failed(message) => {
            BranchSummaryError::Failed(message.unwrap_or_else(|| "Unknown error".to_owned()))
        }
        CallError::ToolCall => BranchSummaryError::ToolCall,
    })?;

    let lists = compute_file_lists(&preparation.file_ops);
    let summary = format!(
        "{BRANCH_SUMMARY_PREAMBLE}{}{}",
        summarized.text,
        format_file_operations(&lists.read_files, &lists.modified_files)
    );
    Ok(BranchSummaryResult {
        summary,
        read_files: lists.read_files,
        modified_files: lists.modified_files,
        usage: Some(summarized.usage),
    })
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use serde_json::json;

    fn ids(entries: &[SessionEntry]) -> Vec<&str> {
        entries.iter().map(|e| e.id.as_str()).collect()
    }

    /// root → a → b → c (old leaf), and a → x → y (target branch).
    fn tree() -> Vec<SessionEntry> {
        let mut entries = linked(vec![
            user("root", "r"),
            assistant_text("a", "a"),
            user("b", "b"),
            assistant_text("c", "c"),
        ]);
        let mut x = user("x", "x");
        x.parent_id = Some("a".into());
        let mut y = assistant_text("y", "y");
        y.parent_id = Some("x".into());
        entries.push(x);
        entries.push(y);
        entries
    }

    #[test]
    fn collects_from_old_leaf_back_to_common_ancestor() {
        let entries = tree();
        let result = collect_entries_for_branch_summary(&entries, Some("c"), "y");
        assert_eq!(result.common_ancestor_id.as_deref(), Some("a"));
        assert_eq!(ids(&result.entries), ["b", "c"]);
        // Moving to an ancestor of the old leaf: the ancestor is the target itself.
        let result = collect_entries_for_branch_summary(&entries, Some("c"), "root");
        assert_eq!(result.common_ancestor_id.as_deref(), Some("root"));
        assert_eq!(ids(&result.entries), ["a", "b", "c"]);
        assert_eq!(
            collect_entries_for_branch_summary(&entries, None, "y"),
            CollectEntriesResult::default()
        );
        // An unknown target shares nothing: the whole old path is collected.
        let result = collect_entries_for_branch_summary(&entries, Some("c"), "nope");
        assert_eq!(result.common_ancestor_id, None);
        assert_eq!(ids(&result.entries), ["root", "a", "b", "c"]);
    }

    #[test]
    fn budget_keeps_newest_messages_and_drops_tool_results() {
        let big = "x".repeat(400); // 100 tokens
        let entries = vec![
            user("u1", &big),
            assistant_call("a1", "read", "old.rs"),
            tool_result("t1", &big),
            user("u2", &big),
            assistant_text("a2", &big),
        ];
        let all = prepare_branch_entries(&entries, 0);
        assert_eq!(
            all.messages
                .iter()
                .map(AgentMessage::role)
                .collect::<Vec<_>>(),
            ["user", "assistant", "user", "assistant"]
        );
        assert_eq!(all.total_tokens, 100 + 6 + 100 + 100);
        let limited = prepare_branch_entries(&entries, 250);
        assert_eq!(limited.messages.len(), 3);
        assert_eq!(limited.total_tokens, 206);
        // a1 (6 tokens) no longer fits; its file operations still count.
        let limited = prepare_branch_entries(&entries, 205);
        assert_eq!(limited.messages.len(), 2);
        assert_eq!(limited.total_tokens, 200);
        assert_eq!(limited.file_ops.read.iter().collect::<Vec<_>>(), ["old.rs"]);
    }

    #[test]
    fn summaries_over_budget_still_fit_under_ninety_percent() {
        let big = "x".repeat(400);
        let mut summary = branch_summary_entry("s", &"y".repeat(800)); // 200 tokens
        if let EntryKind::BranchSummary { details, .. } = &mut summary.kind {
            *details = Some(json!({"readFiles": ["r.rs"], "modifiedFiles": ["m.rs"]}));
        }
        let mut hook_summary = branch_summary_entry("h", "z");
        if let EntryKind::BranchSummary {
            details, from_hook, ..
        } = &mut hook_summary.kind
        {
            *details = Some(json!({"readFiles": ["hook.rs"]}));
            *from_hook = Some(true);
        }
        let entries = vec![hook_summary, summary, user("u", &big)];
        let prep = prepare_branch_entries(&entries, 250);
        // 100 < 225: the summary is taken although it overflows the budget; then stop.
        assert_eq!(prep.total_tokens, 300);
        assert_eq!(
            prep.messages
                .iter()
                .map(AgentMessage::role)
                .collect::<Vec<_>>(),
            ["branchSummary", "user"]
        );
        assert_eq!(prep.file_ops.read.iter().collect::<Vec<_>>(), ["r.rs"]);
        assert_eq!(prep.file_ops.edited.iter().collect::<Vec<_>>(), ["m.rs"]);
        let prep = prepare_branch_entries(&entries, 105);
        assert_eq!(prep.total_tokens, 100);
    }

    #[tokio::test]
    async fn nothing_to_summarize_needs_no_model_call() {
        let model: Model = serde_json::from_value(json!({
            "id": "m", "name": "m", "api": "none", "provider": "p", "baseUrl": "",
            "reasoning": false, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 0, "maxTokens": 10
        }))
        .unwrap();
        let auth = RequestAuth::default();
        let options = GenerateBranchSummaryOptions::new(&model, &auth, CancellationToken::new());
        let result = generate_branch_summary(&[thinking_change("k")], &options)
            .await
            .unwrap();
        assert_eq!(result.summary, "No content to summarize");
        let err = generate_branch_summary(&[user("u", "hi")], &options)
            .await
            .unwrap_err();
        assert_eq!(
            err,
            BranchSummaryError::Failed("No API provider registered for api: none".into())
        );
    }
}
