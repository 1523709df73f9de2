//! pi 1.5's persisted system message: the first prompt of a session records the system
//! prompt and the tools as a `message` entry with role `system`; later prompts record only
//! what changed (sections set or removed, tools added or removed). The model still gets the
//! system prompt the usual way; the message is the session's record of it.

use std::collections::BTreeMap;

use pi_agent_core::{AgentMessage, CustomMessage};
use serde_json::{Map, Value, json};

use super::AgentSession;

/// The one section this build writes: its whole system prompt (1.5 joins sections with a
/// blank line, so a single section replays as exactly this prompt).
const SECTION: &str = "preamble";

/// The system state a run of system messages adds up to.
#[derive(Debug, Default, PartialEq)]
pub(super) struct SystemState {
    sections: Map<String, Value>,
    tools: BTreeMap<String, Value>,
}

impl SystemState {
    /// Folds the system messages of `messages` (a full message or a checkpoint, then
    /// patches); `None` when there is none.
    pub(super) fn replay(messages: &[AgentMessage]) -> Option<Self> {
        let mut state: Option<Self> = None;
        for message in messages {
            let AgentMessage::Custom(custom) = message else {
                continue;
            };
            if custom.role != "system" {
                continue;
            }
            let state = state.get_or_insert_with(Self::default);
            if let Some(Value::Object(sections)) = custom.get("sections") {
                for (name, text) in sections {
                    if text.is_null() {
                        state.sections.shift_remove(name);
                    } else {
                        state.sections.insert(name.clone(), text.clone());
                    }
                }
            }
            for tool in custom
                .get("toolsAdded")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(name) = tool.get("name").and_then(Value::as_str) {
                    state.tools.insert(name.to_owned(), tool.clone());
                }
            }
            for name in custom
                .get("toolsRemoved")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(name) = name.as_str() {
                    state.tools.remove(name);
                }
            }
        }
        state
    }

    /// The state of this prompt and these tools.
    pub(super) fn current(prompt: &str, tools: &[pi_ai::Tool]) -> Self {
        let mut sections = Map::new();
        sections.insert(SECTION.into(), Value::String(prompt.to_owned()));
        let tools = tools
            .iter()
            .map(|t| {
                let entry = json!({
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.parameters,
                    "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
                });
                (t.name.clone(), entry)
            })
            .collect();
        Self { sections, tools }
    }

    /// The whole state as one system message (the first one, or a compaction checkpoint).
    pub(super) fn full_message(&self, timestamp: i64) -> AgentMessage {
        let mut fields = Map::new();
        fields.insert("content".into(), "".into());
        fields.insert("sections".into(), Value::Object(self.sections.clone()));
        fields.insert("timestamp".into(), timestamp.into());
        fields.insert(
            "toolsAdded".into(),
            Value::Array(self.tools.values().cloned().collect()),
        );
        AgentMessage::Custom(CustomMessage::new("system", fields))
    }

    /// The patch from `self` to `next`; `None` when nothing changed.
    fn patch_to(&self, next: &Self, timestamp: i64) -> Option<AgentMessage> {
        let mut sections = Map::new();
        for (name, text) in &next.sections {
            if self.sections.get(name) != Some(text) {
                sections.insert(name.clone(), text.clone());
            }
        }
        for name in self.sections.keys() {
            if !next.sections.contains_key(name) {
                sections.insert(name.clone(), Value::Null);
            }
        }
        let added: Vec<Value> = next
            .tools
            .iter()
            .filter(|(name, tool)| self.tools.get(*name) != Some(*tool))
            .map(|(_, tool)| tool.clone())
            .collect();
        let removed: Vec<Value> = self
            .tools
            .keys()
            .filter(|name| !next.tools.contains_key(*name))
            .map(|name| Value::String(name.clone()))
            .collect();
        if sections.is_empty() && added.is_empty() && removed.is_empty() {
            return None;
        }
        let mut fields = Map::new();
        fields.insert("content".into(), "".into());
        fields.insert("sections".into(), Value::Object(sections));
        fields.insert("timestamp".into(), timestamp.into());
        if !added.is_empty() {
            fields.insert("toolsAdded".into(), Value::Array(added));
        }
        if !removed.is_empty() {
            fields.insert("toolsRemoved".into(), Value::Array(removed));
        }
        Some(AgentMessage::Custom(CustomMessage::new("system", fields)))
    }
}

/// Milliseconds since the epoch.
fn now_ms() -> i64 {
    pi_ai::oauth::now_ms()
}

impl AgentSession {
    /// The system message the next run starts with: the whole state when the branch has
    /// none, the changes when the prompt or tools moved on, else `None`.
    pub(super) fn system_message_for_run(&self, timestamp: i64) -> Option<AgentMessage> {
        let prompt = self.inner.agent.system_prompt();
        let tools: Vec<pi_ai::Tool> = self
            .inner
            .agent
            .tools()
            .iter()
            .map(|t| t.definition())
            .collect();
        let next = SystemState::current(&prompt, &tools);
        let recorded = self.inner.agent.with_messages(SystemState::replay);
        match recorded {
            None => Some(next.full_message(timestamp)),
            Some(recorded) => recorded.patch_to(&next, timestamp),
        }
    }
}

/// The system state of the agent's messages as one message, for a compaction's
/// checkpoint; `None` when the branch has no system message.
pub(super) fn system_checkpoint(agent: &pi_agent_core::Agent) -> Option<Value> {
    let state = agent.with_messages(SystemState::replay)?;
    match state.full_message(now_ms()) {
        AgentMessage::Custom(custom) => Some(Value::Object(custom.data)),
        AgentMessage::Llm(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> pi_ai::Tool {
        pi_ai::Tool {
            name: name.into(),
            description: format!("{name} things"),
            parameters: json!({"type": "object"}),
            ..Default::default()
        }
    }

    fn fields(message: &AgentMessage) -> &Map<String, Value> {
        match message {
            AgentMessage::Custom(c) => &c.data,
            AgentMessage::Llm(_) => panic!("a system message is custom"),
        }
    }

    #[test]
    fn first_message_is_whole_and_in_15_key_order() {
        let state = SystemState::current("Be brief.", &[tool("read")]);
        let message = state.full_message(5);
        let keys: Vec<&str> = fields(&message).keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["role", "content", "sections", "timestamp", "toolsAdded"]
        );
        assert_eq!(
            fields(&message)["sections"],
            json!({"preamble": "Be brief."})
        );
        assert_eq!(
            fields(&message)["toolsAdded"][0]["constrainedSampling"],
            json!({"type": "json_schema", "strict": "prefer"})
        );
        assert_eq!(SystemState::replay(&[message]), Some(state));
    }

    #[test]
    fn later_changes_are_patches_that_replay_to_the_new_state() {
        let first = SystemState::current("A", &[tool("read"), tool("bash")]);
        let next = SystemState::current("B", &[tool("read"), tool("grep")]);
        assert_eq!(first.patch_to(&first, 1), None);
        let patch = first.patch_to(&next, 2).unwrap();
        assert_eq!(fields(&patch)["sections"], json!({"preamble": "B"}));
        assert_eq!(fields(&patch)["toolsAdded"][0]["name"], "grep");
        assert_eq!(fields(&patch)["toolsRemoved"], json!(["bash"]));
        let replayed = SystemState::replay(&[first.full_message(1), patch]).unwrap();
        assert_eq!(replayed, next);
    }
}
