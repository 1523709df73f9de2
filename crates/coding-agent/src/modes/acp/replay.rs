//! A loaded session's history as the updates that would have shown it: the user's prompts,
//! the answers and thoughts, each tool call with its input and, once known, its result.

use std::collections::HashMap;

use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields,
};
use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, InputBlock, Message, UserContent};
use serde_json::Value;

use super::updates::tool_kind;

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text.to_owned())))
}

fn input_text(blocks: &[InputBlock]) -> String {
    blocks
        .iter()
        .filter_map(|b| match b {
            InputBlock::Text(t) => Some(t.text.to_string()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The updates that show `messages` again.
pub fn history(messages: &[AgentMessage]) -> Vec<SessionUpdate> {
    let mut updates = Vec::new();
    let mut names: HashMap<String, String> = HashMap::new();
    for message in messages {
        let AgentMessage::Llm(message) = message else {
            continue;
        };
        match message {
            Message::User(user) => {
                let text = match &user.content {
                    UserContent::Text(text) => text.to_string(),
                    UserContent::Blocks(blocks) => input_text(blocks),
                };
                if !text.is_empty() {
                    updates.push(SessionUpdate::UserMessageChunk(chunk(&text)));
                }
            }
            Message::Assistant(assistant) => {
                for block in &assistant.content {
                    match block {
                        AssistantBlock::Text(t) if !t.text.is_empty() => {
                            updates.push(SessionUpdate::AgentMessageChunk(chunk(&t.text)));
                        }
                        AssistantBlock::Thinking(t) if !t.thinking.is_empty() => {
                            updates.push(SessionUpdate::AgentThoughtChunk(chunk(&t.thinking)));
                        }
                        AssistantBlock::ToolCall(call) => {
                            names.insert(call.id.clone(), call.name.clone());
                            updates.push(SessionUpdate::ToolCall(
                                ToolCall::new(call.id.clone(), call.name.clone())
                                    .kind(tool_kind(&call.name))
                                    .status(ToolCallStatus::Pending)
                                    .raw_input(Value::Object(call.arguments.clone())),
                            ));
                        }
                        _ => {}
                    }
                }
            }
            Message::ToolResult(result) => {
                let status = if result.is_error {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                let text = input_text(&result.content);
                let mut fields = ToolCallUpdateFields::new().status(status);
                if !text.is_empty() {
                    fields = fields.content(vec![ToolCallContent::from(ContentBlock::Text(
                        TextContent::new(text),
                    ))]);
                }
                updates.push(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    result.tool_call_id.clone(),
                    fields,
                )));
            }
        }
    }
    updates
}
