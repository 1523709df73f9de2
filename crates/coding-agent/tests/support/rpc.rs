//! Drives `pi --mode rpc` over pipes: send commands, wait for responses and events.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use mock_llm::MockServer;

/// A scratch agent dir and work dir with a `mock` provider on the mock server.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub agent: PathBuf,
    pub work: PathBuf,
}

impl Env {
    /// `settings` is written as the global settings.json (merged over the default model).
    pub fn new(server: &MockServer, context_window: u64, settings: Value) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let models = json!({"providers": {
            "mock": {"baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
                     "models": [
                        {"id": "mock-model", "name": "Mock Model", "contextWindow": context_window, "maxTokens": 16384},
                        {"id": "mock-thinker", "name": "Mock Thinker", "reasoning": true, "contextWindow": context_window, "maxTokens": 16384}
                     ]}
        }});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        let mut all = json!({"defaultProvider": "mock", "defaultModel": "mock-model"});
        if let (Some(all), Value::Object(extra)) = (all.as_object_mut(), settings) {
            all.extend(extra);
        }
        std::fs::write(agent.join("settings.json"), all.to_string()).unwrap();
        Env { dir, agent, work }
    }

    /// The global settings.json once `check` holds for it (pi 1.6.0 writes it after it
    /// redraws, under a file lock): read until it says what is awaited.
    pub fn settings_when(&self, what: &str, check: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let text =
                std::fs::read_to_string(self.agent.join("settings.json")).unwrap_or_default();
            if let Ok(value) = serde_json::from_str::<Value>(&text)
                && check(&value)
            {
                return value;
            }
            assert!(
                Instant::now() < deadline,
                "settings.json never showed {what}: {text}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The session files under the agent dir.
    pub fn session_files(&self) -> Vec<PathBuf> {
        let mut found = Vec::new();
        let mut stack = vec![self.agent.join("sessions")];
        while let Some(dir) = stack.pop() {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                } else if path.extension().is_some_and(|e| e == "jsonl") {
                    found.push(path);
                }
            }
        }
        found.sort();
        found
    }
}

/// Parses a session file into its JSON lines.
pub fn read_jsonl(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// A running `pi --mode rpc`.
pub struct Rpc {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<Value>,
    /// Every line received so far.
    pub seen: Vec<Value>,
}

impl Rpc {
    pub fn start(env: &Env, args: &[&str]) -> Rpc {
        Self::start_program(env, Command::new(env!("CARGO_BIN_EXE_pi")), args)
    }

    /// Starts our pi with extra environment variables.
    pub fn start_with_env(env: &Env, args: &[&str], vars: &[(&str, &Path)]) -> Rpc {
        let mut program = Command::new(env!("CARGO_BIN_EXE_pi"));
        for (key, value) in vars {
            program.env(key, value);
        }
        Self::start_program(env, program, args)
    }

    /// Starts another pi (for example the TypeScript one: `node cli.js`) in RPC mode.
    pub fn start_program(env: &Env, mut program: Command, args: &[&str]) -> Rpc {
        let mut child = program
            .arg("--mode")
            .arg("rpc")
            .args(args)
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("pi starts");
        let stdout = child.stdout.take().unwrap();
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value: Value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"));
                if sender.send(value).is_err() {
                    break;
                }
            }
        });
        let stdin = child.stdin.take();
        Rpc {
            child,
            stdin,
            lines,
            seen: Vec::new(),
        }
    }

    pub fn send(&mut self, command: Value) {
        self.send_raw(&command.to_string());
    }

    pub fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(line.as_bytes()).unwrap();
        stdin.write_all(b"\n").unwrap();
        stdin.flush().unwrap();
    }

    /// Reads lines until one matches; returns the lines read by this call (the match last).
    pub fn until(&mut self, what: &str, matches: impl Fn(&Value) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut got = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    self.seen.push(line.clone());
                    let done = matches(&line);
                    got.push(line);
                    if done {
                        return got;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {
                    panic!("timed out waiting for {what}; got {got:#?}")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("pi exited waiting for {what}; got {got:#?}")
                }
            }
        }
    }

    /// Waits for the response with this id.
    pub fn response(&mut self, id: &str) -> Value {
        let lines = self.until(&format!("response {id}"), |l| {
            l["type"] == "response" && l["id"] == id
        });
        lines.last().cloned().unwrap()
    }

    /// Sends a command with an id and waits for its response.
    pub fn call(&mut self, id: &str, mut command: Value) -> Value {
        command["id"] = id.into();
        self.send(command);
        self.response(id)
    }

    /// Waits for an event of this type.
    pub fn event(&mut self, kind: &str) -> Vec<Value> {
        self.until(kind, |l| l["type"] == kind)
    }

    /// Waits for pi to exit on its own, stdin still open (30 s, as `until` waits for a line).
    pub fn wait_exit(&mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("pi did not exit on its own");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id of pi (for sending it signals).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Closes pi's stdin (end of input) without waiting.
    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }

    /// Closes stdin and waits for the exit code.
    pub fn finish(mut self) -> Option<i32> {
        drop(self.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("pi did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Rpc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The text of every user message of a provider request body.
pub fn user_texts(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            blocks => blocks
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|b| b["text"].as_str())
                .collect(),
        })
        .collect()
}

/// The events of a type among `lines`.
pub fn of_type<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["type"] == kind).collect()
}

/// The text of the last user message in a recorded Chat Completions request body.
pub fn last_user_text(body: &Value) -> String {
    let user = body["messages"]
        .as_array()
        .and_then(|messages| messages.iter().rfind(|m| m["role"] == "user"))
        .unwrap_or_else(|| panic!("no user message in {body:#}"));
    match &user["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
        other => other.to_string(),
    }
}

/// The structure of a value: object keys and array elements kept, scalars replaced by their
/// JSON type (for comparing responses whose values differ by run).
pub fn shape(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), shape(v)))
                .collect::<Map<_, _>>(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(shape).collect()),
        Value::String(_) => "string".into(),
        Value::Number(_) => "number".into(),
        Value::Bool(_) => "bool".into(),
        Value::Null => "null".into(),
    }
}
