//! Automatic compaction after a run, as pi 1.6.0 does it (`_checkCompaction`): a reply cut
//! short at the output limit is compacted and retried once (a second one fails with the
//! truncation text, not the overflow one), a completed reply over the window is compacted
//! without a retry, the threshold is measured by estimate when the provider streams no
//! usage, and a compaction before a prompt sends only that prompt afterwards. The same RPC
//! sessions through ours and pi 1.6.0 (`PI_TS16`) on one mock; what they did must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script, StopReason};
use support::rpc::{Env, Rpc, read_jsonl, user_texts};
use support::scripts::{context_overflow, usage};
use support::ts16::{ours, ts16, ts16_pi};

/// Two exchanges that compaction can summarize (the newest few tokens are kept).
fn two_exchanges(server: &MockServer) {
    server.push(Script::text("First answer, with some words.").with_full_usage(usage(100, 20)));
    server.push(Script::text("Second answer, with more words.").with_full_usage(usage(200, 30)));
}

/// What a session did: the compaction events, what each provider request was for (the
/// last user text, or `summary` for a summarization call), the session's entry kinds and
/// the last assistant text.
fn observed(env: &Env, server: &MockServer, lines: &[Value]) -> Value {
    let compactions: Vec<Value> = lines
        .iter()
        .filter(|l| l["type"] == "compaction_start" || l["type"] == "compaction_end")
        .map(|l| {
            json!({
                "type": l["type"], "reason": l["reason"], "willRetry": l["willRetry"],
                "aborted": l["aborted"], "errorMessage": l["errorMessage"],
                "summarized": l["result"]["summary"].is_string(),
            })
        })
        .collect();
    let requests: Vec<String> = server
        .requests()
        .iter()
        .map(|r| {
            let texts = user_texts(&r.body);
            let last = texts.last().cloned().unwrap_or_default();
            // Summarization prompts are each pi's own wording.
            if PROMPTS.contains(&last.as_str()) {
                last
            } else {
                "summary".to_owned()
            }
        })
        .collect();
    let file = env.session_files().pop().unwrap();
    let entries: Vec<String> = read_jsonl(&file)
        .iter()
        .skip(1)
        .filter(|e| e["type"] != "model_change" && e["type"] != "thinking_level_change")
        .map(|e| match e["type"].as_str().unwrap_or("?") {
            "message" => e["message"]["role"].as_str().unwrap_or("?").to_owned(),
            other => other.to_owned(),
        })
        .filter(|kind| kind != "system")
        .collect();
    json!({"compactions": compactions, "requests": requests, "entries": entries})
}

/// One scenario: the model's window, settings, and the prompts; with `restart`, pi is
/// started again with `-c` and these settings before the last prompt.
struct Scenario {
    window: u64,
    settings: Value,
    prompts: &'static [&'static str],
    /// The mock model streams no usage (`supportsUsageInStreaming: false`).
    no_usage: bool,
    restart: Option<Value>,
    /// Prepares the work dir before pi starts.
    setup: fn(&Env),
}

impl Scenario {
    fn new(settings: Value) -> Self {
        Self {
            window: 128_000,
            settings,
            prompts: PROMPTS,
            no_usage: false,
            restart: None,
            setup: |_| {},
        }
    }
}

/// Writes the global settings.json as support::rpc::Env does.
fn write_settings(env: &Env, settings: &Value) {
    let mut all = json!({"defaultProvider": "mock", "defaultModel": "mock-model"});
    all.as_object_mut()
        .unwrap()
        .extend(settings.as_object().unwrap().clone());
    std::fs::write(env.agent.join("settings.json"), all.to_string()).unwrap();
}

/// Runs the scenario's prompts on `server` (its scripts pushed already) and returns what
/// the session did.
async fn session(program: Command, server: MockServer, scenario: Scenario) -> Value {
    let env = Env::new(&server, scenario.window, scenario.settings.clone());
    (scenario.setup)(&env);
    if scenario.no_usage {
        let path = env.agent.join("models.json");
        let mut models: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for model in models["providers"]["mock"]["models"]
            .as_array_mut()
            .unwrap()
        {
            model["compat"] = json!({"supportsUsageInStreaming": false});
        }
        std::fs::write(&path, models.to_string()).unwrap();
    }
    tokio::task::spawn_blocking(move || {
        let mut lines = Vec::new();
        let (first, last) = match scenario.restart {
            Some(_) => scenario.prompts.split_at(scenario.prompts.len() - 1),
            None => (scenario.prompts, &[][..]),
        };
        let mut rpc = Rpc::start_program(&env, clone_command(&program), &[]);
        for (n, text) in first.iter().enumerate() {
            rpc.call(&format!("p{n}"), json!({"type": "prompt", "message": text}));
            rpc.event("agent_settled");
        }
        if let Some(settings) = &scenario.restart {
            lines.extend(std::mem::take(&mut rpc.seen));
            rpc.finish();
            write_settings(&env, settings);
            rpc = Rpc::start_program(&env, clone_command(&program), &["-c"]);
            for (n, text) in last.iter().enumerate() {
                rpc.call(&format!("r{n}"), json!({"type": "prompt", "message": text}));
                rpc.event("agent_settled");
            }
        }
        let text = rpc.call("t", json!({"type": "get_last_assistant_text"}));
        lines.extend(std::mem::take(&mut rpc.seen));
        rpc.finish();
        let mut seen = observed(&env, &server, &lines);
        seen["lastText"] = text["data"]["text"].clone();
        seen
    })
    .await
    .unwrap()
}

/// Another command with the same program, arguments and environment.
fn clone_command(program: &Command) -> Command {
    let mut copy = Command::new(program.get_program());
    copy.args(program.get_args());
    for (key, value) in program.get_envs() {
        match value {
            Some(value) => copy.env(key, value),
            None => copy.env_remove(key),
        };
    }
    copy
}

fn settings() -> Value {
    json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 6}})
}

const PROMPTS: &[&str] = &["First question.", "Second question.", "Third question."];

/// Runs `scenario` against a fresh mock set up by `mock` through ours, and through pi
/// 1.6.0 when it is installed (asserting both did the same); returns ours.
async fn ours_and_16<F, Fut>(mock: F, scenario: impl Fn() -> Scenario) -> Value
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = MockServer>,
{
    let seen = session(ours(), mock().await, scenario()).await;
    if let Some(wrapper) = ts16() {
        let theirs = session(ts16_pi(&wrapper), mock().await, scenario()).await;
        assert_eq!(seen, theirs, "ours, then pi 1.6.0");
    }
    seen
}

fn compaction_ends(seen: &Value) -> Vec<Value> {
    seen["compactions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["type"] == "compaction_end")
        .cloned()
        .collect()
}

/// The third reply is cut off long before its output limit: it ran out of context window.
async fn cut_short_mock(again: bool) -> MockServer {
    let server = MockServer::start().await.unwrap();
    two_exchanges(&server);
    server.push(
        Script::text("Cut off mid")
            .with_stop_reason(StopReason::Length)
            .with_full_usage(usage(300, 4)),
    );
    server.push(Script::text("## Goal\nA summary.").with_full_usage(usage(400, 40)));
    server.push(Script::text("## Goal\nThe turn's start.").with_full_usage(usage(300, 10)));
    if again {
        server.push(
            Script::text("Cut off again")
                .with_stop_reason(StopReason::Length)
                .with_full_usage(usage(300, 4)),
        );
    } else {
        server.push(Script::text("The whole third answer.").with_full_usage(usage(150, 20)));
    }
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_cut_short_is_compacted_and_retried_once() {
    let seen = ours_and_16(|| cut_short_mock(false), || Scenario::new(settings())).await;
    assert_eq!(seen["lastText"], "The whole third answer.", "{seen:#}");
    let ends = compaction_ends(&seen);
    assert_eq!(ends.len(), 1, "{seen:#}");
    assert_eq!(ends[0]["reason"], "overflow", "{seen:#}");
    assert_eq!(ends[0]["willRetry"], true, "{seen:#}");
    let requests = seen["requests"].as_array().unwrap();
    assert_eq!(requests.last().unwrap(), "Third question.", "{seen:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_cut_short_reply_fails_as_truncation_not_overflow() {
    let seen = ours_and_16(|| cut_short_mock(true), || Scenario::new(settings())).await;
    let failed = compaction_ends(&seen)
        .into_iter()
        .find(|c| c["errorMessage"].is_string())
        .unwrap_or_else(|| panic!("no failed compaction: {seen:#}"));
    assert_eq!(
        failed["errorMessage"],
        "Truncated response recovery failed after one compact-and-retry attempt.",
        "{seen:#}"
    );
}

/// The third reply completed, but its usage shows a context larger than the window.
async fn completed_overflow_mock() -> MockServer {
    let server = MockServer::start().await.unwrap();
    two_exchanges(&server);
    server.push(Script::text("A complete third answer.").with_full_usage(usage(200_000, 30)));
    server.push(Script::text("## Goal\nA summary.").with_full_usage(usage(400, 40)));
    server.push(Script::text("## Goal\nThe turn's start.").with_full_usage(usage(300, 10)));
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_completed_reply_over_the_window_is_compacted_without_a_retry() {
    let seen = ours_and_16(completed_overflow_mock, || Scenario::new(settings())).await;
    assert_eq!(seen["lastText"], "A complete third answer.", "{seen:#}");
    let ends = compaction_ends(&seen);
    assert_eq!(ends.len(), 1, "{seen:#}");
    assert_eq!(ends[0]["willRetry"], false, "{seen:#}");
    assert_eq!(ends[0]["summarized"], true, "{seen:#}");
    // Nothing after the summaries: the completed answer is not asked for again.
    let requests = seen["requests"].as_array().unwrap();
    assert_eq!(requests.last().unwrap(), "summary", "{seen:#}");
}

/// Replies without usage; the second is large enough that its estimate crosses the
/// threshold of a small window.
async fn no_usage_mock() -> MockServer {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer, with some words."));
    server.push(Script::filler(6_000));
    server.push(Script::text("## Goal\nA summary."));
    server.push(Script::text("## Goal\nThe turn's start."));
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_threshold_is_estimated_when_the_provider_streams_no_usage() {
    let scenario = || Scenario {
        window: 4_000,
        settings: json!({"retry": {"enabled": false},
                         "compaction": {"keepRecentTokens": 6, "reserveTokens": 2_000}}),
        prompts: &PROMPTS[..2],
        no_usage: true,
        restart: None,
        setup: |_| {},
    };
    let seen = ours_and_16(no_usage_mock, scenario).await;
    let ends = compaction_ends(&seen);
    assert_eq!(ends.len(), 1, "{seen:#}");
    assert_eq!(ends[0]["reason"], "threshold", "{seen:#}");
    assert_eq!(ends[0]["summarized"], true, "{seen:#}");
}

/// Two exchanges, the second's usage over the window, while compaction is off.
async fn over_the_window_mock() -> MockServer {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer, with some words.").with_full_usage(usage(100, 20)));
    server.push(Script::text("Second answer, too long.").with_full_usage(usage(200_000, 30)));
    server.push(Script::text("## Goal\nA summary.").with_full_usage(usage(400, 40)));
    server.push(Script::text("## Goal\nThe turn's start.").with_full_usage(usage(300, 10)));
    server.push(Script::text("The third answer.").with_full_usage(usage(150, 20)));
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_before_a_prompt_then_sends_only_that_prompt() {
    let scenario = || Scenario {
        restart: Some(settings()),
        ..Scenario::new(json!({"retry": {"enabled": false}, "compaction": {"enabled": false}}))
    };
    let seen = ours_and_16(over_the_window_mock, scenario).await;
    let ends = compaction_ends(&seen);
    assert_eq!(ends.len(), 1, "{seen:#}");
    assert_eq!(ends[0]["willRetry"], false, "{seen:#}");
    let requests: Vec<&str> = seen["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap())
        .collect();
    let first_summary = requests.iter().position(|r| *r == "summary").unwrap();
    // After the summaries, one request: the new prompt's.
    let after: Vec<&&str> = requests[first_summary..]
        .iter()
        .filter(|r| **r != "summary")
        .collect();
    assert_eq!(after, [&"Third question."], "{seen:#}");
    assert_eq!(seen["lastText"], "The third answer.", "{seen:#}");
}

/// The third request fails: the context is too long.
async fn overflow_error_mock() -> MockServer {
    let server = MockServer::start().await.unwrap();
    two_exchanges(&server);
    server.push(context_overflow());
    server.push(Script::text("## Goal\nA summary.").with_full_usage(usage(400, 40)));
    server.push(Script::text("## Goal\nThe turn's start.").with_full_usage(usage(300, 10)));
    server.push(Script::text("The recovered answer.").with_full_usage(usage(150, 20)));
    server
}

/// The first request fails: the context is too long.
async fn first_overflow_mock() -> MockServer {
    let server = MockServer::start().await.unwrap();
    server.push(context_overflow());
    server.push(Script::text("## Goal\nThe turn's start.").with_full_usage(usage(300, 10)));
    server.push(Script::text("The recovered answer.").with_full_usage(usage(150, 20)));
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_on_the_first_turn_as_in_16() {
    let scenario = || Scenario {
        prompts: &PROMPTS[..1],
        ..Scenario::new(settings())
    };
    // Keeping little, the system prompt alone passes the budget: the first turn is the
    // prefix of a split turn, summarized, and the request retried.
    let seen = ours_and_16(first_overflow_mock, scenario).await;
    assert_eq!(compaction_ends(&seen).len(), 1, "{seen:#}");
    assert_eq!(seen["lastText"], "The recovered answer.", "{seen:#}");
    // Keeping the default 20000 tokens, there is nothing to summarize: no compaction
    // starts and nothing is retried.
    let keep_all = || Scenario {
        prompts: &PROMPTS[..1],
        ..Scenario::new(json!({"retry": {"enabled": false}}))
    };
    let seen = ours_and_16(first_overflow_mock, keep_all).await;
    assert!(compaction_ends(&seen).is_empty(), "{seen:#}");
    assert_eq!(seen["requests"], json!(["First question."]), "{seen:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_overflow_error_is_left_out_compacted_and_retried() {
    let seen = ours_and_16(overflow_error_mock, || Scenario::new(settings())).await;
    assert_eq!(seen["lastText"], "The recovered answer.", "{seen:#}");
    let entries = seen["entries"].as_array().unwrap();
    // The failed attempt stays in the file, left out of the context by an edit.
    assert!(entries.iter().any(|e| e == "context_edit"), "{seen:#}");
}

/// The second prompt's reply reads a file whose result alone passes the threshold.
async fn large_tool_result_mock() -> MockServer {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer, with some words.").with_full_usage(usage(100, 20)));
    server.push(
        Script::tool_call("read", json!({"path": "big.txt"})).with_full_usage(usage(200, 20)),
    );
    server.push(Script::text("## Goal\nA summary.").with_full_usage(usage(400, 40)));
    server.push(Script::text("## Goal\nThe turn's start.").with_full_usage(usage(300, 10)));
    server.push(Script::text("Read it.").with_full_usage(usage(300, 10)));
    server
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_tool_result_is_compacted_before_the_next_request() {
    let scenario = || Scenario {
        window: 20_000,
        settings: json!({"retry": {"enabled": false},
                         "compaction": {"keepRecentTokens": 6, "reserveTokens": 13_000}}),
        prompts: &PROMPTS[..2],
        setup: |env| {
            let text: String = (0..800)
                .map(|n| format!("line {n:04} of the big file, with words\n"))
                .collect();
            std::fs::write(env.work.join("big.txt"), text).unwrap();
        },
        ..Scenario::new(json!({}))
    };
    let seen = ours_and_16(large_tool_result_mock, scenario).await;
    let ends = compaction_ends(&seen);
    assert_eq!(ends.len(), 1, "{seen:#}");
    assert_eq!(ends[0]["reason"], "threshold", "{seen:#}");
    assert_eq!(ends[0]["willRetry"], false, "{seen:#}");
    // The compaction comes between the tool result and the run's next request.
    let entries: Vec<&str> = seen["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e.as_str().unwrap())
        .collect();
    let at = entries.iter().position(|e| *e == "compaction").unwrap();
    assert_eq!(entries[at - 1], "toolResult", "{seen:#}");
    assert_eq!(entries[at + 1..], ["assistant"], "{seen:#}");
    assert_eq!(seen["lastText"], "Read it.", "{seen:#}");
}
