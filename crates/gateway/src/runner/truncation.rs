//! Last-resort overflow recovery: tool results longer than a share of the context window
//! are shortened in place, keeping their head and tail around an omission marker.

use pi_agent_core::AgentMessage;
use pi_ai::{InputBlock, Message};

/// Share of the context window one tool result may fill (in characters, 4 per token).
pub const TOOL_RESULT_CONTEXT_SHARE: f64 = 0.3;
/// No tool result is kept longer than this, whatever the window.
pub const HARD_MAX_TOOL_RESULT_CHARS: usize = 400_000;
/// Shortest limit, so tiny windows still leave a useful excerpt.
pub const MIN_TOOL_RESULT_CHARS: usize = 2_000;
/// Share of the kept characters taken from the head; the rest comes from the tail.
const HEAD_SHARE: f64 = 0.7;
/// Characters set aside for the omission marker.
const MARKER_RESERVE: usize = 120;

/// The per-result character limit for a context window of `context_window` tokens.
pub fn max_tool_result_chars(context_window: u64) -> usize {
    let share = (context_window as f64 * 4.0 * TOOL_RESULT_CONTEXT_SHARE) as usize;
    share.clamp(MIN_TOOL_RESULT_CHARS, HARD_MAX_TOOL_RESULT_CHARS)
}

fn tool_result_text_len(message: &AgentMessage) -> usize {
    match message {
        AgentMessage::Llm(Message::ToolResult(result)) => result
            .content
            .iter()
            .filter_map(InputBlock::as_text)
            .map(|t| t.chars().count())
            .sum(),
        _ => 0,
    }
}

/// Whether any tool result's text is longer than `max_chars`.
pub fn has_oversized_tool_results(messages: &[AgentMessage], max_chars: usize) -> bool {
    messages.iter().any(|m| tool_result_text_len(m) > max_chars)
}

/// `text` cut to at most about `max_chars` characters: the head, a marker naming how much
/// was left out, and the tail. Shorter texts come back unchanged.
pub fn truncate_keeping_head_and_tail(text: &str, max_chars: usize) -> String {
    let total = text.chars().count();
    if total <= max_chars {
        return text.to_owned();
    }
    let keep = max_chars - MARKER_RESERVE.min(max_chars / 2);
    let head_chars = (keep as f64 * HEAD_SHARE) as usize;
    let tail_chars = keep - head_chars;
    let omitted = total - head_chars - tail_chars;
    let head: String = text.chars().take(head_chars).collect();
    let tail: String = text.chars().skip(total - tail_chars).collect();
    format!(
        "{head}\n\n[... {omitted} characters of this tool result were removed to fit the context window ...]\n\n{tail}"
    )
}

/// Shortens every tool result whose text exceeds `max_chars` (its text blocks share the
/// budget by length); returns how many results were shortened.
pub fn truncate_oversized_tool_results(messages: &mut [AgentMessage], max_chars: usize) -> usize {
    let mut truncated = 0;
    for message in messages.iter_mut() {
        let total = tool_result_text_len(message);
        if total <= max_chars {
            continue;
        }
        let AgentMessage::Llm(Message::ToolResult(result)) = message else {
            continue;
        };
        let result = std::sync::Arc::make_mut(result);
        for block in &mut result.content {
            if let InputBlock::Text(text) = block {
                let len = text.text.chars().count();
                let budget = (max_chars as f64 * len as f64 / total as f64) as usize;
                text.text = truncate_keeping_head_and_tail(&text.text, budget.max(1)).into();
            }
        }
        result.details = None;
        truncated += 1;
    }
    truncated
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::ToolResultMessage;

    fn result(text: &str) -> AgentMessage {
        AgentMessage::Llm(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                content: vec![InputBlock::text(text)].into(),
                details: Some(serde_json::json!({"big": true})),
                ..Default::default()
            }
            .into(),
        ))
    }

    fn text_of(message: &AgentMessage) -> String {
        match message {
            AgentMessage::Llm(Message::ToolResult(r)) => {
                r.content.iter().filter_map(InputBlock::as_text).collect()
            }
            _ => String::new(),
        }
    }

    #[test]
    fn long_results_keep_head_and_tail() {
        let long = format!("HEAD{}TAIL", "x".repeat(10_000));
        let mut messages = vec![result("short"), result(&long)];
        assert!(has_oversized_tool_results(&messages, 1_000));
        assert_eq!(truncate_oversized_tool_results(&mut messages, 1_000), 1);
        assert_eq!(text_of(&messages[0]), "short");
        let cut = text_of(&messages[1]);
        assert!(cut.starts_with("HEAD"));
        assert!(cut.ends_with("TAIL"));
        assert!(cut.contains("characters of this tool result were removed"));
        assert!(cut.len() <= 1_000, "{}", cut.len());
        assert!(!has_oversized_tool_results(&messages, 1_000));
        assert_eq!(truncate_oversized_tool_results(&mut messages, 1_000), 0);
    }

    #[test]
    fn limit_follows_the_window_within_bounds() {
        assert_eq!(max_tool_result_chars(100_000), 120_000);
        assert_eq!(max_tool_result_chars(1_000), MIN_TOOL_RESULT_CHARS);
        assert_eq!(
            max_tool_result_chars(10_000_000),
            HARD_MAX_TOOL_RESULT_CHARS
        );
    }

    #[test]
    fn multibyte_text_is_cut_on_char_boundaries() {
        let text = "é".repeat(50);
        let cut = truncate_keeping_head_and_tail(&text, 10);
        assert!(cut.starts_with("ééé\n\n[... 45 characters"), "{cut}");
        assert!(cut.ends_with("...]\n\néé"), "{cut}");
    }
}
