//! The effort a Claude reply keeps with mid-conversation effort (`compat.supportsMidConvoEffort`,
//! pi 0.85): every reply of the session, answered or failed once sent, records the effort
//! its request ran at (`providerThinkingLevel`), which later requests replay before it.
//! Ours and pi 1.6.0 (`PI_TS16`) run the same print-mode prompts on the mock's Anthropic
//! endpoint, and the replies they keep must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, read_jsonl};
use support::ts16::{pis, program, run};

/// A Claude model with adaptive thinking and mid-conversation effort.
fn models(server: &MockServer) -> Value {
    json!({"providers": {"anth": {
        "baseUrl": server.anthropic_base_url(), "api": "anthropic-messages", "apiKey": "k",
        "compat": {"supportsMidConvoEffort": true, "forceAdaptiveThinking": true},
        "models": [{"id": "claude-test", "name": "Claude Test", "reasoning": true,
                    "contextWindow": 200000, "maxTokens": 8192}]}}})
}

/// The stop reason and kept effort of each reply of a session whose first prompt (at
/// `medium`) is refused with a 400 and whose second (at `low`) is answered.
async fn replies(wrapper: &Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("").with_fault(Fault::http_error(400)));
    server.push(Script::text("Answered."));
    let env = Env::new(
        &server,
        200_000,
        json!({"retry": {"enabled": false}, "defaultProvider": "anth",
               "defaultModel": "claude-test"}),
    );
    std::fs::write(env.agent.join("models.json"), models(&server).to_string()).unwrap();
    tokio::task::block_in_place(|| {
        run(
            &env,
            program(wrapper),
            &["--thinking", "medium", "-p", "First?"],
        );
        run(
            &env,
            program(wrapper),
            &["-c", "--thinking", "low", "-p", "Second?"],
        );
    });
    let mut kept = Vec::new();
    for file in env.session_files() {
        for line in read_jsonl(&file) {
            let m = &line["message"];
            if m["role"] == "assistant" {
                kept.push(json!({"stopReason": m["stopReason"],
                                 "providerThinkingLevel": m["providerThinkingLevel"]}));
            }
        }
    }
    json!(kept)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sent_reply_keeps_its_effort_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, replies(&wrapper).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
    assert_eq!(
        seen[0].1,
        json!([{"stopReason": "error", "providerThinkingLevel": "medium"},
               {"stopReason": "stop", "providerThinkingLevel": "low"}])
    );
}
