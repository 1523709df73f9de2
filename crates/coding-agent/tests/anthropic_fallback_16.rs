//! Anthropic's server-side refusal fallback as pi 1.6.0 records it: a reply from another
//! model than the one asked for names it (`responseModel`) and is priced with the returned
//! model's cost when `compat.allowedFallbackModels` lists it for the provider (pi 0.84.3),
//! else with the requested model's; the `fallback` block announcing it before any output
//! is skipped, and one after output has started fails the reply. Our `pi` and pi 1.6.0
//! (`PI_TS16`) run the same print-mode prompt against the mock's Anthropic endpoint, and
//! the reply they keep in the session must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, read_jsonl};
use support::ts16::{pis, program, run};

/// A Claude model at $3/$15 a million tokens that lists `claude-fallback` at $1/$5.
fn models(server: &MockServer) -> Value {
    json!({"providers": {"anth": {
        "baseUrl": server.anthropic_base_url(), "api": "anthropic-messages", "apiKey": "k",
        "compat": {"allowedFallbackModels": [
            {"provider": "other", "model": "claude-other",
             "cost": {"input": 100, "output": 100, "cacheRead": 0, "cacheWrite": 0}},
            {"provider": "anth", "model": "claude-fallback",
             "cost": {"input": 1, "output": 5, "cacheRead": 0.1, "cacheWrite": 1.25}}]},
        "models": [{"id": "claude-test", "name": "Claude Test", "contextWindow": 200000,
                    "maxTokens": 8192,
                    "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}]}}})
}

/// An SSE event of the Messages API.
fn event(kind: &str, data: Value) -> String {
    format!("event: {kind}\ndata: {data}\n\n")
}

/// A raw reply from `model` whose `fallback` block comes before (`early`) or after its text.
fn announced(model: &str, early: bool) -> Script {
    let start = event(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_fallback", "type": "message",
            "role": "assistant", "model": model, "content": [], "stop_reason": null,
            "usage": {"input_tokens": 1000, "output_tokens": 1}}}),
    );
    let block = |index: u64, content: Value, delta: Option<Value>| {
        let mut out = event(
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": content}),
        );
        if let Some(delta) = delta {
            out.push_str(&event(
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        out.push_str(&event(
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
        out
    };
    let fallback = |index| block(index, json!({"type": "fallback", "model": model}), None);
    let text = |index| {
        block(
            index,
            json!({"type": "text", "text": ""}),
            Some(json!({"type": "text_delta", "text": "Answered."})),
        )
    };
    let body = if early {
        [fallback(0), text(1)].concat()
    } else {
        [text(0), fallback(1)].concat()
    };
    let end = [
        event(
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                   "usage": {"output_tokens": 100}}),
        ),
        event("message_stop", json!({"type": "message_stop"})),
    ]
    .concat();
    Script::raw(format!("{start}{body}{end}"))
}

/// The reply one print-mode prompt keeps, answered by `script`.
async fn reply(wrapper: &Option<std::path::PathBuf>, script: Script) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(script);
    let env = Env::new(
        &server,
        200_000,
        json!({"retry": {"enabled": false}, "defaultProvider": "anth",
               "defaultModel": "claude-test", "defaultThinkingLevel": "off"}),
    );
    std::fs::write(env.agent.join("models.json"), models(&server).to_string()).unwrap();
    tokio::task::block_in_place(|| run(&env, program(wrapper), &["-p", "Hello?"]));
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let beta = requests[0]
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"))
        .map(|(_, value)| value.clone());
    let mut kept = Value::Null;
    for file in env.session_files() {
        for line in read_jsonl(&file) {
            if line["message"]["role"] == "assistant" {
                let m = &line["message"];
                kept = json!({"responseModel": m["responseModel"], "cost": m["usage"]["cost"],
                              "stopReason": m["stopReason"], "errorMessage": m["errorMessage"],
                              "content": m["content"]});
            }
        }
    }
    json!({"reply": kept, "fallbacks": requests[0].body["fallbacks"], "beta": beta})
}

/// Runs `script()` through every pi and checks they agree; returns ours.
async fn agree(script: impl Fn() -> Script) -> Value {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, reply(&wrapper, script()).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
    seen.remove(0).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listed_fallback_is_named_and_priced_at_its_own_cost_as_pi_16() {
    let ours = agree(|| {
        Script::text("Answered.")
            .with_model("claude-fallback")
            .with_usage(1000, 100)
    })
    .await;
    // Both listed models go to Anthropic, behind the fallback beta.
    assert_eq!(
        ours["fallbacks"],
        json!([{"model": "claude-other"}, {"model": "claude-fallback"}])
    );
    assert!(
        ours["beta"]
            .as_str()
            .is_some_and(|b| b.contains("server-side-fallback-2026-07-01")),
        "{ours}"
    );
    let reply = &ours["reply"];
    assert_eq!(reply["responseModel"], "claude-fallback", "{ours}");
    // 1000 input tokens at $1 and 100 output at $5 a million, not $3 and $15.
    let total = reply["cost"]["total"].as_f64().unwrap();
    assert!((total - 0.0015).abs() < 1e-12, "{ours}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unlisted_model_is_named_but_priced_as_the_requested_one_as_pi_16() {
    // Listed only for another provider.
    let ours = agree(|| {
        Script::text("Answered.")
            .with_model("claude-other")
            .with_usage(1000, 100)
    })
    .await;
    let reply = &ours["reply"];
    assert_eq!(reply["responseModel"], "claude-other", "{ours}");
    let total = reply["cost"]["total"].as_f64().unwrap();
    assert!((total - 0.0045).abs() < 1e-12, "{ours}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fallback_block_is_skipped_before_output_and_fails_after_it_as_pi_16() {
    let early = agree(|| announced("claude-fallback", true)).await;
    assert_eq!(early["reply"]["stopReason"], "stop", "{early}");
    assert_eq!(
        early["reply"]["content"],
        json!([{"type": "text", "text": "Answered."}]),
        "{early}"
    );
    let late = agree(|| announced("claude-fallback", false)).await;
    assert_eq!(late["reply"]["stopReason"], "error", "{late}");
    assert_eq!(
        late["reply"]["errorMessage"],
        "Anthropic performed an unsupported mid-output model fallback",
        "{late}"
    );
}
