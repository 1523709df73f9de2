//! Compaction and branch summaries retry transient provider failures as agent turns do
//! (pi 0.81.1, pi-ai's retryAssistantCall): the session's `retry` settings, and
//! `summarization_retry_*` events over RPC. Compared with pi 1.6.0 event by event when
//! `PI_TS16` names it; without it only ours runs, against the expectations written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

/// The mock's 503 as pi 1.6.0 words it.
const OVERLOADED: &str = r#"503: {"message":"The server is overloaded or not ready yet.","type":"server_error","param":null,"code":null}"#;

/// What a manual compaction showed: its summarization and compaction events, the
/// `compact` answer's summary, and how many requests the model got.
#[derive(Debug, PartialEq)]
struct Outcome {
    events: Vec<Value>,
    summary: Value,
    requests: usize,
}

/// A prompt, then `compact` whose summary request fails `failures` times with a 503.
async fn compact_with_failures(program: Command, failures: usize) -> Outcome {
    compact_failing_with(program, failures, || Script::http_error(503)).await
}

/// A prompt, then `compact` whose summary request fails `failures` times with `failure`.
async fn compact_failing_with(
    program: Command,
    failures: usize,
    failure: fn() -> Script,
) -> Outcome {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First."));
    server.push(Script::text("Second."));
    for _ in 0..failures {
        server.push(failure());
    }
    server.push(Script::text("## Goal\nA summary."));
    let env = Env::new(
        &server,
        128_000,
        // Keeping 6 tokens cuts at the second question (about 2 + 5 tokens): one summary
        // request.
        json!({"retry": {"enabled": true, "maxRetries": 2, "baseDelayMs": 50},
               "compaction": {"keepRecentTokens": 6}}),
    );
    let mut rpc = Rpc::start_program(&env, program, &[]);
    for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.event("agent_settled");
    }
    let answer = rpc.call("c", json!({"type": "compact"}));
    let events = rpc
        .seen
        .iter()
        .filter(|l| {
            l["type"]
                .as_str()
                .is_some_and(|t| t.starts_with("summarization_retry") || t == "compaction_start")
        })
        .cloned()
        .collect();
    drop(rpc);
    let summary = answer["data"]["summary"].clone();
    Outcome {
        events,
        summary: if answer["success"] == json!(true) {
            summary.as_str().map_or(Value::Null, |s| {
                Value::from(s.lines().take(2).collect::<Vec<_>>().join("\n"))
            })
        } else {
            answer["error"].clone()
        },
        requests: server.requests().len(),
    }
}

fn expected(failures: usize) -> Outcome {
    let mut events = vec![json!({"type": "compaction_start", "reason": "manual"})];
    for attempt in 1..=failures {
        events.push(
            json!({"type": "summarization_retry_scheduled", "attempt": attempt,
            "maxAttempts": 2, "delayMs": 50 * (1u64 << (attempt - 1)), "errorMessage": OVERLOADED}),
        );
        events.push(json!({"type": "summarization_retry_attempt_start",
            "source": "compaction", "reason": "manual"}));
    }
    if failures > 0 {
        events.push(json!({"type": "summarization_retry_finished"}));
    }
    Outcome {
        events,
        summary: Value::from("## Goal\nA summary."),
        requests: 3 + failures,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_summary_retries_a_transient_failure_as_pi_16() {
    for failures in [0, 2] {
        let ours_outcome = compact_with_failures(ours(), failures).await;
        assert_eq!(ours_outcome, expected(failures), "{failures} failures");
        if let Some(wrapper) = ts16() {
            let theirs = compact_with_failures(ts16_pi(&wrapper), failures).await;
            assert_eq!(
                ours_outcome, theirs,
                "{failures} failures: ours vs pi 1.6.0"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_summary_retries_a_service_unavailable_error_as_pi_16() {
    // pi 1.3.0: "The service is temporarily unavailable" made the first compaction fail.
    const TEXT: &str = "The service is temporarily unavailable";
    let failure = || {
        Script::default().with_fault(Fault::StreamError {
            after_events: 0,
            message: Some(TEXT.into()),
        })
    };
    let ours_outcome = compact_failing_with(ours(), 1, failure).await;
    let scheduled: Vec<&Value> = ours_outcome
        .events
        .iter()
        .filter(|e| e["type"] == "summarization_retry_scheduled")
        .collect();
    assert_eq!(scheduled.len(), 1, "{ours_outcome:#?}");
    assert!(
        scheduled[0]["errorMessage"]
            .as_str()
            .unwrap()
            .contains(TEXT),
        "{ours_outcome:#?}"
    );
    assert_eq!(ours_outcome.summary, Value::from("## Goal\nA summary."));
    assert_eq!(ours_outcome.requests, 4);
    if let Some(wrapper) = ts16() {
        let theirs = compact_failing_with(ts16_pi(&wrapper), 1, failure).await;
        assert_eq!(ours_outcome, theirs, "ours vs pi 1.6.0");
    }
}
