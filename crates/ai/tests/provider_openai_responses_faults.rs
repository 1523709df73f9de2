//! The Responses APIs when things go wrong: cancellation, HTTP errors worded like each
//! client, retries (Codex's own included) and their cap, dropped connections, malformed chunks,
//! stalls, in-stream failures, unreachable servers and unusable keys.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mock_llm::{Fault, Script};
use pi_ai::{AssistantMessageEvent, StopReason};
use tokio_util::sync::CancellationToken;

use common::responses::{ALL, Api, model, options, run, simple};
use common::{assert_contract, collect, context, error_text, final_message, kinds, server};

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
        let mut events: Vec<AssistantMessageEvent> = Vec::new();
        let guarded = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(event) = stream.next().await {
                if event.kind() == "text_delta"
                    && events.iter().filter(|e| e.kind() == "text_delta").count() == 5
                {
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
    }
}

#[tokio::test]
async fn stall_then_cancel_ends_aborted() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::text("slow")
                .with_chunk_size(1)
                .with_fault(Fault::stall(4, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options(which);
        opts.cancel = Some(cancel.clone());
        let canceller = tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            cancel.cancel();
        });
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("x"), opts).await;
        canceller.await.unwrap();
        assert_contract(&events);
        assert!(started.elapsed() < Duration::from_secs(5));
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Aborted, "{which:?}");
        assert_eq!(
            message.error_message.as_deref(),
            Some("Request was aborted")
        );
    }
}

#[tokio::test]
async fn http_errors_are_worded_like_each_client() {
    // pi 1.6.0 names the provider and quotes the body's error object; Codex's client says
    // its own sentence.
    for which in ALL {
        for (status, error_object, codex_text) in [
            (
                429,
                r#"{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}"#,
                "You have hit your ChatGPT usage limit.",
            ),
            (
                500,
                r#"{"message":"The server had an error while processing your request.","type":"server_error","param":null,"code":null}"#,
                "The server had an error while processing your request.",
            ),
            (
                400,
                r#"{"message":"Bad request","type":"invalid_request_error","param":null,"code":null}"#,
                "Bad request",
            ),
        ] {
            let (message, _) = run(
                which,
                Script::http_error(status),
                &context("hi"),
                options(which),
            )
            .await;
            let expected = match which {
                Api::Codex => codex_text.to_owned(),
                Api::OpenAi => format!("OpenAI API error ({status}): {error_object}"),
                Api::Azure => format!("Azure OpenAI API error ({status}): {error_object}"),
            };
            assert_eq!(error_text(&message), expected, "{which:?} {status}");
            assert!(message.content.is_empty());
        }
    }
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
        server.push(Script::text("finally"));
        let mut opts = options(which);
        opts.max_retries = Some(2);
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("hi"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).text(), "finally", "{which:?}");
        assert_eq!(posts(&server), 2);
        // Each waits the second the server asked for.
        assert!(started.elapsed() >= Duration::from_millis(950), "{which:?}");
    }
}

#[tokio::test]
async fn codex_retries_server_errors_and_stops_at_usage_limits() {
    let server = server().await;
    server.push(Script::http_error(503));
    server.push(Script::text("recovered"));
    let mut opts = options(Api::Codex);
    opts.max_retries = Some(3);
    let m = model(&server, Api::Codex);
    let message = pi_ai::complete(&m, &context("hi"), opts.clone()).await;
    assert_eq!(message.text(), "recovered");
    assert_eq!(posts(&server), 2);

    // A usage limit on a non-retryable status fails at once.
    server.clear_requests();
    let body = r#"{"error":{"code":"usage_limit_reached","message":"limit","plan_type":"plus"}}"#;
    server.push(Script::http_error(403).with_fault(Fault::HttpError {
        status: 403,
        retry_after: None,
        retry_after_ms: None,
        body: Some(body.into()),
    }));
    let message = pi_ai::complete(&m, &context("hi"), opts).await;
    assert_eq!(
        error_text(&message),
        "You have hit your ChatGPT usage limit (plus plan)."
    );
    assert_eq!(posts(&server), 1);
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once() {
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
        let (message, _) = run(which, script, &context("hi"), opts).await;
        // Codex's client says only the delay; the SDKs add the status's own text.
        let expected = if which == Api::Codex {
            "Server requested 120s retry delay (max: 5s)"
        } else {
            "Server requested 120s retry delay (max: 5s). 429 "
        };
        assert!(
            error_text(&message).starts_with(expected),
            "{which:?}: {:?}",
            message.error_message
        );
    }
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    for which in ALL {
        let script = Script::text("a fairly long answer that will be cut off")
            .with_chunk_size(3)
            .with_fault(Fault::drop_after(7));
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
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
            .with_fault(Fault::malformed_after(5));
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        let text = error_text(&message);
        let expected = if which == Api::Codex {
            "Invalid Codex SSE JSON"
        } else {
            "Could not parse"
        };
        assert!(text.starts_with(expected), "{which:?}: {text}");
    }
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    for which in ALL {
        let script = Script::text("slow")
            .with_chunk_size(1)
            .with_fault(Fault::stall(4, 10_000));
        let mut opts = options(which);
        opts.idle_timeout_ms = Some(300);
        let (message, _) = run(which, script, &context("hi"), opts).await;
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
        let script = Script::text("slow but fine").with_fault(Fault::stall(3, 300));
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert_eq!(message.text(), "slow but fine");
    }
}

#[tokio::test]
async fn in_stream_failure() {
    for which in ALL {
        let script = Script::text("partial answer").with_fault(Fault::StreamError {
            after_events: 5,
            message: Some("upstream exploded".into()),
        });
        let (message, _) = run(which, script, &context("hi"), options(which)).await;
        let expected = if which == Api::Codex {
            "upstream exploded"
        } else {
            "server_error: upstream exploded"
        };
        assert_eq!(error_text(&message), expected, "{which:?}");
        assert_eq!(message.text(), "partial ", "{which:?}: partial text kept");
    }
}

#[tokio::test]
async fn unreachable_server_is_a_connection_error() {
    for which in ALL {
        let server = server().await;
        let mut m = model(&server, which);
        server.shutdown().await;
        m.base_url = "http://127.0.0.1:9/v1".into();
        let events = collect(&m, &context("hi"), options(which)).await;
        assert_contract(&events);
        let expected = if which == Api::Codex {
            "fetch failed"
        } else {
            // Port 9 refuses the connection (pi 1.6.0's fetch calls it a "bad port" instead).
            "Connection error.: connect ECONNREFUSED 127.0.0.1:9"
        };
        assert_eq!(error_text(final_message(&events)), expected, "{which:?}");
    }
}

#[tokio::test]
async fn missing_or_unusable_keys() {
    for which in ALL {
        let server = server().await;
        let mut m = model(&server, which);
        m.provider = "no-such-provider".into();
        let mut opts = simple(which, None);
        opts.stream.api_key = None;
        let message = pi_ai::stream_simple(&m, &context("hi"), opts)
            .result()
            .await;
        assert_eq!(
            error_text(&message),
            "No API key for provider: no-such-provider"
        );
        assert!(server.requests().is_empty());
    }
    let server = server().await;
    let m = model(&server, Api::Codex);
    let mut opts = options(Api::Codex);
    opts.api_key = Some("sk-not-a-jwt".into());
    let message = pi_ai::complete(&m, &context("hi"), opts).await;
    assert_eq!(
        error_text(&message),
        "Failed to extract accountId from token"
    );
    assert!(server.requests().is_empty());
}

/// The HTTP requests made (Codex first tries its WebSocket, which the mock refuses: a `GET`).
fn posts(server: &mock_llm::MockServer) -> usize {
    server
        .requests()
        .iter()
        .filter(|r| r.method == "POST")
        .count()
}
