//! Reasoning tokens a Chat Completions server reports at the top of its usage object
//! (`usage.reasoning_tokens`, as GitHub Copilot does) rather than under
//! `completion_tokens_details` (pi 1.6.0, #12110: Copilot usage always reported 0 reasoning
//! tokens). Over RPC against mock-llm, ours and pi 1.6.0 (`PI_TS16`) must count the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

fn usage_run(wrapper: &Option<PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let top_level = json!({"reasoning_tokens": 5});
    let nested = json!({"completion_tokens_details": {"reasoning_tokens": 3}});
    server.push_all([
        Script::text("Top level.")
            .with_usage(10, 7)
            .with_usage_extra(top_level.as_object().unwrap().clone()),
        Script::text("Nested.")
            .with_usage(10, 7)
            .with_usage_extra(nested.as_object().unwrap().clone()),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let mut rpc = Rpc::start_program(&env, program(wrapper), &["--no-session"]);
    let mut usages = Vec::new();
    for (id, text) in [("one", "first"), ("two", "second")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        let events = rpc.event("agent_end");
        let usage = events
            .iter()
            .rev()
            .find(|e| e["type"] == "message_end" && e["message"]["role"] == "assistant")
            .map(|e| e["message"]["usage"].clone())
            .unwrap();
        usages.push(json!({
            "input": usage["input"],
            "output": usage["output"],
            "reasoning": usage["reasoning"],
        }));
    }
    json!(usages)
}

#[test]
fn reasoning_tokens_at_the_top_of_the_usage_are_counted_as_16() {
    let runs: Vec<(&str, Value)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, usage_run(&wrapper)))
        .collect();
    let ours = &runs[0].1;
    assert_eq!(
        ours,
        &json!([
            {"input": 10, "output": 7, "reasoning": 5},
            {"input": 10, "output": 7, "reasoning": 3},
        ]),
    );
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}
