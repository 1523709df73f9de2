//! The Google providers when things go wrong: cancellation, HTTP errors worded as the SDKs
//! word them, retries and their cap, dropped connections, malformed chunks, stalls, in-stream
//! errors, Cloud Code Assist's empty-stream retry and missing credentials.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mock_llm::{Fault, Script};
use pi_ai::{AssistantMessageEvent, SimpleStreamOptions, StopReason};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use common::google::{ALL, Api, context, model, options, run_fault};
use common::{assert_contract, collect, error_text, final_message, kinds, server};

#[tokio::test]
async fn cancelling_mid_stream_ends_aborted_and_keeps_partial_text() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::filler(20_000)
                .with_chunk_size(20)
                .with_fault(Fault::stall(15, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options(which);
        opts.cancel = Some(cancel.clone());
        let mut stream = pi_ai::stream(&model(&server, which), &context("long"), opts);
        let mut events = Vec::new();
        let guarded = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(event) = stream.next().await {
                let deltas = events
                    .iter()
                    .filter(|e: &&AssistantMessageEvent| e.kind() == "text_delta")
                    .count();
                if event.kind() == "text_delta" && deltas == 5 {
                    cancel.cancel();
                }
                events.push(event);
            }
        })
        .await;
        assert!(
            guarded.is_ok(),
            "{which:?}: cancellation did not end the stream"
        );
        assert_contract(&events);
        let AssistantMessageEvent::Error { reason, error } = events.last().unwrap() else {
            panic!("{which:?}: {:?}", kinds(&events))
        };
        assert_eq!(*reason, StopReason::Aborted);
        assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
        assert!(error.text().len() >= 100, "{which:?}: partial text kept");
    }
}

#[tokio::test]
async fn cancelling_before_the_response_ends_aborted() {
    for which in ALL {
        let server = server().await;
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut opts = options(which);
        opts.cancel = Some(cancel);
        let events = collect(&model(&server, which), &context("x"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
        assert!(server.requests().is_empty());
    }
}

const INTERNAL: &str = "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting";

#[tokio::test]
async fn http_errors_read_as_the_sdks_report_them() {
    for which in ALL {
        for status in [400u16, 403, 429, 500, 503] {
            let message = run_fault(which, Script::http_error(status), options(which)).await;
            let text = error_text(&message);
            assert!(message.content.is_empty());
            match which {
                // The Gen AI SDK's ApiError: the error body as compact JSON.
                Api::Gemini | Api::Vertex => {
                    let body: Value = serde_json::from_str(text).expect(text);
                    assert_eq!(body["error"]["code"], status, "{text}");
                    assert!(body["error"]["status"].is_string());
                }
                Api::Cli => assert!(
                    text.starts_with(&format!("Cloud Code Assist API error ({status}): ")),
                    "{text}"
                ),
            }
        }
    }
    let gemini = run_fault(Api::Gemini, Script::http_error(500), options(Api::Gemini)).await;
    assert_eq!(
        error_text(&gemini),
        format!(r#"{{"error":{{"code":500,"message":"{INTERNAL}","status":"INTERNAL"}}}}"#)
    );
    let cli = run_fault(Api::Cli, Script::http_error(429), options(Api::Cli)).await;
    assert_eq!(
        error_text(&cli),
        "Cloud Code Assist API error (429): Resource has been exhausted (e.g. check quota)."
    );
    // Context overflow stays recognizable.
    let body = r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#;
    let overflow = run_fault(
        Api::Gemini,
        Script::default().with_fault(Fault::HttpError {
            status: 400,
            retry_after: None,
            retry_after_ms: None,
            body: Some(body.into()),
        }),
        options(Api::Gemini),
    )
    .await;
    assert_eq!(error_text(&overflow), body);
    assert!(pi_ai::is_context_overflow(&overflow, Some(1_048_576)));
}

#[tokio::test]
async fn retries_after_429_with_retry_after_then_succeeds() {
    for which in ALL {
        let server = server().await;
        server.push(Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("1".into()),
            retry_after_ms: None,
            body: None,
        }));
        server.push(Script::http_error(503));
        server.push(Script::text("finally"));
        let mut opts = options(which);
        opts.max_retries = Some(2);
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("hi"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).text(), "finally", "{which:?}");
        assert_eq!(server.requests().len(), 3);
        assert!(started.elapsed() >= Duration::from_millis(950));
    }
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once_naming_the_delay() {
    for which in ALL {
        let script = Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("120".into()),
            retry_after_ms: None,
            body: None,
        });
        let mut opts = options(which);
        opts.max_retries = Some(3);
        opts.max_retry_delay_ms = Some(5_000);
        let message = run_fault(which, script, opts).await;
        let text = error_text(&message);
        assert!(
            text.starts_with("Server requested 120s retry delay (max: 5s). "),
            "{text}"
        );
        match which {
            Api::Cli => assert!(
                text.ends_with("Resource has been exhausted (e.g. check quota)."),
                "{text}"
            ),
            _ => assert!(
                text.ends_with("\"status\":\"RESOURCE_EXHAUSTED\"}}"),
                "{text}"
            ),
        }
    }
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    for which in ALL {
        let script = Script::text("a fairly long answer that will be cut off")
            .with_chunk_size(3)
            .with_fault(Fault::drop_after(6));
        let message = run_fault(which, script, options(which)).await;
        let text = error_text(&message);
        assert!(text.starts_with("Connection error"), "{which:?}: {text}");
        assert!(!message.text().is_empty(), "partial text kept");
    }
}

#[tokio::test]
async fn malformed_chunk() {
    for which in ALL {
        let script = Script::text("hello there")
            .with_chunk_size(2)
            .with_fault(Fault::malformed_after(3));
        let message = run_fault(which, script, options(which)).await;
        let text = error_text(&message);
        assert!(text.contains("Could not parse"), "{which:?}: {text}");
        assert_eq!(message.text(), "hello ", "the chunks before it are kept");
    }
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    for which in ALL {
        let script = Script::text("slow")
            .with_chunk_size(1)
            .with_fault(Fault::stall(2, 10_000));
        let mut opts = options(which);
        opts.idle_timeout_ms = Some(300);
        let message = run_fault(which, script, opts).await;
        let text = error_text(&message);
        assert!(
            text.contains("timed out") && text.contains("0.3s"),
            "{which:?}: {text}"
        );
    }
}

#[tokio::test]
async fn stall_shorter_than_the_idle_timeout_is_tolerated() {
    for which in ALL {
        let script = Script::text("slow but fine").with_fault(Fault::stall(1, 300));
        let message = run_fault(which, script, options(which)).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert_eq!(message.text(), "slow but fine");
    }
}

#[tokio::test]
async fn stall_then_cancel() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::text("one two three")
                .with_chunk_size(4)
                .with_fault(Fault::stall(1, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options(which);
        opts.cancel = Some(cancel.clone());
        let canceller = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                cancel.cancel();
            })
        };
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("x"), opts).await;
        canceller.await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_contract(&events);
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Aborted);
        assert_eq!(message.text(), "one ");
    }
}

#[tokio::test]
async fn in_stream_error_event() {
    for which in ALL {
        let script = Script::text("partial answer")
            .with_chunk_size(4)
            .with_fault(Fault::StreamError {
                after_events: 2,
                message: Some("upstream exploded".into()),
            });
        let message = run_fault(which, script, options(which)).await;
        let text = error_text(&message);
        match which {
            // The SDK's in-stream ApiError text.
            Api::Gemini | Api::Vertex => assert_eq!(
                text,
                r#"got status: INTERNAL. {"error":{"code":500,"message":"upstream exploded","status":"INTERNAL"}}"#
            ),
            Api::Cli => assert_eq!(text, "Cloud Code Assist API error (500): upstream exploded"),
        }
        assert_eq!(message.text(), "partial ");
    }
}

#[tokio::test]
async fn cloud_code_assist_retries_an_empty_stream() {
    let server = server().await;
    server.push(Script::new(Vec::new()));
    server.push(Script::new(Vec::new()));
    server.push(Script::text("finally"));
    let started = Instant::now();
    let events = collect(&model(&server, Api::Cli), &context("x"), options(Api::Cli)).await;
    assert_contract(&events);
    assert_eq!(final_message(&events).text(), "finally");
    assert_eq!(server.requests().len(), 3);
    // Backoff 0.5 s then 1 s; the empty attempts left no events behind.
    assert!(started.elapsed() >= Duration::from_millis(1400));
    assert_eq!(events.iter().filter(|e| e.kind() == "start").count(), 1);

    let server = self::server().await;
    server.push_all([
        Script::new(Vec::new()),
        Script::new(Vec::new()),
        Script::new(Vec::new()),
    ]);
    let events = collect(&model(&server, Api::Cli), &context("x"), options(Api::Cli)).await;
    assert_contract(&events);
    assert_eq!(
        error_text(final_message(&events)),
        "Cloud Code Assist API returned an empty response"
    );
    assert_eq!(server.requests().len(), 3);

    // The Gemini API reports an empty turn as it is.
    let server = self::server().await;
    server.push(Script::new(Vec::new()));
    let events = collect(
        &model(&server, Api::Gemini),
        &context("x"),
        options(Api::Gemini),
    )
    .await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert!(message.content.is_empty());
}

#[tokio::test]
async fn missing_or_invalid_credentials_fail_without_a_request() {
    let server = server().await;
    let mut m = model(&server, Api::Gemini);
    m.provider = "no-such-provider".into();
    let mut opts = options(Api::Gemini);
    opts.api_key = None;
    let events = collect(&m, &context("hi"), opts).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        error_text(final_message(&events)),
        "No API key for provider: no-such-provider"
    );
    let cli = model(&server, Api::Cli);
    for (key, expected) in [
        (
            None,
            "Google Cloud Code Assist requires OAuth authentication. Use /login to authenticate.",
        ),
        (
            Some("nope"),
            "Invalid Google Cloud Code Assist credentials. Use /login to re-authenticate.",
        ),
        (
            Some(r#"{"token":"t"}"#),
            "Missing token or projectId in Google Cloud credentials. Use /login to re-authenticate.",
        ),
    ] {
        let mut opts = options(Api::Cli);
        opts.api_key = key.map(str::to_owned);
        let events = collect(&cli, &context("hi"), opts.clone()).await;
        assert_eq!(error_text(final_message(&events)), expected);
        let simple = SimpleStreamOptions {
            stream: opts,
            ..Default::default()
        };
        let message = pi_ai::complete_simple(&cli, &context("hi"), simple).await;
        assert_eq!(error_text(&message), expected);
    }
    assert!(server.requests().is_empty());
}
