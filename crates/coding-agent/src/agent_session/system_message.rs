//! pi 1.5's persisted system message: the first prompt of a session records the system
//! prompt and the tools as a `message` entry with role `system`; later prompts record only
//! what changed (sections set or removed, tools added or removed). The model still gets the
//! system prompt the usual way; the message is the session's record of it.

use pi_agent_core::{AgentMessage, CustomMessage};
use serde_json::{Map, Value, json};

use super::AgentSession;

/// The first section: the prompt's text before its first tagged section.
const PREAMBLE: &str = "preamble";

/// The tagged sections a prompt of ours has (`modes::system_prompt::build`), under pi 1.6's
/// names.
const SECTION_NAMES: &[&str] = &[
    "tools",
    "rules",
    "docs",
    "addendum",
    "project_context",
    "skills",
    "cwd",
];

/// Splits a prompt into pi 1.6's named sections: the preamble, then each `<name>` …
/// `</name>` block with its tags. pi joins section texts with a blank line, so the parts
/// always give back exactly `prompt`; a prompt that does not split so is one preamble.
pub(super) fn prompt_sections(prompt: &str) -> Vec<(String, String)> {
    // The section opening at byte `at` (`\n\n<name>\n`), if one does.
    let opening = |at: usize| {
        let rest = prompt.get(at..)?.strip_prefix("\n\n<")?;
        SECTION_NAMES.iter().find(|name| {
            rest.strip_prefix(**name)
                .is_some_and(|after| after.starts_with(">\n"))
        })
    };
    let Some(first) = prompt
        .match_indices("\n\n<")
        .map(|(i, _)| i)
        .find(|&i| opening(i).is_some())
    else {
        return vec![(PREAMBLE.to_owned(), prompt.to_owned())];
    };
    let mut parts = vec![(PREAMBLE.to_owned(), prompt[..first].to_owned())];
    let mut at = first;
    while at < prompt.len() {
        let Some(name) = opening(at) else {
            return vec![(PREAMBLE.to_owned(), prompt.to_owned())];
        };
        let start = at + 2;
        let closing = format!("\n</{name}>");
        // The block ends at the first closing tag followed by the end or the next section.
        let end = prompt[start..]
            .match_indices(&closing)
            .map(|(i, _)| start + i + closing.len())
            .find(|&end| end == prompt.len() || opening(end).is_some());
        let Some(end) = end else {
            return vec![(PREAMBLE.to_owned(), prompt.to_owned())];
        };
        parts.push(((*name).to_owned(), prompt[start..end].to_owned()));
        at = end;
    }
    parts
}

/// The system state a run of system messages adds up to.
#[derive(Debug, Default, PartialEq)]
pub(super) struct SystemState {
    sections: Map<String, Value>,
    /// The tools by name, in the order they were added (the agent's order).
    tools: Map<String, Value>,
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
            // Removals first, as pi 1.6 replays them: a redefined tool is removed, then added.
            for removed in custom
                .get("toolsRemoved")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                // pi 1.6 writes `{name}`; a bare name is read too.
                let name = removed
                    .get("name")
                    .and_then(Value::as_str)
                    .or_else(|| removed.as_str());
                if let Some(name) = name {
                    state.tools.shift_remove(name);
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
        }
        state
    }

    /// The state of this prompt and these tools.
    pub(super) fn current(prompt: &str, tools: &[pi_ai::Tool]) -> Self {
        let sections = prompt_sections(prompt)
            .into_iter()
            .map(|(name, text)| (name, Value::String(text)))
            .collect();
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

    /// The system prompt this state holds: its sections joined as pi 1.6 joins them.
    pub(super) fn prompt(&self) -> String {
        let texts: Vec<&str> = self.sections.values().filter_map(Value::as_str).collect();
        texts.join("\n\n")
    }

    /// The names of the tools this state declares, in their order.
    pub(super) fn tool_names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    /// The tool declarations this state holds, in their order.
    pub(super) fn tool_definitions(&self) -> Vec<pi_ai::Tool> {
        self.tools
            .values()
            .map(|tool| pi_ai::Tool {
                name: tool["name"].as_str().unwrap_or_default().to_owned(),
                description: tool["description"].as_str().unwrap_or_default().to_owned(),
                parameters: tool.get("parameters").cloned().unwrap_or(Value::Null),
                ..Default::default()
            })
            .collect()
    }

    /// Whether both hold the same prompt sections.
    pub(super) fn same_sections(&self, other: &Self) -> bool {
        self.sections == other.sections
    }

    /// Whether both declare the same tools.
    pub(super) fn same_tools(&self, other: &Self) -> bool {
        self.tools == other.tools
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
        // Gone or redefined tools are removed (then added again), as `{name}` (pi 1.6).
        let removed: Vec<Value> = self
            .tools
            .iter()
            .filter(|(name, tool)| next.tools.get(*name) != Some(*tool))
            .map(|(name, _)| json!({"name": name}))
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
            .filter(|t| t.declared())
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

/// pi 1.6's `getCurrentSystemMessage`: the system messages of `messages` folded into one;
/// `None` when there is none.
pub(super) fn current_system_message(messages: &[AgentMessage]) -> Option<AgentMessage> {
    SystemState::replay(messages).map(|state| state.full_message(now_ms()))
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
        assert_eq!(fields(&patch)["toolsRemoved"], json!([{"name": "bash"}]));
        let replayed = SystemState::replay(&[first.full_message(1), patch]).unwrap();
        assert_eq!(replayed, next);
        // A redefined tool is removed and added again; the agent's order is kept.
        let mut changed = tool("read");
        changed.description = "reads better".into();
        let redefined = SystemState::current("B", &[changed, tool("grep")]);
        let patch = next.patch_to(&redefined, 3).unwrap();
        assert_eq!(fields(&patch)["toolsRemoved"], json!([{"name": "read"}]));
        assert_eq!(
            fields(&patch)["toolsAdded"][0]["description"],
            "reads better"
        );
        let full = fields(&redefined.full_message(4))["toolsAdded"].clone();
        assert_eq!(full[0]["name"], "read");
        assert_eq!(full[1]["name"], "grep");
    }

    #[test]
    fn a_prompt_splits_into_tagged_sections_that_join_back() {
        let prompt = "You help.\n\n<tools>\n- read\n</tools>\n\n<project_context>\nA\n\n<cwd>\nnot a section\n</cwd>\n</project_context>\n\n<cwd>\n/p\n</cwd>";
        let parts = prompt_sections(prompt);
        let names: Vec<&str> = parts.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["preamble", "tools", "project_context", "cwd"]);
        let joined: Vec<&str> = parts.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(joined.join("\n\n"), prompt);
        // Text that does not split into known sections stays one preamble.
        assert_eq!(
            prompt_sections("Custom.\n\n<mine>\nx\n</mine>"),
            [(
                "preamble".to_owned(),
                "Custom.\n\n<mine>\nx\n</mine>".to_owned()
            )]
        );
    }
}
