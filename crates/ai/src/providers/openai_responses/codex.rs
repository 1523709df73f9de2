//! `openai-codex-responses`: the Responses API of the ChatGPT Codex backend
//! (`<base>/codex/responses`, default base `https://chatgpt.com/backend-api`), signed in with
//! a ChatGPT OAuth token whose JWT names the account (`chatgpt-account-id` header).
//!
//! pi talks to it with its own client rather than the OpenAI SDK: the system prompt goes in
//! `instructions`, reasoning is always included encrypted, failed requests are retried three
//! times (1 s, 2 s, 4 s), and errors are worded as pi words them ("You have hit your ChatGPT
//! usage limit …", "Codex error: …"). SSE request bodies go zstd-compressed, the wait for
//! response headers is bounded by the request timeout, and reading stops at the terminal
//! event. The WebSocket transport (`transport` other than `sse`) is in `codex_ws`.

use std::sync::LazyLock;
use std::time::Duration;

use futures_util::StreamExt;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::super::common::{frame_of, missing_key, resolve_api_key, written_body};
use super::request::{self, InputItem, Reasoning, ToolParam};
use super::{Decoder, Flavor, codex_ws, codex_ws_run, service_tier, simple_options};
use crate::api_provider::ApiProvider;
use crate::assembler::Assembler;
use crate::event_stream::AssistantMessageEventStream;
use crate::http::{self, HttpRequest};
use crate::sse::{self, StreamControl};
use crate::types::{
    AssistantMessage, Context, Message, Model, SimpleStreamOptions, StreamOptions, ThinkingLevel,
    api, now_ms,
};

/// The backend pi uses when the model names none.
pub const DEFAULT_BASE_URL: &str = "https://chatgpt.com/backend-api";
const JWT_CLAIM_PATH: &str = "https://api.openai.com/auth";

/// pi-ai 1.6's Codex client retries only when asked (`retry.provider.maxRetries`).
const MAX_RETRIES: u32 = 0;
/// The longest `retry-after` honoured unless `max_retry_delay_ms` says otherwise.
const DEFAULT_MAX_RETRY_DELAY_MS: u64 = 60_000;
const BASE_DELAY_MS: u64 = 1000;
const FETCH_FAILED: &str = "fetch failed";
const ACCOUNT_ID_ERROR: &str = "Failed to extract accountId from token";

static CLIENT: LazyLock<Result<reqwest::Client, String>> = LazyLock::new(|| {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .build()
        .map_err(|e| format!("Could not create the HTTP client: {e}"))
});

static RETRYABLE_TEXT: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)rate.?limit|overloaded|service.?unavailable|upstream.?connect|connection.?refused",
    )
    .ok()
});

/// A 429 that no wait will fix: a spent quota or budget.
static TERMINAL_RATE_LIMIT: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?i)GoUsageLimitError|FreeUsageLimitError|Monthly usage limit reached|available balance|insufficient_quota|out of budget|quota exceeded|billing",
    )
    .ok()
});

static USAGE_LIMIT_CODE: LazyLock<Option<regex::Regex>> = LazyLock::new(|| {
    regex::Regex::new(r"(?i)usage_limit_reached|usage_not_included|rate_limit_exceeded").ok()
});

/// `openai-codex-responses`: the ChatGPT Codex backend's Responses API.
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenAiCodexResponses;

impl ApiProvider for OpenAiCodexResponses {
    fn api(&self) -> &str {
        api::OPENAI_CODEX_RESPONSES
    }

    fn stream(
        &self,
        model: &Model,
        context: &Context,
        options: StreamOptions,
    ) -> AssistantMessageEventStream {
        let Some(token) = resolve_api_key(model, &options) else {
            return missing_key(model);
        };
        let request = build_request(model, context, &options, &token);
        let plan = request
            .as_ref()
            .ok()
            .and_then(|request| codex_ws_run::plan(model, &options, request));
        run(
            model.clone(),
            request,
            &options,
            Decoder::new(model.clone(), Flavor::Codex, service_tier(&options))
                .with_provider_thinking_level(request::configuration_effort(
                    model,
                    options.reasoning_effort,
                    true,
                )),
            plan,
        )
    }

    fn stream_simple(
        &self,
        model: &Model,
        context: &Context,
        options: SimpleStreamOptions,
    ) -> AssistantMessageEventStream {
        match simple_options(model, context, &options) {
            Some(mut base) => {
                // As pi-ai 1.6: a reasoning model thinking `off` is sent effort "none".
                if base.reasoning_effort.is_none() && model.reasoning {
                    base.reasoning_effort = Some(ThinkingLevel::Off);
                }
                self.stream(model, context, base)
            }
            None => missing_key(model),
        }
    }
}

#[derive(Debug, Serialize)]
struct TextParam<'a> {
    verbosity: &'a str,
}

/// The Codex request body, keys in the order pi sends them.
#[derive(Debug, Serialize)]
struct Body<'a> {
    model: &'a str,
    store: bool,
    stream: bool,
    input: Vec<InputItem<'a>>,
    text: TextParam<'a>,
    include: [&'static str; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    prompt_cache_key: Option<&'a str>,
    tool_choice: Value,
    parallel_tool_calls: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    service_tier: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<Vec<ToolParam<'a>>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reasoning: Option<Reasoning>,
}

/// `<base>/codex/responses`, whatever part of that path the base already has.
pub fn resolve_url(base_url: &str) -> String {
    let raw = if base_url.trim().is_empty() {
        DEFAULT_BASE_URL
    } else {
        base_url
    };
    let normalized = raw.trim_end_matches('/');
    if normalized.ends_with("/codex/responses") {
        normalized.to_owned()
    } else if normalized.ends_with("/codex") {
        format!("{normalized}/responses")
    } else {
        format!("{normalized}/codex/responses")
    }
}

/// Decodes standard or URL-safe base64, padded or not.
fn decode_base64(text: &str) -> Option<Vec<u8>> {
    let text = text.trim_end_matches('=');
    let mut out = Vec::with_capacity(text.len() * 3 / 4);
    let mut bits = 0u32;
    let mut count = 0u32;
    for byte in text.bytes() {
        let value = match byte {
            b'A'..=b'Z' => byte - b'A',
            b'a'..=b'z' => byte - b'a' + 26,
            b'0'..=b'9' => byte - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        bits = (bits << 6) | u32::from(value);
        count += 6;
        if count >= 8 {
            count -= 8;
            out.push((bits >> count) as u8);
            bits &= (1 << count) - 1;
        }
    }
    (text.len() % 4 != 1).then_some(out)
}

/// The ChatGPT account id in the token's `https://api.openai.com/auth` claim.
pub fn extract_account_id(token: &str) -> Result<String, String> {
    let fail = || ACCOUNT_ID_ERROR.to_owned();
    let parts: Vec<&str> = token.split('.').collect();
    let [_, payload, _] = parts.as_slice() else {
        return Err(fail());
    };
    let bytes = decode_base64(payload).ok_or_else(fail)?;
    let payload: Value = serde_json::from_slice(&bytes).map_err(|_| fail())?;
    match payload
        .get(JWT_CLAIM_PATH)
        .and_then(|c| c.get("chatgpt_account_id"))
    {
        Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
        Some(Value::Number(n)) if n.as_f64().is_some_and(|f| f != 0.0) => Ok(n.to_string()),
        _ => Err(fail()),
    }
}

/// The Codex body for `messages`: as pi-ai 1.6 builds it, the system prompt as the first
/// (developer) input item, the output cap, reasoning always included encrypted.
fn build_body<'a>(
    model: &'a Model,
    context: &'a Context,
    messages: &'a [Message],
    options: &'a StreamOptions,
) -> Body<'a> {
    let extra = options.openai_responses.as_ref();
    let reasoning = options.reasoning_effort.and_then(|level| {
        let effort = if level == ThinkingLevel::Off {
            // A model whose `off` maps to null sends no reasoning at all.
            match model.thinking_level_value(ThinkingLevel::Off) {
                Some(Some(off)) => off.to_owned(),
                Some(None) => return None,
                None => "none".to_owned(),
            }
        } else {
            request::effort_value(model, level)
        };
        Some(Reasoning {
            effort,
            summary: Some(
                extra
                    .and_then(|o| o.reasoning_summary.clone())
                    .unwrap_or_else(|| "auto".to_owned()),
            ),
        })
    });
    let configuration = request::configuration_effort(model, options.reasoning_effort, true);
    let reasoning = match (reasoning, &configuration) {
        (Some(reasoning), Some(_)) => Some(Reasoning {
            effort: request::CONFIGURATION_UPDATE_REQUEST_EFFORT.to_owned(),
            ..reasoning
        }),
        (reasoning, _) => reasoning,
    };
    let session = cache_session(options);
    Body {
        model: &model.id,
        store: false,
        stream: true,
        input: request::convert_context(model, context, messages, configuration.as_deref()),
        text: TextParam {
            verbosity: extra
                .and_then(|o| o.text_verbosity.as_deref())
                .filter(|v| !v.is_empty())
                .unwrap_or("low"),
        },
        include: request::INCLUDE_ENCRYPTED_REASONING,
        prompt_cache_key: session,
        tool_choice: options
            .tool_choice
            .as_ref()
            .map_or_else(|| "auto".into(), request::tool_choice),
        parallel_tool_calls: true,
        max_output_tokens: options
            .max_tokens
            .filter(|m| *m > 0 && super::accepts_max_output_tokens(model))
            .map(|m| m.max(MIN_OUTPUT_TOKENS)),
        temperature: options.temperature,
        service_tier: extra.and_then(|o| o.service_tier.as_deref()),
        tools: (!context.tools.is_empty()).then(|| {
            request::convert_tools(
                &context.tools,
                super::strict_field(model, true).map(|_| None),
            )
        }),
        reasoning,
    }
}

/// The smallest output cap Codex is sent.
const MIN_OUTPUT_TOKENS: u64 = 16;

/// The session id, unless caching is off, cut to OpenAI's 64 characters (pi-ai 1.6's
/// `codexSessionId`): the prompt cache key and the session headers.
pub(super) fn cache_session(options: &StreamOptions) -> Option<&str> {
    options
        .session_id
        .as_deref()
        .filter(|s| !s.is_empty())
        .filter(|_| options.cache_retention != Some(crate::types::CacheRetention::None))
        .map(crate::providers::common::clamp_prompt_cache_key)
}

/// Builds the Codex request: body, then the model's and caller's headers under pi's fixed
/// ones (token, account, originator, user agent, beta flag, SSE accept, session).
pub fn build_request(
    model: &Model,
    context: &Context,
    options: &StreamOptions,
    token: &str,
) -> Result<HttpRequest, String> {
    let account_id = extract_account_id(token)?;
    let mut frame = frame_of(context);
    let messages = request::prepare_placing(
        model,
        context,
        &mut frame,
        request::OPENAI_TOOL_CALL_PROVIDERS,
    );
    let parts = (model.clone(), frame, messages, options.clone());
    let body = written_body(model, options, parts, |parts, out| {
        let (model, context, messages, options) = parts;
        serde_json::to_writer(out, &build_body(model, context, messages, options))
    })?;
    let mut request = HttpRequest {
        url: resolve_url(&model.base_url),
        headers: Vec::new(),
        body,
    };
    // `originator` and the client's user agent are defaults the model's `headers` may
    // replace (pi 1.1); the token, account and transport headers are not.
    request.set_header("originator", "pi");
    crate::identity::apply_identity(&mut request, model);
    request.apply_overrides(model.headers.iter().flatten());
    crate::identity::apply_opencode_session(&mut request, model, options.session_id.as_deref());
    request.apply_option_headers(options);
    request.set_header("Authorization", &format!("Bearer {token}"));
    request.set_header("chatgpt-account-id", &account_id);
    request.set_header("OpenAI-Beta", "responses=experimental");
    request.set_header("accept", "text/event-stream");
    request.set_header("content-type", "application/json");
    request.set_header("accept-encoding", crate::http::ACCEPT_ENCODING);
    if let Some(session) = cache_session(options) {
        request.set_header("session-id", session);
        request.set_header("x-client-request-id", session);
    }
    Ok(request)
}

/// pi's text for a failed Codex request: a usage-limit sentence for rate limits, else the
/// error's message, else the raw body.
pub fn error_message(status: u16, reason: &str, body: &str) -> String {
    let mut message = if !body.is_empty() {
        body.to_owned()
    } else if !reason.is_empty() {
        reason.to_owned()
    } else {
        "Request failed".to_owned()
    };
    let mut friendly = None;
    if let Ok(parsed) = serde_json::from_str::<Value>(body)
        && let Some(error) = parsed.get("error").filter(|e| is_truthy(e))
    {
        let code = [error.get("code"), error.get("type")]
            .into_iter()
            .flatten()
            .find(|v| is_truthy(v))
            .map(value_text)
            .unwrap_or_default();
        let limited = USAGE_LIMIT_CODE
            .as_ref()
            .is_some_and(|re| re.is_match(&code));
        if limited || status == 429 {
            let plan = match error.get("plan_type") {
                Some(Value::String(plan)) if !plan.is_empty() => {
                    format!(" ({} plan)", plan.to_lowercase())
                }
                _ => String::new(),
            };
            let when = error
                .get("resets_at")
                .and_then(Value::as_f64)
                .filter(|at| *at != 0.0)
                .map(|at| {
                    let minutes = ((at * 1000.0 - now_ms() as f64) / 60_000.0).round();
                    format!(" Try again in ~{} min.", minutes.max(0.0) as i64)
                })
                .unwrap_or_default();
            friendly = Some(
                format!("You have hit your ChatGPT usage limit{plan}.{when}")
                    .trim()
                    .to_owned(),
            );
        }
        match error.get("message").filter(|m| is_truthy(m)) {
            Some(m) => message = value_text(m),
            None => {
                if let Some(f) = &friendly {
                    message.clone_from(f);
                }
            }
        }
    }
    friendly.unwrap_or(message)
}

fn is_truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

fn value_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn is_retryable(status: u16, body: &str) -> bool {
    if status == 429
        && TERMINAL_RATE_LIMIT
            .as_ref()
            .is_some_and(|re| re.is_match(body))
    {
        return false;
    }
    matches!(status, 429 | 500 | 502 | 503 | 504)
        || RETRYABLE_TEXT.as_ref().is_some_and(|re| re.is_match(body))
}

/// Why no response arrived.
struct Failure {
    message: String,
    aborted: bool,
}

impl Failure {
    fn aborted() -> Self {
        Self {
            message: http::ABORTED.to_owned(),
            aborted: true,
        }
    }
}

/// Sleeps before retry `attempt` (1 s, 2 s, 4 s …); `false` when cancelled meanwhile.
async fn backoff(attempt: u32, cancel: &CancellationToken) -> bool {
    sleep(
        Duration::from_millis(BASE_DELAY_MS << attempt.min(16)),
        cancel,
    )
    .await
}

/// Sleeps `delay`; `false` when cancelled meanwhile.
async fn sleep(delay: Duration, cancel: &CancellationToken) -> bool {
    tokio::select! {
        biased;
        _ = cancel.cancelled() => false,
        _ = tokio::time::sleep(delay) => true,
    }
}

/// How many retries `send` may make and the longest server-requested wait (0: no cap).
#[derive(Clone, Copy)]
struct Retries {
    max: u32,
    max_delay_ms: u64,
}

/// Sends the request as pi's Codex client does: up to `max_retries` retries after any
/// failure, except a non-retryable status whose error speaks of a usage limit; a retried
/// status waits the server's `retry-after`, failing at once when that is over the cap.
async fn send(
    request: &HttpRequest,
    retries: Retries,
    timeout: Option<Duration>,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, Failure> {
    let client = CLIENT.as_ref().map_err(|e| Failure {
        message: e.clone(),
        aborted: false,
    })?;
    let mut attempt = 0u32;
    loop {
        if cancel.is_cancelled() {
            return Err(Failure::aborted());
        }
        let mut builder = client.post(&request.url).body(request.body.to_reqwest());
        for (name, value) in &request.headers {
            builder = builder.header(name.as_str(), value.as_str());
        }
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(Failure::aborted()),
            outcome = headers_within(timeout, builder.send()) => outcome,
        };
        let message = match outcome {
            Err(elapsed) => format!(
                "Codex SSE response headers timed out after {}ms",
                elapsed.as_millis()
            ),
            Ok(Err(error)) if error.is_builder() => {
                return Err(Failure {
                    message: format!("Invalid request to {}: {error}", request.url),
                    aborted: false,
                });
            }
            Ok(Err(_)) => FETCH_FAILED.to_owned(),
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let status = response.status();
                let server_delay = http::retry_after(response.headers());
                let body = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(Failure::aborted()),
                    body = response.text() => body.unwrap_or_default(),
                };
                if attempt < retries.max && is_retryable(status.as_u16(), &body) {
                    let waited = match server_delay {
                        None => backoff(attempt, cancel).await,
                        Some(delay) => {
                            let cap = retries.max_delay_ms;
                            if cap > 0 && delay.as_millis() > u128::from(cap) {
                                return Err(Failure {
                                    message: format!(
                                        "Server requested {}s retry delay (max: {}s)",
                                        delay.as_millis().div_ceil(1000),
                                        u128::from(cap).div_ceil(1000)
                                    ),
                                    aborted: false,
                                });
                            }
                            sleep(delay, cancel).await
                        }
                    };
                    if !waited {
                        return Err(Failure::aborted());
                    }
                    attempt += 1;
                    continue;
                }
                error_message(
                    status.as_u16(),
                    status.canonical_reason().unwrap_or(""),
                    &body,
                )
            }
        };
        if attempt < retries.max && !message.contains("usage limit") {
            if !backoff(attempt, cancel).await {
                return Err(Failure::aborted());
            }
            attempt += 1;
            continue;
        }
        return Err(Failure {
            message,
            aborted: false,
        });
    }
}

/// The response headers, unless `timeout` passes first (pi 0.80.3: the configured HTTP
/// timeout bounds the wait; none or 0 waits for ever). `Err` carries the timeout.
async fn headers_within<F: std::future::Future>(
    timeout: Option<Duration>,
    send: F,
) -> Result<F::Output, Duration> {
    match timeout.filter(|t| !t.is_zero()) {
        Some(limit) => tokio::time::timeout(limit, send).await.map_err(|_| limit),
        None => Ok(send.await),
    }
}

/// The request with its body zstd-compressed and marked so (pi 0.80.4's SSE requests). A
/// body long enough to be written while it is sent goes as it is, never held whole.
fn zstd_body(mut request: HttpRequest) -> HttpRequest {
    if let Some(bytes) = request.body.bytes() {
        let compressed = ruzstd::encoding::compress_to_vec(
            bytes.as_ref(),
            ruzstd::encoding::CompressionLevel::Fastest,
        );
        request.body = compressed.into();
        request.set_header("content-encoding", "zstd");
    }
    request
}

/// Sends `request` (over the WebSocket when `plan` says so, falling back to SSE before the
/// reply starts) with Codex retries and streams the response through `decoder`.
fn run(
    model: Model,
    request: Result<HttpRequest, String>,
    options: &StreamOptions,
    decoder: Decoder,
    plan: Option<codex_ws_run::Plan>,
) -> AssistantMessageEventStream {
    let control = StreamControl::from_options(options);
    let retries = Retries {
        max: options.max_retries.unwrap_or(MAX_RETRIES),
        max_delay_ms: options
            .max_retry_delay_ms
            .unwrap_or(DEFAULT_MAX_RETRY_DELAY_MS),
    };
    let timeout = options.timeout_ms.map(Duration::from_millis);
    AssistantMessageEventStream::new(async_stream::stream! {
        let request = match request {
            Ok(request) => zstd_body(request),
            Err(message) => {
                yield Assembler::new(&model).fail(false, message);
                return;
            }
        };
        let mut diagnostic = None;
        if let Some(plan) = plan {
            match codex_ws_run::open(&plan, &control.cancel).await {
                codex_ws_run::Opened::Started { lease, first, body } => {
                    let items = {
                        let model = model.clone();
                        move |message: &AssistantMessage| codex_ws_run::response_items(&model, message)
                    };
                    let mut events = Box::pin(codex_ws_run::decode(
                        model,
                        (lease, first, body),
                        plan,
                        control,
                        decoder,
                        items,
                    ));
                    while let Some(event) = events.next().await {
                        yield event;
                    }
                    return;
                }
                codex_ws_run::Opened::Failed(message, aborted) => {
                    yield Assembler::new(&model).fail(aborted, message);
                    return;
                }
                codex_ws_run::Opened::Fallback(why) => {
                    codex_ws::record_fallback(plan.session.as_ref().map(|(s, _)| s.as_str()));
                    diagnostic = Some(plan.fallback_diagnostic(&why));
                }
            }
        }
        let response = match send(&request, retries, timeout, &control.cancel).await {
            Ok(response) => {
                control.report_response(&response);
                response
            }
            Err(failure) => {
                yield Assembler::new(&model).fail(failure.aborted, failure.message);
                return;
            }
        };
        // pi's Codex parser ends the body with a blank line, so that a last event the
        // server sent without one is still read (pi 0.85.0).
        let body = response
            .bytes_stream()
            .chain(futures_util::stream::once(async {
                Ok::<_, reqwest::Error>(bytes::Bytes::from_static(b"\n\n"))
            }));
        let mut events = Box::pin(sse::decode(model, body, control, decoder));
        while let Some(mut event) = events.next().await {
            if let Some(diagnostic) = &diagnostic {
                codex_ws_run::attach_diagnostic(&mut event, diagnostic);
            }
            yield event;
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(payload: &str) -> String {
        const ALPHABET: &[u8; 64] =
            b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let bytes = payload.as_bytes();
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let n = chunk
                .iter()
                .enumerate()
                .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
            for i in 0..=chunk.len() {
                out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
            }
        }
        format!("eyJhbGciOiJub25lIn0.{out}.sig")
    }

    #[test]
    fn account_id_comes_from_the_auth_claim() {
        let token = jwt(r#"{"https://api.openai.com/auth":{"chatgpt_account_id":"acc-123"}}"#);
        assert_eq!(extract_account_id(&token).unwrap(), "acc-123");
        assert_eq!(
            extract_account_id(&jwt(r#"{"sub":"x"}"#)),
            Err(ACCOUNT_ID_ERROR.into())
        );
        assert_eq!(
            extract_account_id("sk-plain-key"),
            Err(ACCOUNT_ID_ERROR.into())
        );
        assert_eq!(decode_base64("aGk=").unwrap(), b"hi");
        assert_eq!(decode_base64("aGk").unwrap(), b"hi");
    }

    #[test]
    fn urls_end_in_codex_responses() {
        assert_eq!(
            resolve_url(""),
            "https://chatgpt.com/backend-api/codex/responses"
        );
        assert_eq!(resolve_url("http://x/api/"), "http://x/api/codex/responses");
        assert_eq!(resolve_url("http://x/codex"), "http://x/codex/responses");
        assert_eq!(
            resolve_url("http://x/codex/responses/"),
            "http://x/codex/responses"
        );
    }

    #[test]
    fn error_messages_follow_pi() {
        let limit =
            r#"{"error":{"code":"usage_limit_reached","message":"limit","plan_type":"PLUS"}}"#;
        assert_eq!(
            error_message(403, "Forbidden", limit),
            "You have hit your ChatGPT usage limit (plus plan)."
        );
        let resets = format!(
            r#"{{"error":{{"type":"x","resets_at":{}}}}}"#,
            (now_ms() / 1000) + 600
        );
        let text = error_message(429, "Too Many Requests", &resets);
        assert!(
            text.starts_with("You have hit your ChatGPT usage limit. Try again in ~"),
            "{text}"
        );
        assert_eq!(
            error_message(
                500,
                "Internal Server Error",
                r#"{"error":{"message":"boom"}}"#
            ),
            "boom"
        );
        assert_eq!(
            error_message(502, "Bad Gateway", "upstream down"),
            "upstream down"
        );
        assert_eq!(error_message(502, "Bad Gateway", ""), "Bad Gateway");
    }
}
