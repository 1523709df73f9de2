//! The HTTP side of every provider: one shared client, sending with client-side retries
//! (as the official SDKs do), and error texts in each SDK's format.

use std::sync::LazyLock;
use std::time::Duration;

use crate::request_body::RequestBody;
use tokio_util::sync::CancellationToken;

mod connect_error;
mod error_text;
pub mod scoped_proxy;

pub use error_text::{
    StatusText, bedrock_error_name, bedrock_error_parts, bedrock_exception_prefix,
    bedrock_status_message, status_message, status_text,
};

/// Text of a request that was cancelled before the response arrived (as the OpenAI SDK says it).
pub const ABORTED_BEFORE_RESPONSE: &str = "Request was aborted.";
/// Text of a request cancelled while the response streamed.
pub const ABORTED: &str = "Request was aborted";
/// Text of a request cancelled while waiting to retry it (pi-ai 1.6's abortable sleep).
pub const ABORTED_WHILE_WAITING: &str = "Request aborted";
/// Text of a request that could not reach the server.
pub const CONNECTION_ERROR: &str = "Connection error.";
/// Text of a request whose response headers did not arrive in time.
pub const TIMED_OUT: &str = "Request timed out.";

/// No client-side retries unless asked (`retry.provider.maxRetries`): pi-ai 1.6's
/// `retryProviderRequest` defaults to 0, so a transient failure reaches pi's auto-retry,
/// which announces it (`auto_retry_start`) and waits `retry.baseDelayMs`, not `retry-after`.
const DEFAULT_MAX_RETRIES: u32 = 0;
const DEFAULT_MAX_RETRY_DELAY_MS: u64 = 60_000;
const DEFAULT_TIMEOUT_MS: u64 = 600_000;

/// The proxy of pi's `httpProxy` setting, standing in for `HTTP_PROXY` / `HTTPS_PROXY`
/// where those are unset (set once, before the first request).
static SETTINGS_PROXY: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Uses `proxy` (the `httpProxy` setting) where `HTTP_PROXY` / `HTTPS_PROXY` are unset.
pub fn use_settings_proxy(proxy: String) {
    let _ = SETTINGS_PROXY.set(proxy);
}

/// The variables the `httpProxy` setting stands in for (`HTTP_PROXY`, `HTTPS_PROXY` where
/// unset), for child processes to inherit as pi's own environment would give them.
pub fn settings_proxy_env() -> Vec<(&'static str, String)> {
    let Some(proxy) = SETTINGS_PROXY.get() else {
        return Vec::new();
    };
    ["HTTP_PROXY", "HTTPS_PROXY"]
        .into_iter()
        .filter(|name| std::env::var_os(name).is_none())
        .map(|name| (name, proxy.clone()))
        .collect()
}

static CLIENT: LazyLock<Result<reqwest::Client, String>> = LazyLock::new(|| {
    // reqwest is built without a bundled crypto provider; ring is ours. Installing twice is
    // harmless (the first one stays).
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .user_agent(concat!("pi-rs/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30));
    // The environment's proxies are read by reqwest itself; the setting fills the gaps.
    for (name, proxy) in settings_proxy_env() {
        let proxy = match name {
            "HTTP_PROXY" => reqwest::Proxy::http(&proxy),
            _ => reqwest::Proxy::https(&proxy),
        }
        .map_err(|e| format!("Invalid httpProxy setting: {e}"))?;
        builder = builder.proxy(proxy);
    }
    builder
        .build()
        .map_err(|e| format!("Could not create the HTTP client: {e}"))
});

/// Builds the shared client now, on a thread of its own: building it reads the system's
/// root certificates (hundreds of files), which should not wait for the first request
/// or stall the tasks that make it.
pub fn warm_shared_client() -> std::thread::JoinHandle<()> {
    std::thread::spawn(|| {
        let _ = shared_client();
    })
}

/// The one HTTP client every request of this crate shares.
pub fn shared_client() -> Result<&'static reqwest::Client, String> {
    CLIENT.as_ref().map_err(Clone::clone)
}

/// How a provider's SDK words an HTTP error status.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorStyle {
    /// `"<status>: <body.error as JSON>"`, else the SDK's `"<status> <message>"` (OpenAI and
    /// compatible servers, as pi 1.6.0 words them).
    OpenAi,
    /// `"<status> <body.message or compact body JSON>"` (Anthropic).
    Anthropic,
    /// `"Proxy error: <body.error>"`, else `"Proxy error: <status> <reason>"` (pi's stream proxy).
    Proxy,
    /// `"Mistral API error (<status>): <raw body>"`, the body cut at 4000 characters (Mistral).
    Mistral,
    /// `"<prefix>: <body.message>"`, the prefix from `x-amzn-errortype` (AWS SDK, Bedrock).
    Bedrock,
}

/// A request ready to send: URL, headers and JSON body.
#[derive(Clone)]
pub struct HttpRequest {
    pub url: String,
    pub headers: Vec<(String, String)>,
    pub body: RequestBody,
}

impl HttpRequest {
    /// Sets a header, replacing any of the same name (case-insensitive).
    pub fn set_header(&mut self, name: &str, value: &str) {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self.headers.push((name.to_owned(), value.to_owned()));
    }

    /// Applies the model's headers, then the caller's, each overriding what came before.
    pub fn apply_overrides<'a>(
        &mut self,
        layers: impl IntoIterator<Item = (&'a String, &'a String)>,
    ) {
        for (name, value) in layers {
            self.set_header(name, value);
        }
    }
}

impl HttpRequest {
    /// Applies the caller's headers last, then leaves out those the caller removed.
    pub fn apply_option_headers(&mut self, options: &crate::types::StreamOptions) {
        self.apply_overrides(&options.headers);
        for name in &options.removed_headers {
            self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        }
    }
}

/// Headers whose values are credentials.
fn is_secret_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name == "authorization"
        || name == "x-api-key"
        || name == "api-key"
        || name.contains("token")
        || name.contains("secret")
        || name.ends_with("-key")
}

impl std::fmt::Debug for HttpRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Credentials never reach logs.
        let headers: Vec<(&str, &str)> = self
            .headers
            .iter()
            .map(|(n, v)| {
                (
                    n.as_str(),
                    if is_secret_header(n) {
                        "<redacted>"
                    } else {
                        v.as_str()
                    },
                )
            })
            .collect();
        f.debug_struct("HttpRequest")
            .field("url", &self.url)
            .field("headers", &headers)
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

/// Retry and timeout settings for one request.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    pub max_retries: u32,
    /// 0 means no cap.
    pub max_retry_delay_ms: u64,
    pub timeout_ms: u64,
}

impl RetryPolicy {
    /// The policy from stream options, with pi-ai's defaults (no retries, 60 s cap, 10 min).
    pub fn from_options(options: &crate::types::StreamOptions) -> Self {
        Self {
            max_retries: options.max_retries.unwrap_or(DEFAULT_MAX_RETRIES),
            max_retry_delay_ms: options
                .max_retry_delay_ms
                .unwrap_or(DEFAULT_MAX_RETRY_DELAY_MS),
            timeout_ms: options.timeout_ms.unwrap_or(DEFAULT_TIMEOUT_MS),
        }
    }
}

/// Why a request produced no usable response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestFailure {
    pub message: String,
    pub aborted: bool,
    /// The HTTP status and what a provider's prefix is followed by, for a status error.
    pub status: Option<(u16, String)>,
    /// The error body's machine-readable code (`error.details.error_code`; for Bedrock, the
    /// exception name), when it has one.
    pub error_code: Option<String>,
    /// The AWS request id of an error response (`x-amzn-requestid`), when it has one.
    pub request_id: Option<String>,
    /// The error's kind: Anthropic's `error.type` (`invalid_request_error`), or the AWS
    /// exception name for Bedrock (`ValidationException`).
    pub error_type: Option<String>,
}

impl RequestFailure {
    fn error(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            aborted: false,
            status: None,
            error_code: None,
            request_id: None,
            error_type: None,
        }
    }

    fn aborted() -> Self {
        Self {
            message: ABORTED_BEFORE_RESPONSE.into(),
            aborted: true,
            status: None,
            error_code: None,
            request_id: None,
            error_type: None,
        }
    }

    /// The failure's text under a provider's `prefix` (`OpenAI API error (429): …`), as
    /// pi 1.6.0 words status errors; other failures keep their text.
    pub fn text(&self, prefix: Option<&str>) -> String {
        match (prefix, &self.status) {
            (Some(prefix), Some((status, detail))) => format!("{prefix} ({status}): {detail}"),
            _ => self.message.clone(),
        }
    }
}

/// The compressions a request accepts, as pi 1.6.0's fetch (undici) lists them.
pub const ACCEPT_ENCODING: &str = "gzip, deflate";

/// Sends `request`, retrying connection failures, timeouts, 408, 409, 429 and 5xx up to
/// `policy.max_retries` times (none by default) with the server's `retry-after` or
/// exponential backoff, as pi-ai's `retryProviderRequest`.
pub async fn send(
    request: &HttpRequest,
    policy: RetryPolicy,
    cancel: &CancellationToken,
    style: ErrorStyle,
) -> Result<reqwest::Response, RequestFailure> {
    let client = CLIENT
        .as_ref()
        .map_err(|e| RequestFailure::error(e.clone()))?;
    send_on(client, request, policy, cancel, style).await
}

/// [`send`] through the proxy a provider's scoped env names for the request (pi-ai 1.6's
/// Bedrock handler), or as [`send`] when it names none.
pub async fn send_scoped(
    request: &HttpRequest,
    scoped: Option<&std::collections::BTreeMap<String, String>>,
    policy: RetryPolicy,
    cancel: &CancellationToken,
    style: ErrorStyle,
) -> Result<reqwest::Response, RequestFailure> {
    match scoped_proxy::proxy_for(&request.url, scoped) {
        None => send(request, policy, cancel, style).await,
        Some(proxy) => {
            let client = scoped_proxy::client_for(&proxy).map_err(RequestFailure::error)?;
            send_on(&client, request, policy, cancel, style).await
        }
    }
}

async fn send_on(
    client: &reqwest::Client,
    request: &HttpRequest,
    policy: RetryPolicy,
    cancel: &CancellationToken,
    style: ErrorStyle,
) -> Result<reqwest::Response, RequestFailure> {
    let mut retries_done = 0u32;
    loop {
        let mut builder = client.post(&request.url).body(request.body.to_reqwest());
        if !request
            .headers
            .iter()
            .any(|(name, _)| name.eq_ignore_ascii_case("accept-encoding"))
        {
            // As pi 1.6.0's fetch asks (reqwest would write "gzip,deflate"); the client
            // decodes either answer.
            builder = builder.header("accept-encoding", ACCEPT_ENCODING);
        }
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let attempt =
            tokio::time::timeout(Duration::from_millis(policy.timeout_ms), builder.send());
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                return Err(RequestFailure::aborted());
            }
            outcome = attempt => outcome,
        };
        // The failure, the server's delay, and the SDK's message a too-long delay quotes.
        let (failure, server_delay, quoted) = match outcome {
            Err(_elapsed) => (RequestFailure::error(TIMED_OUT), None, None),
            Ok(Err(error)) if error.is_builder() => {
                return Err(RequestFailure::error(format!(
                    "Invalid request to {}: {error}",
                    request.url
                )));
            }
            Ok(Err(connect)) => (
                RequestFailure::error(connect_error::connection_error_text(&connect, &request.url)),
                None,
                None,
            ),
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let retryable = should_retry(status, response.headers());
                let delay = retry_after(response.headers());
                let aws_header = |name: &str| {
                    response
                        .headers()
                        .get(name)
                        .and_then(|v| v.to_str().ok())
                        .map(str::to_owned)
                };
                let aws_error_type = aws_header("x-amzn-errortype");
                let request_id = aws_header("x-amzn-requestid");
                let body = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => {
                        return Err(RequestFailure::aborted());
                    }
                    body = response.bytes() => body.unwrap_or_default(),
                };
                let (failure, quoted) = match style {
                    ErrorStyle::Bedrock => {
                        let (name, detail) =
                            bedrock_error_parts(status, aws_error_type.as_deref(), &body);
                        let text = format!("{}: {detail}", bedrock_exception_prefix(&name));
                        let failure = RequestFailure {
                            message: text.clone(),
                            aborted: false,
                            status: Some((status, detail)),
                            error_code: Some(name.clone()),
                            request_id,
                            error_type: Some(name.clone()),
                        };
                        (failure, text)
                    }
                    _ => {
                        let text = status_text(status, &body, style);
                        let json = serde_json::from_slice::<serde_json::Value>(&body).ok();
                        let field = |pointer: &str| {
                            json.as_ref()
                                .and_then(|v| v.pointer(pointer))
                                .and_then(serde_json::Value::as_str)
                                .map(str::to_owned)
                        };
                        let failure = RequestFailure {
                            message: text.message,
                            aborted: false,
                            status: Some((status, text.detail)),
                            error_code: field("/error/details/error_code"),
                            request_id,
                            error_type: field("/error/type"),
                        };
                        (failure, text.sdk)
                    }
                };
                if !retryable {
                    return Err(failure);
                }
                (failure, delay, Some(quoted))
            }
        };
        // Out of retries, the failure stands as it is: the server's delay is only weighed
        // for a retry that would happen (pi-ai checks the budget first).
        if retries_done >= policy.max_retries {
            return Err(failure);
        }
        if let Some(delay) = server_delay {
            let cap = policy.max_retry_delay_ms;
            if cap > 0 && delay.as_millis() > u128::from(cap) {
                return Err(RequestFailure::error(format!(
                    "Server requested {}s retry delay (max: {}s). {}",
                    delay.as_millis().div_ceil(1000),
                    u128::from(cap).div_ceil(1000),
                    quoted.as_deref().unwrap_or(&failure.message)
                )));
            }
        }
        let delay = server_delay.unwrap_or_else(|| backoff(retries_done));
        retries_done += 1;
        tokio::select! {
            biased;
            _ = cancel.cancelled() => {
                return Err(RequestFailure {
                    message: ABORTED_WHILE_WAITING.into(),
                    ..RequestFailure::aborted()
                });
            }
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

fn should_retry(status: u16, headers: &reqwest::header::HeaderMap) -> bool {
    match headers.get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(status, 408 | 409 | 429) || status >= 500
}

/// The delay a server asks for in `retry-after-ms` or `retry-after` (seconds or HTTP date).
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let header = |name: &str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    let value = header("retry-after")?;
    if let Ok(secs) = value.parse::<f64>() {
        return (secs.is_finite() && secs >= 0.0).then(|| Duration::from_secs_f64(secs));
    }
    let when = httpdate_to_unix(value)?;
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some(Duration::from_secs(when.saturating_sub(now.as_secs())))
}

/// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`) to Unix seconds.
fn httpdate_to_unix(text: &str) -> Option<u64> {
    let parts: Vec<&str> = text.split_whitespace().collect();
    let [_, day, month, year, time, "GMT"] = parts.as_slice() else {
        return None;
    };
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m == month)? as i64
        + 1;
    let (day, year): (i64, i64) = (day.parse().ok()?, year.parse().ok()?);
    let hms: Vec<i64> = time
        .split(':')
        .map(|p| p.parse().ok())
        .collect::<Option<_>>()?;
    let [h, m, s] = hms.as_slice() else {
        return None;
    };
    // Days from civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    u64::try_from(days * 86_400 + h * 3600 + m * 60 + s).ok()
}

/// Exponential backoff as the SDKs do it: 0.5 s doubling to at most 8 s, with up to 25% jitter.
pub fn backoff(retries_done: u32) -> Duration {
    let base = (0.5 * 2f64.powi(retries_done as i32)).min(8.0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let jitter = 1.0 - (f64::from(nanos % 1000) / 1000.0) * 0.25;
    Duration::from_secs_f64(base * jitter)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_retry_after_forms() {
        let mut headers = reqwest::header::HeaderMap::new();
        headers.insert("retry-after", "2".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", "1500".parse().unwrap());
        assert_eq!(retry_after(&headers), Some(Duration::from_millis(1500)));
        assert_eq!(
            httpdate_to_unix("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
    }

    #[test]
    fn debug_output_redacts_credentials() {
        let request = HttpRequest {
            url: "http://x".into(),
            headers: vec![
                ("authorization".into(), "Bearer sk-secret".into()),
                ("x-api-key".into(), "sk-ant-secret".into()),
                ("content-type".into(), "application/json".into()),
            ],
            body: bytes::Bytes::from_static(b"{}").into(),
        };
        let shown = format!("{request:?}");
        assert!(!shown.contains("secret"), "{shown}");
        assert!(shown.contains("application/json"));
    }

    #[test]
    fn backoff_grows_and_caps() {
        assert!(backoff(0) <= Duration::from_millis(500));
        assert!(backoff(0) >= Duration::from_millis(375));
        assert!(backoff(10) <= Duration::from_secs(8));
    }
}
