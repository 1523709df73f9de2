//! The coding agent's message kinds and how they reach the model.

use serde_json::Value;

use pi_agent_core::{AgentMessage, CustomMessage};
use pi_ai::{InputBlock, Message, SystemMessage, Tool, UserMessage};

/// Introduces a compaction summary to the model.
pub const COMPACTION_SUMMARY_PREFIX: &str = "The conversation history before this point was compacted into the following summary:\n\n<summary>\n";
/// Closes a compaction summary.
pub const COMPACTION_SUMMARY_SUFFIX: &str = "\n</summary>";
/// Introduces a branch summary to the model.
pub const BRANCH_SUMMARY_PREFIX: &str =
    "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n";
/// Closes a branch summary.
pub const BRANCH_SUMMARY_SUFFIX: &str = "</summary>";

fn text_field<'a>(message: &'a CustomMessage, key: &str) -> &'a str {
    message.get(key).and_then(Value::as_str).unwrap_or("")
}

/// `Ran `cmd`` plus the output block and exit notes, as a `!` command is shown to the model.
pub fn bash_execution_to_text(message: &CustomMessage) -> String {
    let mut text = format!("Ran `{}`\n", text_field(message, "command"));
    let output = text_field(message, "output");
    if output.is_empty() {
        text.push_str("(no output)");
    } else {
        text.push_str(&format!("```\n{output}\n```"));
    }
    let cancelled = message
        .get("cancelled")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let exit_code = message.get("exitCode").and_then(Value::as_i64);
    if cancelled {
        text.push_str("\n\n(command cancelled)");
    } else if let Some(code) = exit_code.filter(|c| *c != 0) {
        text.push_str(&format!("\n\nCommand exited with code {code}"));
    }
    let truncated = message
        .get("truncated")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let (true, Some(path)) = (
        truncated,
        message.get("fullOutputPath").and_then(Value::as_str),
    ) {
        text.push_str(&format!("\n\n[Output truncated. Full output: {path}]"));
    }
    text
}

fn user_text(text: String, timestamp: i64) -> Message {
    let mut user = UserMessage::text(text);
    user.timestamp = timestamp;
    Message::User(user)
}

/// Converts the transcript for the model: LLM messages pass through; `bashExecution`
/// (unless excluded), `custom`, `branchSummary` and `compactionSummary` become user
/// messages; anything else is dropped.
pub fn convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages
        .iter()
        .filter(|message| reaches_model(message))
        .filter_map(|message| match message {
            AgentMessage::Llm(m) => Some(m.clone()),
            AgentMessage::Custom(c) => {
                let timestamp = c.get("timestamp").and_then(Value::as_i64).unwrap_or(0);
                match c.role.as_str() {
                    "bashExecution" => {
                        let excluded = c
                            .get("excludeFromContext")
                            .and_then(Value::as_bool)
                            .unwrap_or(false);
                        (!excluded).then(|| user_text(bash_execution_to_text(c), timestamp))
                    }
                    "custom" => {
                        let blocks = match c.get("content") {
                            Some(Value::String(text)) => vec![InputBlock::text(text.clone())],
                            Some(content) => {
                                serde_json::from_value(content.clone()).unwrap_or_default()
                            }
                            None => Vec::new(),
                        };
                        let mut user = UserMessage::blocks(blocks);
                        user.timestamp = timestamp;
                        Some(Message::User(user))
                    }
                    "branchSummary" => Some(user_text(
                        format!(
                            "{BRANCH_SUMMARY_PREFIX}{}{BRANCH_SUMMARY_SUFFIX}",
                            text_field(c, "summary")
                        ),
                        timestamp,
                    )),
                    "compactionSummary" => Some(user_text(
                        format!(
                            "{COMPACTION_SUMMARY_PREFIX}{}{COMPACTION_SUMMARY_SUFFIX}",
                            text_field(c, "summary")
                        ),
                        timestamp,
                    )),
                    _ => None,
                }
            }
        })
        .collect()
}

/// Whether [`convert_to_llm`] gives `message` to the model.
fn reaches_model(message: &AgentMessage) -> bool {
    match message {
        AgentMessage::Llm(_) => true,
        AgentMessage::Custom(c) => match c.role.as_str() {
            "bashExecution" => !c
                .get("excludeFromContext")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            "custom" | "branchSummary" | "compactionSummary" => true,
            _ => false,
        },
    }
}

/// The transcript's system messages (pi 1.6's `system` role), each placed before the
/// converted message it precedes, for models that take them mid-conversation.
pub fn system_messages(messages: &[AgentMessage]) -> Vec<SystemMessage> {
    let mut out = Vec::new();
    let mut at = 0;
    for message in messages {
        match message {
            AgentMessage::Custom(c) if c.role == "system" => out.push(system_message(c, at)),
            message if reaches_model(message) => at += 1,
            _ => {}
        }
    }
    out
}

/// One recorded system message (`content`, `sections`, `toolsAdded`, `toolsRemoved`);
/// what does not read is left out.
fn system_message(message: &CustomMessage, at: usize) -> SystemMessage {
    let content = match message.get("content") {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let sections = match message.get("sections") {
        Some(Value::Object(sections)) => sections
            .iter()
            .map(|(name, text)| (name.clone(), text.as_str().map(str::to_owned)))
            .collect(),
        _ => Vec::new(),
    };
    let list = |key: &str| -> &[Value] {
        message
            .get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
    };
    let tools_added = list("toolsAdded")
        .iter()
        .filter_map(|tool| serde_json::from_value::<Tool>(tool.clone()).ok())
        .collect();
    // pi 1.6 writes `{name}`; a bare name is read too.
    let tools_removed = list("toolsRemoved")
        .iter()
        .filter_map(|tool| tool.get("name").and_then(Value::as_str).or(tool.as_str()))
        .map(str::to_owned)
        .collect();
    SystemMessage {
        at,
        content,
        sections,
        tools_added,
        tools_removed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn custom(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn custom_kinds_become_user_messages() {
        let messages = vec![
            custom(
                json!({"role": "bashExecution", "command": "ls", "output": "a\nb", "exitCode": 2, "cancelled": false, "truncated": false, "timestamp": 5}),
            ),
            custom(
                json!({"role": "bashExecution", "command": "secret", "output": "", "exitCode": 0, "cancelled": false, "truncated": false, "excludeFromContext": true, "timestamp": 6}),
            ),
            custom(
                json!({"role": "compactionSummary", "summary": "S", "tokensBefore": 10, "timestamp": 7}),
            ),
            custom(json!({"role": "branchSummary", "summary": "B", "fromId": "x", "timestamp": 8})),
            custom(
                json!({"role": "custom", "customType": "t", "content": "note", "display": true, "timestamp": 9}),
            ),
            custom(json!({"role": "ui-only", "timestamp": 10})),
        ];
        let llm = convert_to_llm(&messages);
        assert_eq!(llm.len(), 4);
        let text = |m: &Message| match m {
            Message::User(u) => match &u.content {
                pi_ai::UserContent::Blocks(b) => b[0].as_text().unwrap_or("").to_owned(),
                pi_ai::UserContent::Text(t) => t.to_string(),
            },
            _ => String::new(),
        };
        assert_eq!(
            text(&llm[0]),
            "Ran `ls`\n```\na\nb\n```\n\nCommand exited with code 2"
        );
        assert!(
            text(&llm[1]).starts_with(COMPACTION_SUMMARY_PREFIX)
                && text(&llm[1]).ends_with("S\n</summary>")
        );
        assert!(text(&llm[2]).ends_with("B</summary>"));
        assert_eq!(text(&llm[3]), "note");
        assert_eq!(llm[3].timestamp(), 9);
    }
}
