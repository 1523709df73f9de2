//! Replies cut off at the output token limit, as pi 1.6.0 handles them. Tool calls of such a
//! reply are not run (their arguments may be truncated) but answered with an error asking
//! for the call again, and the run goes on. A final answer that used its whole output
//! budget is printed, with a warning on stderr and exit 1; one cut short before that ran
//! out of context window: it is left out of the context (a `context_edit`) for an overflow
//! recovery, so print mode has no answer to print. The same runs through ours and pi 1.6.0
//! (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script, ScriptUsage, StopReason};
use support::rpc::{Env, read_jsonl};
use support::ts16::{ours, run, ts16, ts16_pi};

fn output(tokens: u64) -> ScriptUsage {
    ScriptUsage {
        input: 50,
        output: tokens,
        cache_read: 0,
        cache_write: 0,
        reasoning: 0,
    }
}

/// What a print run showed: stdout, stderr's last line, the exit code, whether the file the
/// cut-off call would write exists, the tool results of the second request, and the
/// session's entry kinds after the first user message. Each reply reports `output_tokens`.
async fn print_run(program: Command, output_tokens: u64) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(
        Script::tool_call("write", json!({"path": "cut.txt", "content": "half"}))
            .with_stop_reason(StopReason::Length)
            .with_full_usage(output(output_tokens)),
    );
    server.push(
        Script::text("A partial answ")
            .with_stop_reason(StopReason::Length)
            .with_full_usage(output(output_tokens)),
    );
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let result = run(&env, program, &["-p", "Write the file."]);
    let requests = server.requests();
    let tool_results: Vec<Value> = requests
        .get(1)
        .map(|r| {
            r.body["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] == "tool")
                .map(|m| m["content"].clone())
                .collect()
        })
        .unwrap_or_default();
    let entries: Vec<String> = env
        .session_files()
        .first()
        .map(|file| {
            read_jsonl(file)
                .iter()
                .skip_while(|e| e["message"]["role"] != "user")
                .map(|e| match e["type"].as_str().unwrap_or("?") {
                    "message" => e["message"]["role"].as_str().unwrap_or("?").to_owned(),
                    other => other.to_owned(),
                })
                .collect()
        })
        .unwrap_or_default();
    let stderr = String::from_utf8_lossy(&result.stderr);
    json!({
        "stdout": String::from_utf8_lossy(&result.stdout),
        "stderr": stderr.lines().last().unwrap_or(""),
        "exit": result.status.code(),
        "written": env.work.join("cut.txt").exists(),
        "requests": requests.len(),
        "toolResults": tool_results,
        "entries": entries,
    })
}

/// The mock model's output cap (support::rpc::Env's models.json).
const MAX_TOKENS: u64 = 16_384;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_used_its_whole_budget_is_printed_with_a_warning() {
    let ours = print_run(ours(), MAX_TOKENS).await;
    assert_eq!(ours["written"], false, "{ours:#}");
    assert_eq!(ours["requests"], 2, "{ours:#}");
    assert_eq!(ours["stdout"], "A partial answ\n", "{ours:#}");
    assert_eq!(
        ours["stderr"], "Response was truncated: the model reached its output token limit.",
        "{ours:#}"
    );
    assert_eq!(ours["exit"], 1, "{ours:#}");
    assert!(
        ours["toolResults"][0]
            .to_string()
            .contains("was not executed: the response hit the output token limit"),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = print_run(ts16_pi(&wrapper), MAX_TOKENS).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_cut_short_leaves_the_context_for_recovery() {
    let ours = print_run(ours(), 4).await;
    assert_eq!(ours["stdout"], "", "{ours:#}");
    assert_eq!(ours["exit"], 0, "{ours:#}");
    assert_eq!(
        ours["entries"],
        json!([
            "user",
            "assistant",
            "toolResult",
            "assistant",
            "context_edit"
        ]),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = print_run(ts16_pi(&wrapper), 4).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}

/// The output cap one `-p` prompt of `prompt_chars` characters asks for from a model whose
/// output limit equals its context `window`. No tools and a one-line system prompt, so both
/// pis estimate the same input.
async fn fitted_cap(program: Command, window: u64, prompt_chars: usize) -> u64 {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Fitted."));
    let env = Env::new(&server, window, json!({"retry": {"enabled": false}}));
    let models = json!({"providers": {"mock": {"baseUrl": server.openai_base_url(),
        "api": "openai-completions", "apiKey": "mock-key", "models": [{"id": "mock-model",
        "name": "Mock Model", "contextWindow": window, "maxTokens": window}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let prompt = "word ".repeat(prompt_chars / 5);
    let args = [
        "--no-tools",
        "--no-context-files",
        "--system-prompt",
        "You answer briefly.",
        "-p",
        &prompt,
    ];
    let result = run(&env, program, &args);
    assert!(result.status.success(), "{result:?}");
    let body = &server.requests()[0].body;
    body.get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(Value::as_u64)
        .unwrap_or_else(|| panic!("no output cap in {body}"))
}

/// pi 0.80.3, 1.1.0 and 1.5.1: the output cap is fitted into the window left after the input
/// (estimated at 3.5 characters a token), less a margin of 15% of the input (at least 4,096
/// tokens) that is dropped when it would leave less than 32,768 tokens of output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_output_cap_is_fitted_into_the_window_left_as_in_16() {
    // 120,000 characters: about 34,300 tokens of input, a 5,150-token margin.
    for (window, low, high) in [(80_000, 40_000, 41_000), (72_000, 32_768, 32_768)] {
        let ours = fitted_cap(ours(), window, 120_000).await;
        assert!((low..=high).contains(&ours), "window {window}: {ours}");
        if let Some(wrapper) = ts16() {
            let theirs = fitted_cap(ts16_pi(&wrapper), window, 120_000).await;
            assert_eq!(
                ours, theirs,
                "window {window}: ours (left), pi 1.6.0 (right)"
            );
        }
    }
}

/// The output cap of the first request after a manual compaction. The kept reply reported
/// `stale_input` tokens of input, measured on the context before the compaction; the model's
/// output limit equals its `window`.
async fn cap_after_compaction(program: Command, window: u64, stale_input: u64) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer, with some words.").with_full_usage(output(20)));
    server.push(Script::text("Ok.").with_full_usage(ScriptUsage {
        input: stale_input,
        ..output(4)
    }));
    server.push(Script::text("## Goal\nA summary."));
    server.push(Script::text("Third answer."));
    let env = Env::new(
        &server,
        window,
        json!({"retry": {"enabled": false},
               "compaction": {"enabled": false, "keepRecentTokens": 6}}),
    );
    let models = json!({"providers": {"mock": {"baseUrl": server.openai_base_url(),
        "api": "openai-completions", "apiKey": "mock-key", "models": [{"id": "mock-model",
        "name": "Mock Model", "contextWindow": window, "maxTokens": window}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let args = [
        "--no-tools",
        "--no-context-files",
        "--system-prompt",
        "You answer briefly.",
    ];
    let compacted = tokio::task::spawn_blocking(move || {
        let mut rpc = support::rpc::Rpc::start_program(&env, program, &args);
        for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.event("agent_settled");
        }
        let compacted = rpc.call("c", json!({"type": "compact"}));
        rpc.call(
            "p3",
            json!({"type": "prompt", "message": "Third question."}),
        );
        rpc.event("agent_settled");
        rpc.finish();
        compacted["success"].clone()
    })
    .await
    .unwrap();
    let requests = server.requests();
    let caps: Vec<Value> = requests
        .iter()
        .map(|r| {
            r.body
                .get("max_completion_tokens")
                .or_else(|| r.body.get("max_tokens"))
                .cloned()
                .unwrap_or(Value::Null)
        })
        .collect();
    // The reply with the stale usage is still in the context (kept by the compaction).
    let kept = requests.last().is_some_and(|r| {
        r.body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .any(|m| m["role"] == "assistant" && m["content"].to_string().contains("Ok."))
    });
    json!({"compacted": compacted, "requests": requests.len(), "lastCap": caps.last(),
           "keptStale": kept})
}

/// pi 0.80.6: after a compaction, the output cap does not count the usage a kept reply
/// reported before it (that context is gone); ours and pi 1.6.0 ask for the same cap.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_cap_after_a_compaction_ignores_usage_from_before_it_as_16() {
    let ours = cap_after_compaction(ours(), 80_000, 60_000).await;
    assert_eq!(ours["compacted"], true, "{ours}");
    assert_eq!(ours["requests"], 4, "{ours}");
    assert_eq!(ours["keptStale"], true, "{ours}");
    // Counting the stale 60,000 tokens would leave under 20,000 for the output.
    let cap = ours["lastCap"].as_u64().unwrap();
    assert!(cap > 60_000, "{ours}");
    if let Some(wrapper) = ts16() {
        let theirs = cap_after_compaction(ts16_pi(&wrapper), 80_000, 60_000).await;
        assert_eq!(ours, theirs, "ours (left), pi 1.6.0 (right)");
    }
}
