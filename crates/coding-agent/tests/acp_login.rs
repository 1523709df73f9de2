//! `pi --mode acp` with no model to answer: the editor is offered pi's own login ("Log in
//! with pi", pi run in a terminal with `--terminal-login`), the requests that need a model
//! answer `auth_required` (-32000) with it, and a login made since is taken up by the same
//! agent (a new session, or `authenticate`). Driven by the protocol's official TypeScript
//! SDK client (tests/acp/pi-acp-client.mjs); the terminal login runs in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;
use support::logins::first_run_env;
use support::rpc::Env;
use support::tmux::{self, Tmux};

/// Keys a developer's machine may hold, emptied for the agent.
fn no_keys() -> Value {
    json!({"GEMINI_API_KEY": "", "OPENROUTER_API_KEY": "", "GROQ_API_KEY": "",
           "XAI_API_KEY": "", "MISTRAL_API_KEY": ""})
}

/// What pi's `/login` leaves in auth.json for an Anthropic API key.
fn login_file(env: &Env) -> Value {
    json!({"path": env.agent.join("auth.json"),
           "text": json!({"anthropic": {"type": "api_key", "key": "sk-ant-from-login"}}).to_string()})
}

fn assert_auth_required(line: &Value) {
    let error = &line["error"];
    assert_eq!(error["code"], -32000, "{line}");
    assert_eq!(error["data"]["authMethods"][0]["id"], "pi-login", "{line}");
}

fn answer_text(lines: &[Value], step: u64) -> String {
    updates(lines, step)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_waits_for_a_login_made_in_pi_and_takes_it_up() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("signed in and answering"));
    let env = first_run_env(&server);
    let steps = json!([
        {"op": "initialize"},
        {"op": "new"},
        {"op": "prompt", "text": "hi"},
        {"op": "writeFile", "path": login_file(&env)["path"], "text": login_file(&env)["text"]},
        {"op": "new"},
        {"op": "prompt", "text": "hi"},
    ]);
    let lines = run_scenario(
        &env,
        steps,
        json!({"clientCapabilities": {"auth": {"terminal": true}}, "env": no_keys()}),
    );
    // A client that runs terminal logins is offered pi with the flag added.
    assert_eq!(
        result(&lines, 1)["result"]["authMethods"],
        json!([{"type": "terminal", "id": "pi-login", "name": "Log in with pi",
                "description": "Run pi in a terminal to log into a provider or add an API key with /login",
                "args": ["--terminal-login"]}])
    );
    assert_auth_required(result(&lines, 2));
    // No session was opened, so a prompt has none to go to.
    assert!(result(&lines, 3).get("error").is_some(), "{lines:#?}");

    // After the login, the same agent opens a session on the provider's default model.
    let opened = &result(&lines, 5)["result"];
    assert!(opened["sessionId"].is_string(), "{lines:#?}");
    let model = opened["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "model")
        .unwrap();
    assert_eq!(
        model["currentValue"], "anthropic/claude-opus-5-5",
        "{model}"
    );
    assert_eq!(result(&lines, 6)["result"]["stopReason"], "end_turn");
    assert_eq!(answer_text(&lines, 6), "signed in and answering");
    // Only the prompt after the login reached a provider, with the key it saved.
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].headers.get("x-api-key").map(String::as_str),
        Some("sk-ant-from-login")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn authenticate_reads_pis_credentials_again() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("after authenticate"));
    let env = first_run_env(&server);
    let steps = json!([
        {"op": "initialize"},
        {"op": "authenticate", "methodId": "pi-login"},
        {"op": "authenticate", "methodId": "gemini-api-key"},
        {"op": "writeFile", "path": login_file(&env)["path"], "text": login_file(&env)["text"]},
        {"op": "authenticate", "methodId": "pi-login"},
        {"op": "new"},
        {"op": "prompt", "text": "hi"},
    ]);
    let lines = run_scenario(&env, steps, json!({"env": no_keys()}));
    // A client that does not run terminal logins gets the method as the agent's own.
    let methods = &result(&lines, 1)["result"]["authMethods"];
    assert_eq!(methods[0]["id"], "pi-login", "{methods}");
    assert!(methods[0].get("type").is_none(), "{methods}");
    assert_auth_required(result(&lines, 2));
    assert_eq!(result(&lines, 3)["error"]["code"], -32602, "{lines:#?}");
    assert_eq!(result(&lines, 5)["result"], json!({}), "{lines:#?}");
    assert!(result(&lines, 6)["result"]["sessionId"].is_string());
    assert_eq!(answer_text(&lines, 7), "after authenticate");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_terminal_login_is_pi_where_login_saves_a_key_and_exits_zero() {
    if !tmux::available() {
        eprintln!("tmux is not installed; skipping");
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = first_run_env(&server);
    // The editor's agent command (`pi acp`) with the method's args added.
    let tmux = Tmux::start_with(
        &env,
        &[("GEMINI_API_KEY", ""), ("OPENROUTER_API_KEY", "")],
        &["acp", "--terminal-login"],
        100,
        30,
    );
    tmux.wait(
        "pi's terminal UI with no model",
        Duration::from_secs(20),
        |s| s.contains("No model selected") && s.contains("/login"),
    );
    tmux.type_text("/login");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Select authentication method:");
    tmux.keys(&["Down", "Enter"]);
    tmux.wait_for("Select a provider to save an API key for:");
    tmux.type_text("Anthropic");
    tmux.wait_for("→ Anthropic");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Enter API key for Anthropic:");
    tmux.type_text("sk-ant-typed");
    tmux.keys(&["Enter"]);
    tmux.wait_for("Saved API key for Anthropic");
    let auth: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("auth.json")).unwrap())
            .unwrap();
    assert_eq!(
        auth["anthropic"],
        json!({"type": "api_key", "key": "sk-ant-typed"})
    );
    tmux.keys(&["C-d"]);
    assert_eq!(tmux.wait_exit(Duration::from_secs(20)), 0);
}
