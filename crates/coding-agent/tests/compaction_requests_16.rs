//! A compaction's summary request as pi 1.6.0 sends it (pi 0.82.0): prompt caching off (no
//! `cache_control` markers, where the session's own requests carry them) and a routing
//! session id of its own, so a one-off summary neither writes a cache entry nor moves the
//! session's. Our `pi` and pi 1.6.0 (`PI_TS16`) prompt twice and compact over RPC against
//! the mock's Anthropic endpoint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

async fn compaction_request(wrapper: &Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Answer."));
    server.push(Script::text("Second answer."));
    server.push(Script::text("## Goal\nA summary."));
    let env = Env::new(
        &server,
        200_000,
        json!({"retry": {"enabled": false}, "defaultProvider": "anth",
               "defaultModel": "claude-test", "defaultThinkingLevel": "off",
               "compaction": {"keepRecentTokens": 1}}),
    );
    let models = json!({"providers": {"anth": {
        "baseUrl": server.anthropic_base_url(), "api": "anthropic-messages", "apiKey": "k",
        "models": [{"id": "claude-test", "name": "Claude Test", "contextWindow": 200000,
                    "maxTokens": 8192}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let command = program(wrapper);
    tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &[]);
        for (id, text) in [("p1", "Hello there."), ("p2", "And again.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.until("the run settled", |l| l["type"] == "agent_settled");
        }
        let compacted = rpc.call("c", json!({"type": "compact"}));
        assert_eq!(compacted["success"], true, "{compacted}");
        rpc.finish();
    });
    let requests = server.requests();
    let cached = |i: usize| requests[i].body.to_string().contains("cache_control");
    // The session's two requests, then the summary calls (two: the cut splits a turn).
    let summaries = 2..requests.len();
    json!({"sessionCached": cached(1), "summaryCalls": summaries.len(),
           "summaryCached": summaries.clone().any(cached),
           "summaryHasTools": summaries.clone().any(|i| requests[i].body.get("tools").is_some())})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn summary_requests_turn_prompt_caching_off_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, compaction_request(&wrapper).await));
    }
    assert_eq!(
        seen[0].1,
        json!({"sessionCached": true, "summaryCalls": 2, "summaryCached": false,
               "summaryHasTools": false})
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
}
