//! Echo behaviour used when the script queue is empty.
//!
//! Looks at the last message of the request's `messages` array (OpenAI and Anthropic):
//! a tool result yields `"done: <first 20 chars>"`; a user text starting with `"read "`
//! yields a `read` tool call; any other user text yields `"ok: <text>"`.

use serde_json::{Value, json};

use crate::script::Script;

/// What the last turn of the conversation was.
#[derive(Debug, PartialEq, Eq)]
enum LastTurn {
    ToolResult(String),
    UserText(String),
}

/// Builds the default reply for a request with a `messages` array.
pub(crate) fn from_messages(request: &Value) -> Script {
    match last_turn(request) {
        LastTurn::ToolResult(text) => {
            let head: String = text.chars().take(20).collect();
            Script::text(format!("done: {head}"))
        }
        LastTurn::UserText(text) => match text.strip_prefix("read ") {
            Some(rest) => Script::tool_call("read", json!({ "path": rest.trim() })),
            None => Script::text(format!("ok: {text}")),
        },
    }
}

fn last_turn(request: &Value) -> LastTurn {
    let messages: &[Value] = request
        .get("messages")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice);
    if let Some(last) = messages.last()
        && let Some(result) = tool_result_text(last)
    {
        return LastTurn::ToolResult(result);
    }
    let user_text = messages
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
        .and_then(|m| m.get("content"))
        .map(content_text)
        .unwrap_or_default();
    LastTurn::UserText(user_text)
}

/// The text of a tool result message (OpenAI `role: tool`, Anthropic `tool_result` block).
fn tool_result_text(message: &Value) -> Option<String> {
    let content = message.get("content");
    match message.get("role").and_then(Value::as_str) {
        Some("tool") => Some(content.map(content_text).unwrap_or_default()),
        Some("user") => content?
            .as_array()?
            .iter()
            .rev()
            .find(|part| part.get("type").and_then(Value::as_str) == Some("tool_result"))
            .map(|part| part.get("content").map(content_text).unwrap_or_default()),
        _ => None,
    }
}

/// Text of string content or of the text parts of a content-part array.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|part| match part {
                Value::String(text) => Some(text.as_str()),
                _ => part.get("text").and_then(Value::as_str),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::script::Item;

    fn first_text(script: &Script) -> &str {
        match &script.items[0] {
            Item::Text { text } => text,
            other => panic!("unexpected item {other:?}"),
        }
    }

    #[test]
    fn openai_user_text_is_echoed() {
        let req = json!({"messages": [{"role": "system", "content": "sys"},
            {"role": "user", "content": [{"type": "text", "text": "hello"}]}]});
        assert_eq!(first_text(&from_messages(&req)), "ok: hello");
    }

    #[test]
    fn read_prefix_becomes_tool_call() {
        let req = json!({"messages": [{"role": "user", "content": "read  src/main.rs "}]});
        let script = from_messages(&req);
        assert_eq!(
            script.items,
            vec![Item::tool_call("read", json!({"path": "src/main.rs"}))]
        );
    }

    #[test]
    fn tool_results_are_summarised() {
        let openai = json!({"messages": [{"role": "user", "content": "x"},
            {"role": "tool", "tool_call_id": "c", "content": "0123456789abcdefghijKLMN"}]});
        assert_eq!(
            first_text(&from_messages(&openai)),
            "done: 0123456789abcdefghij"
        );
        let anthropic = json!({"messages": [{"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "short"}]}]}]});
        assert_eq!(first_text(&from_messages(&anthropic)), "done: short");
    }

    #[test]
    fn missing_messages_give_empty_echo() {
        assert_eq!(first_text(&from_messages(&Value::Null)), "ok: ");
    }
}
