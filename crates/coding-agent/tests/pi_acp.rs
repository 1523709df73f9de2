//! pi-acp, the ACP adapter Zed runs in front of pi (pinned, `scripts/install-pi-acp.sh`),
//! driven by tests/acp/pi-acp-client.mjs as Zed would drive it, against our `pi` and, with
//! `PI_TS16`, against pi 1.6.0 on the same scripted model (issue 36). The session updates
//! must be the same, but for the differences listed in `normalize` with their reasons.
//! Skipped when node or pi-acp is missing, unless `PI_TEST_REQUIRE_PI_ACP=1`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;

/// Where `scripts/install-pi-acp.sh` put pi-acp, or `None` (with a note) when missing.
fn pi_acp_dir() -> Option<PathBuf> {
    let dir = support::target_dir().join("pi-acp");
    if dir.join("node_modules/pi-acp/dist/index.js").is_file() {
        return Some(std::fs::canonicalize(dir).unwrap());
    }
    assert!(
        std::env::var("PI_TEST_REQUIRE_PI_ACP").as_deref() != Ok("1"),
        "pi-acp is not installed in {} (scripts/install-pi-acp.sh)",
        dir.display()
    );
    eprintln!("skipped: pi-acp is not installed (scripts/install-pi-acp.sh)");
    None
}

fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp/pi-acp-client.mjs")
}

/// A command that offers a choice: pi-acp turns it into `session/request_permission`.
const DIALOG_EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("choose", {
    description: "asks for a color",
    handler: async (_args, ctx) => {
      const color = await ctx.ui.select("Pick a color", ["red", "blue"]);
      ctx.ui.notify("picked " + color, "info");
    },
  });
};
"#;

const FILE: &str = "one\ntwo\nthree\nfour\nfive\n";

fn edit(old: &str, new: &str) -> Script {
    Script::tool_call(
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": old, "newText": new}]}),
    )
}

/// The model's side of the scenario, in order.
fn scripts() -> Vec<Script> {
    vec![
        // Prompt 1: read, bash, three edits, an answer.
        Script::tool_call("read", json!({"path": "a.txt"})),
        Script::tool_call("bash", json!({"command": "echo hello from bash"})),
        edit("two", "TWO"),
        edit("four", "FOUR"),
        edit("five", "FIVE"),
        Script::text("edited"),
        // Prompt 2: a long bash call, cancelled.
        Script::tool_call("bash", json!({"command": "sleep 30"})),
        // Prompt 3: two 429s, then an answer.
        Script::http_error(429),
        Script::http_error(429),
        Script::text("after the retries"),
    ]
}

/// Runs the scenario with `pi` (a program path) in a fresh agent dir; the client's lines.
fn run(pi: &Path, acp: &Path, server: &MockServer, extra_env: &[(&str, &str)]) -> Vec<Value> {
    let env = Env::new(
        server,
        128_000,
        json!({"retry": {"enabled": true, "maxRetries": 3, "baseDelayMs": 200}}),
    );
    std::fs::write(env.work.join("a.txt"), FILE).unwrap();
    let ext_dir = env.agent.join("extensions");
    std::fs::create_dir_all(&ext_dir).unwrap();
    std::fs::write(ext_dir.join("choose.ts"), DIALOG_EXTENSION).unwrap();
    let scenario = json!({
        "piAcpDir": acp,
        "cwd": env.work,
        "permissions": ["blue"],
        "steps": [
            {"op": "initialize"},
            {"op": "new", "awaitStartup": true},
            {"op": "prompt", "text": "edit a.txt"},
            // Cancelled once the command runs (its first progress update). At the call's
            // announcement the cancel would race the tool's start: it may land before the
            // tool begins ("Operation aborted") or after ("Command aborted") in any pi.
            {"op": "prompt", "text": "wait a while", "cancelOn": "tool_call_update"},
            {"op": "prompt", "text": "try again"},
            {"op": "prompt", "text": "/choose", "limitMs": 5000},
            {"op": "load"},
        ],
    });
    let file = env.dir.path().join("scenario.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    client(pi, &file, &env, extra_env)
}

fn client(pi: &Path, scenario: &Path, env: &Env, extra_env: &[(&str, &str)]) -> Vec<Value> {
    // pi-acp names pi's version in its startup notice from the `pi` on PATH.
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("pi");
    if !link.exists() {
        // A script, not a symlink: pi 1.6.0's wrapper finds its node beside its own path.
        std::fs::write(
            &link,
            format!("#!/bin/sh\nexec '{}' \"$@\"\n", pi.display()),
        )
        .unwrap();
        std::fs::set_permissions(&link, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("node");
    command
        .arg(client_script())
        .arg(scenario)
        .current_dir(&env.work)
        .env("PI_ACP_PI_COMMAND", pi)
        .env("PATH", path)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        // pi-acp asks npm for pi's newest version at every session start: no registry.
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_fetch_retries", "0")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    for (key, value) in extra_env {
        command.env(key, value);
    }
    if let Some(host) = support::ext_host::host_dir() {
        command.env("PI_EXTENSION_HOST_DIR", host);
    }
    let output = command.output().expect("node runs the ACP client");
    assert!(
        output.status.success(),
        "the ACP client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// A client line with what differs by construction replaced: the scratch folder, times,
/// session ids.
fn normalize(line: &Value, work: &str) -> Value {
    match line {
        Value::String(text) => {
            let text = text.replace(work, "<WORK>");
            let uuid =
                regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
                    .unwrap();
            Value::String(uuid.replace_all(&text, "<UUID>").into_owned())
        }
        Value::Array(items) => Value::Array(items.iter().map(|v| normalize(v, work)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| !matches!(k.as_str(), "structuredContent" | "durationMs"))
                .map(|(k, v)| {
                    let v = if k == "timestamp" && v.is_number() {
                        json!("<TS>")
                    } else {
                        normalize(v, work)
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// The scratch folder of a run, read from the cwd of its first terminal.
fn work_of(lines: &[Value]) -> String {
    lines
        .iter()
        .find_map(|l| l["update"]["_meta"]["terminal_info"]["cwd"].as_str())
        .unwrap_or("<none>")
        .to_owned()
}

/// The lines compared with pi 1.6.0, normalized. Left out, each for its reason:
/// - `usage_update`: its `used` is the context estimate, which counts the system prompt,
///   worded differently on purpose; pi-acp also sends it beside the turn's start, so its
///   place varies. Its presence is checked on our side.
/// - `structuredContent` of tool results: pi 1.6.0's new tool-result field (codemode and
///   tool orchestration, issue 39), not sent by ours yet.
/// - `durationMs` of stored tool results (seen in a loaded session's replay): pi 1.6.0
///   stores each tool's duration in its result message; ours has it on
///   `tool_execution_end` only (a 1.6.0 session-shape change for the ledger, issue 37).
/// - what pi-acp reads from an edited file when the edit starts (`without_snapshot`).
/// - step 6, the extension command: pi 1.6.0 never completes that prompt (no
///   `agent_settled`, issue 36 item 9), ours does; only its dialog and notice are compared.
fn compared(lines: &[Value]) -> Vec<Value> {
    let work = work_of(lines);
    let file_tools = file_tool_calls(lines);
    lines
        .iter()
        .filter(|l| l["update"]["sessionUpdate"] != "usage_update")
        .filter(|l| !on_own_timer(l))
        .map(|l| without_snapshot(l, &file_tools))
        .filter(|l| {
            l["step"] != 6
                || (l.get("op").is_none() && l["update"]["sessionUpdate"] != "session_info_update")
        })
        .map(|l| normalize(&l, &work))
        .collect()
}

/// The tool calls of `edit` and `write` during the live prompt (step 3).
fn file_tool_calls(lines: &[Value]) -> Vec<Value> {
    step_updates(lines, 3)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call" && u["kind"] == "edit")
        .map(|u| u["toolCallId"].clone())
        .collect()
}

/// A live `edit`'s updates without what pi-acp takes from the file when the tool starts
/// (the line in `locations`, and a diff against that snapshot at the end): pi-acp reads
/// the file when `tool_execution_start` arrives, with no acknowledgement in the RPC
/// protocol, so whether it reads before the change is a race for any pi. Ours writes the
/// event before changing the file and replaces the file atomically (file_tools_order.rs
/// and tools::atomic_write test both); only the status of the end is compared.
fn without_snapshot(line: &Value, file_tools: &[Value]) -> Value {
    let update = &line["update"];
    if line["step"] != 3 || !file_tools.contains(&update["toolCallId"]) {
        return line.clone();
    }
    let mut line = line.clone();
    if update["status"] == "completed" || update["status"] == "failed" {
        line["update"] = json!({
            "toolCallId": update["toolCallId"],
            "status": update["status"],
            "sessionUpdate": update["sessionUpdate"],
        });
    } else if let Some(locations) = line["update"]["locations"].as_array_mut() {
        for location in locations {
            if let Some(location) = location.as_object_mut() {
                location.remove("line");
            }
        }
    }
    line
}

/// Updates pi-acp sends on its own timer after a session starts (the command list): where
/// they fall among the next step's updates varies, so they are compared apart.
fn on_own_timer(line: &Value) -> bool {
    line["update"]["sessionUpdate"] == "available_commands_update"
}

/// The updates of `on_own_timer`, in order, without the step they fell in.
fn timer_updates(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| on_own_timer(l))
        .map(|l| l["update"].clone())
        .collect()
}

fn step_updates(lines: &[Value], step: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["step"] == step && l.get("update").is_some())
        .map(|l| &l["update"])
        .collect()
}

fn result_of(lines: &[Value], step: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["step"] == step && l.get("op").is_some())
        .unwrap_or_else(|| panic!("no result for step {step}: {lines:#?}"))
}

/// What Zed must get from ours, whatever pi does: every prompt completes with the right
/// stop reason, the three edits complete, retries are announced, the
/// extension's dialog is a permission request, and the loaded session replays it all.
fn check_ours(lines: &[Value]) {
    let startup = step_updates(lines, 2)
        .into_iter()
        .find_map(|u| u["content"]["text"].as_str())
        .unwrap_or_default();
    assert!(
        startup.starts_with(&format!("pi v{}\n", pi_coding_agent::PI_VERSION)),
        "pi-acp's startup notice: {startup:?}"
    );
    assert_eq!(
        result_of(lines, 3)["result"]["stopReason"],
        "end_turn",
        "{lines:#?}"
    );
    let edits = file_tool_calls(lines);
    assert_eq!(edits.len(), 3, "{lines:#?}");
    let completed = step_updates(lines, 3)
        .into_iter()
        .filter(|u| edits.contains(&u["toolCallId"]) && u["status"] == "completed")
        .count();
    assert_eq!(completed, 3);
    assert!(
        step_updates(lines, 3)
            .iter()
            .any(|u| u["sessionUpdate"] == "usage_update")
    );
    assert_eq!(result_of(lines, 4)["result"]["stopReason"], "cancelled");
    let retries: Vec<&Value> = step_updates(lines, 5)
        .into_iter()
        .filter_map(|u| {
            u["content"]["text"]
                .as_str()
                .filter(|t| t.starts_with("Retry"))
                .map(|_| &u["content"]["text"])
        })
        .collect();
    assert_eq!(
        retries.len(),
        3,
        "two retries announced and their end: {retries:?}"
    );
    assert_eq!(result_of(lines, 5)["result"]["stopReason"], "end_turn");
    let permission = lines
        .iter()
        .find(|l| l["step"] == 6 && l.get("permission").is_some())
        .unwrap();
    assert_eq!(permission["answer"], "blue");
    assert!(
        step_updates(lines, 6)
            .iter()
            .any(|u| u["content"]["text"] == "picked blue")
    );
    assert_eq!(result_of(lines, 6)["result"]["stopReason"], "end_turn");
    assert!(
        result_of(lines, 7).get("result").is_some(),
        "session/load: {lines:#?}"
    );
    assert!(
        step_updates(lines, 7)
            .iter()
            .any(|u| u["content"]["text"] == "after the retries")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_acp_drives_ours_as_zed_would() {
    let Some(acp) = pi_acp_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all(scripts());
    let ours = run(Path::new(env!("CARGO_BIN_EXE_pi")), &acp, &server, &[]);
    check_ours(&ours);
    let Some(wrapper) = support::ts16::ts16() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all(scripts());
    let theirs = run(&wrapper, &acp, &server, &[("PI_OFFLINE", "1")]);
    assert_eq!(
        result_of(&theirs, 6)["error"]["message"],
        "no answer within 5000 ms",
        "pi 1.6.0 completed the extension command's prompt: item 9 can be dropped"
    );
    assert_eq!(timer_updates(&ours), timer_updates(&theirs));
    let (ours, theirs) = (compared(&ours), compared(&theirs));
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(a, b, "session update {i} differs from pi 1.6.0's");
    }
    assert_eq!(
        ours.len(),
        theirs.len(),
        "ours:\n{ours:#?}\n1.6.0:\n{theirs:#?}"
    );
}

/// An agent dir with no model: pi-acp must get to ask the user to sign in (ACP's
/// `auth_required`), as with pi 1.6.0, not a broken pipe.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_model_asks_zed_to_authenticate() {
    let Some(acp) = pi_acp_dir() else {
        return;
    };
    let mut programs = vec![(PathBuf::from(env!("CARGO_BIN_EXE_pi")), vec![])];
    if let Some(wrapper) = support::ts16::ts16() {
        programs.push((wrapper, vec![("PI_OFFLINE", "1")]));
    }
    let mut errors = Vec::new();
    for (pi, extra) in programs {
        let server = MockServer::start().await.unwrap();
        let env = Env::new(&server, 128_000, json!({}));
        std::fs::remove_file(env.agent.join("models.json")).unwrap();
        std::fs::write(env.agent.join("settings.json"), "{}").unwrap();
        let scenario = json!({
            "piAcpDir": acp, "cwd": env.work,
            "steps": [{"op": "initialize"}, {"op": "new"}],
        });
        let file = env.dir.path().join("scenario.json");
        std::fs::write(&file, scenario.to_string()).unwrap();
        let lines = client(&pi, &file, &env, &extra);
        let error = result_of(&lines, 2)["error"].clone();
        assert_eq!(error["code"], -32000, "{}: {lines:#?}", pi.display());
        errors.push(error);
    }
    if errors.len() == 2 {
        assert_eq!(errors[0], errors[1]);
    }
}
