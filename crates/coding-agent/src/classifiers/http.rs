//! One JSON POST of a classifier call, retried as pi 1.6.0's provider requests are (twice,
//! on a connection failure, 408, 409, 429 or 5xx), and its failure worded as pi words
//! provider errors.

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

const MAX_RETRIES: u32 = 2;
/// A server asking to wait longer than this is not waited for.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(60);
/// How much of an error body a message keeps.
const MAX_BODY_CHARS: usize = 4000;

/// Why a request failed.
#[derive(Debug, Clone, PartialEq)]
pub enum PostError {
    /// The server answered with an error status.
    Status {
        label: &'static str,
        status: u16,
        body: String,
    },
    /// No answer: the connection failed (Node's `fetch failed` and its cause).
    Network(String),
    /// The call was cancelled.
    Aborted,
    /// Anything else, worded as it should be shown.
    Other(String),
}

impl PostError {
    /// The message as pi 1.6.0's `formatProviderError(normalizeProviderError(e), prefix)`
    /// gives it: `<prefix> (<status>): <body>` for an error status, the plain message else.
    pub fn message(&self, prefix: &str) -> String {
        match self {
            PostError::Status {
                label,
                status,
                body,
            } => {
                let body = body.trim();
                if body.is_empty() {
                    format!("{prefix} ({status}): {label} returned {status}")
                } else {
                    format!("{prefix} ({status}): {}", truncate(body))
                }
            }
            PostError::Network(detail) => format!("fetch failed: {detail}"),
            PostError::Aborted => "Request aborted".to_owned(),
            PostError::Other(message) => message.clone(),
        }
    }
}

fn truncate(text: &str) -> String {
    let count = text.chars().count();
    if count <= MAX_BODY_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(MAX_BODY_CHARS).collect();
    format!("{kept}... [truncated {} chars]", count - MAX_BODY_CHARS)
}

/// The cause of a failed connection, worded as Node words the common one (the llama.cpp
/// client's wording).
fn network_detail(error: &reqwest::Error, url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(parsed) => crate::llama::client::connection_detail(error, &parsed),
        Err(_) => error.to_string(),
    }
}

/// A failed attempt and how long the server asked to wait before the next.
struct Failure {
    error: PostError,
    retry_after: Option<Duration>,
    retryable: bool,
}

fn header_delay(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let number = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|v| v.is_finite() && *v >= 0.0)
    };
    number("retry-after-ms")
        .map(|ms| Duration::from_secs_f64(ms / 1000.0))
        .or_else(|| number("retry-after").map(Duration::from_secs_f64))
}

async fn attempt(
    label: &'static str,
    url: &str,
    api_key: Option<&str>,
    body: &Value,
) -> Result<Value, Failure> {
    let client = pi_ai::http::shared_client().map_err(|e| Failure {
        error: PostError::Other(e),
        retry_after: None,
        retryable: false,
    })?;
    let mut request = client
        .post(url)
        .header("content-type", "application/json")
        .body(body.to_string());
    if let Some(key) = api_key {
        request = request.header("authorization", format!("Bearer {key}"));
    }
    let response = request.send().await.map_err(|e| Failure {
        error: PostError::Network(network_detail(&e, url)),
        retry_after: None,
        retryable: true,
    })?;
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    let text = response.text().await.map_err(|e| Failure {
        error: PostError::Network(network_detail(&e, url)),
        retry_after: None,
        retryable: true,
    })?;
    if !(200..300).contains(&status) {
        let should = headers
            .get("x-should-retry")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let retryable = match should.as_deref() {
            Some("true") => true,
            Some("false") => false,
            _ => matches!(status, 408 | 409 | 429) || status >= 500,
        };
        return Err(Failure {
            error: PostError::Status {
                label,
                status,
                body: text,
            },
            retry_after: header_delay(&headers),
            retryable,
        });
    }
    serde_json::from_str(&text).map_err(|e| Failure {
        error: PostError::Other(format!("{label} returned invalid JSON: {e}")),
        retry_after: None,
        retryable: false,
    })
}

/// POSTs `body` to `url` and reads the JSON answer, retrying as pi does; `cancel` stops it
/// at once, waits included.
pub async fn post_json(
    label: &'static str,
    url: &str,
    api_key: Option<&str>,
    body: &Value,
    cancel: &CancellationToken,
) -> Result<Value, PostError> {
    let mut retry = 0;
    loop {
        let outcome = tokio::select! {
            outcome = attempt(label, url, api_key, body) => outcome,
            () = cancel.cancelled() => return Err(PostError::Aborted),
        };
        let failure = match outcome {
            Ok(json) => return Ok(json),
            Err(failure) => failure,
        };
        if retry >= MAX_RETRIES || !failure.retryable {
            return Err(failure.error);
        }
        let delay = match failure.retry_after {
            Some(delay) if delay > MAX_RETRY_DELAY => {
                return Err(PostError::Other(format!(
                    "Server requested {}s retry delay (max: {}s). {}",
                    delay.as_secs_f64().ceil(),
                    MAX_RETRY_DELAY.as_secs(),
                    failure.error.message(label)
                )));
            }
            Some(delay) => delay,
            None => pi_ai::http::backoff(retry),
        };
        retry += 1;
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            () = cancel.cancelled() => return Err(PostError::Aborted),
        }
    }
}
