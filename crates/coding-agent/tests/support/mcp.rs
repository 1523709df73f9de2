//! Helpers of the MCP tests: where the npm servers are, the test servers in Python
//! (`tests/fixtures/mcp`), running `pi`, and reading what the model was sent.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::rpc::Env;

/// Where the npm servers are installed.
pub fn servers_dir() -> Option<PathBuf> {
    let dir = std::env::var_os("PI_TEST_MCP_SERVERS").map_or_else(
        || Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/mcp-servers"),
        PathBuf::from,
    );
    let found = dir
        .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
        .exists();
    if !found {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_MCP").is_none(),
            "the MCP test servers are not installed (scripts/install-mcp-servers.sh)"
        );
        eprintln!(
            "the MCP test servers are not installed: skipped (scripts/install-mcp-servers.sh)"
        );
    }
    found.then_some(dir)
}

/// The npm `everything` server, its tools declared to the model (`exposure: direct`: these
/// tests are about MCP, not about pi 1.6's default `codemode` exposure).
pub fn everything(dir: &Path) -> Value {
    let mut entry = everything_default(dir);
    entry["exposure"] = json!("direct");
    entry
}

/// The npm `everything` server with the default exposure.
pub fn everything_default(dir: &Path) -> Value {
    let script = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    json!({"command": "node", "args": [script.display().to_string(), "stdio"]})
}

/// Writes the global mcp.json with `servers`; a server with no `exposure` gets `direct`
/// (its tools declared to the model), as most tests call the tools directly.
pub fn write_config(env: &Env, servers: Value) {
    let mut servers = servers;
    if let Value::Object(entries) = &mut servers {
        for entry in entries.values_mut() {
            if let Value::Object(entry) = entry {
                entry.entry("exposure").or_insert_with(|| json!("direct"));
            }
        }
    }
    std::fs::write(
        env.agent.join("mcp.json"),
        serde_json::to_string_pretty(&json!({ "mcpServers": servers })).unwrap(),
    )
    .unwrap();
}

pub fn pi(env: &Env, args: &[&str]) -> Output {
    pi_with(env, args, &[])
}

/// [`pi`] with extra environment variables.
pub fn pi_with(env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
    command
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_OFFLINE", "1")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (key, value) in vars {
        command.env(key, value);
    }
    command.output().expect("pi runs")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The names of the tools a request declared.
pub fn declared(body: &Value) -> Vec<String> {
    body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The content of the tool result messages of a request.
pub fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

/// Whether a process is gone (or a zombie).
pub fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit(')')
            .next()
            .is_some_and(|rest| rest.trim_start().starts_with('Z')),
    }
}

pub fn wait_until(what: &str, check: impl Fn() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The test server, configured with a notes file it writes what it saw to; its tools are
/// declared (`exposure: direct`) unless `extra` says otherwise.
pub fn test_server(env: &Env, extra: Value) -> (Value, PathBuf) {
    let script = fixture("test_server.py");
    let notes = env.dir.path().join("notes.txt");
    let mut entry = json!({"command": "python3", "args": [script.display().to_string(), notes.display().to_string()], "exposure": "direct"});
    if let (Some(entry), Value::Object(extra)) = (entry.as_object_mut(), extra) {
        entry.extend(extra);
    }
    (entry, notes)
}

pub fn notes(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// server-everything over streamable HTTP on a free port. It says on stderr when it
/// listens, or that the port was taken in the meantime (then another port is tried), so
/// nothing here waits on time or connects to a port someone else may hold.
pub fn start_http_everything(dir: &Path) -> (HttpServer, String) {
    use std::io::BufRead;
    let script = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    for _ in 0..10 {
        let port = free_port();
        let mut child = Command::new("node")
            .arg(&script)
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let listening = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|line| line.contains("listening on port"));
        if listening {
            std::thread::spawn(move || lines.for_each(drop));
            return (HttpServer(child), format!("http://127.0.0.1:{port}/mcp"));
        }
        // It ended without listening (the port was taken): try another.
        let _ = child.kill();
        let _ = child.wait();
    }
    panic!("server-everything did not listen on any of 10 ports");
}

/// server-everything over streamable HTTP, stopped when dropped.
pub struct HttpServer(std::process::Child);

impl Drop for HttpServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A Python server of `tests/fixtures/mcp`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/mcp")
        .join(name)
}
