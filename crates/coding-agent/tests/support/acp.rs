//! Helpers of the ACP tests: the protocol's TypeScript SDK client (tests/acp/pi-acp-client.mjs)
//! driving `pi --mode acp`, the scenario's agent dir, reading what the client saw, and a
//! line-by-line client for what the SDK cannot send.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::MockServer;

use super::rpc::Env;

/// Where scripts/install-pi-acp.sh put pi-acp and the protocol's SDK, or `None` (with a
/// note) when missing.
pub fn sdk_dir() -> Option<PathBuf> {
    let dir = super::target_dir().join("pi-acp");
    if dir
        .join("node_modules/@agentclientprotocol/sdk/dist/acp.js")
        .is_file()
    {
        return Some(std::fs::canonicalize(dir).unwrap());
    }
    assert!(
        std::env::var("PI_TEST_REQUIRE_PI_ACP").as_deref() != Ok("1"),
        "the ACP SDK is not installed in {} (scripts/install-pi-acp.sh)",
        dir.display()
    );
    eprintln!("skipped: the ACP SDK is not installed (scripts/install-pi-acp.sh)");
    None
}

/// The SDK client that runs a scenario.
pub fn client_script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/acp/pi-acp-client.mjs")
}

/// The text of a.txt in every scenario's work folder.
pub const FILE: &str = "one\ntwo\nthree\n";

/// An extension that asks before every bash command (a permission gate).
pub const GATE_EXTENSION: &str = r#"
export default function (pi) {
  pi.on("tool_call", async (event, ctx) => {
    if (event.toolName !== "bash") return;
    const ok = await ctx.ui.confirm("Run this command?", event.input.command);
    if (!ok) return { block: true, reason: "The user said no" };
  });
}
"#;

/// A fresh agent dir and work folder holding a.txt and the gate extension.
pub fn fresh_env(server: &MockServer) -> Env {
    let env = Env::new(server, 128_000, json!({}));
    std::fs::write(env.work.join("a.txt"), FILE).unwrap();
    let extensions = env.agent.join("extensions");
    std::fs::create_dir_all(&extensions).unwrap();
    std::fs::write(extensions.join("gate.ts"), GATE_EXTENSION).unwrap();
    env
}

/// Runs `steps` against ours natively in a fresh agent dir; the client's lines.
pub fn run_native(server: &MockServer, steps: Value, permissions: Value) -> (Env, Vec<Value>) {
    let env = fresh_env(server);
    let lines = run_in(&env, steps, permissions);
    (env, lines)
}

/// Runs `steps` against ours natively in `env`; the client's lines.
pub fn run_in(env: &Env, steps: Value, permissions: Value) -> Vec<Value> {
    run_with_servers(env, steps, permissions, json!([]))
}

/// [`run_in`], session/new handing over `mcp_servers`.
pub fn run_with_servers(
    env: &Env,
    steps: Value,
    permissions: Value,
    mcp_servers: Value,
) -> Vec<Value> {
    run_scenario(
        env,
        steps,
        json!({"permissions": permissions, "mcpServers": mcp_servers}),
    )
}

/// Runs `steps` against ours natively in `env`, with more scenario fields (`permissions`,
/// `mcpServers`, `buffers`).
pub fn run_scenario(env: &Env, steps: Value, fields: Value) -> Vec<Value> {
    let mut scenario = json!({
        "piAcpDir": sdk_dir().unwrap(),
        "cwd": env.work,
        "permissions": [],
        "command": [env!("CARGO_BIN_EXE_pi"), "--mode", "acp"],
        "steps": steps,
    });
    if let Value::Object(fields) = fields {
        scenario.as_object_mut().unwrap().extend(fields);
    }
    let file = env.dir.path().join("scenario.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    let mut command = Command::new("node");
    command
        .arg(client_script())
        .arg(&file)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_OFFLINE", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY");
    // The extension host installed once for all tests.
    if let Some(host) = super::ext_host::host_dir() {
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

/// The updates of a step, but for the command list, which pi sends once a session is
/// ready, on its own (where it falls among the next step's updates varies).
pub fn updates(lines: &[Value], step: u64) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["step"] == step && l.get("update").is_some())
        .map(|l| &l["update"])
        .filter(|u| u["sessionUpdate"] != "available_commands_update")
        .collect()
}

/// The command lists sent.
pub fn command_lists(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l["update"]["sessionUpdate"] == "available_commands_update")
        .map(|l| &l["update"]["availableCommands"])
        .collect()
}

/// The answer (or error) line of a step.
pub fn result(lines: &[Value], step: u64) -> &Value {
    lines
        .iter()
        .find(|l| l["step"] == step && l.get("op").is_some())
        .unwrap_or_else(|| panic!("no result for step {step}: {lines:#?}"))
}

/// `pi --mode acp` spoken to line by line, as a client with no SDK would.
pub struct Raw {
    pub child: std::process::Child,
    pub stdin: Option<std::process::ChildStdin>,
    pub lines: std::sync::mpsc::Receiver<Value>,
}

impl Raw {
    pub fn start(env: &Env) -> Raw {
        use std::io::BufRead;
        let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
        command
            .args(["--mode", "acp"])
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env("PI_OFFLINE", "1")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null());
        if let Some(host) = super::ext_host::host_dir() {
            command.env("PI_EXTENSION_HOST_DIR", host);
        }
        let mut child = command.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in std::io::BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(value) = serde_json::from_str(&line) {
                    let _ = sender.send(value);
                }
            }
        });
        let stdin = child.stdin.take();
        Raw {
            child,
            stdin,
            lines,
        }
    }

    pub fn send(&mut self, line: &str) {
        use std::io::Write;
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(format!("{line}\n").as_bytes()).unwrap();
        stdin.flush().unwrap();
    }

    /// The answer to request `id` (notifications before it are skipped).
    pub fn answer(&self, id: u64) -> Value {
        loop {
            let line = self
                .lines
                .recv_timeout(std::time::Duration::from_secs(30))
                .unwrap_or_else(|_| panic!("no answer to request {id}"));
            if line["id"] == id {
                return line;
            }
        }
    }
}

/// A JSON-RPC request line.
pub fn request(id: u64, method: &str, params: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// Runs `steps` through pi-acp driving pi 1.6.0 (`wrapper`) in a fresh env; the lines.
pub fn run_pi_acp(server: &MockServer, wrapper: &Path, steps: Value) -> Vec<Value> {
    run_pi_acp_in(&fresh_env(server), wrapper, steps, json!([]))
}

/// Runs `steps` through pi-acp driving pi 1.6.0 (`wrapper`) in `env`, answering permission
/// requests with `permissions`; the lines.
pub fn run_pi_acp_in(env: &Env, wrapper: &Path, steps: Value, permissions: Value) -> Vec<Value> {
    let bin = env.dir.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    // pi-acp names pi's version from the `pi` on PATH; a script, so that pi 1.6.0's
    // wrapper finds its node beside its own path.
    let link = bin.join("pi");
    std::fs::write(
        &link,
        format!("#!/bin/sh\nexec '{}' \"$@\"\n", wrapper.display()),
    )
    .unwrap();
    std::fs::set_permissions(&link, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let scenario = json!({"piAcpDir": sdk_dir().unwrap(), "cwd": env.work, "permissions": permissions, "steps": steps});
    let file = env.dir.path().join("scenario.json");
    std::fs::write(&file, scenario.to_string()).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = Command::new("node")
        .arg(client_script())
        .arg(&file)
        .current_dir(&env.work)
        .env("PI_ACP_PI_COMMAND", wrapper)
        .env("PATH", path)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_OFFLINE", "1")
        .env("npm_config_registry", "http://127.0.0.1:9/")
        .env("npm_config_fetch_retries", "0")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .output()
        .expect("node runs the ACP client");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

/// The updates both carry, by kind, runs of one kind counted once, and the step's answer
/// text. Left out: pi-acp's own notices (its startup text, `session_info_update` with its
/// queue, `available_commands_update`), which are an adapter's, not pi's; `usage_update`,
/// which both send after a turn, but pi-acp only when its stats query answers within a
/// second (and then at times before the next turn), so its place is not pi's; a bash call's terminal updates (pi-acp shows commands in
/// the client's terminal, ours as text until the client's terminals are used).
pub fn core(lines: &[Value], step: u64) -> (Vec<String>, String) {
    let mut kinds: Vec<String> = Vec::new();
    let mut text = String::new();
    for update in updates(lines, step) {
        let kind = update["sessionUpdate"].as_str().unwrap_or_default();
        if !matches!(
            kind,
            "agent_message_chunk" | "agent_thought_chunk" | "tool_call" | "tool_call_update"
        ) {
            continue;
        }
        if kind == "agent_message_chunk" {
            text.push_str(update["content"]["text"].as_str().unwrap_or_default());
        }
        // A tool call's status steps, as kinds: the input given, running, ended.
        let label = match (kind, update["status"].as_str()) {
            ("tool_call_update", Some(status)) => format!("tool_call_update:{status}"),
            ("tool_call_update", None) => continue,
            _ => kind.to_owned(),
        };
        if kinds.last() != Some(&label) {
            kinds.push(label);
        }
    }
    (kinds, text)
}
