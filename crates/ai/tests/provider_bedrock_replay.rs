//! The Bedrock decoder on recorded event-stream bodies (through `decode_bytes`): a rendered
//! body, stop reasons, exceptions and redacted reasoning.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::bedrock::{CLAUDE, bedrock_options, event, exception, model, options, replay};
use common::{context, error_text, final_message, server};
use mock_llm::{Item, Script};
use pi_ai::providers::bedrock::{self, eventstream};
use pi_ai::{AssistantBlock, Message, StopReason, UserMessage, api};
use serde_json::json;

#[tokio::test]
async fn decode_bytes_replays_a_rendered_body() {
    let server = server().await;
    let m = model(&server, CLAUDE);
    let script = Script::new(vec![
        Item::thinking("hmm"),
        Item::text("Hello"),
        Item::tool_call("read", json!({"path": "x"})),
    ])
    .with_chunk_size(2);
    let body = mock_llm::render_body(api::BEDROCK_CONVERSE_STREAM, &script).unwrap();
    let events = replay(&m, body, 5).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.text(), "Hello");
    assert_eq!(message.content.len(), 3);
    assert_eq!(message.tool_calls().next().unwrap().arguments["path"], "x");
}

#[tokio::test]
async fn stop_reasons_exceptions_and_redacted_reasoning() {
    let server = server().await;
    let m = model(&server, CLAUDE);
    let start = event("messageStart", json!({"role": "assistant"}));
    let text = event(
        "contentBlockDelta",
        json!({"contentBlockIndex": 0, "delta": {"text": "hi"}}),
    );
    let stop = |reason: &str| event("messageStop", json!({"stopReason": reason}));

    for (reason, expected) in [
        ("end_turn", Some(StopReason::Stop)),
        ("stop_sequence", Some(StopReason::Stop)),
        ("max_tokens", Some(StopReason::Length)),
        ("model_context_window_exceeded", Some(StopReason::Length)),
        ("guardrail_intervened", None),
        ("content_filtered", None),
    ] {
        let body = [start.clone(), text.clone(), stop(reason)].concat();
        let events = replay(&m, body, 64).await;
        let message = final_message(&events);
        match expected {
            Some(reason) => assert_eq!(message.stop_reason, reason),
            None => assert_eq!(
                error_text(message),
                format!("Provider stopped with: {reason}")
            ),
        }
    }

    let cases = [
        (
            exception(
                "modelStreamErrorException",
                r#"{"message":"upstream broke","originalStatusCode":500}"#,
            ),
            "Model stream error: upstream broke",
        ),
        (
            exception("validationException", r#"{"message":"too long"}"#),
            "Validation error: too long",
        ),
        (
            exception("serviceUnavailableException", "{}"),
            "Service unavailable: UnknownError",
        ),
        (
            exception("internalServerException", r#"{"Message":"oops"}"#),
            "Internal server error: oops",
        ),
        // An exception the SDK does not model: the raw body.
        (
            exception("brandNewException", r#"{"message":"new"}"#),
            r#"{"message":"new"}"#,
        ),
        (
            eventstream::Message::new(
                &[
                    (":message-type", "error"),
                    (":error-code", "InternalFailure"),
                    (":error-message", "boom"),
                ],
                Vec::new(),
            )
            .encode(),
            "boom",
        ),
        (
            event("messageStart", json!({"role": "user"})),
            "Unexpected assistant message start but got user message start instead",
        ),
    ];
    for (tail, expected) in cases {
        let body = [start.clone(), text.clone(), tail].concat();
        let events = replay(&m, body, 10).await;
        assert_eq!(error_text(final_message(&events)), expected);
    }

    // A stream cut inside a message is truncated; unknown events are skipped.
    let mut body = [
        start.clone(),
        event("somethingNew", json!({})),
        text.clone(),
        stop("end_turn"),
    ]
    .concat();
    let events = replay(&m, body.clone(), 3).await;
    assert_eq!(final_message(&events).text(), "hi");
    body.truncate(body.len() - 5);
    let events = replay(&m, body, 3).await;
    assert_eq!(
        error_text(final_message(&events)),
        "Truncated event message received."
    );

    // Redacted reasoning is kept and sent back as redactedContent.
    let body = [
        start.clone(),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 0, "delta": {"reasoningContent": {"redactedContent": "ZW5jcnlwdGVk"}}}),
        ),
        event("contentBlockStop", json!({"contentBlockIndex": 0})),
        event(
            "contentBlockDelta",
            json!({"contentBlockIndex": 1, "delta": {"text": "visible"}}),
        ),
        stop("end_turn"),
        event(
            "metadata",
            json!({"usage": {"inputTokens": 7, "outputTokens": 3}, "metrics": {"latencyMs": 1}}),
        ),
    ]
    .concat();
    let events = replay(&m, body, 16).await;
    let message = final_message(&events).clone();
    assert_eq!(message.usage.total_tokens, 10);
    let AssistantBlock::Thinking(thinking) = &message.content[0] else {
        panic!("{message:?}")
    };
    assert!(thinking.is_redacted());
    assert_eq!(thinking.thinking_signature.as_deref(), Some("ZW5jcnlwdGVk"));
    let mut ctx = context("hi");
    ctx.messages.push(Message::Assistant(message.into()));
    ctx.messages.push(Message::User(UserMessage::text("more")));
    let request =
        bedrock::request::build_body(&m, &ctx, &options(), &bedrock_options(), None).unwrap();
    let body = serde_json::to_value(&request).unwrap();
    assert_eq!(
        body["messages"][1]["content"],
        json!([{"reasoningContent": {"redactedContent": "ZW5jcnlwdGVk"}}, {"text": "visible"}])
    );
}
