//! Fault injection: HTTP errors, dropped connections, malformed events, stalls, stream errors.

mod common;

use std::time::{Duration, Instant};

use common::{
    anthropic_request, openai_concat, openai_request, parse_sse, post, read_json, stream,
};
use futures_util::StreamExt;
use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};

fn openai_url(server: &MockServer) -> String {
    format!("{}/chat/completions", server.openai_base_url())
}

fn anthropic_url(server: &MockServer) -> String {
    format!("{}/v1/messages", server.anthropic_base_url())
}

#[tokio::test]
async fn http_error_with_retry_headers_and_provider_bodies() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("unused").with_fault(Fault::HttpError {
        status: 429,
        retry_after: Some("2".into()),
        retry_after_ms: Some("1500".into()),
        body: None,
    }));
    let response = post(&openai_url(&server), &openai_request("q")).await;
    assert_eq!(response.status(), 429);
    assert_eq!(response.headers()["retry-after"], "2");
    assert_eq!(response.headers()["retry-after-ms"], "1500");
    assert_eq!(response.headers()["content-type"], "application/json");
    let body: Value = read_json(response).await;
    assert_eq!(
        body,
        json!({"error": {"message": "Rate limit reached for requests", "type": "requests",
                         "param": null, "code": "rate_limit_exceeded"}})
    );

    server.push(Script::http_error(529));
    let response = post(&anthropic_url(&server), &anthropic_request("q")).await;
    assert_eq!(response.status(), 529);
    assert_eq!(response.headers()["request-id"], "req_mock");
    assert!(response.headers().get("retry-after").is_none());
    let body: Value = read_json(response).await;
    assert_eq!(
        body,
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}})
    );

    server.push(Script::default().with_fault(Fault::HttpError {
        status: 500,
        retry_after: None,
        retry_after_ms: None,
        body: Some("plain failure".into()),
    }));
    let response = post(&anthropic_url(&server), &anthropic_request("q")).await;
    assert_eq!(response.status(), 500);
    assert_eq!(response.text().await.unwrap(), "plain failure");
    assert_eq!(server.requests().len(), 3, "fault requests are recorded");
}

#[tokio::test]
async fn drop_after_is_a_client_side_body_error() {
    let server = MockServer::start().await.unwrap();
    server.push(
        Script::text("abcdefghijklmnop")
            .with_chunk_size(2)
            .with_fault(Fault::drop_after(3)),
    );
    let response = post(&openai_url(&server), &openai_request("q")).await;
    assert_eq!(response.status(), 200);
    let mut body = response.bytes_stream();
    let mut received = Vec::new();
    let mut error = None;
    while let Some(chunk) = body.next().await {
        match chunk {
            Ok(bytes) => received.extend_from_slice(&bytes),
            Err(err) => {
                error = Some(err);
                break;
            }
        }
    }
    assert!(error.is_some(), "expected a body error, got clean EOF");
    let events = parse_sse(&String::from_utf8(received).unwrap());
    assert_eq!(events.len(), 3, "exactly the first 3 events arrive");
    assert_eq!(openai_concat(&events, "content"), "abcd");

    // The same through `text()`: an error, not a truncated success.
    server.push(Script::text("abc").with_fault(Fault::drop_after(0)));
    let response = post(&anthropic_url(&server), &anthropic_request("q")).await;
    assert!(response.text().await.is_err());
}

#[tokio::test]
async fn malformed_event_then_stream_continues() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("hello").with_fault(Fault::malformed_after(1)));
    let events = stream(&openai_url(&server), &openai_request("q")).await;
    assert!(serde_json::from_str::<Value>(&events[1].data).is_err());
    assert!(events[1].data.starts_with(r#"{"id":"#));
    let valid: Vec<_> = events
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1)
        .map(|(_, e)| e.clone())
        .collect();
    assert_eq!(openai_concat(&valid, "content"), "hello");
    assert_eq!(events.last().unwrap().data, "[DONE]");

    server.push(Script::text("hello").with_fault(Fault::malformed_after(2)));
    let events = stream(&anthropic_url(&server), &anthropic_request("q")).await;
    assert_eq!(events[2].event.as_deref(), Some("content_block_delta"));
    assert!(serde_json::from_str::<Value>(&events[2].data).is_err());
    assert_eq!(events[3].event.as_deref(), Some("content_block_start"));
    assert_eq!(
        events.last().unwrap().event.as_deref(),
        Some("message_stop")
    );
}

#[tokio::test]
async fn stall_pauses_mid_stream() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("hello world").with_fault(Fault::stall(2, 400)));
    let start = Instant::now();
    let response = post(&openai_url(&server), &openai_request("q")).await;
    let mut body = response.bytes_stream();
    let mut received = String::new();
    let mut first_events_at = None;
    while let Some(chunk) = body.next().await {
        received.push_str(std::str::from_utf8(&chunk.unwrap()).unwrap());
        if first_events_at.is_none() && parse_sse(&received).len() >= 2 {
            first_events_at = Some(start.elapsed());
        }
    }
    let total = start.elapsed();
    assert!(
        first_events_at.unwrap() < Duration::from_millis(300),
        "events before the stall arrive early"
    );
    assert!(total >= Duration::from_millis(400), "stream took {total:?}");
    let events = parse_sse(&received);
    assert_eq!(openai_concat(&events, "content"), "hello world");
    assert_eq!(events.last().unwrap().data, "[DONE]");
}

#[tokio::test]
async fn stream_error_events() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("hello world").with_fault(Fault::stream_error(2)));
    let events = stream(&openai_url(&server), &openai_request("q")).await;
    assert_eq!(events.len(), 3);
    assert_eq!(
        events[2].json(),
        json!({"error": {"message": "The server had an error while processing your request.",
                         "type": "server_error"}})
    );

    server.push(Script::text("hi").with_fault(Fault::StreamError {
        after_events: 1,
        message: Some("busy".into()),
    }));
    let events = stream(&anthropic_url(&server), &anthropic_request("q")).await;
    assert_eq!(events.len(), 2);
    assert_eq!(events[1].event.as_deref(), Some("error"));
    assert_eq!(
        events[1].json(),
        json!({"type": "error", "error": {"type": "overloaded_error", "message": "busy"}})
    );
}
