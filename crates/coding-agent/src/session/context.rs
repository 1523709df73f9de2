//! The conversation a session holds along the path from the root to a leaf, with
//! compaction and branch summaries, plus the model and thinking level in effect there.

use std::collections::HashMap;

use serde_json::{Map, Value};

use pi_agent_core::{AgentMessage, CustomMessage};

use super::entry::{EntryKind, SessionEntry};

/// What a session contributes to the next run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionContext {
    pub messages: Vec<AgentMessage>,
    pub thinking_level: String,
    /// `(provider, model id)` of the most recent model change or assistant message.
    pub model: Option<(String, String)>,
    /// The custom entries (`appendEntry`, as stored) in context, each with the number of
    /// messages before it: where the transcript shows them (pi 1.6's entry renderers).
    pub custom_entries: Vec<(usize, Value)>,
}

fn millis(timestamp: &str) -> Value {
    Value::from(super::time::parse_iso_millis(timestamp).unwrap_or(0))
}

fn custom(role: &str, fields: Vec<(&str, Value)>) -> AgentMessage {
    let map: Map<String, Value> = fields.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
    AgentMessage::Custom(CustomMessage::new(role, map))
}

/// `{"role":"compactionSummary","summary",…,"tokensBefore","timestamp"}`.
pub fn compaction_summary_message(
    summary: &str,
    tokens_before: u64,
    timestamp: &str,
) -> AgentMessage {
    custom(
        "compactionSummary",
        vec![
            ("summary", summary.into()),
            ("tokensBefore", tokens_before.into()),
            ("timestamp", millis(timestamp)),
        ],
    )
}

/// `{"role":"branchSummary","summary","fromId","timestamp"}`.
pub fn branch_summary_message(summary: &str, from_id: &str, timestamp: &str) -> AgentMessage {
    custom(
        "branchSummary",
        vec![
            ("summary", summary.into()),
            ("fromId", from_id.into()),
            ("timestamp", millis(timestamp)),
        ],
    )
}

/// `{"role":"custom","customType","content","display","details"?,"timestamp"}`.
pub fn custom_message(
    custom_type: &str,
    content: &Value,
    display: bool,
    details: Option<&Value>,
    timestamp: &str,
) -> AgentMessage {
    let mut fields = vec![
        ("customType", custom_type.into()),
        ("content", content.clone()),
        ("display", display.into()),
    ];
    if let Some(details) = details {
        fields.push(("details", details.clone()));
    }
    fields.push(("timestamp", millis(timestamp)));
    custom("custom", fields)
}

/// The context edits along a branch: target id → its replacement (`None` leaves it out);
/// later edits win.
type Edits<'a> = HashMap<&'a str, Option<&'a Value>>;

fn edits_on<'a>(path: &[&'a SessionEntry]) -> Edits<'a> {
    let mut edits = HashMap::new();
    for entry in path {
        if let EntryKind::ContextEdit {
            target_id,
            replacement,
        } = &entry.kind
        {
            edits.insert(target_id.as_str(), replacement.as_ref());
        }
    }
    edits
}

/// `message` with its content replaced as a context edit says (a string becomes one text
/// block for assistant and tool-result messages, as pi 1.5 normalises it).
fn edited_message(message: &AgentMessage, replacement: &Value) -> Option<AgentMessage> {
    let content = replacement.get("content")?;
    let mut value = serde_json::to_value(message).ok()?;
    let role = value
        .get("role")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let content = match content {
        Value::String(text) if matches!(role, "assistant" | "toolResult") => {
            serde_json::json!([{"type": "text", "text": text}])
        }
        other => other.clone(),
    };
    value.as_object_mut()?.insert("content".into(), content);
    serde_json::from_value(value).ok()
}

fn append(messages: &mut Vec<AgentMessage>, entry: &SessionEntry, edits: &Edits<'_>) {
    let edit = edits.get(entry.id.as_str()).copied();
    if matches!(edit, Some(None)) {
        return;
    }
    let replacement = edit.flatten();
    match &entry.kind {
        EntryKind::Message { message } => messages.push(
            replacement
                .and_then(|r| edited_message(message, r))
                .unwrap_or_else(|| message.clone()),
        ),
        EntryKind::CustomMessage {
            custom_type,
            content,
            details,
            display,
        } => {
            let content = replacement
                .and_then(|r| r.get("content"))
                .unwrap_or(content);
            messages.push(custom_message(
                custom_type,
                content,
                *display,
                details.as_ref(),
                &entry.timestamp,
            ));
        }
        EntryKind::BranchSummary {
            from_id, summary, ..
        } if !summary.is_empty() => {
            messages.push(branch_summary_message(summary, from_id, &entry.timestamp));
        }
        _ => {}
    }
}

/// Each entry's message as the model sees it after the context edits among `path` (root
/// first): `None` for an entry an edit leaves out and for entries that hold no message.
pub fn projected_messages(path: &[SessionEntry]) -> Vec<Option<AgentMessage>> {
    let refs: Vec<&SessionEntry> = path.iter().collect();
    let edits = edits_on(&refs);
    path.iter()
        .map(|entry| {
            let mut out = Vec::with_capacity(1);
            append(&mut out, entry, &edits);
            out.pop()
        })
        .collect()
}

/// The path from the root to `leaf` (the last entry when `None`).
pub fn path_to<'a>(
    entries: &'a [SessionEntry],
    by_id: &HashMap<&str, usize>,
    leaf: Option<&str>,
) -> Vec<&'a SessionEntry> {
    let start = match leaf {
        Some(id) => by_id.get(id).copied(),
        None => entries.len().checked_sub(1),
    };
    let mut path = Vec::new();
    let mut current = start;
    while let Some(index) = current {
        let entry = &entries[index];
        path.push(entry);
        // A cycle in a damaged file must not loop forever.
        if path.len() > entries.len() {
            break;
        }
        current = entry
            .parent_id
            .as_deref()
            .and_then(|p| parent_index(entries, index, p, |p| by_id.get(p)));
    }
    path.reverse();
    path
}

/// Builds the context along the path to `leaf`: with a compaction on the path, its summary,
/// then the kept messages from `firstKeptEntryId`, then everything after it.
pub fn build_session_context(entries: &[SessionEntry], leaf: Option<&str>) -> SessionContext {
    let by_id: HashMap<&str, usize> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    context_along(&path_to(entries, &by_id, leaf))
}

/// The model and thinking level in effect at the end of a path, and whether it holds
/// messages, without building its context.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BranchSettings {
    pub thinking_level: String,
    pub model: Option<(String, String)>,
    pub has_messages: bool,
}

/// [`BranchSettings`] of `path` (root first), and the index of its last compaction.
fn settings_along(path: &[&SessionEntry]) -> (BranchSettings, Option<usize>) {
    // Borrowed while walking, copied once at the end.
    let mut thinking_level = "off";
    let mut model: Option<(&str, &str)> = None;
    let mut has_messages = false;
    let mut compaction: Option<usize> = None;
    for (index, entry) in path.iter().enumerate() {
        match &entry.kind {
            EntryKind::ThinkingLevelChange {
                thinking_level: level,
            } => thinking_level = level,
            EntryKind::ModelChange { provider, model_id } => model = Some((provider, model_id)),
            EntryKind::Message { message } => {
                has_messages = true;
                if let Some(a) = message.as_assistant() {
                    model = Some((&a.provider, &a.model));
                }
            }
            EntryKind::Compaction { .. } => compaction = Some(index),
            EntryKind::CustomMessage { .. } => has_messages = true,
            EntryKind::BranchSummary { summary, .. } if !summary.is_empty() => has_messages = true,
            _ => {}
        }
    }
    let settings = BranchSettings {
        thinking_level: thinking_level.to_owned(),
        model: model.map(|(p, m)| (p.to_owned(), m.to_owned())),
        has_messages,
    };
    (settings, compaction)
}

/// The settings at the end of `path` (root first).
pub fn branch_settings(path: &[&SessionEntry]) -> BranchSettings {
    settings_along(path).0
}

/// Builds the context along `path` (root first), as [`build_session_context`] does.
pub fn context_along(path: &[&SessionEntry]) -> SessionContext {
    let edits = edits_on(path);
    let (settings, compaction) = settings_along(path);
    let mut context = SessionContext {
        thinking_level: settings.thinking_level,
        model: settings.model,
        messages: Vec::with_capacity(path.len()),
        custom_entries: Vec::new(),
    };
    let add = |context: &mut SessionContext, entry: &SessionEntry| {
        if matches!(entry.kind, EntryKind::Custom { .. }) {
            let stored = entry.to_json().map_or(Value::Null, Value::Object);
            context
                .custom_entries
                .push((context.messages.len(), stored));
        } else {
            append(&mut context.messages, entry, &edits);
        }
    };
    match compaction.map(|i| (i, &path[i].kind)) {
        Some((
            at,
            EntryKind::Compaction {
                summary,
                first_kept_entry_id,
                tokens_before,
                system_message,
                ..
            },
        )) => {
            // pi 1.5's checkpoint of the system state comes first; it stands for the system
            // messages before the compaction.
            let checkpoint = system_message
                .as_ref()
                .and_then(|v| serde_json::from_value::<AgentMessage>(v.clone()).ok());
            let has_checkpoint = checkpoint.is_some();
            context.messages.extend(checkpoint);
            context.messages.push(compaction_summary_message(
                summary,
                *tokens_before,
                &path[at].timestamp,
            ));
            let first_kept = path[..at]
                .iter()
                .position(|e| &e.id == first_kept_entry_id)
                .unwrap_or(at);
            for entry in &path[first_kept..at] {
                let superseded =
                    has_checkpoint && entry.message().is_some_and(|m| m.role() == "system");
                if !superseded {
                    add(&mut context, entry);
                }
            }
            for entry in &path[at + 1..] {
                add(&mut context, entry);
            }
        }
        _ => {
            for entry in path {
                add(&mut context, entry);
            }
        }
    }
    context
}

/// The index of the entry `parent` (the parent of entry `child`): most often the entry just
/// before it, checked first so a linear session's walk compares ids instead of hashing them.
pub(crate) fn parent_index<'a>(
    entries: &[SessionEntry],
    child: usize,
    parent: &str,
    lookup: impl FnOnce(&str) -> Option<&'a usize>,
) -> Option<usize> {
    match child.checked_sub(1) {
        Some(before) if entries[before].id == parent => Some(before),
        _ => lookup(parent).copied(),
    }
}
