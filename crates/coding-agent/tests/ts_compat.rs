//! Compacted sessions cross between our `pi` and the TypeScript pi, 0.73.1, 1.5.2 and 1.6.0:
//! each reopens the other's file and sends the summary plus the kept messages. Needs the
//! TypeScript pis: `PI_TS_CLI=<.../pi-coding-agent/dist/cli.js>` (0.73.1), `PI_TS15=<a
//! wrapper running 1.5.2>` and `PI_TS16` (1.6.0) (`scripts/ts-compat.sh` installs them and
//! sets them); without them these tests report that they were skipped.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl, user_texts};

fn ts_cli() -> Option<PathBuf> {
    let cli = std::env::var_os("PI_TS_CLI").map(PathBuf::from);
    if cli.is_none() {
        eprintln!("PI_TS_CLI is not set: skipped (run scripts/ts-compat.sh)");
    }
    cli
}

fn ts_pi(cli: &Path) -> Command {
    let mut command = Command::new("node");
    command.arg(cli).env("PI_OFFLINE", "1");
    command
}

/// pi 1.5.2's wrapper (it brings its own node 22).
fn ts15() -> Option<PathBuf> {
    let wrapper = std::env::var_os("PI_TS15")
        .filter(|p| !p.is_empty())
        .map(PathBuf::from);
    if wrapper.is_none() {
        eprintln!("PI_TS15 is not set: skipped (run scripts/ts-compat.sh)");
    }
    wrapper
}

fn ts15_pi(wrapper: &Path) -> Command {
    let mut command = Command::new(wrapper);
    command.env("PI_OFFLINE", "1");
    command
}

fn run(env: &Env, mut command: Command, args: &[&str]) {
    let out = command
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{:?} failed: {}\n{}",
        args,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Two turns and a manual compaction through `program` in RPC mode, in session `file`.
fn compact_session(env: &Env, program: Command, file: &Path, summary: &str, server: &MockServer) {
    server.push_all([
        Script::text("first answer").with_usage(100, 10),
        Script::text("second answer").with_usage(200, 10),
        Script::text(summary),
        Script::text(summary),
    ]);
    let mut rpc = Rpc::start_program(env, program, &["--session", file.to_str().unwrap()]);
    for (id, text) in [("p1", "first question"), ("p2", "second question")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.event("agent_end");
    }
    let compacted = rpc.call("c", json!({"type": "compact"}));
    assert_eq!(compacted["success"], true, "{compacted}");
    rpc.finish();
    // A compaction without a split turn leaves the second summary reply unused.
    server.clear_queue();
}

/// The request a session continued by `program` sends: the summary, then what was kept.
fn continue_session(env: &Env, program: Command, file: &Path, server: &MockServer) -> Value {
    let before = server.requests().len();
    run(
        env,
        program,
        &["--session", file.to_str().unwrap(), "-p", "third question"],
    );
    let requests = server.requests();
    assert_eq!(requests.len(), before + 1);
    requests.last().unwrap().body.clone()
}

fn check_continuation(body: &Value, summary: &str) {
    let texts = user_texts(body);
    assert!(texts[0].contains(summary), "{texts:?}");
    assert!(!texts.iter().any(|t| t == "first question"), "{texts:?}");
    assert_eq!(texts.last().unwrap(), "third question");
}

fn ours() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pi"))
}

/// Ours compacts a session; `theirs()` continues it, then ours again.
async fn our_compacted_session_reopens_in(theirs: impl Fn() -> Command) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let file = env.work.join("ours.jsonl");
    compact_session(&env, ours(), &file, "OUR SUMMARY", &server);
    server.clear_requests();
    let body = continue_session(&env, theirs(), &file, &server);
    check_continuation(&body, "OUR SUMMARY");
    // And the file the TypeScript pi appended to still reopens here.
    let body = continue_session(&env, ours(), &file, &server);
    check_continuation(&body, "OUR SUMMARY");
    let lines = read_jsonl(&file);
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "compaction").count(),
        1
    );
    lines
}

/// `theirs()` compacts a session; ours continues it, then `theirs()` again. Returns the two
/// continuation requests (ours, theirs).
async fn their_compacted_session_reopens_here(theirs: impl Fn() -> Command) -> (Value, Value) {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let file = env.work.join("theirs.jsonl");
    compact_session(&env, theirs(), &file, "THEIR SUMMARY", &server);
    let lines = read_jsonl(&file);
    assert_eq!(
        lines.iter().filter(|l| l["type"] == "compaction").count(),
        1
    );
    server.clear_requests();
    let ours_body = continue_session(&env, ours(), &file, &server);
    check_continuation(&ours_body, "THEIR SUMMARY");
    let theirs_body = continue_session(&env, theirs(), &file, &server);
    check_continuation(&theirs_body, "THEIR SUMMARY");
    (ours_body, theirs_body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_compacted_session_reopens_in_the_typescript_pi() {
    let Some(cli) = ts_cli() else { return };
    our_compacted_session_reopens_in(|| ts_pi(&cli)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_typescript_compacted_session_reopens_here() {
    let Some(cli) = ts_cli() else { return };
    let (ours, theirs) = their_compacted_session_reopens_here(|| ts_pi(&cli)).await;
    // Both send the same context for the same file (the system prompt aside).
    let strip = |body: &Value| {
        let mut messages = body["messages"].as_array().unwrap().clone();
        messages.remove(0);
        messages.pop();
        messages
            .into_iter()
            .map(|m| json!({"role": m["role"], "text": user_texts(&json!({"messages": [m]}))}))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&ours)[..1], strip(&theirs)[..1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_compacted_session_reopens_in_pi_15() {
    let Some(wrapper) = ts15() else { return };
    let lines = our_compacted_session_reopens_in(|| ts15_pi(&wrapper)).await;
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "message" && l["message"]["role"] == "system"),
        "1.5.2 wrote its system message to the file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_15_compacted_session_reopens_here() {
    let Some(wrapper) = ts15() else { return };
    their_compacted_session_reopens_here(|| ts15_pi(&wrapper)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_compacted_session_reopens_in_pi_16() {
    let Some(wrapper) = support::ts16::ts16() else {
        return;
    };
    let lines = our_compacted_session_reopens_in(|| support::ts16::ts16_pi(&wrapper)).await;
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "message" && l["message"]["role"] == "system"),
        "1.6.0 kept the system message in the file"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_16_compacted_session_reopens_here() {
    let Some(wrapper) = support::ts16::ts16() else {
        return;
    };
    their_compacted_session_reopens_here(|| support::ts16::ts16_pi(&wrapper)).await;
}
