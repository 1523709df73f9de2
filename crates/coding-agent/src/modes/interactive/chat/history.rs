//! How much of a long history a rebuilt transcript draws: the newest messages that fit a
//! text budget, so a resumed session with a huge history still starts quickly.

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantBlock, Message};

/// Text drawn at most when a history is rebuilt (about 1,000 typical messages): drawing
/// tens of megabytes of old markdown would keep a resumed session from starting quickly.
const HISTORY_BUDGET_BYTES: usize = 2 * 1024 * 1024;

/// Index of the first message to draw so the newest ones fit the budget; a tool result is
/// never separated from its call.
pub(super) fn history_start(messages: &[AgentMessage]) -> usize {
    let mut used = 0;
    for (i, message) in messages.iter().enumerate().rev() {
        used += approx_len(message);
        if used > HISTORY_BUDGET_BYTES {
            // Start after this message, but not on a tool result.
            let mut start = i + 1;
            while start < messages.len()
                && matches!(messages[start], AgentMessage::Llm(Message::ToolResult(_)))
            {
                start += 1;
            }
            return start;
        }
    }
    0
}

/// Rough size of what a message draws.
fn approx_len(message: &AgentMessage) -> usize {
    match message {
        AgentMessage::Llm(Message::User(u)) => u.text_content().len(),
        AgentMessage::Llm(Message::Assistant(a)) => a
            .content
            .iter()
            .map(|b| match b {
                AssistantBlock::Text(t) => t.text.len(),
                AssistantBlock::Thinking(t) => t.thinking.len(),
                AssistantBlock::ToolCall(c) => c.arguments.len() * 16,
            })
            .sum(),
        AgentMessage::Llm(Message::ToolResult(r)) => r
            .content
            .iter()
            .map(|b| match b {
                pi_ai::InputBlock::Text(t) => t.text.len(),
                _ => 64,
            })
            .sum(),
        AgentMessage::Custom(c) => c.data.len() * 32,
    }
}
