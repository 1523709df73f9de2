//! Anthropic message threads as pi 1.6.0 sends them (`compat.supportsMessageThreads`): the
//! session's first request opens a thread and names the message-threads beta; the next
//! sends only the new user message, without system prompt and tools, continuing from the
//! previous reply's id; a server that lost the thread (`thread_not_found`) gets a new thread
//! with the whole conversation; a model without threads sends neither. Our `pi` and pi 1.6.0
//! (`PI_TS16`) run the same RPC session against the mock's Anthropic endpoint.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

fn models(server: &MockServer, threads: bool) -> Value {
    json!({"providers": {"anth": {
        "baseUrl": server.anthropic_base_url(), "api": "anthropic-messages", "apiKey": "k",
        "compat": {"supportsMessageThreads": threads},
        "models": [{"id": "claude-test", "name": "Claude Test", "contextWindow": 200000,
                    "maxTokens": 8192}]}}})
}

/// What a request carried of the thread: its `thread` field, whether it has a system
/// prompt and tools, its messages' roles, and whether it names the threads beta.
fn thread_view(request: &mock_llm::RecordedRequest) -> Value {
    let body = &request.body;
    let beta = request
        .headers
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case("anthropic-beta"))
        .is_some_and(|(_, value)| value.contains("message-threads-2026-08-12"));
    let roles: Vec<Value> = body["messages"]
        .as_array()
        .map(|m| m.iter().map(|m| m["role"].clone()).collect())
        .unwrap_or_default();
    json!({"thread": body["thread"], "system": body.get("system").is_some(),
           "tools": body.get("tools").is_some(), "roles": roles, "beta": beta})
}

/// Three prompts in one RPC session; `lose` makes the third request's first try fail with
/// `thread_not_found`.
async fn session(wrapper: &Option<std::path::PathBuf>, threads: bool, lose: bool) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("One."));
    server.push(Script::text("Two."));
    if lose {
        let body = json!({"type": "error", "error": {"type": "not_found_error",
            "message": "thread not found", "details": {"error_code": "thread_not_found"}}});
        server.push(Script::text("").with_fault(Fault::HttpError {
            status: 404,
            retry_after: None,
            retry_after_ms: None,
            body: Some(body.to_string()),
        }));
    }
    server.push(Script::text("Three."));
    let env = Env::new(
        &server,
        200_000,
        json!({"retry": {"enabled": false}, "defaultProvider": "anth",
               "defaultModel": "claude-test", "defaultThinkingLevel": "off"}),
    );
    std::fs::write(
        env.agent.join("models.json"),
        models(&server, threads).to_string(),
    )
    .unwrap();
    let command = program(wrapper);
    tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &[]);
        for (id, text) in [("p1", "One?"), ("p2", "Two?"), ("p3", "Three?")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.until("the run settled", |l| l["type"] == "agent_settled");
        }
        rpc.finish();
    });
    let views: Vec<Value> = server.requests().iter().map(thread_view).collect();
    json!(views)
}

/// Runs `case` through every pi and checks they agree; returns ours.
async fn agree(threads: bool, lose: bool) -> Value {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, session(&wrapper, threads, lose).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
    seen.remove(0).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_continues_its_thread_with_only_new_messages_as_pi_16() {
    let mut ours = agree(true, false).await;
    // The mock names its replies; each continuation names the reply before it.
    let mut replies = Vec::new();
    for view in ours.as_array_mut().unwrap() {
        if let Some(id) = view["thread"]["previous_message_id"].as_str() {
            replies.push(id.to_owned());
            view["thread"]["previous_message_id"] = json!("<reply>");
        }
    }
    assert!(
        replies.iter().all(|id| id.starts_with("msg_")),
        "{replies:?}"
    );
    assert_ne!(replies[0], replies[1]);
    let continued = json!({"type": "continue", "previous_message_id": "<reply>"});
    assert_eq!(
        ours,
        json!([
            {"thread": {"type": "create"}, "system": true, "tools": true, "roles": ["user"],
             "beta": true},
            {"thread": continued, "system": false, "tools": false, "roles": ["user"],
             "beta": true},
            {"thread": continued, "system": false, "tools": false, "roles": ["user"],
             "beta": true},
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_thread_is_opened_again_with_the_whole_conversation_as_pi_16() {
    let ours = agree(true, true).await;
    assert_eq!(ours[2]["thread"]["type"], "continue", "{ours}");
    assert_eq!(
        ours[3],
        json!({"thread": {"type": "create"}, "system": true, "tools": true,
               "roles": ["user", "assistant", "user", "assistant", "user"], "beta": true}),
        "{ours}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_without_threads_sends_whole_requests_as_pi_16() {
    let ours = agree(false, false).await;
    for view in ours.as_array().unwrap() {
        assert_eq!(view["thread"], Value::Null, "{ours}");
        assert_eq!(view["beta"], false, "{ours}");
        assert_eq!(view["system"], true, "{ours}");
    }
}
