//! gateway.json at work: the policy cascade and scopes shape a session's tools, the
//! sandbox confines the model's bash, runtime tools act on the gateway, auth profiles
//! rotate, all through the running gateway.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::Script;
use support::*;

fn write_gateway_json(agent: &std::path::Path, file: Value) {
    let file = with_workspaces(agent, file);
    std::fs::write(agent.join("gateway.json"), file.to_string()).unwrap();
}

async fn env_with(file: Value) -> Env {
    let env = Env::start(relaxed()).await;
    write_gateway_json(&env.agent, file);
    // Reopen the gateway so it reads the file at start.
    let mut env = env;
    let handle = env.gateway.take().unwrap();
    handle.shutdown().await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let config = pi_gateway::server::GatewayConfig::new(&env.agent)
        .with_token(ALICE, "alice")
        .with_token(BOB, "bob")
        .with_limits(relaxed());
    env.gateway = Some(pi_gateway::server::serve(listener, config).await.unwrap());
    env
}

fn tool_names(created: &Value) -> Vec<String> {
    created["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn policy_and_scopes_decide_the_tools_of_each_principal() {
    let env = env_with(json!({
        "tools": {"deny": ["write"], "byProvider": {"mock": {"deny": ["edit"]}}},
        "agents": {"reader": {"tools": {"allow": ["read", "group:sessions", "agent_interrupt"]}}},
        "principals": {
            "alice": {"scopes": ["*"]},
            "bob": {"scopes": [], "agentId": "reader"}
        }
    }))
    .await;
    let mut alice = env.client(ALICE).await;
    let created = alice
        .call("session.create", json!({"cwd": env.work.to_string_lossy()}))
        .await
        .unwrap();
    assert_eq!(
        tool_names(&created),
        [
            "read",
            "bash",
            "session_branch",
            "session_navigate",
            "gateway_reload",
            "agent_interrupt"
        ]
    );
    let mut bob = env.client(BOB).await;
    let created = bob
        .call("session.create", json!({"cwd": env.work.to_string_lossy()}))
        .await
        .unwrap();
    // Bob lacks the "sessions" and "admin" scopes; his agent allows read and interrupt.
    assert_eq!(tool_names(&created), ["read", "agent_interrupt"]);

    // The model sees exactly those tools.
    let id = created["sessionId"].as_str().unwrap();
    env.mock.clear_requests();
    bob.call(
        "session.prompt",
        json!({"sessionId": id, "text": "hi", "wait": true}),
    )
    .await
    .unwrap();
    let request = env.mock.requests().pop().unwrap();
    let offered: Vec<&str> = request.body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(offered, ["read", "agent_interrupt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_models_bash_cannot_write_outside_the_sandbox() {
    if pi_gateway::sandbox::landlock_available().is_err() {
        // Without Landlock a sandboxed session must refuse to open rather than run unconfined.
        let env = env_with(json!({"sandbox": {"enabled": true}})).await;
        let mut a = env.client(ALICE).await;
        let error = a
            .call("session.create", json!({"cwd": env.work.to_string_lossy()}))
            .await
            .unwrap_err()
            .to_string();
        assert!(error.contains("Landlock is not available"), "{error}");
        return;
    }
    let env =
        env_with(json!({"sandbox": {"enabled": true, "allowTemp": false, "timeoutSeconds": 20}}))
            .await;
    // The temp dir (allowed by default) holds this test's dirs, so it is closed here.
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(Script::tool_call(
        "bash",
        json!({"command": format!(
            "echo inside > inside.txt; echo escaped > {}/x.txt",
            outside.display()
        )}),
    ));
    env.mock.push(Script::text("tried"));
    a.call(
        "session.prompt",
        json!({"sessionId": id, "text": "write", "wait": true}),
    )
    .await
    .unwrap();
    let (_, frames) = until_agent_end(&mut a, &id).await;
    let end = frames
        .iter()
        .find(|f| is_event(f, "tool_execution_end", &id))
        .unwrap();
    assert_eq!(end["payload"]["success"], false, "{end}");
    assert!(
        end["payload"]["output"]
            .as_str()
            .unwrap()
            .contains("ermission denied"),
        "{end}"
    );
    assert_eq!(
        std::fs::read_to_string(env.work.join("inside.txt")).unwrap(),
        "inside\n"
    );
    assert!(!outside.join("x.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_tools_branch_and_interrupt_through_the_gateway() {
    let env = env_with(json!({"principals": {"alice": {"scopes": ["sessions"]}}})).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    a.call(
        "session.prompt",
        json!({"sessionId": id, "text": "first", "wait": true}),
    )
    .await
    .unwrap();
    env.mock
        .push(Script::tool_call("session_branch", json!({})));
    env.mock.push(Script::text("branched"));
    a.call(
        "session.prompt",
        json!({"sessionId": id, "text": "branch now", "wait": true}),
    )
    .await
    .unwrap();
    let tree = a.call("sessions.tree", json!({})).await.unwrap();
    let children = tree["roots"][0]["children"].as_array().unwrap();
    assert_eq!(children.len(), 1, "{tree}");
    assert_eq!(tree["roots"][0]["id"], id.as_str());
    assert!(children[0]["branchPoint"].is_string());

    env.mock.push(Script::tool_call(
        "agent_interrupt",
        json!({"reason": "done early"}),
    ));
    env.mock.push(Script::text("never asked for"));
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "stop yourself", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "abort_signal");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rate_limited_profile_is_rotated_and_cools_down() {
    let env = env_with(json!({
        "authProfiles": {"mock": [{"id": "first", "apiKey": "key-first"}, {"id": "second", "apiKey": "key-second"}]}
    }))
    .await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(Script::http_error(429));
    env.mock.push(Script::text("answered by the second key"));
    env.mock.push(Script::text("the second key again"));
    env.mock.clear_requests();
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "one", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls");
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "two", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls");
    let keys: Vec<String> = env
        .mock
        .requests()
        .iter()
        .map(|r| r.headers["authorization"].clone())
        .collect();
    assert_eq!(
        keys,
        ["Bearer key-first", "Bearer key-second", "Bearer key-second"],
        "the first key cools down after its 429"
    );
    let (_, frames) = until_agent_end(&mut a, &id).await;
    let text: String = serde_json::to_string(&frames).unwrap();
    assert!(
        !text.contains("key-first") && !text.contains("key-second"),
        "keys never reach clients"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_model_call_is_reported_as_an_error_event() {
    let env = env_with(json!({
        "authProfiles": {"mock": [{"id": "only", "apiKey": "key-only"}]}
    }))
    .await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(Script::http_error(401));
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "hi", "wait": true}),
        )
        .await
        .unwrap();
    let error = done["error"].as_str().unwrap();
    assert!(error.contains("exhausted"), "{error}");
    assert!(!error.contains("key-only"));
    // The failed call is reported as it happens, then the run's outcome.
    let frames = collect_until(&mut a, |f| {
        is_event(f, "error", &id) && f["payload"]["code"] == "auth"
    })
    .await;
    let event = frames.last().unwrap();
    assert_eq!(event["payload"]["recoverable"], true);
    assert!(
        frames
            .iter()
            .any(|f| is_event(f, "error", &id) && f["payload"]["code"] == "model_error")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn channel_tools_declared_by_a_client_are_answered_by_it() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let created = a
        .call(
            "session.create",
            json!({"cwd": env.work.to_string_lossy(), "channelTools": [{
                "name": "channel_note",
                "description": "Posts a note to the channel this session serves.",
                "parameters": {"type": "object", "properties": {"text": {"type": "string"}},
                               "required": ["text"]}
            }]}),
        )
        .await
        .unwrap();
    let id = created["sessionId"].as_str().unwrap().to_owned();
    assert!(tool_names(&created).contains(&"channel_note".to_owned()));
    env.mock.push(Script::tool_call(
        "channel_note",
        json!({"text": "hello channel"}),
    ));
    env.mock.push(Script::text("posted"));
    a.call(
        "session.prompt",
        json!({"sessionId": id, "text": "post it"}),
    )
    .await
    .unwrap();
    let frames = collect_until(&mut a, |f| f["type"] == "tool_request").await;
    let request = frames.last().unwrap().clone();
    assert_eq!(request["sessionId"], id.as_str());
    assert_eq!(request["name"], "channel_note");
    assert_eq!(request["arguments"], json!({"text": "hello channel"}));
    a.call(
        "tool.result",
        json!({"requestId": request["requestId"], "content": "note 42 posted"}),
    )
    .await
    .unwrap();
    let (end, frames) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "no_tool_calls");
    let tool_end = frames
        .iter()
        .find(|f| is_event(f, "tool_execution_end", &id))
        .unwrap();
    assert_eq!(tool_end["payload"]["success"], true);
    assert_eq!(tool_end["payload"]["output"], "note 42 posted");
    let last = env.mock.requests().pop().unwrap().body.to_string();
    assert!(last.contains("note 42 posted"), "the model got the answer");

    // An answer nobody waits for is refused.
    let stale = a
        .call("tool.result", json!({"requestId": "nope", "content": "x"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(stale.starts_with("not_found"), "{stale}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_channel_tool_fails_when_its_client_disconnects() {
    let env = Env::start(relaxed()).await;
    let mut watcher = env.client(ALICE).await;
    let mut binder = env.client(ALICE).await;
    let created = binder
        .call(
            "session.create",
            json!({"cwd": env.work.to_string_lossy(), "subscribe": false,
                   "channelTools": [{"name": "channel_react"}]}),
        )
        .await
        .unwrap();
    let id = created["sessionId"].as_str().unwrap().to_owned();
    watcher
        .call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap();
    env.mock.push(Script::tool_call("channel_react", json!({})));
    env.mock.push(Script::text("gave up"));
    binder
        .call("session.prompt", json!({"sessionId": id, "text": "react"}))
        .await
        .unwrap();
    collect_until(&mut binder, |f| f["type"] == "tool_request").await;
    binder.close().await;
    let (end, frames) = until_agent_end(&mut watcher, &id).await;
    assert_eq!(end["terminationReason"], "no_tool_calls");
    let tool_end = frames
        .iter()
        .find(|f| is_event(f, "tool_execution_end", &id))
        .unwrap();
    assert_eq!(tool_end["payload"]["success"], false);
    assert!(
        tool_end["payload"]["output"]
            .as_str()
            .unwrap()
            .contains("disconnected"),
        "{tool_end}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_profiles_a_rate_limit_is_retried_after_its_retry_after() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(
        Script::http_error(429).with_fault(mock_llm::Fault::HttpError {
            status: 429,
            retry_after: None,
            retry_after_ms: Some("50".into()),
            body: None,
        }),
    );
    env.mock.push(Script::text("after waiting"));
    env.mock.clear_requests();
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "hi", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls");
    assert_eq!(env.mock.requests().len(), 2, "the single key was retried");
}
