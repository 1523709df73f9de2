//! `agent_loop_continue`: which contexts it refuses, and that continuing from a user message
//! or a tool result calls the model and returns only the new messages.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::loop_run::{config, context};
use common::{Script, kinds, text};
use futures_util::StreamExt;
use pi_agent_core::{AgentEvent, LoopError, agent_loop_continue};
use pi_ai::UserMessage;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn continue_refuses_empty_and_assistant_ending_contexts() {
    let script = Script::new(vec![]);
    let err = agent_loop_continue(context(vec![]), config(&script), CancellationToken::new()).err();
    assert_eq!(err, Some(LoopError::NoMessages));
    assert_eq!(
        err.unwrap().to_string(),
        "Cannot continue: no messages in context"
    );
    let mut ctx = context(vec![]);
    ctx.messages.push(UserMessage::text("q").into());
    ctx.messages
        .push(pi_ai::AssistantMessage::empty("a", "b", "c").into());
    let err = agent_loop_continue(ctx, config(&script), CancellationToken::new())
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "Cannot continue from message role: assistant"
    );
}

#[tokio::test]
async fn continue_from_a_user_message_returns_only_new_messages() {
    let script = Script::new(vec![text("answer")]);
    let mut ctx = context(vec![]);
    ctx.messages.push(UserMessage::text("q").into());
    let mut stream = agent_loop_continue(ctx, config(&script), CancellationToken::new()).unwrap();
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e);
    }
    let messages = stream.result().await;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].role(), "assistant");
    // No user message events: the context already had it.
    assert_eq!(
        kinds(&events)[..3],
        ["agent_start", "turn_start", "message_start"]
    );
    let AgentEvent::MessageStart { message } = &events[2] else {
        panic!()
    };
    assert_eq!(message.role(), "assistant");
}

#[tokio::test]
async fn continue_from_a_tool_result_calls_the_model() {
    let script = Script::new(vec![text("saw the result")]);
    let mut ctx = context(vec![]);
    ctx.messages.push(
        pi_ai::ToolResultMessage {
            tool_call_id: "t".into(),
            tool_name: "x".into(),
            ..Default::default()
        }
        .into(),
    );
    let stream = agent_loop_continue(ctx, config(&script), CancellationToken::new()).unwrap();
    let messages = stream.result().await;
    assert_eq!(messages[0].as_assistant().unwrap().text(), "saw the result");
    assert_eq!(script.context(0).messages[0].role(), "toolResult");
}
