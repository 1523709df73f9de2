//! Prepares a conversation for a target model: images for text-only models, thinking from
//! other models, tool-call ids the API accepts, and exactly one result per tool call.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use crate::types::{
    AssistantBlock, AssistantMessage, InputBlock, Message, Model, SharedVec, StopReason,
    TextContent, ToolCall, ToolResultMessage, UserContent, now_ms,
};

const USER_IMAGE_PLACEHOLDER: &str = "(image omitted: model does not support images)";
const TOOL_IMAGE_PLACEHOLDER: &str = "(tool image omitted: model does not support images)";
const MISSING_RESULT: &str = "No result provided";
/// Where an error result's images were: Claude rejects images in an error result, so they
/// are sent after the turn's tool results (pi-ai 1.3).
pub(crate) const ERROR_TOOL_IMAGE_PLACEHOLDER: &str = "(image attached after the tool results)";

/// The caption before an error result's images, sent after the tool results.
pub(crate) fn error_images_caption(result: &ToolResultMessage) -> String {
    format!(
        "Images from the error result of tool call {} ({}):",
        result.tool_call_id, result.tool_name
    )
}

/// `content` with each run of images replaced by one `placeholder` text.
pub(crate) fn replace_images(content: &[InputBlock], placeholder: &str) -> Vec<InputBlock> {
    let mut out = Vec::with_capacity(content.len());
    let mut previous_was_placeholder = false;
    for block in content {
        match block {
            InputBlock::Image(_) => {
                if !previous_was_placeholder {
                    out.push(InputBlock::text(placeholder));
                }
                previous_was_placeholder = true;
            }
            InputBlock::Text(t) => {
                previous_was_placeholder = t.text.eq_str(placeholder);
                out.push(block.clone());
            }
        }
    }
    out
}

/// Returns the messages as `model` should receive them.
///
/// `normalize_id` rewrites tool-call ids from other models to the target API's rules; the
/// matching tool results follow. Failed (`error`/`aborted`) assistant turns are dropped, and
/// tool calls left without a result get an error result saying so.
pub fn transform_messages(
    messages: &[Message],
    model: &Model,
    normalize_id: Option<&dyn Fn(&str) -> String>,
) -> Vec<Message> {
    transform_messages_placing(messages, model, normalize_id, &[]).0
}

/// [`transform_messages`], also giving where each mark (an index of `messages`, in order:
/// a system message standing before that message) lands in the result. As pi-ai 1.6
/// holds system messages, a mark between a turn's tool calls and the next user or
/// assistant message lands after the turn's results, the made-up ones included.
pub fn transform_messages_placing(
    messages: &[Message],
    model: &Model,
    normalize_id: Option<&dyn Fn(&str) -> String>,
    marks: &[usize],
) -> (Vec<Message>, Vec<usize>) {
    let mut placed: Vec<usize> = Vec::with_capacity(marks.len());
    // Marks waiting for the open turn's results to close.
    let mut held = 0usize;
    let text_only = !model.supports_images();
    let mut id_map: HashMap<String, String> = HashMap::new();
    let mut out: Vec<Message> = Vec::with_capacity(messages.len());
    let mut pending: Vec<(String, String)> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();

    let flush = |out: &mut Vec<Message>,
                 pending: &mut Vec<(String, String)>,
                 answered: &mut HashSet<String>| {
        for (id, name) in pending.drain(..) {
            if !answered.contains(&id) {
                out.push(Message::ToolResult(
                    ToolResultMessage {
                        tool_call_id: id,
                        tool_name: name,
                        content: vec![InputBlock::text(MISSING_RESULT)].into(),
                        is_error: true,
                        timestamp: now_ms(),
                        ..Default::default()
                    }
                    .into(),
                ));
            }
        }
        answered.clear();
    };

    for (index, message) in messages.iter().enumerate() {
        while let Some(&mark) = marks.get(placed.len() + held)
            && mark <= index
        {
            if pending.is_empty() {
                placed.push(out.len());
            } else {
                held += 1;
            }
        }
        if matches!(message, Message::User(_) | Message::Assistant(_)) {
            flush(&mut out, &mut pending, &mut answered);
            placed.extend(std::iter::repeat_n(out.len(), held));
            held = 0;
        }
        match message {
            Message::User(user) => {
                flush(&mut out, &mut pending, &mut answered);
                let mut user = user.clone();
                if text_only
                    && let UserContent::Blocks(blocks) = &user.content
                    && blocks.iter().any(|b| matches!(b, InputBlock::Image(_)))
                {
                    user.content =
                        UserContent::Blocks(replace_images(blocks, USER_IMAGE_PLACEHOLDER).into());
                }
                out.push(Message::User(user));
            }
            Message::ToolResult(result) => {
                let mut result = result.clone();
                if let Some(mapped) = id_map.get(&result.tool_call_id) {
                    Arc::make_mut(&mut result).tool_call_id = mapped.clone();
                }
                if text_only
                    && result
                        .content
                        .iter()
                        .any(|b| matches!(b, InputBlock::Image(_)))
                {
                    let content = replace_images(&result.content, TOOL_IMAGE_PLACEHOLDER);
                    Arc::make_mut(&mut result).content = content.into();
                }
                answered.insert(result.tool_call_id.clone());
                out.push(Message::ToolResult(result));
            }
            Message::Assistant(assistant) => {
                flush(&mut out, &mut pending, &mut answered);
                if matches!(
                    assistant.stop_reason,
                    StopReason::Error | StopReason::Aborted
                ) {
                    continue;
                }
                let same_model = assistant.provider == model.provider
                    && assistant.api == model.api
                    && assistant.model == model.id;
                let unchanged = same_model
                    && !assistant
                        .content
                        .iter()
                        .any(|b| matches!(b, AssistantBlock::Thinking(_)));
                // Nothing to rewrite: the message is passed on as it is (shared).
                let mut converted = assistant.clone();
                if !unchanged {
                    Arc::make_mut(&mut converted).content =
                        rewritten_content(assistant, same_model, normalize_id, &mut id_map);
                }
                let calls: Vec<(String, String)> = converted
                    .tool_calls()
                    .map(|c| (c.id.clone(), c.name.clone()))
                    .collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
                out.push(Message::Assistant(converted));
            }
        }
    }
    flush(&mut out, &mut pending, &mut answered);
    placed.extend(std::iter::repeat_n(out.len(), marks.len() - placed.len()));
    (out, placed)
}

/// An assistant message's blocks as another model (or the same one) should get them:
/// thinking from another model and empty thinking are dropped, and tool-call ids
/// are normalized for the target API (recorded in `id_map` for their results).
fn rewritten_content(
    assistant: &AssistantMessage,
    same_model: bool,
    normalize_id: Option<&dyn Fn(&str) -> String>,
    id_map: &mut HashMap<String, String>,
) -> SharedVec<AssistantBlock> {
    assistant
        .content
        .iter()
        .filter_map(|block| match block {
            // Another model's reasoning is dropped, not shown to the new model as text
            // (pi 1.3): it could not verify it and would take it for its own answer.
            AssistantBlock::Thinking(_) if !same_model => None,
            AssistantBlock::Thinking(t) => {
                if t.is_redacted() || t.thinking_signature.is_some() {
                    return Some(block.clone());
                }
                (!t.thinking.trim().is_empty()).then(|| block.clone())
            }
            AssistantBlock::Text(t) if !same_model => {
                Some(AssistantBlock::Text(TextContent::new(t.text.clone())))
            }
            AssistantBlock::Text(_) => Some(block.clone()),
            AssistantBlock::ToolCall(call) => {
                let mut call: ToolCall = call.clone();
                if !same_model {
                    call.thought_signature = None;
                    if let Some(normalize) = normalize_id {
                        let normalized = normalize(&call.id);
                        if normalized != call.id {
                            id_map.insert(call.id.clone(), normalized.clone());
                            call.id = normalized;
                        }
                    }
                }
                Some(AssistantBlock::ToolCall(call))
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{AssistantMessage, ImageContent, ThinkingContent, UserMessage};

    fn target() -> Model {
        let mut m = crate::models::get_model("anthropic", "claude-haiku-4-5").unwrap();
        m.input = vec![crate::types::InputKind::Text];
        m
    }

    fn assistant(provider: &str, blocks: Vec<AssistantBlock>) -> Message {
        let mut a = AssistantMessage::empty("openai-completions", provider, "gpt");
        a.content = blocks.into();
        a.stop_reason = StopReason::ToolUse;
        Message::Assistant(a.into())
    }

    #[test]
    fn foreign_thinking_and_empty_thinking_are_dropped() {
        let msgs = vec![assistant(
            "openai",
            vec![
                AssistantBlock::Thinking(ThinkingContent::new("reasoned")),
                AssistantBlock::Thinking(ThinkingContent::new("  ")),
                AssistantBlock::Text(TextContent::new("answer")),
            ],
        )];
        let out = transform_messages(&msgs, &target(), None);
        let Message::Assistant(a) = &out[0] else {
            panic!()
        };
        assert_eq!(a.content.len(), 1);
        assert_eq!(a.content[0].as_text(), Some("answer"));
    }

    #[test]
    fn ids_are_normalized_and_orphans_get_error_results() {
        let call = ToolCall::new("call|weird+id", "read", Default::default());
        let msgs = vec![
            assistant("openai", vec![AssistantBlock::ToolCall(call)]),
            Message::User(UserMessage::text("next")),
        ];
        let normalize = |id: &str| id.replace(['|', '+'], "_");
        let out = transform_messages(&msgs, &target(), Some(&normalize));
        assert_eq!(out.len(), 3);
        let Message::ToolResult(r) = &out[1] else {
            panic!("{out:?}")
        };
        assert_eq!(r.tool_call_id, "call_weird_id");
        assert!(r.is_error);
        assert_eq!(r.content[0].as_text(), Some("No result provided"));
    }

    #[test]
    fn marks_land_after_the_turns_results_as_pi_ai_holds_them() {
        let call = ToolCall::new("c1", "read", Default::default());
        let msgs = vec![
            Message::User(UserMessage::text("first")),
            assistant("anthropic", vec![AssistantBlock::ToolCall(call)]),
            Message::User(UserMessage::text("next")),
        ];
        // Marks before the reply, in the open turn (held past the made-up result), at the end.
        let (out, placed) = transform_messages_placing(&msgs, &target(), None, &[0, 1, 2, 3]);
        assert_eq!(out.len(), 4, "{out:?}");
        assert!(matches!(out[2], Message::ToolResult(_)));
        assert_eq!(placed, [0, 1, 3, 4]);
    }

    #[test]
    fn images_are_replaced_for_text_only_models_and_failed_turns_dropped() {
        let user = UserMessage::blocks(vec![
            InputBlock::Image(ImageContent::new("aGk=", "image/png")),
            InputBlock::Image(ImageContent::new("aGk=", "image/png")),
            InputBlock::text("what is this"),
        ]);
        let mut failed = AssistantMessage::empty("a", "b", "c");
        failed.stop_reason = StopReason::Error;
        let out = transform_messages(
            &[Message::User(user), Message::Assistant(failed.into())],
            &target(),
            None,
        );
        assert_eq!(out.len(), 1);
        let Message::User(u) = &out[0] else { panic!() };
        let UserContent::Blocks(blocks) = &u.content else {
            panic!()
        };
        assert_eq!(blocks.len(), 2);
        assert_eq!(blocks[0].as_text(), Some(USER_IMAGE_PLACEHOLDER));
    }
}
