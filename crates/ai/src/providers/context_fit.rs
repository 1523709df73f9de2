//! The output cap fitted into the context window, as pi-ai 1.6 fits it
//! (`clampMaxTokensToContext`): the input is estimated (the last reply's reported usage plus
//! what came after it, else every message at 3.5 characters a token), a margin is kept for
//! an input counted higher than estimated, and the cap is what is left, if smaller.

use crate::types::{
    AssistantBlock, Context, InputBlock, Message, Model, StopReason, Usage, UserContent,
};

/// Characters a token, for the estimate.
const CHARS_PER_TOKEN: f64 = 3.5;
/// What an image counts as, in characters.
const IMAGE_CHARS: usize = 4800;
/// The fixed margin left for the input being counted higher than estimated.
const SAFETY_TOKENS: u64 = 4096;
/// The proportional margin (an OpenRouter overcount reached 12%).
const SAFETY_RATIO: f64 = 0.15;
/// The proportional margin is kept only while it leaves at least this much output.
const MIN_OUTPUT_WITH_RATIO_MARGIN: u64 = 32_768;

/// `max_tokens` fitted into what `model`'s window leaves after `context`'s input.
pub fn clamp_max_tokens_to_context(model: &Model, context: &Context, max_tokens: u64) -> u64 {
    if model.context_window == 0 {
        return max_tokens.max(1);
    }
    let window = model.context_window as i64;
    let input = estimate_context_tokens(context) as i64;
    let margin = (SAFETY_TOKENS as i64).max((input as f64 * SAFETY_RATIO).ceil() as i64);
    let mut room = window - input - margin;
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN as i64 {
        room = (MIN_OUTPUT_WITH_RATIO_MARGIN as i64).min(window - input - SAFETY_TOKENS as i64);
    }
    max_tokens.min(room.max(1) as u64)
}

/// The input tokens of `context`: the last usable reply's reported usage plus an estimate
/// of the messages after it, or, with no such reply, an estimate of the system prompt, the
/// tools and every message.
pub fn estimate_context_tokens(context: &Context) -> u64 {
    // The system prompt and tools lead the transcript with timestamp 0.
    let mut latest_prefix = 0i64;
    let mut last_usage: Option<(u64, usize)> = None;
    for (index, message) in context.messages.iter().enumerate() {
        if let Message::Assistant(assistant) = message {
            let tokens = usage_tokens(&assistant.usage);
            // A message newer than the reply (a compaction summary put before it) means
            // its usage no longer describes the prefix.
            if assistant.timestamp >= latest_prefix
                && !matches!(
                    assistant.stop_reason,
                    StopReason::Aborted | StopReason::Error
                )
                && tokens > 0
            {
                last_usage = Some((tokens, index));
            }
        }
        latest_prefix = latest_prefix.max(timestamp(message));
    }
    match last_usage {
        Some((tokens, index)) => {
            tokens
                + context.messages[index + 1..]
                    .iter()
                    .map(message_tokens)
                    .sum::<u64>()
        }
        None => system_tokens(context) + context.messages.iter().map(message_tokens).sum::<u64>(),
    }
}

/// The reported total, else the sum of its parts.
fn usage_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

fn timestamp(message: &Message) -> i64 {
    match message {
        Message::User(m) => m.timestamp,
        Message::Assistant(m) => m.timestamp,
        Message::ToolResult(m) => m.timestamp,
    }
}

/// Tokens for `chars` UTF-16 code units (the length JavaScript counts).
fn tokens_for(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The system prompt and the tools' declarations (as JSON).
fn system_tokens(context: &Context) -> u64 {
    let prompt = context.system_prompt.as_deref().map_or(0, utf16_len);
    let tools = if context.tools.is_empty() {
        0
    } else {
        tokens_for(serde_json::to_string(&context.tools).map_or(0, |json| utf16_len(&json)))
    };
    tokens_for(prompt) + tools
}

fn input_chars(blocks: &[InputBlock]) -> usize {
    blocks
        .iter()
        .map(|block| match block {
            InputBlock::Text(text) => utf16_len(&text.text),
            InputBlock::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

fn message_tokens(message: &Message) -> u64 {
    match message {
        Message::User(user) => tokens_for(match &user.content {
            UserContent::Text(text) => utf16_len(text),
            UserContent::Blocks(blocks) => input_chars(blocks),
        }),
        Message::ToolResult(result) => tokens_for(input_chars(&result.content)),
        Message::Assistant(assistant) => tokens_for(
            assistant
                .content
                .iter()
                .map(|block| match block {
                    AssistantBlock::Text(text) => utf16_len(&text.text),
                    AssistantBlock::Thinking(thinking) => utf16_len(&thinking.thinking),
                    AssistantBlock::ToolCall(call) => {
                        utf16_len(&call.name)
                            + serde_json::to_string(&call.arguments).map_or(0, |a| utf16_len(&a))
                    }
                })
                .sum(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, UserMessage};
    use std::sync::Arc;

    fn model(window: u64) -> Model {
        Model {
            id: "m".into(),
            name: "m".into(),
            api: "a".into(),
            provider: "p".into(),
            base_url: String::new(),
            reasoning: false,
            thinking_level_map: None,
            input: vec![crate::types::InputKind::Text],
            cost: crate::types::ModelCost::default(),
            context_window: window,
            max_tokens: 16_384,
            headers: None,
            compat: None,
            extras: Default::default(),
        }
    }

    #[test]
    fn a_reply_usage_plus_what_follows_leaves_the_room() {
        let mut reply = AssistantMessage::empty("a", "p", "m");
        reply.usage = Usage::from_tokens(6_000, 10, 0, 0);
        reply.timestamp = 2;
        let mut next = UserMessage::text("And now a short one.");
        next.timestamp = 3;
        let context = Context {
            system_prompt: Some("ignored once a reply reported usage".into()),
            messages: vec![Message::Assistant(Arc::new(reply)), Message::User(next)],
            tools: Vec::new(),
            ..Default::default()
        };
        // 6010 + ceil(20 / 3.5) = 6016; 24000 - 6016 - 4096 = 13888.
        assert_eq!(estimate_context_tokens(&context), 6_016);
        assert_eq!(
            clamp_max_tokens_to_context(&model(24_000), &context, 16_384),
            13_888
        );
        assert_eq!(
            clamp_max_tokens_to_context(&model(24_000), &context, 8_192),
            8_192
        );
        assert_eq!(clamp_max_tokens_to_context(&model(0), &context, 0), 1);
    }

    #[test]
    fn a_large_window_keeps_the_proportional_margin() {
        let context = Context {
            system_prompt: Some("x".repeat(350_000)),
            messages: Vec::new(),
            tools: Vec::new(),
            ..Default::default()
        };
        // 100000 tokens in, a margin of 15000: 200000 - 115000 = 85000.
        assert_eq!(estimate_context_tokens(&context), 100_000);
        assert_eq!(
            clamp_max_tokens_to_context(&model(200_000), &context, 128_000),
            85_000
        );
    }
}
