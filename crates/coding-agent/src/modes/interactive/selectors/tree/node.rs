//! One entry as the tree shows it: its class for the filters, its painted text and the
//! text the search matches.

use std::collections::HashMap;

use pi_agent_core::AgentMessage;
use pi_ai::{Message, StopReason};
use serde_json::{Map, Value};

use super::tool_call::format_tool_call;
use crate::modes::interactive::theme::ThemeColor;
use crate::session::{EntryKind, SessionEntry};

/// What kind of entry a node is, for the filters.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Class {
    User,
    /// An assistant message; hidden when it has no text and did not fail.
    Assistant {
        has_text: bool,
        failed: bool,
    },
    ToolResult,
    /// Other messages, custom messages, compactions, branch summaries, unknown entries.
    Other,
    /// model/thinking changes, labels, custom data, session info.
    Settings,
}

/// How a piece of an entry's text is painted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Paint {
    Plain,
    Fg(ThemeColor),
    ItalicFg(ThemeColor),
}

#[derive(Debug, Clone)]
pub(super) struct Node {
    pub(super) id: String,
    pub(super) parent: Option<usize>,
    pub(super) class: Class,
    pub(super) label: Option<String>,
    /// When the label was set (the label entry's timestamp).
    pub(super) label_time: Option<String>,
    pub(super) content: Vec<(Paint, String)>,
    /// What Ctrl+X copies: the entry's whole text, when it has any.
    pub(super) copy_text: Option<String>,
    /// Lowercased text the search matches against.
    pub(super) search: String,
}

/// Tool call id → (tool name, arguments), from every assistant message.
pub(super) fn tool_call_map(
    entries: &[SessionEntry],
) -> HashMap<String, (String, Map<String, Value>)> {
    let mut map = HashMap::new();
    for entry in entries {
        if let Some(assistant) = entry.message().and_then(AgentMessage::as_assistant) {
            for call in assistant.tool_calls() {
                map.insert(call.id.clone(), (call.name.clone(), call.arguments.clone()));
            }
        }
    }
    map
}

/// Newlines and tabs as spaces, ends trimmed.
pub(super) fn normalize(text: &str) -> String {
    text.replace(['\n', '\t', '\r'], " ").trim().to_owned()
}

/// The first 200 characters.
fn clip(text: &str) -> String {
    text.chars().take(200).collect()
}

/// The text of message content as JSON: the string or its text blocks.
fn value_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect(),
        _ => String::new(),
    }
}

pub(super) fn describe(
    entry: &SessionEntry,
    parent: Option<usize>,
    label: Option<String>,
    tool_calls: &HashMap<String, (String, Map<String, Value>)>,
) -> Node {
    use Paint::{Fg, ItalicFg, Plain};
    let dim = |text: String| vec![(Fg(ThemeColor::Dim), text)];
    let mut search: Vec<String> = label.iter().cloned().collect();
    let (class, content) = match &entry.kind {
        EntryKind::Message { message } => {
            search.push(message.role().to_owned());
            match message {
                AgentMessage::Llm(Message::User(user)) => {
                    let text = clip(&user.text_content());
                    search.push(text.clone());
                    (
                        Class::User,
                        vec![
                            (Fg(ThemeColor::Accent), "user: ".to_owned()),
                            (Plain, normalize(&text)),
                        ],
                    )
                }
                AgentMessage::Llm(Message::Assistant(assistant)) => {
                    let text = clip(&assistant.text());
                    search.push(text.clone());
                    let has_text = !text.trim().is_empty();
                    let failed = !matches!(
                        assistant.stop_reason,
                        StopReason::Stop | StopReason::ToolUse
                    );
                    let head = (Fg(ThemeColor::Success), "assistant: ".to_owned());
                    let body = if has_text {
                        (Plain, normalize(&text))
                    } else if assistant.stop_reason == StopReason::Aborted {
                        (Fg(ThemeColor::Muted), "(aborted)".to_owned())
                    } else if let Some(error) = &assistant.error_message {
                        (
                            Fg(ThemeColor::Error),
                            normalize(error).chars().take(80).collect(),
                        )
                    } else {
                        (Fg(ThemeColor::Muted), "(no content)".to_owned())
                    };
                    (Class::Assistant { has_text, failed }, vec![head, body])
                }
                AgentMessage::Llm(Message::ToolResult(result)) => {
                    let text: String = result.content.iter().filter_map(|b| b.as_text()).collect();
                    search.push(clip(&text));
                    let shown = match tool_calls.get(&result.tool_call_id) {
                        Some((name, args)) => format_tool_call(name, args),
                        None => format!("[{}]", result.tool_name),
                    };
                    (Class::ToolResult, vec![(Fg(ThemeColor::Muted), shown)])
                }
                AgentMessage::Custom(custom) => {
                    if let Some(content) = custom.get("content") {
                        search.push(clip(&value_text(content)));
                    }
                    let shown = if custom.role == "bashExecution" {
                        let command = custom.get("command").and_then(Value::as_str).unwrap_or("");
                        search.push(command.to_owned());
                        format!("[bash]: {}", normalize(command))
                    } else {
                        format!("[{}]", custom.role)
                    };
                    (Class::Other, dim(shown))
                }
            }
        }
        EntryKind::CustomMessage {
            custom_type,
            content,
            ..
        } => {
            let text = value_text(content);
            search.push(custom_type.clone());
            search.push(text.clone());
            (
                Class::Other,
                vec![
                    (
                        Fg(ThemeColor::CustomMessageLabel),
                        format!("[{custom_type}]: "),
                    ),
                    (Plain, normalize(&text)),
                ],
            )
        }
        EntryKind::Compaction { tokens_before, .. } => {
            search.push("compaction".into());
            let k = (*tokens_before as f64 / 1000.0).round();
            (
                Class::Other,
                vec![(
                    Fg(ThemeColor::BorderAccent),
                    format!("[compaction: {k}k tokens]"),
                )],
            )
        }
        EntryKind::BranchSummary { summary, .. } => {
            search.push("branch summary".into());
            search.push(summary.clone());
            (
                Class::Other,
                vec![
                    (Fg(ThemeColor::Warning), "[branch summary]: ".to_owned()),
                    (Plain, normalize(summary)),
                ],
            )
        }
        EntryKind::ModelChange { model_id, .. } => {
            search.push(format!("model {model_id}"));
            (Class::Settings, dim(format!("[model: {model_id}]")))
        }
        EntryKind::ThinkingLevelChange { thinking_level } => {
            search.push(format!("thinking {thinking_level}"));
            (
                Class::Settings,
                dim(format!("[thinking: {thinking_level}]")),
            )
        }
        EntryKind::Custom { custom_type, .. } => {
            search.push(format!("custom {custom_type}"));
            (Class::Settings, dim(format!("[custom: {custom_type}]")))
        }
        EntryKind::Label { label: text, .. } => {
            let text = text.clone().unwrap_or_default();
            search.push(format!("label {text}"));
            let shown = if text.is_empty() { "(cleared)" } else { &text };
            (Class::Settings, dim(format!("[label: {shown}]")))
        }
        EntryKind::SessionInfo { name } => {
            search.push("title".into());
            let content = match name.as_deref().filter(|n| !n.is_empty()) {
                Some(name) => {
                    search.push(name.to_owned());
                    dim(format!("[title: {name}]"))
                }
                None => vec![
                    (Fg(ThemeColor::Dim), "[title: ".to_owned()),
                    (ItalicFg(ThemeColor::Dim), "empty".to_owned()),
                    (Fg(ThemeColor::Dim), "]".to_owned()),
                ],
            };
            (Class::Settings, content)
        }
        EntryKind::Usage { kind, .. } => {
            search.push(format!("usage {kind}"));
            (Class::Settings, dim(format!("[usage: {kind}]")))
        }
        EntryKind::ContextEdit { replacement, .. } => {
            search.push("context edit".into());
            let what = if replacement.is_some() {
                "replaced"
            } else {
                "removed"
            };
            (Class::Settings, dim(format!("[context edit: {what}]")))
        }
        EntryKind::Unknown(raw) => {
            let kind = raw.get("type").and_then(Value::as_str).unwrap_or("entry");
            search.push(kind.to_owned());
            (Class::Other, dim(format!("[{kind}]")))
        }
    };
    Node {
        id: entry.id.clone(),
        parent,
        class,
        label,
        label_time: None,
        content,
        copy_text: copy_text(entry),
        search: search.join(" ").to_lowercase(),
    }
}

/// The text pi 1.6's tree copies for an entry: a message's text (a bash run's command, a
/// failed answer's error), a custom message's, or a summary.
fn copy_text(entry: &SessionEntry) -> Option<String> {
    let text = match &entry.kind {
        EntryKind::Message { message } => match message {
            AgentMessage::Llm(Message::User(user)) => user.text_content(),
            AgentMessage::Llm(Message::Assistant(assistant)) => {
                let text = assistant.text();
                if text.is_empty() {
                    assistant.error_message.clone().unwrap_or_default()
                } else {
                    text
                }
            }
            AgentMessage::Llm(Message::ToolResult(result)) => {
                result.content.iter().filter_map(|b| b.as_text()).collect()
            }
            AgentMessage::Custom(custom) if custom.role == "bashExecution" => custom
                .get("command")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned(),
            AgentMessage::Custom(custom) => {
                custom.get("content").map(value_text).unwrap_or_default()
            }
        },
        EntryKind::CustomMessage { content, .. } => value_text(content),
        EntryKind::Compaction { summary, .. } | EntryKind::BranchSummary { summary, .. } => {
            summary.clone()
        }
        _ => String::new(),
    };
    (!text.trim().is_empty()).then_some(text)
}
