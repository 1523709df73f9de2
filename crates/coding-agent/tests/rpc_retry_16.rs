//! Auto-retry as pi 1.6.0 does it, compared event by event: the same failures from the mock
//! model through our `pi --mode rpc` and through 1.6.0 give the same `auto_retry_start` /
//! `auto_retry_end` events (attempts, `maxAttempts`, delays from `retry.baseDelayMs`, the
//! error's text), the same `willRetry`, the same number of requests and the same
//! answer. 1.6.0 is found through `PI_TS16` (`scripts/install-ts-pi-16.sh` prints it);
//! without it only our side runs, against the expectations written here, which were read
//! from 1.6.0's `core/agent-session.js` and pi-ai's retry helpers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

/// Retries every 200 ms, doubling, at most 3; nothing else configured (no provider retries).
fn retry_settings() -> Value {
    json!({"retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 200}})
}

/// `retry_settings` with `retry.provider` set too.
fn with_provider(provider: Value) -> Value {
    let mut settings = retry_settings();
    settings["retry"]["provider"] = provider;
    settings
}

/// What one run of a prompt showed: the events that matter for retries, and the requests.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    events: Vec<Value>,
    requests: usize,
    response: Value,
}

/// The mock model's status errors as pi 1.6.0 words them: the status and the body's
/// `error` object.
const RATE_LIMITED: &str = r#"429: {"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}"#;
const OVERLOADED: &str = r#"503: {"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}"#;
const BAD_REQUEST: &str =
    r#"400: {"message":"Bad request","type":"invalid_request_error","param":null,"code":null}"#;

/// The lines of a run reduced to what both pis must agree on: retry events whole, the
/// assistant messages' stop reasons and errors, `agent_end`'s `willRetry`, and the run's
/// start and settlement.
fn retry_view(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| match l["type"].as_str()? {
            "agent_settled" | "agent_start" | "auto_retry_start" | "auto_retry_end" => {
                Some(l.clone())
            }
            "agent_end" => Some(json!({"type": "agent_end", "willRetry": l["willRetry"]})),
            "message_end" if l["message"]["role"] == "assistant" => Some(json!({
                "type": "message_end",
                "stopReason": l["message"]["stopReason"],
                "errorMessage": l["message"]["errorMessage"],
                "text": l["message"]["content"][0]["text"],
            })),
            _ => None,
        })
        .collect()
}

/// Sends the prompt and reads until the run settled.
fn prompt_and_settle(rpc: &mut Rpc) -> (Value, Vec<Value>) {
    let response = rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    (response, rpc.event("agent_settled"))
}

/// Runs `drive` through `program` against `scripts` and returns what it showed.
async fn run(
    program: Command,
    scripts: Vec<Script>,
    settings: Value,
    drive: fn(&mut Rpc) -> (Value, Vec<Value>),
) -> Outcome {
    let server = MockServer::start().await.unwrap();
    server.push_all(scripts);
    let env = Env::new(&server, 128_000, settings);
    let mut rpc = Rpc::start_program(&env, program, &[]);
    let (response, _) = drive(&mut rpc);
    let events = retry_view(&rpc.seen);
    drop(rpc);
    Outcome {
        events,
        requests: server.requests().len(),
        response,
    }
}

/// Runs the case through ours and, when installed, 1.6.0; asserts both showed the same.
async fn compare_with(
    scripts: impl Fn() -> Vec<Script>,
    settings: Value,
    drive: fn(&mut Rpc) -> (Value, Vec<Value>),
) -> Outcome {
    let our = run(ours(), scripts(), settings.clone(), drive).await;
    if let Some(wrapper) = ts16() {
        let their = run(ts16_pi(&wrapper), scripts(), settings, drive).await;
        assert_eq!(our, their, "ours (left) and pi 1.6.0 (right) differ");
    }
    our
}

async fn compare(scripts: impl Fn() -> Vec<Script>, settings: Value) -> Outcome {
    compare_with(scripts, settings, prompt_and_settle).await
}

fn of_type<'a>(outcome: &'a Outcome, kind: &str) -> Vec<&'a Value> {
    outcome
        .events
        .iter()
        .filter(|e| e["type"] == kind)
        .collect()
}

fn error_with_retry_after(status: u16, retry_after: &str) -> Script {
    Script::default().with_fault(Fault::HttpError {
        status,
        retry_after: Some(retry_after.into()),
        retry_after_ms: None,
        body: None,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_429s_then_success_are_retried_with_events_as_in_16() {
    let outcome = compare(
        || {
            vec![
                Script::http_error(429),
                Script::http_error(429),
                Script::text("third time lucky"),
            ]
        },
        retry_settings(),
    )
    .await;
    assert_eq!(outcome.requests, 3);
    let starts = of_type(&outcome, "auto_retry_start");
    assert_eq!(
        starts,
        [
            &json!({"type": "auto_retry_start", "attempt": 1, "maxAttempts": 3, "delayMs": 200, "errorMessage": RATE_LIMITED}),
            &json!({"type": "auto_retry_start", "attempt": 2, "maxAttempts": 3, "delayMs": 400, "errorMessage": RATE_LIMITED}),
        ]
    );
    assert_eq!(
        of_type(&outcome, "auto_retry_end"),
        [&json!({"type": "auto_retry_end", "success": true, "attempt": 2})]
    );
    // The end comes with the successful reply, before its agent_end.
    let kinds: Vec<&str> = outcome
        .events
        .iter()
        .filter_map(|e| e["type"].as_str())
        .collect();
    assert_eq!(
        kinds[kinds.len() - 4..],
        [
            "message_end",
            "auto_retry_end",
            "agent_end",
            "agent_settled"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_retries_end_with_the_last_error_as_in_16() {
    let outcome = compare(
        || (0..4).map(|_| Script::http_error(503)).collect(),
        retry_settings(),
    )
    .await;
    assert_eq!(outcome.requests, 4);
    let delays: Vec<&Value> = of_type(&outcome, "auto_retry_start")
        .iter()
        .map(|e| &e["delayMs"])
        .collect();
    assert_eq!(delays, [&json!(200), &json!(400), &json!(800)]);
    assert_eq!(
        of_type(&outcome, "auto_retry_end"),
        [
            &json!({"type": "auto_retry_end", "success": false, "attempt": 3, "finalError": OVERLOADED})
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_400_is_not_retried_as_in_16() {
    let outcome = compare(
        || vec![Script::http_error(400), Script::text("never sent")],
        retry_settings(),
    )
    .await;
    assert_eq!(outcome.requests, 1);
    assert!(of_type(&outcome, "auto_retry_start").is_empty());
    assert!(of_type(&outcome, "auto_retry_end").is_empty());
    assert_eq!(of_type(&outcome, "agent_end")[0]["willRetry"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_not_worth_retrying_after_a_retry_ends_the_retries_as_in_16() {
    let outcome = compare(
        || vec![Script::http_error(429), Script::http_error(400)],
        retry_settings(),
    )
    .await;
    assert_eq!(outcome.requests, 2);
    assert_eq!(of_type(&outcome, "auto_retry_start").len(), 1);
    assert_eq!(
        of_type(&outcome, "auto_retry_end"),
        [
            &json!({"type": "auto_retry_end", "success": false, "attempt": 1, "finalError": BAD_REQUEST})
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_status_is_retried_or_not_as_in_16() {
    for status in [401u16, 403, 404, 500, 502, 503, 504, 529] {
        let outcome = compare(
            || vec![Script::http_error(status), Script::text("answered")],
            retry_settings(),
        )
        .await;
        let retried = !of_type(&outcome, "auto_retry_start").is_empty();
        assert_eq!(retried, status >= 500, "{status}: {outcome:#?}");
    }
}

/// The outcome with every error text replaced by a mark: for failures whose wording comes
/// from the HTTP stack (node's undici in pi 1.6.0, reqwest here).
fn without_error_texts(mut outcome: Outcome) -> Outcome {
    for event in &mut outcome.events {
        for key in ["errorMessage", "finalError"] {
            if event.get(key).is_some_and(Value::is_string) {
                event[key] = json!("<error text>");
            }
        }
    }
    outcome
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_connection_is_retried_as_in_16() {
    let scripts = || {
        vec![
            Script::text("an answer cut short after a few words")
                .with_chunk_size(4)
                .with_fault(Fault::drop_after(3)),
            Script::text("answered"),
        ]
    };
    let our = run(ours(), scripts(), retry_settings(), prompt_and_settle).await;
    // pi 1.6.0 says "terminated: other side closed (UND_ERR_SOCKET)" (undici's words), ours
    // "Connection error: …"; both are retryable texts, and all else is the same.
    if let Some(wrapper) = ts16() {
        let their = run(
            ts16_pi(&wrapper),
            scripts(),
            retry_settings(),
            prompt_and_settle,
        )
        .await;
        assert_eq!(without_error_texts(their), without_error_texts(our.clone()));
    }
    assert_eq!(our.requests, 2);
    assert_eq!(of_type(&our, "auto_retry_start").len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_is_not_waited_for_without_provider_retries_as_in_16() {
    // The server asks for 45 s; pi 1.6.0 makes no request-level retry by default, so the
    // header is never read and the wait is retry.baseDelayMs (a 45 s wait would outlast
    // the harness's 30 s deadline for the run).
    let outcome = compare(
        || {
            vec![
                error_with_retry_after(429, "45"),
                Script::text("answered soon"),
            ]
        },
        retry_settings(),
    )
    .await;
    assert_eq!(outcome.requests, 2);
    assert_eq!(of_type(&outcome, "auto_retry_start")[0]["delayMs"], 200);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_retries_wait_retry_after_silently_as_in_16() {
    // retry.provider.maxRetries asks for request-level retries: they honour retry-after-ms
    // and emit nothing.
    let outcome = compare(
        || {
            vec![
                Script::default().with_fault(Fault::HttpError {
                    status: 429,
                    retry_after: None,
                    retry_after_ms: Some("150".into()),
                    body: None,
                }),
                Script::text("answered"),
            ]
        },
        with_provider(json!({"maxRetries": 1})),
    )
    .await;
    assert_eq!(outcome.requests, 2);
    assert!(of_type(&outcome, "auto_retry_start").is_empty());
    assert!(of_type(&outcome, "auto_retry_end").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn retry_after_beyond_the_provider_cap_fails_the_request_then_pi_retries_as_in_16() {
    let outcome = compare(
        || vec![error_with_retry_after(429, "120"), Script::text("answered")],
        with_provider(json!({"maxRetries": 1, "maxRetryDelayMs": 1000})),
    )
    .await;
    assert_eq!(outcome.requests, 2);
    let start = of_type(&outcome, "auto_retry_start");
    assert_eq!(
        start[0]["errorMessage"],
        "Server requested 120s retry delay (max: 1s). 429 Rate limit reached for requests"
    );
    assert_eq!(start[0]["delayMs"], 200);
}

/// Sends the prompt, waits for the first retry's announcement, cancels it.
fn prompt_then_abort_retry(rpc: &mut Rpc) -> (Value, Vec<Value>) {
    let response = rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    rpc.event("auto_retry_start");
    let aborted = rpc.call("a", json!({"type": "abort_retry"}));
    assert_eq!(aborted["success"], true, "{aborted}");
    (response, settled(rpc))
}

/// Reads until the run settled, unless it did before the last command's answer.
fn settled(rpc: &mut Rpc) -> Vec<Value> {
    if rpc.seen.iter().any(|l| l["type"] == "agent_settled") {
        return Vec::new();
    }
    rpc.event("agent_settled")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_retry_cancels_the_wait_as_in_16() {
    let mut settings = retry_settings();
    settings["retry"]["baseDelayMs"] = json!(60_000);
    let outcome = compare_with(
        || vec![Script::http_error(429), Script::text("never sent")],
        settings,
        prompt_then_abort_retry,
    )
    .await;
    assert_eq!(outcome.requests, 1);
    assert_eq!(
        of_type(&outcome, "auto_retry_end"),
        [
            &json!({"type": "auto_retry_end", "success": false, "attempt": 1, "finalError": "Retry cancelled"})
        ]
    );
}

/// Sends the prompt and reads until the run settled, noting in the answer whether the
/// run took at least the SDKs' shortest first backoff (375 ms: 0.5 s less 25% jitter).
fn prompt_and_time(rpc: &mut Rpc) -> (Value, Vec<Value>) {
    let started = std::time::Instant::now();
    let (mut response, lines) = prompt_and_settle(rpc);
    response["backedOff"] = json!(started.elapsed() >= std::time::Duration::from_millis(375));
    (response, lines)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unparseable_retry_after_date_backs_off_as_in_16() {
    // Not a date: the provider retry waits its own backoff instead of retrying at once.
    let mut settings = with_provider(json!({"maxRetries": 1}));
    settings["retry"]["enabled"] = json!(false);
    let outcome = compare_with(
        || {
            vec![
                error_with_retry_after(429, "Wed, 32 Foo 2026 25:61:61 GMT"),
                Script::text("answered"),
            ]
        },
        settings,
        prompt_and_time,
    )
    .await;
    assert_eq!(outcome.requests, 2);
    assert_eq!(outcome.response["backedOff"], true);
    assert!(of_type(&outcome, "auto_retry_start").is_empty());
    let ends = of_type(&outcome, "message_end");
    assert_eq!(ends.last().unwrap()["text"], "answered");
}

/// What aborting a provider's retry wait showed: the assistant messages, the requests.
async fn abort_provider_wait(program: Command) -> (Vec<Value>, usize) {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        error_with_retry_after(429, "120"),
        Script::text("never sent"),
    ]);
    let settings = with_provider(json!({"maxRetries": 1, "maxRetryDelayMs": 300_000}));
    let env = Env::new(&server, 128_000, settings);
    let mut rpc = Rpc::start_program(&env, program, &[]);
    rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    // The first request was answered with its 120 s retry-after: the wait has begun.
    while server.requests().is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    rpc.call("a", json!({"type": "abort"}));
    // Settles long before the 120 s wait (`until` gives up after 30 s).
    settled(&mut rpc);
    // The abort lands in the wait ("Request aborted", pi-ai's abortable sleep) or, when
    // it beats the 429's arrival, before the response ("Request was aborted."): both
    // pis word each case alike, so the case is what is compared.
    let view = retry_view(&rpc.seen)
        .into_iter()
        .filter(|e| e["type"] == "message_end" || e["type"] == "auto_retry_start")
        .map(|mut e| {
            let text = e["errorMessage"].as_str().unwrap_or_default();
            assert!(
                ["Request aborted", "Request was aborted."].contains(&text),
                "{e}"
            );
            e["errorMessage"] = json!("<aborted>");
            e
        })
        .collect();
    drop(rpc);
    (view, server.requests().len())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_ends_a_provider_retry_wait_as_in_16() {
    let our = abort_provider_wait(ours()).await;
    assert_eq!(our.1, 1, "{our:#?}");
    assert_eq!(our.0.len(), 1, "{our:#?}");
    assert_eq!(our.0[0]["stopReason"], "aborted", "{our:#?}");
    if let Some(wrapper) = ts16() {
        let their = abort_provider_wait(ts16_pi(&wrapper)).await;
        assert_eq!(our, their, "ours (left) and pi 1.6.0 (right) differ");
    }
}
