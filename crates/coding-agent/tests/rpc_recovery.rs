//! Auto-retry and compaction through `pi --mode rpc` against mock-llm with faults.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, of_type, read_jsonl, user_texts};
use support::scripts::context_overflow;

/// Fast retries, and no retries inside a request, so every failure reaches pi's auto-retry.
fn retry_settings(base_delay_ms: u64) -> Value {
    json!({"retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": base_delay_ms,
                     "provider": {"maxRetries": 0}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_rate_limits_then_success_retry_twice() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::http_error(429),
        Script::http_error(429),
        Script::text("third time lucky"),
    ]);
    let env = Env::new(&server, 128_000, retry_settings(20));
    let mut rpc = Rpc::start(&env, &[]);
    let response = rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    assert_eq!(response["success"], true);
    let lines = rpc.until("retry end", |l| l["type"] == "auto_retry_end");
    let starts = of_type(&lines, "auto_retry_start");
    assert_eq!(starts.len(), 2, "{lines:#?}");
    assert_eq!(starts[0]["attempt"], 1);
    assert_eq!(starts[0]["delayMs"], 20);
    assert_eq!(starts[1]["attempt"], 2);
    assert_eq!(starts[1]["delayMs"], 40);
    assert_eq!(starts[0]["maxAttempts"], 3);
    assert!(starts[0]["errorMessage"].as_str().unwrap().contains("429"));
    let end = lines.last().unwrap();
    assert_eq!(end["success"], true);
    assert_eq!(end["attempt"], 2);
    rpc.event("agent_end");
    let messages = rpc.call("m", json!({"type": "get_messages"}));
    let messages = messages["data"]["messages"].as_array().unwrap();
    // The failed attempts left the context (the system message, the prompt and the reply
    // are left); the session file keeps them.
    assert_eq!(messages.len(), 3);
    assert_eq!(messages[2]["content"][0]["text"], "third time lucky");
    let file = env.session_files().pop().unwrap();
    let errors = read_jsonl(&file)
        .iter()
        .filter(|l| l["message"]["stopReason"] == "error")
        .count();
    assert_eq!(errors, 2);
    assert_eq!(rpc.finish(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exhausted_retries_end_with_one_clear_error() {
    let server = MockServer::start().await.unwrap();
    server.push_all((0..4).map(|_| Script::http_error(503)));
    let env = Env::new(&server, 128_000, retry_settings(10));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    let lines = rpc.until("retry end", |l| l["type"] == "auto_retry_end");
    assert_eq!(of_type(&lines, "auto_retry_start").len(), 3);
    let end = lines.last().unwrap();
    assert_eq!(end["success"], false);
    assert_eq!(end["attempt"], 3);
    assert!(end["finalError"].as_str().unwrap().contains("503"), "{end}");
    assert_eq!(server.requests().len(), 4);
    let state = rpc.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["isStreaming"], false);
    let text = rpc.call("t", json!({"type": "get_messages"}));
    let messages = text["data"]["messages"].as_array().unwrap();
    let failures: Vec<_> = messages
        .iter()
        .filter(|m| m["stopReason"] == "error")
        .collect();
    assert_eq!(failures.len(), 1, "only the last failure stays in context");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_during_a_retry_sleep_stops_at_once() {
    let server = MockServer::start().await.unwrap();
    server.push(Script::http_error(429));
    let env = Env::new(&server, 128_000, retry_settings(60_000));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    rpc.event("auto_retry_start");
    let asked = Instant::now();
    rpc.send(json!({"type": "abort", "id": "a"}));
    let lines = rpc.until("abort response", |l| l["id"] == "a");
    assert!(asked.elapsed() < Duration::from_secs(10));
    let end = of_type(&lines, "auto_retry_end");
    assert_eq!(end.len(), 1, "{lines:#?}");
    assert_eq!(end[0]["success"], false);
    assert_eq!(end[0]["finalError"], "Retry cancelled");
    assert_eq!(server.requests().len(), 1, "no retry was sent");
    let state = rpc.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["isStreaming"], false);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_overflow_compacts_and_retries() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::text("first answer").with_usage(100, 10),
        Script::text("second answer").with_usage(200, 10),
        context_overflow(),
        Script::text("SUMMARY OF THE EARLY WORK"),
        Script::text("SUMMARY OF THE TURN'S START"),
        Script::text("recovered answer"),
    ]);
    let env = Env::new(
        &server,
        4000,
        json!({"compaction": {"keepRecentTokens": 1, "reserveTokens": 100},
               "retry": {"provider": {"maxRetries": 0}}}),
    );
    let mut rpc = Rpc::start(&env, &[]);
    for (id, text) in [("p1", "first question"), ("p2", "second question")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.event("agent_end");
    }
    rpc.call("p3", json!({"type": "prompt", "message": "third question"}));
    let lines = rpc.until("recovered", |l| {
        l["type"] == "agent_end"
            && l["messages"]
                .as_array()
                .is_some_and(|m| m.iter().any(|m| m["stopReason"] == "stop"))
    });
    let start = of_type(&lines, "compaction_start");
    assert_eq!(start.len(), 1, "{lines:#?}");
    assert_eq!(start[0]["reason"], "overflow");
    let end = of_type(&lines, "compaction_end");
    assert_eq!(end[0]["willRetry"], true);
    assert_eq!(end[0]["aborted"], false);
    assert!(
        end[0]["result"]["summary"]
            .as_str()
            .unwrap()
            .contains("SUMMARY OF THE EARLY WORK")
    );
    let requests = server.requests();
    // The failed attempt is left out, so the cut splits the second turn: a history
    // summary and a turn-prefix summary, then the retry.
    assert_eq!(requests.len(), 6);
    // The retried request holds the summary and what was kept, not the early turns.
    let retried = user_texts(&requests[5].body);
    assert!(
        retried[0].contains("SUMMARY OF THE EARLY WORK"),
        "{retried:?}"
    );
    assert!(
        !retried.iter().any(|t| t == "first question"),
        "{retried:?}"
    );
    // Keeping one token, even the third question went into the turn-prefix summary (as
    // pi 1.6.0 cuts: auto_compaction_16.rs compares).
    assert!(
        retried[0].contains("SUMMARY OF THE TURN'S START"),
        "{retried:?}"
    );
    let finals = rpc.call("t", json!({"type": "get_last_assistant_text"}));
    assert_eq!(finals["data"]["text"], "recovered answer");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_on_the_first_turn_has_nothing_to_compact() {
    // As in pi 1.6.0 (auto_compaction_16.rs compares): keeping more than the first turn
    // holds, there is nothing to summarize, so no compaction starts and the request is not
    // retried.
    let server = MockServer::start().await.unwrap();
    server.push_all([context_overflow(), Script::text("never asked for")]);
    let env = Env::new(&server, 4000, json!({"compaction": {"reserveTokens": 100}}));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call(
        "p",
        json!({"type": "prompt", "message": "a first question"}),
    );
    let lines = rpc.event("agent_settled");
    assert!(of_type(&lines, "compaction_start").is_empty(), "{lines:#?}");
    assert!(of_type(&lines, "compaction_end").is_empty(), "{lines:#?}");
    assert_eq!(server.requests().len(), 1);
    let compact = rpc.call("c", json!({"type": "compact"}));
    assert_eq!(compact["error"], "Nothing to compact (session too small)");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_threshold_compaction_writes_an_entry_and_trims_the_next_request() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::text("first answer").with_usage(100, 10),
        Script::text("second answer").with_usage(3500, 10),
        Script::text("THRESHOLD SUMMARY"),
        Script::text("after compaction"),
    ]);
    let env = Env::new(
        &server,
        4000,
        json!({"compaction": {"reserveTokens": 1000, "keepRecentTokens": 1}}),
    );
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("p1", json!({"type": "prompt", "message": "first question"}));
    rpc.event("agent_end");
    rpc.call(
        "p2",
        json!({"type": "prompt", "message": "second question"}),
    );
    let lines = rpc.event("compaction_end");
    let start = of_type(&lines, "compaction_start");
    assert_eq!(start[0]["reason"], "threshold");
    let end = lines.last().unwrap();
    assert_eq!(end["willRetry"], false);
    let first_kept = end["result"]["firstKeptEntryId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(end["result"]["tokensBefore"], 3510);

    let file = env.session_files().pop().unwrap();
    let lines = read_jsonl(&file);
    let compaction = lines.iter().find(|l| l["type"] == "compaction").unwrap();
    assert_eq!(compaction["firstKeptEntryId"], first_kept.as_str());
    assert!(lines.iter().any(|l| l["id"] == first_kept.as_str()));
    assert!(
        compaction["summary"]
            .as_str()
            .unwrap()
            .contains("THRESHOLD SUMMARY")
    );
    assert!(compaction["details"]["readFiles"].is_array());

    rpc.call("p3", json!({"type": "prompt", "message": "third question"}));
    rpc.event("agent_end");
    let requests = server.requests();
    let last = user_texts(&requests.last().unwrap().body);
    assert!(last[0].contains("THRESHOLD SUMMARY"), "{last:?}");
    assert!(!last.iter().any(|t| t == "first question"), "{last:?}");
    assert_eq!(last.last().unwrap(), "third question");
    let stats = rpc.call("st", json!({"type": "get_session_stats"}));
    assert!(stats["data"]["contextUsage"]["tokens"].is_number());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn manual_compaction_with_instructions() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::text("first answer"),
        Script::text("second answer"),
        Script::text("MANUAL SUMMARY"),
    ]);
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let mut rpc = Rpc::start(&env, &[]);
    for (id, text) in [("p1", "first question"), ("p2", "second question")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.event("agent_end");
    }
    let response = rpc.call(
        "c",
        json!({"type": "compact", "customInstructions": "Focus on the questions"}),
    );
    assert_eq!(response["success"], true, "{response}");
    assert!(
        response["data"]["summary"]
            .as_str()
            .unwrap()
            .contains("MANUAL SUMMARY")
    );
    // The summary calls (history, plus the split turn's prefix) come after the two turns.
    let requests = server.requests();
    assert!(
        requests[2..]
            .iter()
            .any(|r| r.body.to_string().contains("Focus on the questions"))
    );
    let again = rpc.call("c2", json!({"type": "compact"}));
    assert_eq!(again["success"], false);
    assert_eq!(again["error"], "Already compacted");
    let state = rpc.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["isCompacting"], false);
}
