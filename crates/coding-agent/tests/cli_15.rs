//! The command line of pi 1.5.2 (`../shared/reference/pi-1.5-help.txt`): `--help` and
//! `--version` on stdout, `--mode` and `--provider` errors, `--` ending the options, tool
//! patterns with `+name`/`-name` edits and `--exclude-tools`, and `--name`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Output};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, read_jsonl};

fn pi(env: &Env, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The tool names of the last request the mock received.
fn sent_tools(server: &MockServer) -> Vec<String> {
    let body = server.requests().last().unwrap().body.clone();
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_version_and_argument_errors_as_pi_15() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let version = pi(&env, &["--version"]);
    assert_eq!(text(&version.stdout).trim(), pi_coding_agent::PI_VERSION);
    let help = pi(&env, &["--help"]);
    assert!(help.status.success());
    let help = text(&help.stdout);
    assert!(
        help.contains("pi [options] [--] [@files...] [messages...]"),
        "{help}"
    );
    assert!(help.contains("--exclude-tools, -xt <tools>"), "{help}");

    for (args, error) in [
        (
            &["--mode", "xml", "-p", "hi"][..],
            "Error: Invalid mode \"xml\". Valid values: text, json, rpc",
        ),
        (
            &["--provider", "mock", "-p", "hi"][..],
            "Error: --provider requires --model (for example: --provider mock --model <pattern>)",
        ),
        (
            &["--tools", "read,+grep", "-p", "hi"][..],
            "Error: --tools: tool names cannot be mixed with +name or -name entries",
        ),
    ] {
        let out = pi(&env, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        assert_eq!(text(&out.stderr).trim(), error, "{args:?}");
    }
    assert!(server.requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_patterns_edits_and_exclusions_choose_what_is_sent() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (args, expected) in [
        (&["--exclude-tools", "b*,e*"][..], &["read", "write"][..]),
        (&["-xt", "write"][..], &["read", "bash", "edit"][..]),
        (
            &["--tools", "+grep,-write"][..],
            &["read", "bash", "edit", "grep"][..],
        ),
        (&["-t", "read,*s"][..], &["read", "ls"][..]),
        (
            &["--provider", "mock", "--model", "mock-model", "-t", "f*"][..],
            &["find"][..],
        ),
    ] {
        server.push(Script::text("ok"));
        let mut all = args.to_vec();
        all.extend(["--no-session", "-p", "hi"]);
        let out = pi(&env, &all);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_eq!(sent_tools(&server), expected, "{args:?}");
    }
}

/// A value that starts with `-` belongs to the option before it, as in pi 1.5.2 and 1.6.0:
/// `--tools -bash,+grep` edits the defaults instead of being refused as an option `-b`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn option_values_may_start_with_a_dash() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (args, expected) in [
        (
            &["--tools", "-bash,+grep"][..],
            &["read", "edit", "write", "grep"][..],
        ),
        (&["-t", "-write"][..], &["read", "bash", "edit"][..]),
        (&["-xt", "-nt"][..], &["read", "bash", "edit", "write"][..]),
        (
            &[
                "--append-system-prompt",
                "--be brief--",
                "-t",
                "-edit,-write",
            ][..],
            &["read", "bash"][..],
        ),
    ] {
        server.push(Script::text("ok"));
        let mut all = args.to_vec();
        all.extend(["--no-session", "-p", "hi"]);
        let out = pi(&env, &all);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
        assert_eq!(sent_tools(&server), expected, "{args:?}");
    }
    let body = server.requests().last().unwrap().body.clone();
    let system = body["messages"][0]["content"].to_string();
    assert!(system.contains("--be brief--"), "{system}");

    // A session name that starts with a dash is the name, not an option.
    server.push(Script::text("ok"));
    let out = pi(&env, &["--name", "-draft-", "-p", "hi"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let named = env
        .session_files()
        .into_iter()
        .flat_map(|file| read_jsonl(&file))
        .any(|line| line["type"] == "session_info" && line["name"] == "-draft-");
    assert!(named, "no session is named -draft-");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn double_dash_ends_options_and_name_is_the_root_entry() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    server.push(Script::text("ok: - dash prompt"));
    let out = pi(&env, &["-p", "--", "- dash prompt"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests().last().unwrap().body.clone();
    let last: &Value = body["messages"].as_array().unwrap().last().unwrap();
    assert_eq!(last["content"][0]["text"], "- dash prompt");

    server.push(Script::text("named"));
    let out = pi(&env, &["--name", "Refactor auth module", "-p", "hi"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let file = env
        .session_files()
        .into_iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("Refactor auth module")
        })
        .unwrap();
    let lines = read_jsonl(&file);
    assert_eq!(lines[1]["type"], "session_info");
    assert_eq!(lines[1]["name"], "Refactor auth module");
    assert_eq!(lines[1]["parentId"], Value::Null);
    assert_eq!(lines[2]["type"], "model_change");
    assert_eq!(lines[2]["parentId"], lines[1]["id"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_id_opens_or_creates_that_session() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let bad = pi(&env, &["--session-id", "bad id.", "-p", "hi"]);
    assert_eq!(bad.status.code(), Some(1));
    assert_eq!(
        text(&bad.stderr).trim(),
        "Error: Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character"
    );
    let both = pi(&env, &["--session-id", "run-1", "-c", "-p", "hi"]);
    assert_eq!(both.status.code(), Some(1));
    assert_eq!(
        text(&both.stderr).trim(),
        "Error: --session-id cannot be combined with --continue"
    );

    server.push(Script::text("first"));
    let first = pi(&env, &["--session-id", "run-1", "-p", "hi"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    assert_eq!(
        text(&first.stderr).trim(),
        "Warning: No project session found with id 'run-1'; creating a new session with that id."
    );
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    assert!(
        files[0]
            .file_name()
            .unwrap()
            .to_string_lossy()
            .ends_with("_run-1.jsonl")
    );
    assert_eq!(read_jsonl(&files[0])[0]["id"], "run-1");

    server.push(Script::text("second"));
    let again = pi(&env, &["--session-id", "run-1", "-p", "again"]);
    assert!(again.status.success());
    assert_eq!(text(&again.stderr), "", "the session exists now");
    assert_eq!(env.session_files(), files);
    let users = read_jsonl(&files[0])
        .iter()
        .filter(|l| l["message"]["role"] == "user")
        .count();
    assert_eq!(users, 2);
    // The second request carried the first exchange.
    let body = server.requests().last().unwrap().body.clone();
    assert_eq!(body["messages"].as_array().unwrap().len(), 4);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn thinking_max_is_clamped_to_what_the_model_supports() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let models = json!({"providers": {"mock": {
    "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
    "models": [
        {"id": "mock-model"},
        {"id": "mock-thinker", "reasoning": true},
        {"id": "mock-max", "reasoning": true, "thinkingLevelMap": {"xhigh": "xhigh", "max": "max"}}
    ]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    for (model, level, levels) in [
        ("mock/mock-model", "off", json!(["off"])),
        (
            "mock/mock-thinker",
            "high",
            json!(["off", "minimal", "low", "medium", "high"]),
        ),
        (
            "mock/mock-max",
            "max",
            json!(["off", "minimal", "low", "medium", "high", "xhigh", "max"]),
        ),
    ] {
        let mut rpc = support::rpc::Rpc::start(&env, &["--model", model, "--thinking", "max"]);
        let state = rpc.call("s", json!({"type": "get_state"}));
        assert_eq!(state["data"]["thinkingLevel"], level, "{model}");
        let offered = rpc.call("l", json!({"type": "get_available_thinking_levels"}));
        assert_eq!(offered["data"]["levels"], levels, "{model}");
        assert_eq!(rpc.finish(), Some(0));
    }
    server.push(Script::text("thought hard"));
    let out = pi(
        &env,
        &[
            "--model",
            "mock/mock-max",
            "--thinking",
            "max",
            "--no-session",
            "-p",
            "hi",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let body = server.requests().last().unwrap().body.clone();
    assert_eq!(body["reasoning_effort"], "max", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_tools_and_model_thinking_levels_from_settings() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(
        &server,
        128_000,
        json!({"defaultTools": ["+grep", "-write"],
               "modelThinkingLevels": {"mock/mock-thinker": "low"},
               "defaultThinkingLevel": "high"}),
    );
    server.push(Script::text("ok"));
    let out = pi(&env, &["--no-session", "-p", "hi"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(sent_tools(&server), ["read", "bash", "edit", "grep"]);
    for (model, level) in [("mock/mock-thinker", "low"), ("mock/mock-model", "off")] {
        let mut rpc = support::rpc::Rpc::start(&env, &["--model", model]);
        let state = rpc.call("s", json!({"type": "get_state"}));
        assert_eq!(state["data"]["thinkingLevel"], level, "{model}");
        assert_eq!(rpc.finish(), Some(0));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn update_knows_the_15_models_form() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let help = pi(&env, &["update", "--help"]);
    let help = text(&help.stdout);
    assert!(
        help.contains("  --models                Refresh model catalogs only\n"),
        "{help}"
    );
    assert!(help.contains("  pi update --models       Refresh model catalogs only\n"));
    // As pi 1.5.2 answers it; nothing else is touched.
    let out = pi(&env, &["update", "--models"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(text(&out.stdout), "Model catalogs refreshed\n");
    assert_eq!(text(&out.stderr), "");
}
