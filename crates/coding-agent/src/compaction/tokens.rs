//! Token estimates: a chars/4 heuristic per message, anchored on the last real usage report.

use serde::Serialize;
use serde_json::Value;

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, AssistantMessage, InputBlock, Message, Usage, UserContent};

use super::settings::CompactionSettings;
use crate::session::{EntryKind, SessionEntry};

/// Characters an image is assumed to cost (1200 tokens).
pub const IMAGE_CHARS: u64 = 4800;

/// Length as JavaScript counts it (UTF-16 code units), so estimates match the TypeScript pi.
pub(crate) fn js_len(text: &str) -> u64 {
    text.encode_utf16().count() as u64
}

fn input_blocks_chars(blocks: &[InputBlock]) -> u64 {
    blocks
        .iter()
        .map(|block| match block {
            InputBlock::Text(t) => js_len(&t.text),
            InputBlock::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

/// A persisted system message (pi 1.5): its content, every section's text and the JSON of
/// the tools it added, as pi 1.6 counts it.
fn system_chars(message: &pi_agent_core::CustomMessage) -> u64 {
    let sections: u64 = message
        .get("sections")
        .and_then(Value::as_object)
        .map(|sections| {
            sections
                .values()
                .filter_map(Value::as_str)
                .map(js_len)
                .sum()
        })
        .unwrap_or(0);
    let tools = message
        .get("toolsAdded")
        .filter(|v| !v.is_null())
        .map_or(0, |v| js_len(&v.to_string()));
    json_content_chars(message.get("content")) + sections + tools
}

fn json_content_chars(content: Option<&Value>) -> u64 {
    match content {
        Some(Value::String(text)) => js_len(text),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .map(|block| match block.get("type").and_then(Value::as_str) {
                Some("text") => block.get("text").and_then(Value::as_str).map_or(0, js_len),
                Some("image") => IMAGE_CHARS,
                _ => 0,
            })
            .sum(),
        _ => 0,
    }
}

fn str_field_len(message: &pi_agent_core::CustomMessage, key: &str) -> u64 {
    message.get(key).and_then(Value::as_str).map_or(0, js_len)
}

/// Estimated tokens of one message: its characters divided by four, rounded up
/// (conservative; images count as 4800 characters, in user messages too, as pi 1.6).
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    let chars = match message {
        AgentMessage::Llm(Message::User(user)) => match &user.content {
            UserContent::Text(text) => js_len(text),
            UserContent::Blocks(blocks) => input_blocks_chars(blocks),
        },
        AgentMessage::Llm(Message::Assistant(assistant)) => assistant
            .content
            .iter()
            .map(|block| match block {
                AssistantBlock::Text(t) => js_len(&t.text),
                AssistantBlock::Thinking(t) => js_len(&t.thinking),
                AssistantBlock::ToolCall(call) => {
                    let arguments = serde_json::to_string(&call.arguments).unwrap_or_default();
                    js_len(&call.name) + js_len(&arguments)
                }
            })
            .sum(),
        AgentMessage::Llm(Message::ToolResult(result)) => input_blocks_chars(&result.content),
        AgentMessage::Custom(custom) => match custom.role.as_str() {
            "custom" => json_content_chars(custom.get("content")),
            "bashExecution" => str_field_len(custom, "command") + str_field_len(custom, "output"),
            "branchSummary" | "compactionSummary" => str_field_len(custom, "summary"),
            "system" => system_chars(custom),
            _ => 0,
        },
    };
    chars.div_ceil(4)
}

/// Context tokens of a usage report: `totalTokens`, or the sum of its parts when that is 0.
pub fn calculate_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens != 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// The usage of an assistant message that completed (aborted and failed ones report none)
/// with a usage that is not all zeros (one from a transcript that kept none), as pi 1.6.0.
fn assistant_usage(message: &AgentMessage) -> Option<&Usage> {
    message
        .as_assistant()
        .filter(|a: &&AssistantMessage| {
            !a.stop_reason.is_failure() && calculate_context_tokens(&a.usage) > 0
        })
        .map(|a| &a.usage)
}

/// The usage of the last completed assistant message among session entries.
pub fn get_last_assistant_usage(entries: &[SessionEntry]) -> Option<&Usage> {
    entries.iter().rev().find_map(|entry| match &entry.kind {
        EntryKind::Message { message } => assistant_usage(message),
        _ => None,
    })
}

/// How full the context is: the last usage report plus estimates of what followed it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextUsageEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// Context tokens of the last usage report (0 without one).
    pub usage_tokens: u64,
    /// Estimated tokens of the messages after that report (all messages without one).
    pub trailing_tokens: u64,
    /// Index of the message holding that report.
    pub last_usage_index: Option<usize>,
}

/// Estimates the context the messages fill, anchored on the last completed assistant
/// message's usage; the messages after it are estimated with [`estimate_tokens`].
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> ContextUsageEstimate {
    let anchor = messages
        .iter()
        .enumerate()
        .rev()
        .find_map(|(index, message)| assistant_usage(message).map(|usage| (index, usage)));
    match anchor {
        None => {
            let estimated = messages.iter().map(estimate_tokens).sum();
            ContextUsageEstimate {
                tokens: estimated,
                usage_tokens: 0,
                trailing_tokens: estimated,
                last_usage_index: None,
            }
        }
        Some((index, usage)) => {
            let usage_tokens = calculate_context_tokens(usage);
            let trailing_tokens = messages[index + 1..].iter().map(estimate_tokens).sum();
            ContextUsageEstimate {
                tokens: usage_tokens + trailing_tokens,
                usage_tokens,
                trailing_tokens,
                last_usage_index: Some(index),
            }
        }
    }
}

/// The context a session's projection fills, as pi 1.6.0's `estimateProjectedContextTokens`
/// measures it: anchored on the last usage report only when no context edit or compaction
/// came after it on the branch (`path`, root first); else every message estimated, the
/// current system message once. `messages` is the projection of `path`.
pub fn estimate_projected_context_tokens(path: &[SessionEntry], messages: &[AgentMessage]) -> u64 {
    let invalidated_at = path.iter().rposition(|entry| {
        matches!(
            entry.kind,
            EntryKind::ContextEdit { .. } | EntryKind::Compaction { .. }
        )
    });
    let usage_at = path.iter().rposition(|entry| match &entry.kind {
        EntryKind::Message { message } => assistant_usage(message).is_some(),
        _ => false,
    });
    let estimate = estimate_context_tokens(messages);
    if estimate.last_usage_index.is_some()
        && usage_at.is_some_and(|at| invalidated_at.is_none_or(|edit| at > edit))
    {
        return estimate.tokens;
    }
    let system = messages
        .iter()
        .rev()
        .find(|m| m.role() == "system")
        .map_or(0, estimate_tokens);
    system
        + messages
            .iter()
            .filter(|m| m.role() != "system")
            .map(estimate_tokens)
            .sum::<u64>()
}

/// Whether to compact: enabled, and the context exceeds the window minus the reserve.
pub fn should_compact(
    context_tokens: u64,
    context_window: u64,
    settings: &CompactionSettings,
) -> bool {
    settings.enabled && context_tokens.saturating_add(settings.reserve_tokens) > context_window
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn msg(value: Value) -> AgentMessage {
        serde_json::from_value(value).unwrap()
    }

    pub(crate) fn assistant_with_usage(text: &str, total: u64, stop: &str) -> AgentMessage {
        msg(json!({
            "role": "assistant", "content": [{"type": "text", "text": text}],
            "api": "a", "provider": "p", "model": "m", "stopReason": stop, "timestamp": 1,
            "usage": {"input": 1, "output": 2, "cacheRead": 3, "cacheWrite": 4, "totalTokens": total,
                      "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
        }))
    }

    #[test]
    fn estimates_each_kind_like_the_typescript_heuristic() {
        assert_eq!(
            estimate_tokens(&msg(json!({"role": "user", "content": "12345"}))),
            2
        );
        assert_eq!(
            estimate_tokens(&msg(json!({"role": "user", "content": [
                {"type": "text", "text": "abcd"},
                {"type": "image", "data": "xx", "mimeType": "image/png"},
                {"type": "text", "text": "ef"}
            ]}))),
            // pi 1.6 counts a user's image as a tool result's: (6 + 4800) / 4 → 1202.
            1202
        );
        // A persisted system message: content, sections and the tools it added.
        assert_eq!(
            estimate_tokens(&msg(json!({"role": "system", "content": "abcd",
                "sections": {"a": "efgh", "b": "ij"}, "toolsAdded": ["ls"]}))),
            // 4 + 6 + `["ls"]` (6) = 16 → 4
            4
        );
        // "read" (4) + {"path":"a.rs"} (15) + "hi" (2) + "hmm" (3) = 24 → 6
        let assistant = msg(json!({
            "role": "assistant", "api": "a", "provider": "p", "model": "m",
            "content": [
                {"type": "text", "text": "hi"},
                {"type": "thinking", "thinking": "hmm"},
                {"type": "toolCall", "id": "1", "name": "read", "arguments": {"path": "a.rs"}}
            ]
        }));
        assert_eq!(estimate_tokens(&assistant), 6);
        let tool_result = msg(json!({
            "role": "toolResult", "toolCallId": "1", "toolName": "read", "content": [
                {"type": "text", "text": "x"},
                {"type": "image", "data": "xx", "mimeType": "image/png"}
            ]
        }));
        assert_eq!(estimate_tokens(&tool_result), 1201);
        assert_eq!(
            estimate_tokens(&msg(
                json!({"role": "bashExecution", "command": "ls", "output": "abcdefg"})
            )),
            3
        );
        assert_eq!(
            estimate_tokens(&msg(
                json!({"role": "custom", "customType": "t", "content": [
                    {"type": "text", "text": "abc"}, {"type": "image", "data": "", "mimeType": "image/png"}
                ]})
            )),
            1201
        );
        assert_eq!(
            estimate_tokens(&msg(
                json!({"role": "custom", "customType": "t", "content": "abcde"})
            )),
            2
        );
        assert_eq!(
            estimate_tokens(&msg(
                json!({"role": "compactionSummary", "summary": "abcdefghi"})
            )),
            3
        );
        assert_eq!(
            estimate_tokens(&msg(
                json!({"role": "branchSummary", "summary": "ab", "fromId": "x"})
            )),
            1
        );
        assert_eq!(estimate_tokens(&msg(json!({"role": "notification"}))), 0);
        // UTF-16 code units: one astral character counts as two.
        assert_eq!(
            estimate_tokens(&msg(json!({"role": "user", "content": "😀😀😀"}))),
            2
        );
    }

    #[test]
    fn context_tokens_prefer_total_then_sum() {
        let mut usage = Usage::from_tokens(1, 2, 3, 4);
        usage.total_tokens = 50;
        assert_eq!(calculate_context_tokens(&usage), 50);
        usage.total_tokens = 0;
        assert_eq!(calculate_context_tokens(&usage), 10);
    }

    #[test]
    fn estimate_anchors_on_last_completed_assistant() {
        let messages = vec![
            msg(json!({"role": "user", "content": "abcdefgh"})),
            assistant_with_usage("ok", 1000, "stop"),
            msg(json!({"role": "user", "content": "abcd"})),
            assistant_with_usage("oops", 5000, "aborted"),
            assistant_with_usage("bad", 7000, "error"),
        ];
        let estimate = estimate_context_tokens(&messages);
        // 1 (user) + 1 ("oops") + 1 ("bad") after the anchor at index 1.
        assert_eq!(
            estimate,
            ContextUsageEstimate {
                tokens: 1003,
                usage_tokens: 1000,
                trailing_tokens: 3,
                last_usage_index: Some(1)
            }
        );
        let none = estimate_context_tokens(&messages[..1]);
        assert_eq!(none.tokens, 2);
        assert_eq!(none.trailing_tokens, 2);
        assert_eq!(none.last_usage_index, None);
        assert_eq!(
            serde_json::to_value(none).unwrap(),
            json!({"tokens": 2, "usageTokens": 0, "trailingTokens": 2, "lastUsageIndex": null})
        );
    }

    #[test]
    fn last_assistant_usage_skips_failed_messages() {
        let entry = |id: &str, message: AgentMessage| SessionEntry {
            id: id.into(),
            parent_id: None,
            timestamp: String::new(),
            kind: EntryKind::Message { message },
        };
        let entries = vec![
            entry("a", assistant_with_usage("ok", 10, "stop")),
            entry("b", assistant_with_usage("x", 20, "aborted")),
            entry("c", msg(json!({"role": "user", "content": "q"}))),
        ];
        assert_eq!(
            get_last_assistant_usage(&entries).map(|u| u.total_tokens),
            Some(10)
        );
        assert_eq!(get_last_assistant_usage(&entries[1..]), None);
    }

    #[test]
    fn should_compact_compares_against_window_minus_reserve() {
        let settings = CompactionSettings::default();
        assert!(!should_compact(100_000 - 16384, 100_000, &settings));
        assert!(should_compact(100_000 - 16383, 100_000, &settings));
        assert!(should_compact(1, 1000, &settings));
        let off = CompactionSettings {
            enabled: false,
            ..settings
        };
        assert!(!should_compact(1_000_000, 1000, &off));
    }
}
