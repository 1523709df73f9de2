//! The session tree: every entry of every branch in tree order, and the sidebar listing
//! them as pi 1.6.0's export does. A click on a sidebar node shows the branch through it
//! (to its newest leaf) and scrolls to the node's element; a tool result's node scrolls
//! to the tool call it belongs to, where the result is rendered.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, Message, StopReason, UserContent};

use super::format::esc;
use crate::session::{EntryKind, SessionEntry};

/// One entry in tree order with its indent (one level per branch point above it).
pub(super) struct TreeNode<'a> {
    pub(super) entry: &'a SessionEntry,
    pub(super) depth: usize,
}

/// Every entry, parents before children, siblings in file order (oldest first); an entry
/// whose parent is missing starts a tree of its own.
pub(super) fn tree_order(entries: &[SessionEntry]) -> Vec<TreeNode<'_>> {
    let ids: HashSet<&str> = entries.iter().map(|e| e.id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&SessionEntry>> = HashMap::new();
    let mut roots = Vec::new();
    for entry in entries {
        match entry.parent_id.as_deref().filter(|p| ids.contains(p)) {
            Some(parent) => children.entry(parent).or_default().push(entry),
            None => roots.push(entry),
        }
    }
    let mut out = Vec::with_capacity(entries.len());
    let root_depth = usize::from(roots.len() > 1);
    let mut stack: Vec<(&SessionEntry, usize)> =
        roots.into_iter().rev().map(|e| (e, root_depth)).collect();
    while let Some((entry, depth)) = stack.pop() {
        out.push(TreeNode { entry, depth });
        if let Some(kids) = children.get(entry.id.as_str()) {
            let depth = if kids.len() > 1 { depth + 1 } else { depth };
            stack.extend(kids.iter().rev().map(|k| (*k, depth)));
        }
    }
    out
}

/// Text flattened to one line and cut to 100 characters.
fn snippet(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(100) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None => line,
    }
}

/// How a tool call shows in the tree, as pi's tree writes it: `[read: src/a.rs]`,
/// `[bash: ls -la]`, `[name: {"json":"args"}]`.
fn tool_label(name: &str, args: &serde_json::Map<String, Value>) -> String {
    let arg = |keys: &[&str], default: &str| {
        keys.iter()
            .find_map(|k| args.get(*k).and_then(Value::as_str))
            .unwrap_or(default)
            .to_owned()
    };
    let cut = |text: &str, max: usize| match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    };
    match name {
        "read" | "write" | "edit" => format!("[{name}: {}]", arg(&["path", "file_path"], "")),
        "bash" => {
            let command = arg(&["command"], "").replace(['\n', '\t'], " ");
            format!("[bash: {}]", cut(command.trim(), 50))
        }
        "grep" => format!(
            "[grep: /{}/ in {}]",
            arg(&["pattern"], ""),
            arg(&["path"], ".")
        ),
        "find" => format!(
            "[find: {} in {}]",
            arg(&["pattern"], ""),
            arg(&["path"], ".")
        ),
        "ls" => format!("[ls: {}]", arg(&["path"], ".")),
        _ => {
            let json = serde_json::to_string(args).unwrap_or_default();
            format!("[{name}: {}]", cut(&json, 40))
        }
    }
}

/// The sidebar label of an entry (role class and text), or `None` for entries the tree
/// leaves out by default (settings changes, assistant turns with only tool calls).
fn node_label(
    entry: &SessionEntry,
    calls: &HashMap<&str, (&str, &serde_json::Map<String, Value>)>,
) -> Option<(&'static str, String)> {
    let text = |custom: &pi_agent_core::CustomMessage, key: &str| {
        custom
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned()
    };
    Some(match &entry.kind {
        EntryKind::Message { message } => match message {
            AgentMessage::Llm(Message::User(user)) => {
                let content = match &user.content {
                    UserContent::Text(text) => text.to_string(),
                    UserContent::Blocks(blocks) => blocks
                        .iter()
                        .filter_map(pi_ai::InputBlock::as_text)
                        .collect::<Vec<_>>()
                        .join(" "),
                };
                ("user", format!("user: {}", snippet(&content)))
            }
            AgentMessage::Llm(Message::Assistant(message)) => {
                let text: Vec<&str> = message
                    .content
                    .iter()
                    .filter_map(|b| match b {
                        AssistantBlock::Text(t) => Some(t.text.as_str()),
                        _ => None,
                    })
                    .collect();
                let text = snippet(&text.join(" "));
                if !text.is_empty() {
                    ("assistant", format!("assistant: {text}"))
                } else if message.stop_reason == StopReason::Aborted {
                    ("assistant", "assistant: (aborted)".to_owned())
                } else if let Some(error) = &message.error_message {
                    ("assistant", format!("assistant: {}", snippet(error)))
                } else {
                    return None;
                }
            }
            AgentMessage::Llm(Message::ToolResult(result)) => {
                let label = match calls.get(result.tool_call_id.as_str()) {
                    Some((name, args)) => tool_label(name, args),
                    None => format!("[{}]", result.tool_name),
                };
                ("tool", label)
            }
            AgentMessage::Custom(custom) => match custom.role.as_str() {
                "bashExecution" => (
                    "tool",
                    format!("[bash]: {}", snippet(&text(custom, "command"))),
                ),
                "compactionSummary" => ("compaction", "[compaction]".to_owned()),
                "branchSummary" => (
                    "summary",
                    format!("[branch summary]: {}", snippet(&text(custom, "summary"))),
                ),
                "custom" => (
                    "custom",
                    format!(
                        "[{}]: {}",
                        text(custom, "customType"),
                        content_text(custom.get("content"))
                    ),
                ),
                role => ("muted", format!("[{role}]")),
            },
        },
        EntryKind::Compaction { tokens_before, .. } => (
            "compaction",
            format!(
                "[compaction: {}k tokens]",
                (*tokens_before as f64 / 1000.0).round()
            ),
        ),
        EntryKind::BranchSummary { summary, .. } => {
            ("summary", format!("[branch summary]: {}", snippet(summary)))
        }
        EntryKind::CustomMessage {
            custom_type,
            content,
            ..
        } => (
            "custom",
            format!("[{custom_type}]: {}", content_text(Some(content))),
        ),
        _ => return None,
    })
}

/// The text of custom message content (a string or text blocks), as a snippet.
fn content_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(text)) => snippet(text),
        Some(Value::Array(blocks)) => snippet(
            &blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => String::new(),
    }
}

/// The id of the element a node scrolls to: the tool call for a tool result, else the
/// entry's own element.
fn target_id(entry: &SessionEntry, rendered_calls: &HashSet<&str>) -> String {
    if let EntryKind::Message {
        message: AgentMessage::Llm(Message::ToolResult(result)),
    } = &entry.kind
        && rendered_calls.contains(result.tool_call_id.as_str())
    {
        return format!("tool-call-{}", result.tool_call_id);
    }
    format!("entry-{}", entry.id)
}

/// The `<aside>` with the session tree; nodes on the shown branch are marked `in-path`.
pub(super) fn sidebar(tree: &[TreeNode<'_>], on_path: &HashSet<&str>) -> String {
    let mut calls = HashMap::new();
    for node in tree {
        if let Some(AgentMessage::Llm(Message::Assistant(a))) = node.entry.message() {
            for call in a.tool_calls() {
                calls.insert(call.id.as_str(), (call.name.as_str(), &call.arguments));
            }
        }
    }
    let rendered_calls: HashSet<&str> = calls.keys().copied().collect();
    let mut html = String::from(
        "<aside id=\"sidebar\" aria-label=\"Session tree\">\n<div class=\"tree-container\" id=\"tree-container\">\n",
    );
    let mut listed = 0;
    for node in tree {
        let Some((role, label)) = node_label(node.entry, &calls) else {
            continue;
        };
        listed += 1;
        let path = if on_path.contains(node.entry.id.as_str()) {
            " in-path"
        } else {
            ""
        };
        html.push_str(&format!(
            "<a class=\"tree-node tree-role-{role}{path}\" href=\"#{target}\" data-id=\"{id}\" data-target=\"{target}\" style=\"padding-left:{pad}px\">{}</a>\n",
            esc(&label),
            target = esc(&target_id(node.entry, &rendered_calls)),
            id = esc(&node.entry.id),
            pad = 8 + node.depth * 14,
        ));
    }
    html.push_str(&format!(
        "</div>\n<div class=\"tree-status\" id=\"tree-status\">{listed} / {} entries</div>\n</aside>\n",
        tree.len()
    ));
    html
}
