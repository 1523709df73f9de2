//! Request bodies written while they are sent: a long body arrives whole, with its length
//! in the header, on every attempt; a writer that fails fails the request.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::server;

use mock_llm::{MockServer, Script};
use pi_ai::http::{ErrorStyle, HttpRequest, RetryPolicy, send};
use pi_ai::request_body::{RequestBody, STREAM_MIN_BYTES, WriteBody};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

fn big_document() -> Value {
    let line = "0123456789abcdef\"\\\n".repeat(1000);
    let items: Vec<Value> = (0..600).map(|i| json!({"n": i, "text": line})).collect();
    json!({"model": "m", "messages": items})
}

fn writer_of(value: Value) -> WriteBody {
    let value = Arc::new(value);
    Arc::new(move |out| serde_json::to_writer(out, &*value).map_err(std::io::Error::from))
}

fn request(server: &MockServer, body: RequestBody) -> HttpRequest {
    HttpRequest {
        url: format!("{}/chat/completions", server.openai_base_url()),
        headers: vec![("content-type".into(), "application/json".into())],
        body,
    }
}

fn policy(max_retries: u32) -> RetryPolicy {
    RetryPolicy {
        max_retries,
        max_retry_delay_ms: 10,
        timeout_ms: 30_000,
    }
}

#[tokio::test]
async fn a_long_body_is_written_while_sent_and_again_on_a_retry() {
    let server = server().await;
    server.push(Script::http_error(503));
    server.push(Script::text("ok"));
    let document = big_document();
    let expected = serde_json::to_vec(&document).unwrap();
    assert!(expected.len() as u64 > STREAM_MIN_BYTES);
    let body = RequestBody::from_writer(writer_of(document.clone())).unwrap();
    assert!(body.bytes().is_none(), "a long body is not held whole");
    assert_eq!(body.len(), expected.len() as u64);
    let response = send(
        &request(&server, body),
        policy(2),
        &CancellationToken::new(),
        ErrorStyle::OpenAi,
    )
    .await
    .unwrap();
    assert!(response.status().is_success());
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for recorded in requests {
        assert_eq!(recorded.raw_body_len, expected.len());
        assert_eq!(
            recorded.headers["content-length"],
            expected.len().to_string()
        );
        assert_eq!(recorded.body, document);
    }
}

#[tokio::test]
async fn a_short_body_is_held_whole() {
    let body = RequestBody::from_writer(writer_of(json!({"a": [1, 2]}))).unwrap();
    assert_eq!(body.bytes().unwrap().as_ref(), br#"{"a":[1,2]}"#);
}

#[tokio::test]
async fn a_writer_that_fails_midway_fails_the_request() {
    let server = server().await;
    let document = Arc::new(big_document());
    let calls = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = calls.clone();
    let write: WriteBody = Arc::new(move |out| {
        // The first call measures; the ones after write a part, then fail.
        if counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            return serde_json::to_writer(out, &*document).map_err(std::io::Error::from);
        }
        out.write_all(&vec![b' '; 1 << 20])?;
        Err(std::io::Error::other("the session file went away"))
    });
    let body = RequestBody::from_writer(write).unwrap();
    let failure = send(
        &request(&server, body),
        policy(0),
        &CancellationToken::new(),
        ErrorStyle::OpenAi,
    )
    .await
    .unwrap_err();
    assert!(!failure.aborted);
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.raw_body_len == 0 || r.body.is_null())
    );
}
