//! Runs on the OpenAI Responses family (`openai-codex-responses`, `openai-responses`)
//! against the mock: a `parity` provider of that API in `models.json` (a ChatGPT-style
//! token for Codex), recorded bodies edited into the stream a case needs, and what a
//! `--mode json -p` run printed.
#![allow(dead_code)]

use std::process::Command;
use std::time::{Duration, Instant};

use base64::Engine;
use serde_json::{Value, json};

use mock_llm::{MockServer, Script};

use super::rpc::Env;

/// The model every run uses.
pub const MODEL: &str = "parity-model";

/// The session id runs start with (`--session-id`), so both pis send the same one.
pub const SESSION_ID: &str = "019a0000-0000-7000-8000-0000000000c1";

/// A ChatGPT-style OAuth token carrying an account id, as the Codex backend needs.
pub fn codex_token(account: &str) -> String {
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}});
    format!(
        "{}.{}.signature",
        engine.encode(r#"{"alg":"none"}"#),
        engine.encode(payload.to_string())
    )
}

/// An agent dir whose `parity` provider speaks `api` to the mock, with `settings` merged
/// into settings.json.
pub fn env(server: &MockServer, api: &str, settings: Value) -> Env {
    let env = Env::new(server, 128_000, settings);
    let (base_url, key) = match api {
        "openai-codex-responses" => (server.url(), codex_token("acct-parity")),
        _ => (server.openai_base_url(), format!("sk-parity-{api}")),
    };
    let models = json!({"providers": {"parity": {
        "baseUrl": base_url, "api": api, "apiKey": key,
        "models": [{"id": MODEL, "name": MODEL, "reasoning": false, "input": ["text"],
                    "contextWindow": 128_000, "maxTokens": 16_384,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}}],
    }}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    env
}

/// The Responses stream the mock sends for `script`, as text.
pub fn body(script: &Script) -> String {
    let bytes = mock_llm::render_body("openai-responses", script).unwrap();
    String::from_utf8(bytes).unwrap()
}

/// `body` with the terminal event's `response` object changed by `edit`.
pub fn with_terminal_response(body: &str, edit: impl Fn(&mut Value)) -> String {
    let mut out = String::new();
    for event in body.split_inclusive("\n\n") {
        let Some(data) = event
            .lines()
            .find_map(|l| l.strip_prefix("data: "))
            .filter(|d| d.contains("\"response.completed\""))
        else {
            out.push_str(event);
            continue;
        };
        let mut value: Value = serde_json::from_str(data).unwrap();
        edit(&mut value["response"]);
        out.push_str(&event.replace(data, &value.to_string()));
    }
    out
}

/// `body` without its terminal event (the stream ends cleanly before it).
pub fn without_terminal_event(body: &str) -> String {
    body.split_inclusive("\n\n")
        .filter(|event| !event.contains("\"response.completed\""))
        .collect()
}

/// What one `--mode json -p` run printed, and how long it took.
pub struct Printed {
    pub lines: Vec<Value>,
    pub elapsed: Duration,
}

impl Printed {
    /// The assistant messages of the run's `message_end` events.
    pub fn assistant_messages(&self) -> Vec<&Value> {
        self.lines
            .iter()
            .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
            .map(|l| &l["message"])
            .collect()
    }

    /// The events of `kind`.
    pub fn of_type(&self, kind: &str) -> Vec<&Value> {
        self.lines.iter().filter(|l| l["type"] == kind).collect()
    }
}

/// Runs `program --mode json -p <prompt>` on the `parity` model in `env` (stdin closed).
pub fn print(env: &Env, mut program: Command, prompt: &str) -> Printed {
    let started = Instant::now();
    let output = program
        .args([
            "--model",
            &format!("parity/{MODEL}"),
            "--session-id",
            SESSION_ID,
        ])
        .args(["--mode", "json", "-p", prompt])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .stdin(std::process::Stdio::null())
        .output()
        .expect("pi runs");
    let elapsed = started.elapsed();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let lines = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    Printed { lines, elapsed }
}

/// Runs one prompt through `program --mode rpc` on the `parity` model in `env` until the
/// run settles; every line it printed.
pub fn rpc_prompt(env: &Env, mut program: Command, prompt: &str) -> Vec<Value> {
    program.env("PI_OFFLINE", "1");
    let model = format!("parity/{MODEL}");
    let args = ["--model", model.as_str(), "--session-id", SESSION_ID];
    let mut rpc = super::rpc::Rpc::start_program(env, program, &args);
    rpc.call("p", json!({"type": "prompt", "message": prompt}));
    rpc.event("agent_settled");
    std::mem::take(&mut rpc.seen)
}

/// An assistant message reduced to what both pis must agree on.
pub fn reply(message: &Value) -> Value {
    json!({
        "stopReason": message["stopReason"],
        "errorMessage": message["errorMessage"],
        "text": message["content"][0]["text"],
        "endTurn": message["endTurn"],
    })
}

/// The assistant replies and retry events among `lines`.
pub fn replies_and_retries(lines: &[Value]) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| match l["type"].as_str()? {
            "auto_retry_start" | "auto_retry_end" => Some(l.clone()),
            "message_end" if l["message"]["role"] == "assistant" => Some(reply(&l["message"])),
            _ => None,
        })
        .collect()
}
