//! The tools a branch recorded, restored (pi 1.6.0): resuming a session, switching to or
//! forking one, and moving in its tree give the tools its system messages declare, plus
//! extension tools registered since, with `--tools +name`/`-name` applied on top. Recorded
//! tools not registered yet (MCP servers still connecting) stay pending until they are, or
//! until the next run starts.

use pi_agent_core::AgentMessage;
use serde_json::Value;

use super::system_message::SystemState;
use super::{AgentSession, lock};
use crate::tool_selection::ToolEdits;
use crate::tools::{DEFAULT_TOOLS, SELECTABLE_TOOLS};

/// The system messages on the current branch, compacted ones included.
fn branch_system_messages(session: &AgentSession) -> Vec<AgentMessage> {
    session.with_session(|s| {
        s.branch_entries()
            .into_iter()
            .filter_map(|entry| entry.message())
            .filter(|m| matches!(m, AgentMessage::Custom(c) if c.role == "system"))
            .cloned()
            .collect()
    })
}

/// Every tool a run of system messages added or removed.
fn mentioned_tools(messages: &[AgentMessage]) -> Vec<String> {
    let mut names = Vec::new();
    for message in messages {
        let AgentMessage::Custom(custom) = message else {
            continue;
        };
        for key in ["toolsAdded", "toolsRemoved"] {
            for tool in custom
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                let name = tool.get("name").and_then(Value::as_str).or(tool.as_str());
                if let Some(name) = name {
                    names.push(name.to_owned());
                }
            }
        }
    }
    names
}

impl AgentSession {
    /// At startup and when the session is replaced: the branch's tools when the command
    /// line left the tools to the defaults.
    pub(super) fn restore_session_tools(&self) {
        let edits = self.inner.ext.restore_tools.clone();
        if let Some(edits) = edits {
            self.restore_tools_from_transcript(&edits);
        }
    }

    /// Activates the tools the branch's system messages declare, with `edits` applied;
    /// a branch without system messages keeps the current tools.
    pub(super) fn restore_tools_from_transcript(&self, edits: &ToolEdits) {
        lock(&self.inner.ext.pending_tools).clear();
        let messages = branch_system_messages(self);
        let Some(state) = SystemState::replay(&messages) else {
            return;
        };
        let mentioned = mentioned_tools(&messages);
        let inactive = self.inner.ext.runtime.inactive_tools();
        let registered: Vec<String> = self
            .all_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        // Extension tools the branch never mentioned were registered after it recorded its
        // tools: they are active as newly registered tools are.
        let newer = registered.iter().filter(|name| {
            !mentioned.contains(name)
                && !SELECTABLE_TOOLS.contains(&name.as_str())
                && !inactive.contains(name)
                && !self.is_mcp_tool(name)
        });
        let mut names = state.tool_names();
        names.extend(newer.cloned());
        let names = edits.apply(&names);
        *lock(&self.inner.ext.pending_tools) = names
            .iter()
            .filter(|name| !registered.contains(name))
            .cloned()
            .collect();
        self.set_active_tools(&names);
    }

    /// The default tools the settings give now, with the command line's edits; empty when
    /// the command line chose the tools itself.
    fn default_tool_names(&self) -> Vec<String> {
        let Some(edits) = &self.inner.ext.restore_tools else {
            return Vec::new();
        };
        let setting = self.inner.settings.get().default_tools;
        let defaults = crate::tool_selection::default_tools(setting.as_deref(), &DEFAULT_TOOLS);
        edits.apply(&defaults)
    }

    /// `/reload`: reads the settings again and activates the tools newly added to
    /// `defaultTools`. Tools removed from it stay active; tools turned off in the session
    /// stay off unless the setting newly adds them (pi 1.6.0).
    pub fn reload_settings(&self) {
        let before = self.default_tool_names();
        self.inner.settings.reload();
        let added: Vec<String> = self
            .default_tool_names()
            .into_iter()
            .filter(|name| !before.contains(name))
            .collect();
        if added.is_empty() {
            return;
        }
        let mut active = self.active_tool_names();
        active.extend(
            added
                .into_iter()
                .filter(|n| !active.contains(n))
                .collect::<Vec<_>>(),
        );
        self.set_active_tools(&active);
    }

    /// Recorded tools that registered since the restore: they join the active set.
    pub(super) fn take_pending_tools(&self, registered: &[String]) -> Vec<String> {
        let mut pending = lock(&self.inner.ext.pending_tools);
        let (now, later): (Vec<String>, Vec<String>) = pending
            .drain(..)
            .partition(|name| registered.contains(name));
        *pending = later;
        now
    }

    /// The next run starts: recorded tools that never registered are dropped.
    pub(super) fn drop_pending_tools(&self) {
        lock(&self.inner.ext.pending_tools).clear();
    }
}
