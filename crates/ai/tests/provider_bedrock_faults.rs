//! `bedrock-converse-stream` when things go wrong: cancellation, throttling retried, HTTP
//! errors worded like the AWS SDK, dropped connections, corrupt frames, stalls and in-stream
//! exceptions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use common::bedrock::{CLAUDE, bedrock_options, collect, model, options, run_fault};
use common::{assert_contract, context, error_text, final_message, server};
use futures_util::StreamExt;
use mock_llm::{Fault, Script};
use pi_ai::StopReason;
use pi_ai::providers::bedrock::stream_bedrock;
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn cancellation_mid_stream_ends_aborted() {
    let server = server().await;
    server.push(
        Script::text("one two three four five")
            .with_chunk_size(4)
            .with_fault(Fault::stall(3, 10_000)),
    );
    let cancel = CancellationToken::new();
    let mut opts = options();
    opts.cancel = Some(cancel.clone());
    let mut stream = stream_bedrock(
        &model(&server, CLAUDE),
        &context("hi"),
        opts,
        bedrock_options(),
    );
    let mut events = Vec::new();
    let started = std::time::Instant::now();
    while let Some(event) = tokio::time::timeout(Duration::from_secs(10), stream.next())
        .await
        .unwrap()
    {
        if event.kind() == "text_delta" {
            cancel.cancel();
        }
        events.push(event);
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_contract(&events);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(
        message.error_message.as_deref(),
        Some("Request was aborted")
    );
    assert!(!message.text().is_empty(), "partial text kept");

    // Cancelled before the response: aborted too.
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut opts = options();
    opts.cancel = Some(cancel);
    let events = collect(
        &model(&server, CLAUDE),
        &context("hi"),
        opts,
        bedrock_options(),
    )
    .await;
    assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn throttling_is_retried_then_succeeds() {
    let server = server().await;
    server.push(Script::http_error(429));
    server.push(Script::http_error(503));
    server.push(Script::text("finally"));
    let mut opts = options();
    opts.max_retries = Some(2);
    let events = collect(
        &model(&server, CLAUDE),
        &context("hi"),
        opts,
        bedrock_options(),
    )
    .await;
    assert_eq!(final_message(&events).text(), "finally");
    assert_eq!(server.requests().len(), 3);
    // Every attempt is signed.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.headers["authorization"].starts_with("AWS4-HMAC-SHA256 "))
    );
}

#[tokio::test]
async fn http_errors_read_like_the_aws_sdk() {
    for (status, text) in [
        (
            429,
            "Throttling error: Too many requests, please wait before trying again.",
        ),
        (
            500,
            "Internal server error: The server encountered an internal error while processing the request.",
        ),
        (
            503,
            "Service unavailable: Bedrock is unable to process your request.",
        ),
        (
            400,
            "Validation error: Malformed input request, please reformat your input and try again.",
        ),
        (
            403,
            "AccessDeniedException: You don't have access to the model with the specified model ID.",
        ),
        (502, "502: Mock error"),
    ] {
        let (message, _) = run_fault(Script::http_error(status), options()).await;
        assert_eq!(error_text(&message), text, "{status}");
        assert!(message.content.is_empty());
    }
    // A verbatim body without a type keeps the status as the name.
    let (message, _) = run_fault(
        Script::http_error(500).with_fault(Fault::HttpError {
            status: 500,
            retry_after: None,
            retry_after_ms: None,
            body: Some(String::new()),
        }),
        options(),
    )
    .await;
    assert_eq!(error_text(&message), "500: UnknownError");
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    let script = Script::text("a fairly long answer that will be cut off")
        .with_chunk_size(3)
        .with_fault(Fault::drop_after(6));
    let (message, _) = run_fault(script, options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("Connection error"), "{text}");
    assert!(!message.text().is_empty(), "partial text kept");
}

#[tokio::test]
async fn corrupt_frame_fails_the_checksum() {
    let script = Script::text("hello there")
        .with_chunk_size(2)
        .with_fault(Fault::malformed_after(3));
    let (message, _) = run_fault(script, options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("The message checksum ("), "{text}");
    assert!(text.contains("did not match the expected value"), "{text}");
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    let script = Script::text("slow answer")
        .with_chunk_size(2)
        .with_fault(Fault::stall(2, 3_000));
    let mut opts = options();
    opts.idle_timeout_ms = Some(300);
    let started = std::time::Instant::now();
    let (message, _) = run_fault(script, opts).await;
    assert!(started.elapsed() < Duration::from_millis(2_500));
    let text = error_text(&message);
    assert!(text.starts_with("Request timed out"), "{text}");
}

#[tokio::test]
async fn in_stream_exceptions_become_errors() {
    let (message, _) = run_fault(
        Script::text("partial output here")
            .with_chunk_size(4)
            .with_fault(Fault::stream_error(3)),
        options(),
    )
    .await;
    assert_eq!(
        error_text(&message),
        "Throttling error: Too many tokens, please wait before trying again."
    );
    assert!(!message.text().is_empty());
    let (message, _) = run_fault(
        Script::text("x").with_fault(Fault::StreamError {
            after_events: 1,
            message: Some("Rate exceeded".into()),
        }),
        options(),
    )
    .await;
    assert_eq!(error_text(&message), "Throttling error: Rate exceeded");
}
