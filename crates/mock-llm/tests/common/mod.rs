//! Shared helpers for the integration tests: HTTP client and SSE frame parsing.
// Test helpers: each test binary uses a subset, and panicking on failure is the point.
#![allow(dead_code, clippy::unwrap_used)]

use futures_util::StreamExt;

use serde_json::Value;

/// One parsed SSE event.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    pub event: Option<String>,
    pub data: String,
}

impl Event {
    /// The data parsed as JSON (panics if invalid).
    pub fn json(&self) -> Value {
        serde_json::from_str(&self.data).unwrap_or_else(|e| panic!("bad json {}: {e}", self.data))
    }
}

/// A reqwest client with the ring crypto provider installed.
pub fn client() -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder().build().unwrap()
}

/// Extension: JSON request bodies and responses (reqwest's `json` feature is not enabled).
pub trait JsonExt {
    /// Sets a JSON body and content-type.
    fn json_body(self, body: &Value) -> Self;
}

impl JsonExt for reqwest::RequestBuilder {
    fn json_body(self, body: &Value) -> Self {
        self.header("content-type", "application/json")
            .body(serde_json::to_vec(body).unwrap())
    }
}

/// Reads a response body as JSON.
pub async fn read_json<T: serde::de::DeserializeOwned>(response: reqwest::Response) -> T {
    serde_json::from_str(&response.text().await.unwrap()).unwrap()
}

/// POSTs JSON to `url` and returns the response.
pub async fn post(url: &str, body: &Value) -> reqwest::Response {
    client().post(url).json_body(body).send().await.unwrap()
}

/// Splits an SSE body into events (accepts LF and CRLF line endings).
pub fn parse_sse(body: &str) -> Vec<Event> {
    let normalized = body.replace("\r\n", "\n");
    normalized
        .split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let mut event = None;
            let mut data = Vec::new();
            for line in block.lines() {
                if let Some(name) = line.strip_prefix("event: ") {
                    event = Some(name.to_owned());
                } else if let Some(d) = line.strip_prefix("data: ") {
                    data.push(d);
                } else {
                    panic!("unexpected SSE line {line:?}");
                }
            }
            Event {
                event,
                data: data.join("\n"),
            }
        })
        .collect()
}

/// POSTs and returns the status plus the parsed SSE events of a complete body.
pub async fn stream(url: &str, body: &Value) -> Vec<Event> {
    let response = post(url, body).await;
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    parse_sse(&response.text().await.unwrap())
}

/// A minimal OpenAI chat request.
pub fn openai_request(text: &str) -> Value {
    serde_json::json!({
        "model": "gpt-test",
        "stream": true,
        "messages": [{"role": "user", "content": text}]
    })
}

/// A minimal Anthropic messages request.
pub fn anthropic_request(text: &str) -> Value {
    serde_json::json!({
        "model": "claude-test",
        "max_tokens": 100,
        "stream": true,
        "messages": [{"role": "user", "content": text}]
    })
}

/// Concatenates `choices[0].delta.<field>` strings across OpenAI chunks.
pub fn openai_concat(events: &[Event], field: &str) -> String {
    events
        .iter()
        .filter(|e| e.data != "[DONE]")
        .filter_map(|e| {
            e.json()["choices"][0]["delta"][field]
                .as_str()
                .map(str::to_owned)
        })
        .collect()
}

/// POSTs and returns the raw body bytes and the number of body chunks received.
pub async fn fetch_raw(url: &str, body: &Value) -> (Vec<u8>, usize) {
    let response = post(url, body).await;
    assert_eq!(response.status(), 200);
    let mut stream = response.bytes_stream();
    let mut raw = Vec::new();
    let mut chunks = 0;
    while let Some(chunk) = stream.next().await {
        raw.extend_from_slice(&chunk.unwrap());
        chunks += 1;
    }
    (raw, chunks)
}
