//! GitHub Copilot's per-request headers, sent on each of its APIs (Chat Completions,
//! Responses, Anthropic Messages), as pi-ai 1.6's `buildCopilotDynamicHeaders` does.

use crate::types::{InputBlock, Message, UserContent};

fn has_image(blocks: &[InputBlock]) -> bool {
    blocks.iter().any(|b| matches!(b, InputBlock::Image(_)))
}

/// Who started the turn (`X-Initiator`: `user` when the last message is the user's, else
/// `agent`), the edit intent, and whether the conversation holds images.
pub(crate) fn copilot_headers(messages: &[Message]) -> Vec<(&'static str, &'static str)> {
    let initiator = match messages.last() {
        Some(last) if !matches!(last, Message::User(_)) => "agent",
        _ => "user",
    };
    let mut headers = vec![
        ("X-Initiator", initiator),
        ("Openai-Intent", "conversation-edits"),
    ];
    let images = messages.iter().any(|m| match m {
        Message::User(u) => matches!(&u.content, UserContent::Blocks(b) if has_image(b)),
        Message::ToolResult(r) => has_image(&r.content),
        Message::Assistant(_) => false,
    });
    if images {
        headers.push(("Copilot-Vision-Request", "true"));
    }
    headers
}
