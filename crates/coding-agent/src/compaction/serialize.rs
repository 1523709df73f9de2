//! The conversation as a plain-text transcript, so the summarizing model reads it as
//! material rather than a dialogue to continue.

use pi_ai::{AssistantBlock, InputBlock, Message, UserContent};

/// Longest tool result (in UTF-16 units, as JavaScript counts) kept in a transcript.
pub const TOOL_RESULT_MAX_CHARS: usize = 2000;

/// Keeps the first `max_chars` (UTF-16 units) of `text` and notes how many were dropped.
pub fn truncate_for_summary(text: &str, max_chars: usize) -> String {
    let total = text.encode_utf16().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let mut units = 0;
    let mut end = 0;
    for (index, ch) in text.char_indices() {
        if units + ch.len_utf16() > max_chars {
            break;
        }
        units += ch.len_utf16();
        end = index + ch.len_utf8();
    }
    format!(
        "{}\n\n[... {} more characters truncated]",
        &text[..end],
        total - max_chars
    )
}

fn input_text(blocks: &[InputBlock]) -> String {
    blocks.iter().filter_map(InputBlock::as_text).collect()
}

/// Renders messages as `[User]: …`, `[Assistant]: …`,
/// `[Assistant tool calls]: name(key=json, …); …` and `[Tool result]: …` (truncated to
/// [`TOOL_RESULT_MAX_CHARS`]), separated by blank lines; empty parts are left out.
/// Thinking is left out, as pi 1.2 does: providers return summaries of the reasoning, often
/// not part of the model's live context, and it could outgrow what it summarizes.
/// Run `convert_to_llm` first so custom kinds are included.
pub fn serialize_conversation(messages: &[Message]) -> String {
    serialize_recent(messages, usize::MAX)
}

/// [`serialize_conversation`] of the newest messages whose transcript fits in `max_bytes`,
/// the older ones left out with a note saying how many: a session far larger than any
/// context window would otherwise become a transcript the size of its file, which no model
/// could read.
pub fn serialize_recent(messages: &[Message], max_bytes: usize) -> String {
    // Newest first while measuring; only messages that fit are rendered.
    let mut kept: Vec<Vec<String>> = Vec::new();
    let mut size = 0usize;
    let mut omitted = 0;
    for (index, message) in messages.iter().enumerate().rev() {
        let mut parts = Vec::new();
        message_parts(message, &mut parts);
        let len: usize = parts.iter().map(|p| p.len() + 2).sum();
        if size.saturating_add(len) > max_bytes {
            omitted = index + 1;
            break;
        }
        size += len;
        kept.push(parts);
    }
    let mut parts: Vec<String> = Vec::new();
    if omitted > 0 {
        parts.push(format!(
            "[... {omitted} earlier messages omitted: the conversation is longer than the model's context window]"
        ));
    }
    parts.extend(kept.into_iter().rev().flatten());
    parts.join("\n\n")
}

/// The transcript parts of one message.
fn message_parts(message: &Message, parts: &mut Vec<String>) {
    match message {
        Message::User(user) => {
            let content = match &user.content {
                UserContent::Text(text) => text.to_string(),
                UserContent::Blocks(blocks) => input_text(blocks),
            };
            if !content.is_empty() {
                parts.push(format!("[User]: {content}"));
            }
        }
        Message::Assistant(assistant) => {
            let mut text = Vec::new();
            let mut calls = Vec::new();
            for block in &assistant.content {
                match block {
                    AssistantBlock::Text(t) => text.push(t.text.as_str()),
                    AssistantBlock::Thinking(_) => {}
                    AssistantBlock::ToolCall(call) => {
                        let arguments = call
                            .arguments
                            .iter()
                            .map(|(key, value)| {
                                format!(
                                    "{key}={}",
                                    serde_json::to_string(value).unwrap_or_default()
                                )
                            })
                            .collect::<Vec<_>>()
                            .join(", ");
                        calls.push(format!("{}({arguments})", call.name));
                    }
                }
            }
            if !text.is_empty() {
                parts.push(format!("[Assistant]: {}", text.join("\n")));
            }
            if !calls.is_empty() {
                parts.push(format!("[Assistant tool calls]: {}", calls.join("; ")));
            }
        }
        Message::ToolResult(result) => {
            let content = input_text(&result.content);
            if !content.is_empty() {
                parts.push(format!(
                    "[Tool result]: {}",
                    truncate_for_summary(&content, TOOL_RESULT_MAX_CHARS)
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn message(value: serde_json::Value) -> Message {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn renders_each_role() {
        let messages = vec![
            message(json!({"role": "user", "content": "plain"})),
            message(json!({"role": "user", "content": [
                {"type": "text", "text": "a"},
                {"type": "image", "data": "", "mimeType": "image/png"},
                {"type": "text", "text": "b"}
            ]})),
            message(json!({"role": "user", "content": []})),
            message(json!({
                "role": "assistant", "api": "a", "provider": "p", "model": "m",
                "content": [
                    {"type": "text", "text": "one"},
                    {"type": "thinking", "thinking": "t1"},
                    {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a.rs", "limit": 5}},
                    {"type": "text", "text": "two"},
                    {"type": "thinking", "thinking": "t2"},
                    {"type": "toolCall", "id": "2", "name": "bash", "arguments": {"command": "echo \"hi\""}}
                ]
            })),
            message(
                json!({"role": "toolResult", "toolCallId": "1", "toolName": "read",
                "content": [{"type": "text", "text": "file"}, {"type": "text", "text": "!"}]}),
            ),
            message(
                json!({"role": "toolResult", "toolCallId": "2", "toolName": "bash", "content": []}),
            ),
        ];
        assert_eq!(
            serialize_conversation(&messages),
            "[User]: plain\n\n[User]: ab\n\n[Assistant]: one\ntwo\n\n\
             [Assistant tool calls]: read(path=\"a.rs\", limit=5); bash(command=\"echo \\\"hi\\\"\")\n\n\
             [Tool result]: file!"
        );
    }

    #[test]
    fn long_tool_results_are_truncated() {
        let long = "x".repeat(TOOL_RESULT_MAX_CHARS + 25);
        let messages = vec![message(
            json!({"role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [{"type": "text", "text": long}]}),
        )];
        let out = serialize_conversation(&messages);
        assert_eq!(
            out,
            format!(
                "[Tool result]: {}\n\n[... 25 more characters truncated]",
                "x".repeat(TOOL_RESULT_MAX_CHARS)
            )
        );
        assert_eq!(truncate_for_summary("short", 10), "short");
        // Counted in UTF-16 units; a surrogate pair is never split.
        assert_eq!(
            truncate_for_summary("a😀b", 2),
            "a\n\n[... 2 more characters truncated]"
        );
        assert_eq!(
            truncate_for_summary("é😀b", 3),
            "é😀\n\n[... 1 more characters truncated]"
        );
    }

    #[test]
    fn a_capped_transcript_keeps_the_newest_messages_and_counts_the_rest() {
        let messages: Vec<Message> = (0..10)
            .map(|i| pi_ai::UserMessage::text(format!("message {i}")).into())
            .collect();
        let whole = serialize_conversation(&messages);
        assert_eq!(serialize_recent(&messages, usize::MAX), whole);
        // "[User]: message N" is 17 bytes, 19 with its separator: room for three.
        let recent = serialize_recent(&messages, 60);
        assert_eq!(
            recent,
            "[... 7 earlier messages omitted: the conversation is longer than the model's context window]\n\n[User]: message 7\n\n[User]: message 8\n\n[User]: message 9"
        );
    }
}
