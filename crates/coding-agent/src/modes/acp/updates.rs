//! pi's session events as ACP `session/update`s: text and thinking deltas become message
//! and thought chunks; a tool call is announced once (`tool_call`) while the model writes
//! it, then updated as it runs and ends, with a diff for `edit` and `write`; retries and
//! compactions are told as message chunks.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, SessionInfoUpdate, SessionUpdate, Terminal, TextContent,
    ToolCall, ToolCallContent, ToolCallLocation, ToolCallStatus, ToolCallUpdate,
    ToolCallUpdateFields, ToolKind,
};
use pi_agent_core::{AgentEvent, AgentToolResult};
use pi_ai::{AssistantBlock, AssistantMessageEvent, InputBlock};
use serde_json::Value;

use super::link::Link;
use crate::session_event::{AgentSessionEvent, CompactionReason, SessionOnlyEvent};

/// The kind of a tool by its name.
pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "read" => ToolKind::Read,
        "edit" | "write" => ToolKind::Edit,
        "bash" => ToolKind::Execute,
        "grep" | "find" | "ls" => ToolKind::Search,
        _ => ToolKind::Other,
    }
}

/// A tool call's file, when its arguments name one (`path`, `file_path`).
fn location(args: &Value, cwd: &Path) -> Vec<ToolCallLocation> {
    let path = args
        .get("path")
        .or_else(|| args.get("file_path"))
        .and_then(Value::as_str);
    match path {
        Some(path) => vec![ToolCallLocation::new(cwd.join(path))],
        None => Vec::new(),
    }
}

/// The text blocks of a tool result, joined by newlines.
pub fn result_text(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| match block {
            InputBlock::Text(text) => Some(text.text.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn text_chunk(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text)))
}

/// A file as it was on disk before an `edit` or `write` changed it.
pub struct Snapshot {
    path: String,
    old_text: Option<String>,
}

/// The file an `edit` or `write` is about to change, read when its start is emitted
/// (before the tool runs): the call id and the file's text.
pub fn snapshot_before(event: &AgentSessionEvent, cwd: &Path) -> Option<(String, Snapshot)> {
    let AgentSessionEvent::Agent(AgentEvent::ToolExecutionStart {
        tool_call_id,
        tool_name,
        args,
        parent_tool_call_id: None,
    }) = event
    else {
        return None;
    };
    if !matches!(tool_name.as_str(), "edit" | "write") {
        return None;
    }
    let path = args.get("path").and_then(Value::as_str)?;
    let old_text = std::fs::read_to_string(cwd.join(path)).ok();
    Some((
        tool_call_id.clone(),
        Snapshot {
            path: path.to_owned(),
            old_text,
        },
    ))
}

/// Translates one session's events; it remembers the calls it announced and the files
/// the mutating ones were about to change.
pub struct Translator {
    cwd: PathBuf,
    link: Arc<Link>,
    announced: HashMap<String, ToolCallStatus>,
    snapshots: HashMap<String, Snapshot>,
    /// The editor terminal each command runs in.
    terminals: HashMap<String, String>,
}

impl Translator {
    pub fn new(cwd: &Path, link: Arc<Link>) -> Self {
        Self {
            cwd: cwd.to_path_buf(),
            link,
            announced: HashMap::new(),
            snapshots: HashMap::new(),
            terminals: HashMap::new(),
        }
    }

    /// Keeps the file a call is about to change (see [`snapshot_before`]).
    pub fn before(&mut self, id: String, snapshot: Snapshot) {
        self.snapshots.insert(id, snapshot);
    }

    /// The updates `event` gives (none for most).
    pub fn updates(&mut self, event: &AgentSessionEvent) -> Vec<SessionUpdate> {
        match event {
            AgentSessionEvent::Agent(event) => self.agent_event(event),
            AgentSessionEvent::Session(event) => session_event(event).into_iter().collect(),
        }
    }

    fn agent_event(&mut self, event: &AgentEvent) -> Vec<SessionUpdate> {
        match event {
            AgentEvent::MessageUpdate {
                assistant_message_event,
                ..
            } => self.message_event(assistant_message_event),
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                parent_tool_call_id: None,
            } => vec![self.started(tool_call_id, tool_name, args)],
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                partial_result,
                parent_tool_call_id: None,
                ..
            } => {
                let text = if self.snapshots.contains_key(tool_call_id) {
                    String::new()
                } else {
                    result_text(partial_result)
                };
                let mut fields = ToolCallUpdateFields::new().status(ToolCallStatus::InProgress);
                // A command running in the editor's terminal shows there.
                if let Some(terminal) = partial_result
                    .details
                    .as_ref()
                    .and_then(|d| d.get("terminalId"))
                    .and_then(Value::as_str)
                {
                    self.terminals
                        .insert(tool_call_id.clone(), terminal.to_owned());
                    fields = fields.content(vec![ToolCallContent::Terminal(Terminal::new(
                        terminal.to_owned(),
                    ))]);
                } else if !text.is_empty() {
                    fields = fields.content(vec![ToolCallContent::from(ContentBlock::Text(
                        TextContent::new(text),
                    ))]);
                }
                vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    tool_call_id.clone(),
                    fields,
                ))]
            }
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                parent_tool_call_id: None,
                ..
            } => vec![self.ended(tool_call_id, result, *is_error)],
            _ => Vec::new(),
        }
    }

    fn message_event(&mut self, event: &AssistantMessageEvent) -> Vec<SessionUpdate> {
        match event {
            AssistantMessageEvent::TextDelta { delta, .. } => {
                vec![SessionUpdate::AgentMessageChunk(text_chunk(delta.clone()))]
            }
            AssistantMessageEvent::ThinkingDelta { delta, .. } => {
                vec![SessionUpdate::AgentThoughtChunk(text_chunk(delta.clone()))]
            }
            AssistantMessageEvent::ToolcallEnd { tool_call, .. } => self.announce(
                &tool_call.id,
                &tool_call.name,
                &Value::Object(tool_call.arguments.clone()),
            ),
            AssistantMessageEvent::ToolcallStart {
                content_index,
                partial,
            } => match partial.content.get(*content_index) {
                Some(AssistantBlock::ToolCall(call)) => {
                    self.announce(&call.id, &call.name, &Value::Object(call.arguments.clone()))
                }
                _ => Vec::new(),
            },
            _ => Vec::new(),
        }
    }

    /// `tool_call` the first time a call is seen while the model writes it; later sights
    /// update its input.
    fn announce(&mut self, id: &str, name: &str, args: &Value) -> Vec<SessionUpdate> {
        if id.is_empty() {
            return Vec::new();
        }
        if self.announced.contains_key(id) {
            let fields = ToolCallUpdateFields::new()
                .locations(location(args, &self.cwd))
                .raw_input(args.clone());
            return vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                id.to_owned(),
                fields,
            ))];
        }
        self.announced
            .insert(id.to_owned(), ToolCallStatus::Pending);
        vec![SessionUpdate::ToolCall(
            ToolCall::new(id.to_owned(), name.to_owned())
                .kind(tool_kind(name))
                .status(ToolCallStatus::Pending)
                .locations(location(args, &self.cwd))
                .raw_input(args.clone()),
        )]
    }

    fn started(&mut self, id: &str, name: &str, args: &Value) -> SessionUpdate {
        let locations = location(args, &self.cwd);
        if self
            .announced
            .insert(id.to_owned(), ToolCallStatus::InProgress)
            .is_some()
        {
            let fields = ToolCallUpdateFields::new()
                .status(ToolCallStatus::InProgress)
                .locations(locations)
                .raw_input(args.clone());
            return SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields));
        }
        SessionUpdate::ToolCall(
            ToolCall::new(id.to_owned(), name.to_owned())
                .kind(tool_kind(name))
                .status(ToolCallStatus::InProgress)
                .locations(locations)
                .raw_input(args.clone()),
        )
    }

    fn ended(&mut self, id: &str, result: &AgentToolResult, is_error: bool) -> SessionUpdate {
        self.announced.remove(id);
        let status = if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        let mut fields = ToolCallUpdateFields::new().status(status);
        let diff = self
            .snapshots
            .remove(id)
            .filter(|_| !is_error)
            .and_then(|snapshot| {
                let path = self.cwd.join(&snapshot.path);
                // Written through the editor: its texts; else the disk's.
                let (old_text, new_text) = match self.link.edits.take(&path) {
                    Some(change) => (change.old_text, change.new_text),
                    None => (snapshot.old_text, std::fs::read_to_string(&path).ok()?),
                };
                (old_text.as_deref() != Some(new_text.as_str()))
                    .then(|| Diff::new(path, new_text).old_text(old_text))
            });
        let terminal = self.terminals.remove(id);
        match (diff, terminal) {
            (Some(diff), _) => fields = fields.content(vec![ToolCallContent::Diff(diff)]),
            // The terminal stays the call's content: the editor shows the whole run.
            (None, Some(terminal)) => {
                fields = fields
                    .content(vec![ToolCallContent::Terminal(Terminal::new(terminal))])
                    .raw_output(serde_json::to_value(result).ok());
            }
            (None, None) => {
                let text = result_text(result);
                if !text.is_empty() {
                    fields = fields.content(vec![ToolCallContent::from(ContentBlock::Text(
                        TextContent::new(text),
                    ))]);
                }
                fields = fields.raw_output(serde_json::to_value(result).ok());
            }
        }
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(id.to_owned(), fields))
    }
}

/// Retries and automatic compactions, told as message chunks in pi-acp's words (what pi
/// users see in their editors today); `/compact` answers for itself.
fn session_event(event: &SessionOnlyEvent) -> Option<SessionUpdate> {
    let text = match event {
        // The session's name is its title in the editor.
        SessionOnlyEvent::SessionInfoChanged { name } => {
            return Some(SessionUpdate::SessionInfoUpdate(
                SessionInfoUpdate::new()
                    .title(name.clone())
                    .updated_at(crate::session::time::iso_now()),
            ));
        }
        SessionOnlyEvent::AutoRetryStart {
            attempt,
            max_attempts,
            delay_ms,
            ..
        } => {
            // Whole seconds, rounded, but never 0 for a wait.
            let seconds = match (delay_ms + 500) / 1000 {
                0 if *delay_ms > 0 => 1,
                seconds => seconds,
            };
            format!("Retrying (attempt {attempt}/{max_attempts}, waiting {seconds}s)...")
        }
        SessionOnlyEvent::AutoRetryEnd { success: true, .. } => {
            "Retry finished, resuming.".to_owned()
        }
        SessionOnlyEvent::CompactionStart { reason } if *reason != CompactionReason::Manual => {
            "Context nearing limit, running automatic compaction...".to_owned()
        }
        SessionOnlyEvent::CompactionEnd {
            reason,
            aborted: false,
            error_message: None,
            ..
        } if *reason != CompactionReason::Manual => {
            "Automatic compaction finished; context was summarized to continue the session."
                .to_owned()
        }
        _ => return None,
    };
    Some(SessionUpdate::AgentMessageChunk(text_chunk(text)))
}
