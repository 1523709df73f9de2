//! Extension session lifecycle in RPC and JSON mode as pi 1.6.0 runs it: `new_session`,
//! `switch_session`, `fork` and `clone` run `session_start` and `resources_discover` once
//! each, and what a `session_start` handler appends reaches the client (`entry_appended`);
//! `ctx.shutdown()` from a timer ends an idle RPC pi without another command. Each case
//! runs through ours and pi 1.6.0 (`PI_TS16`) on one mock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

/// Logs `session_start`/`resources_discover`/`session_shutdown` to `$HOOK_LOG`, appends a
/// `marker` entry on each `session_start`, and with `SHUTDOWN_AFTER_MS` asks to shut down
/// from a timer.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.HOOK_LOG, JSON.stringify(entry) + "\n");
export default function (pi) {
  pi.on("session_start", (event, ctx) => {
    log({ hook: "session_start", reason: event.reason });
    pi.appendEntry("marker", { reason: event.reason });
    const delay = Number(process.env.SHUTDOWN_AFTER_MS || 0);
    if (delay > 0) setTimeout(() => ctx.shutdown(), delay);
  });
  pi.on("resources_discover", (event) => {
    log({ hook: "resources_discover", reason: event.reason });
  });
  pi.on("session_shutdown", (event) => {
    log({ hook: "session_shutdown", reason: event.reason });
  });
}
"#;

struct Case {
    env: Env,
    ext: std::path::PathBuf,
    log: std::path::PathBuf,
}

fn case(server: &MockServer) -> Case {
    let env = Env::new(server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("session-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("hooks.jsonl");
    Case { env, ext, log }
}

fn with_host(mut program: Command) -> Command {
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    program
}

fn read_log(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The `entry_appended` markers among `lines`, by reason.
fn markers(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["type"] == "entry_appended" && l["entry"]["customType"] == "marker")
        .map(|l| l["entry"]["data"]["reason"].clone())
        .collect()
}

/// Replaces the session four ways over RPC; returns the handlers' log and the markers the
/// client saw.
async fn replacements(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("first answer"));
    let Case { env, ext, log } = case(&server);
    program.env("HOOK_LOG", &log);
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, with_host(program), &["-e", ext.to_str().unwrap()]);
        rpc.call("p", json!({"type": "prompt", "message": "hello"}));
        rpc.event("agent_settled");
        let first = rpc.call("s", json!({"type": "get_state"}))["data"]["sessionFile"]
            .as_str()
            .unwrap()
            .to_owned();
        let forks = rpc.call("f", json!({"type": "get_fork_messages"}));
        let entry = forks["data"]["messages"][0]["entryId"].clone();
        rpc.call("n", json!({"type": "new_session"}));
        rpc.call("w", json!({"type": "switch_session", "sessionPath": first}));
        rpc.call("c", json!({"type": "clone"}));
        rpc.call("k", json!({"type": "fork", "entryId": entry}));
        rpc.call("end", json!({"type": "get_state"}));
        let seen = markers(&rpc.seen);
        rpc.finish();
        let hooks = read_log(&log);
        drop(env);
        json!({"hooks": hooks, "markers": seen})
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_replacements_start_extensions_once_and_forward_their_entries() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = replacements(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    let starts: Vec<&Value> = ours["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["hook"] == "session_start")
        .map(|h| &h["reason"])
        .collect();
    assert_eq!(
        starts,
        [
            &json!("startup"),
            &json!("new"),
            &json!("resume"),
            &json!("fork"),
            &json!("fork")
        ],
        "{ours:#}"
    );
    // The startup marker too: the client sees what startup handlers append.
    assert_eq!(
        ours["markers"],
        json!(["startup", "new", "resume", "fork", "fork"]),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = replacements(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}

/// Runs one JSON-mode prompt; returns the markers printed and the handlers' log.
async fn json_mode(program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("an answer"));
    let Case { env, ext, log } = case(&server);
    let output = tokio::task::spawn_blocking(move || {
        let output = with_host(program)
            .args(["-e", ext.to_str().unwrap(), "--mode", "json", "-p", "hello"])
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env("HOOK_LOG", &log)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        let hooks = read_log(&log);
        drop(env);
        (output, hooks)
    });
    let (output, hooks) = output.await.unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let lines: Vec<Value> = String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    json!({"markers": markers(&lines), "hooks": hooks})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn json_mode_prints_what_session_start_handlers_append() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = json_mode(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(ours["markers"], json!(["startup"]), "{ours:#}");
    if let Some(wrapper) = ts16() {
        let theirs = json_mode(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}

/// Starts RPC pi with a shutdown timer and no commands; returns its exit code and the log.
async fn idle_shutdown(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    let Case { env, ext, log } = case(&server);
    program
        .env("HOOK_LOG", &log)
        .env("SHUTDOWN_AFTER_MS", "200");
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, with_host(program), &["-e", ext.to_str().unwrap()]);
        // Without the fix pi waits for a command forever; the process ending is the test.
        let code = rpc.wait_exit();
        let hooks = read_log(&log);
        drop(env);
        json!({"code": code, "hooks": hooks})
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_from_a_timer_ends_an_idle_rpc_pi() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = idle_shutdown(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(
        ours,
        json!({"code": 0, "hooks": [
            {"hook": "session_start", "reason": "startup"},
            {"hook": "resources_discover", "reason": "startup"},
            {"hook": "session_shutdown", "reason": "quit"},
        ]}),
    );
    if let Some(wrapper) = ts16() {
        let theirs = idle_shutdown(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
