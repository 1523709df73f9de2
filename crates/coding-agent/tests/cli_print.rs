//! The real `pi` binary against mock-llm, as a user runs it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use mock_llm::{MockServer, Script};

struct Env {
    _dir: tempfile::TempDir,
    agent: PathBuf,
    work: PathBuf,
}

fn env(server: &MockServer) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().to_path_buf();
    let agent = root.join("agent");
    let work = root.join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let models = serde_json::json!({"providers": {
        "mock": {"baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
                 "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]},
        "mockbare": {"baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "MOCK_ANT_KEY_VAR",
                     "models": [{"id": "bare-model"}]},
        "mockant": {"baseUrl": server.anthropic_base_url(), "api": "anthropic-messages", "apiKey": "${MOCK_ANT_KEY_VAR}",
                    "models": [{"id": "claude-mock", "reasoning": true}]}
    }});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(
        agent.join("settings.json"),
        r#"{"defaultProvider":"mock","defaultModel":"mock-model"}"#,
    )
    .unwrap();
    Env {
        _dir: dir,
        agent,
        work,
    }
}

fn pi(env: &Env, args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.agent.parent().unwrap_or(Path::new("/")))
        .env("MOCK_ANT_KEY_VAR", "ant-secret")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("pi starts");
    {
        use std::io::Write;
        let mut input = child.stdin.take().unwrap();
        input.write_all(stdin.as_bytes()).unwrap();
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_prints_the_reply_of_the_default_model() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    let out = pi(&env, &["-p", "hi"], "");
    assert_eq!(text(&out.stdout), "ok: hi\n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.headers["authorization"], "Bearer mock-key");
    let system = request.body["messages"][0]["content"].as_str().unwrap();
    assert!(system.contains("\n\n<cwd>\n"), "{system}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn print_mode_speaks_anthropic_with_a_key_from_an_env_var_name() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    server.push(Script::thinking_then_text("pondering", "The answer."));
    let out = pi(
        &env,
        &["--model", "mockant/claude-mock:high", "-p", "question"],
        "",
    );
    assert_eq!(text(&out.stdout), "The answer.\n", "{}", text(&out.stderr));
    let request = &server.requests()[0];
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.headers["x-api-key"], "ant-secret");
    assert_eq!(request.body["thinking"]["type"], "enabled");
    // pi 1.5: a bare name is sent as written, with a warning once, since the variable is set.
    server.push(Script::text("bare"));
    let out = pi(&env, &["--model", "mockbare/bare-model", "-p", "x"], "");
    assert_eq!(text(&out.stdout), "bare\n", "{}", text(&out.stderr));
    assert_eq!(
        server.requests()[1].headers["authorization"],
        "Bearer MOCK_ANT_KEY_VAR"
    );
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr.matches("\"$MOCK_ANT_KEY_VAR\"").count(),
        1,
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn piped_stdin_is_prepended_and_messages_are_sent_in_turn() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    let out = pi(&env, &["-p", " first", "second"], "  context from stdin \n");
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "ok: second\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        requests[0].body["messages"][1]["content"][0]["text"],
        "context from stdin first"
    );
    // The second request carries the whole conversation.
    assert_eq!(requests[1].body["messages"].as_array().unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn provider_errors_go_to_stderr_with_exit_code_1() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    // Auto-retry off: the first failure is final (the client makes no retries of its own).
    std::fs::write(
        env.agent.join("settings.json"),
        r#"{"defaultProvider":"mock","defaultModel":"mock-model","retry":{"enabled":false}}"#,
    )
    .unwrap();
    server.push(Script::http_error(500));
    let out = pi(&env, &["-p", "hi"], "");
    assert_eq!(server.requests().len(), 1);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(text(&out.stdout), "");
    assert!(
        text(&out.stderr).contains(r#"500: {"message":"The server had an error"#),
        "{}",
        text(&out.stderr)
    );
    assert!(
        !text(&out.stderr).contains("mock-key"),
        "the key never appears in errors"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informational_output_and_bad_input() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    let version = pi(&env, &["--version"], "");
    // pi prints the version it stands in for on stdout.
    assert_eq!(text(&version.stdout).trim(), pi_coding_agent::PI_VERSION);
    let list = pi(&env, &["--list-models", "mock"], "");
    let listing = text(&list.stderr);
    assert!(listing.starts_with("provider"), "{listing}");
    assert!(listing.contains("mock      mock-model"), "{listing}");
    let unknown = pi(&env, &["--frobnicate"], "");
    assert_eq!(unknown.status.code(), Some(1));
    assert_eq!(
        text(&unknown.stderr).trim(),
        "Error: Unknown option: --frobnicate"
    );
    let missing = pi(&env, &["--model", "nope/nothing", "-p", "x"], "");
    assert_eq!(missing.status.code(), Some(1));
    assert!(text(&missing.stderr).contains("Model not found"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn broken_models_json_is_reported_and_builtins_remain() {
    let server = MockServer::start().await.unwrap();
    let env = env(&server);
    std::fs::write(env.agent.join("models.json"), "{ not json").unwrap();
    let out = pi(&env, &["--list-models", "anthropic"], "");
    let err = text(&out.stderr);
    assert!(err.contains("Failed to parse models.json"), "{err}");
}
