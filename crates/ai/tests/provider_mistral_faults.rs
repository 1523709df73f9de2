//! `mistral-conversations` when things go wrong: cancellation, HTTP errors with Mistral's
//! status and body (cut at 4000 characters), retries and their cap, dropped connections,
//! malformed chunks, stalls, in-stream errors and a missing key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::Duration;

use futures_util::StreamExt;
use mock_llm::{Fault, Script};
use pi_ai::{AssistantMessageEvent, StopReason};
use tokio_util::sync::CancellationToken;

use common::mistral::{large, options, run};
use common::{assert_contract, collect, context, error_text, final_message, kinds, server};

#[tokio::test]
async fn cancelling_mid_stream_ends_aborted_and_keeps_partial_text() {
    let server = server().await;
    server.push(
        Script::filler(20_000)
            .with_chunk_size(20)
            .with_fault(Fault::stall(15, 20_000)),
    );
    let cancel = CancellationToken::new();
    let mut opts = options();
    opts.cancel = Some(cancel.clone());
    let mut stream = pi_ai::stream(&large(&server), &context("long"), opts);
    let mut events = Vec::new();
    let guarded = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(event) = stream.next().await {
            if event.kind() == "text_delta"
                && events
                    .iter()
                    .filter(|e: &&AssistantMessageEvent| e.kind() == "text_delta")
                    .count()
                    == 5
            {
                cancel.cancel();
            }
            events.push(event);
        }
    })
    .await;
    assert!(guarded.is_ok(), "cancellation did not end the stream");
    assert_contract(&events);
    let AssistantMessageEvent::Error { reason, error } = events.last().unwrap() else {
        panic!("{:?}", kinds(&events))
    };
    assert_eq!(*reason, StopReason::Aborted);
    assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
    assert!(error.text().len() >= 100, "partial text kept");
}

#[tokio::test]
async fn cancelling_before_the_response_ends_aborted() {
    let server = server().await;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let mut opts = options();
    opts.cancel = Some(cancel);
    let events = collect(&large(&server), &context("x"), opts).await;
    assert_contract(&events);
    assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
}

#[tokio::test]
async fn http_errors_carry_mistral_status_and_body() {
    let (message, server) = run(Script::http_error(429), options()).await;
    assert_eq!(
        error_text(&message),
        r#"Mistral API error (429): {"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":"1300"}"#
    );
    assert!(message.content.is_empty());
    // Like pi's TS provider (SDK retries off), one attempt unless retries are asked for.
    assert_eq!(server.requests().len(), 1);

    let (message, _) = run(Script::http_error(500), options()).await;
    let text = error_text(&message);
    assert!(
        text.starts_with("Mistral API error (500): {") && text.contains("Internal server error"),
        "{text}"
    );

    let (message, _) = run(Script::http_error(422), options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("Mistral API error (422): "), "{text}");
    assert!(text.contains("Field required"), "{text}");

    let (message, _) = run(
        Script::default().with_fault(Fault::HttpError {
            status: 503,
            retry_after: None,
            retry_after_ms: None,
            body: Some(String::new()),
        }),
        options(),
    )
    .await;
    assert_eq!(
        error_text(&message),
        r#"Mistral API error (503): API error occurred: Status 503. Body: """#
    );
}

#[tokio::test]
async fn long_error_bodies_are_cut_at_4000_characters() {
    let body = format!("{{\"message\":\"{}\"}}", "é".repeat(4_990));
    let (message, _) = run(
        Script::default().with_fault(Fault::HttpError {
            status: 400,
            retry_after: None,
            retry_after_ms: None,
            body: Some(body.clone()),
        }),
        options(),
    )
    .await;
    let text = error_text(&message);
    let head: String = body.chars().take(4_000).collect();
    assert_eq!(
        text,
        format!("Mistral API error (400): {head}... [truncated 1004 chars]")
    );
}

#[tokio::test]
async fn retries_after_429_with_retry_after_then_succeeds() {
    let server = server().await;
    server.push(Script::default().with_fault(Fault::HttpError {
        status: 429,
        retry_after: Some("1".into()),
        retry_after_ms: None,
        body: None,
    }));
    server.push(Script::text("finally"));
    let mut opts = options();
    opts.max_retries = Some(2);
    let started = std::time::Instant::now();
    let events = collect(&large(&server), &context("hi"), opts).await;
    assert_contract(&events);
    assert_eq!(final_message(&events).text(), "finally");
    assert_eq!(server.requests().len(), 2);
    assert!(started.elapsed() >= Duration::from_millis(950));
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once() {
    let script = Script::default().with_fault(Fault::HttpError {
        status: 429,
        retry_after: Some("120".into()),
        retry_after_ms: None,
        body: None,
    });
    let mut opts = options();
    opts.max_retries = Some(3);
    opts.max_retry_delay_ms = Some(5_000);
    let (message, _) = run(script, opts).await;
    let text = error_text(&message);
    assert!(
        text.starts_with("Server requested 120s retry delay (max: 5s). Mistral API error (429)"),
        "{text}"
    );
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    let script = Script::text("a fairly long answer that will be cut off")
        .with_chunk_size(3)
        .with_fault(Fault::drop_after(6));
    let (message, _) = run(script, options()).await;
    let text = error_text(&message);
    assert!(text.starts_with("Connection error"), "{text}");
    assert!(!message.text().is_empty(), "partial text kept");
}

#[tokio::test]
async fn malformed_chunk() {
    let script = Script::text("hello there")
        .with_chunk_size(2)
        .with_fault(Fault::malformed_after(3));
    let (message, _) = run(script, options()).await;
    let text = error_text(&message);
    assert!(text.contains("Could not parse"), "{text}");
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    let script = Script::text("slow")
        .with_chunk_size(1)
        .with_fault(Fault::stall(3, 10_000));
    let mut opts = options();
    opts.idle_timeout_ms = Some(300);
    let (message, _) = run(script, opts).await;
    let text = error_text(&message);
    assert!(
        text.contains("timed out") && text.contains("0.3s"),
        "{text}"
    );
}

#[tokio::test]
async fn headers_slower_than_the_timeout_fail_as_in_16() {
    let script = Script::text("late").with_fault(Fault::DelayHeaders { ms: 2_000 });
    let mut opts = options();
    opts.timeout_ms = Some(200);
    let (message, _) = run(script, opts).await;
    assert_eq!(
        error_text(&message),
        "Mistral response headers timed out after 200ms"
    );
}

#[tokio::test]
async fn a_stream_outliving_the_timeout_completes_as_in_16() {
    // The timeout covers the wait for the headers only: a pause mid-stream longer than it
    // (but within the idle timeout) does not end the reply.
    let script = Script::text("slow but steady")
        .with_chunk_size(2)
        .with_fault(Fault::stall(3, 800));
    let mut opts = options();
    opts.timeout_ms = Some(200);
    opts.idle_timeout_ms = Some(5_000);
    let (message, _) = run(script, opts).await;
    assert_eq!(message.stop_reason, StopReason::Stop, "{message:?}");
    assert_eq!(message.text(), "slow but steady");
}

#[tokio::test]
async fn stall_then_cancel_ends_aborted() {
    let server = server().await;
    server.push(
        Script::text("slow stream")
            .with_chunk_size(2)
            .with_fault(Fault::stall(3, 20_000)),
    );
    let cancel = CancellationToken::new();
    let mut opts = options();
    opts.cancel = Some(cancel.clone());
    let canceller = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        })
    };
    let started = std::time::Instant::now();
    let events = collect(&large(&server), &context("x"), opts).await;
    canceller.await.unwrap();
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_contract(&events);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Aborted);
    assert_eq!(message.text(), "slow");
}

#[tokio::test]
async fn in_stream_error_object() {
    let script = Script::text("partial").with_fault(Fault::StreamError {
        after_events: 2,
        message: Some("upstream exploded".into()),
    });
    let (message, _) = run(script, options()).await;
    assert_eq!(error_text(&message), "Mistral API error: upstream exploded");
    assert_eq!(message.text(), "partial");
}

#[tokio::test]
async fn missing_api_key_is_reported_without_a_request() {
    let server = server().await;
    let mut m = large(&server);
    m.provider = "no-such-provider".into();
    let mut opts = options();
    opts.api_key = None;
    let events = collect(&m, &context("hi"), opts).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        error_text(final_message(&events)),
        "No API key for provider: no-such-provider"
    );
    assert!(server.requests().is_empty());
}
