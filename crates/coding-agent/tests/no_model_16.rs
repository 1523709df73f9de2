//! With no key and no `models.json`, pi 1.6.0 still starts in every mode, on a placeholder
//! model: RPC keeps serving (an editor's adapter such as pi-acp shows "Authenticate" from an
//! empty model list), a prompt answers "No API key found for the selected model.", and a new
//! session picks up a provider added meanwhile. Each test runs our `pi` and, when `PI_TS16`
//! names pi 1.6.0's wrapper, the same case there, and asserts the same answers.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

/// An agent dir with nothing in it, and a work dir.
fn empty_env() -> Env {
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    Env { dir, agent, work }
}

/// `program` with no provider key from the environment.
fn keyless(mut program: Command) -> Command {
    for (name, _) in std::env::vars() {
        if name.ends_with("_API_KEY") || name.ends_with("_TOKEN") || name.starts_with("AWS_") {
            program.env_remove(name);
        }
    }
    program
}

/// A `mock` provider on `server` in `models.json`.
fn add_mock_provider(env: &Env, server: &MockServer) {
    let models = json!({"providers": {"mock": {
        "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
}

/// Text with what differs between runs or installs made the same: the docs' location
/// (1.6.0 names its installed `docs/`, ours pi's repository), the session's file and id.
fn normalized(text: &str, env: &Env) -> String {
    let text = text.replace(&env.dir.path().display().to_string(), "<dir>");
    text.lines()
        .map(|line| {
            for doc in ["providers.md", "models.md"] {
                if line.starts_with("  ") && line.ends_with(&format!("/{doc}")) {
                    return format!("  <docs>/{doc}");
                }
            }
            line.to_owned()
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A response with its session file and id and the mock server's address masked, and
/// texts normalized.
fn masked(response: Value, env: &Env, server: &MockServer) -> Value {
    let text = response.to_string().replace(&server.url(), "<mock>");
    let mut response: Value = serde_json::from_str(&text).unwrap();
    if let Some(data) = response.get_mut("data").and_then(Value::as_object_mut) {
        for key in ["sessionFile", "sessionId"] {
            if data.contains_key(key) {
                data.insert(key.into(), json!("<masked>"));
            }
        }
    }
    if let Some(error) = response.get("error").and_then(Value::as_str) {
        response["error"] = json!(normalized(error, env));
    }
    response
}

/// The RPC conversation of a client that finds no model, has the user add a provider, and
/// starts over with a new session; returns every response and the final answer.
async fn signs_in_over_rpc(program: Command) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("signed in at last"));
    let env = empty_env();
    let mut rpc = Rpc::start_program(&env, keyless(program), &[]);
    let mut responses = Vec::new();
    let mut call = |rpc: &mut Rpc, id: &str, command: Value| {
        let response = rpc.call(id, command);
        responses.push(masked(response, &env, &server));
    };
    for (id, command) in [
        ("state", json!({"type": "get_state"})),
        ("models", json!({"type": "get_available_models"})),
        ("levels", json!({"type": "get_available_thinking_levels"})),
        (
            "set-level",
            json!({"type": "set_thinking_level", "level": "high"}),
        ),
        ("cycle-level", json!({"type": "cycle_thinking_level"})),
        ("cycle-model", json!({"type": "cycle_model"})),
        ("stats", json!({"type": "get_session_stats"})),
        ("last-text", json!({"type": "get_last_assistant_text"})),
        ("compact", json!({"type": "compact"})),
        ("prompt", json!({"type": "prompt", "message": "hello"})),
        (
            "set-model",
            json!({"type": "set_model", "provider": "anthropic", "modelId": "claude-opus-4-7"}),
        ),
        ("state-after", json!({"type": "get_state"})),
    ] {
        call(&mut rpc, id, command);
    }
    // The user adds a provider; a new session reads it and takes its model.
    add_mock_provider(&env, &server);
    for (id, command) in [
        ("new", json!({"type": "new_session"})),
        ("models-now", json!({"type": "get_available_models"})),
        ("state-now", json!({"type": "get_state"})),
        ("prompt-now", json!({"type": "prompt", "message": "hello"})),
    ] {
        call(&mut rpc, id, command);
    }
    rpc.event("agent_settled");
    call(
        &mut rpc,
        "answer",
        json!({"type": "get_last_assistant_text"}),
    );
    responses
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rpc_serves_without_a_model_until_one_is_added_as_in_16() {
    let ours = signs_in_over_rpc(ours()).await;
    let by_id = |id: &str| ours.iter().find(|r| r["id"] == id).unwrap().clone();
    assert_eq!(
        by_id("state")["data"]["model"],
        json!({"id": "unknown", "name": "unknown", "api": "unknown", "provider": "unknown",
               "baseUrl": "", "reasoning": false, "input": [],
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
               "contextWindow": 0, "maxTokens": 0})
    );
    assert_eq!(by_id("models")["data"], json!({"models": []}));
    assert_eq!(
        by_id("prompt"),
        json!({"id": "prompt", "type": "response", "command": "prompt", "success": false,
               "error": "No API key found for the selected model.\n\nUse /login to log into a provider via OAuth or API key. See:\n  <docs>/providers.md\n  <docs>/models.md"})
    );
    assert_eq!(
        by_id("set-model")["error"],
        "Model not found: anthropic/claude-opus-4-7"
    );
    assert_eq!(by_id("state-now")["data"]["model"]["id"], "mock-model");
    assert_eq!(by_id("prompt-now")["success"], true);
    assert_eq!(by_id("answer")["data"]["text"], "signed in at last");
    if let Some(wrapper) = ts16() {
        let theirs = signs_in_over_rpc(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours (left) and pi 1.6.0 (right) differ");
    }
}

/// What `pi <args>` says in an empty agent dir: exit code, stdout, stderr (normalized; the
/// JSON header's id and time masked).
fn one_shot(program: Command, args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
    let env = empty_env();
    let out = keyless(program)
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|line| {
            let mut value: Value = serde_json::from_str(line).unwrap();
            for key in ["id", "timestamp"] {
                if value.get(key).is_some() {
                    value[key] = json!("<masked>");
                }
            }
            value["cwd"] = json!(normalized(value["cwd"].as_str().unwrap_or(""), &env));
            value
        })
        .collect();
    let stderr = normalized(&String::from_utf8_lossy(&out.stderr), &env);
    (out.status.code(), stdout, stderr)
}

#[test]
fn print_and_json_modes_start_and_report_the_missing_key_as_in_16() {
    let help = "Use /login to log into a provider via OAuth or API key. See:\n  <docs>/providers.md\n  <docs>/models.md";
    let cases: [(&[&str], String); 3] = [
        (
            &["-p", "hello"],
            format!(
                "Warning: No models available. {help}\nNo API key found for the selected model.\n\n{help}"
            ),
        ),
        (
            &["--mode", "json", "hello"],
            format!(
                "Warning: No models available. {help}\nNo API key found for the selected model.\n\n{help}"
            ),
        ),
        // A model named on the command line but without a key starts too.
        (
            &["--model", "anthropic/claude-opus-4-7", "-p", "hello"],
            format!("No API key found for anthropic.\n\n{help}"),
        ),
    ];
    for (args, stderr) in cases {
        let got = one_shot(ours(), args);
        assert_eq!(got.0, Some(1), "{args:?}");
        assert_eq!(got.2, stderr, "{args:?}");
        let header = args.contains(&"json");
        assert_eq!(got.1.len(), usize::from(header), "{args:?}: {:?}", got.1);
        if header {
            assert_eq!(got.1[0]["type"], "session");
        }
        if let Some(wrapper) = ts16() {
            assert_eq!(got, one_shot(ts16_pi(&wrapper), args), "{args:?}");
        }
    }
}
