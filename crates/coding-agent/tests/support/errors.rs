//! One prompt run per pi against scripted provider failures, reduced to what decides the
//! error class: each assistant message's stop reason, error text and content, the
//! auto-retry and compaction events, and how many requests reached the mock. Used to
//! compare ours with pi 1.6.0 (`PI_TS16`) on the same scripts.
#![allow(dead_code)]

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};

use super::rpc::{Env, Rpc};
use super::ts16::{ours, ts16, ts16_pi};

/// Where a case's requests go: a `parity` provider of this wire API on the mock (the
/// request-parity set-up, `request_parity::apis`), with the environment it needs.
pub struct Wire {
    /// The provider's name in `models.json` (`parity`, or a built-in one it extends).
    pub provider: &'static str,
    /// The `api` of the provider in `models.json`.
    pub api: &'static str,
    /// The base URL's path below the mock's root.
    pub base_path: &'static str,
    /// The key in `models.json`.
    pub api_key: &'static str,
    /// Environment both pis get.
    pub env: &'static [(&'static str, &'static str)],
}

/// OpenAI Chat Completions.
pub const CHAT: Wire = Wire {
    provider: "parity",
    api: "openai-completions",
    base_path: "/v1",
    api_key: "sk-errors",
    env: &[],
};
/// OpenAI Responses.
pub const RESPONSES: Wire = Wire {
    provider: "parity",
    api: "openai-responses",
    base_path: "/v1",
    api_key: "sk-errors",
    env: &[],
};
/// Anthropic Messages.
pub const ANTHROPIC: Wire = Wire {
    provider: "parity",
    api: "anthropic-messages",
    base_path: "",
    api_key: "sk-errors",
    env: &[],
};
/// Amazon Bedrock Converse, with a bearer token (no SigV4) over HTTP/1.1.
pub const BEDROCK: Wire = Wire {
    provider: "parity",
    api: "bedrock-converse-stream",
    base_path: "",
    api_key: "sk-errors",
    env: &[
        ("AWS_BEARER_TOKEN_BEDROCK", "sk-errors"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_BEDROCK_FORCE_HTTP1", "1"),
    ],
};
/// Amazon Bedrock Converse signed with SigV4 (static keys, no bearer token) over HTTP/1.1.
pub const BEDROCK_SIGV4: Wire = Wire {
    provider: "amazon-bedrock",
    api: "bedrock-converse-stream",
    base_path: "",
    api_key: "",
    env: &[
        ("AWS_ACCESS_KEY_ID", "AKIDPARITYEXAMPLE"),
        ("AWS_SECRET_ACCESS_KEY", "parity-secret-key"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_BEDROCK_FORCE_HTTP1", "1"),
    ],
};
/// Google Generative AI (Gemini API).
pub const GEMINI: Wire = Wire {
    provider: "parity",
    api: "google-generative-ai",
    base_path: "/v1beta",
    api_key: "sk-errors",
    env: &[],
};
/// Google Vertex AI with an API key.
pub const VERTEX: Wire = Wire {
    provider: "parity",
    api: "google-vertex",
    base_path: "/v1",
    api_key: "sk-errors",
    env: &[],
};

/// Mistral's chat completions, under the mock's `/mistral` prefix.
pub const MISTRAL: Wire = Wire {
    provider: "parity",
    api: "mistral-conversations",
    base_path: "/mistral",
    api_key: "sk-errors",
    env: &[],
};

/// Auto-retry once after 20 ms, no SDK-level retries; compaction keeps almost nothing, so
/// that an overflow after two turns has something to summarize.
pub fn settings() -> Value {
    json!({
        "defaultProvider": "parity", "defaultModel": "parity-model",
        "retry": {"enabled": true, "maxRetries": 1, "baseDelayMs": 20, "provider": {"maxRetries": 0}},
        "compaction": {"keepRecentTokens": 1, "reserveTokens": 100},
    })
}

/// What one run showed.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The reduced events, in order.
    pub events: Vec<Value>,
    /// Requests the mock received.
    pub requests: usize,
}

impl Outcome {
    /// The reduced assistant `message_end`s.
    pub fn messages(&self) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["type"] == "message_end")
            .collect()
    }

    /// The last assistant message.
    pub fn last(&self) -> &Value {
        self.messages()
            .last()
            .copied()
            .expect("an assistant message")
    }

    /// How many events of `kind` there were.
    pub fn count(&self, kind: &str) -> usize {
        self.events.iter().filter(|e| e["type"] == kind).count()
    }
}

/// A content block as compared: its kind and text (thinking with its signature, tool
/// calls by name).
fn block(b: &Value) -> Value {
    match b["type"].as_str() {
        Some("text") => json!({"text": b["text"]}),
        Some("thinking") => json!({"thinking": b["thinking"], "signature": b["thinkingSignature"]}),
        Some("toolCall") => json!({"toolCall": b["name"]}),
        _ => b.clone(),
    }
}

/// The lines that decide an error's class, reduced; `usage` keeps the messages' token
/// counts (only for replayed streams, whose usage does not depend on the request size).
pub fn view(lines: &[Value], usage: bool) -> Vec<Value> {
    lines
        .iter()
        .filter_map(|l| match l["type"].as_str()? {
            "message_end" if l["message"]["role"] == "assistant" => {
                let m = &l["message"];
                let blocks: Vec<Value> = m["content"]
                    .as_array()
                    .map(|c| c.iter().map(block).collect())
                    .unwrap_or_default();
                let mut reduced = json!({"type": "message_end", "stopReason": m["stopReason"],
                    "errorMessage": m["errorMessage"], "content": blocks});
                if usage {
                    // The counts and the five prices (not pi 1.6's `totalFromProvider`).
                    let u = &m["usage"];
                    let c = &u["cost"];
                    let cost = json!({"input": c["input"], "output": c["output"],
                        "cacheRead": c["cacheRead"], "cacheWrite": c["cacheWrite"], "total": c["total"]});
                    reduced["usage"] = json!({"input": u["input"], "output": u["output"],
                        "cacheRead": u["cacheRead"], "cacheWrite": u["cacheWrite"], "cost": cost});
                }
                Some(reduced)
            }
            "auto_retry_start" => Some(json!({"type": "auto_retry_start", "attempt": l["attempt"],
                "errorMessage": l["errorMessage"]})),
            "auto_retry_end" => Some(json!({"type": "auto_retry_end", "success": l["success"],
                "attempt": l["attempt"]})),
            "compaction_start" => Some(json!({"type": "compaction_start", "reason": l["reason"]})),
            "compaction_end" => Some(json!({"type": "compaction_end", "reason": l["reason"],
                "willRetry": l["willRetry"], "aborted": l["aborted"]})),
            _ => None,
        })
        .collect()
}

/// Runs `prompts` one after another through `program` on `wire`, the mock answering with
/// `scripts` in order.
pub async fn run(
    program: Command,
    wire: &Wire,
    scripts: Vec<Script>,
    prompts: &[&str],
    usage: bool,
) -> Outcome {
    run_model(program, wire, &json!({}), scripts, prompts, usage).await
}

/// [`run`] with `fields` merged over the model's entry in `models.json` (e.g. its `cost`).
pub async fn run_model(
    mut program: Command,
    wire: &Wire,
    fields: &Value,
    scripts: Vec<Script>,
    prompts: &[&str],
    usage: bool,
) -> Outcome {
    let server = MockServer::start().await.unwrap();
    server.push_all(scripts);
    let env = Env::new(&server, 128_000, json!({}));
    let model = |id: &str| {
        let mut model = json!({"id": id, "name": id, "reasoning": false, "input": ["text", "image"],
               "contextWindow": 128_000, "maxTokens": 16_384,
               "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}});
        if let (Some(model), Some(fields)) = (model.as_object_mut(), fields.as_object()) {
            model.extend(fields.clone());
        }
        model
    };
    let models = json!({"providers": {"parity": {
        "baseUrl": format!("{}{}", server.url(), wire.base_path),
        "api": wire.api, "apiKey": wire.api_key, "models": [model("parity-model")],
    }}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(env.agent.join("settings.json"), settings().to_string()).unwrap();
    for (key, value) in wire.env {
        program.env(key, value);
    }
    let mut rpc = Rpc::start_program(&env, program, &[]);
    for (i, prompt) in prompts.iter().enumerate() {
        let id = format!("p{i}");
        rpc.call(&id, json!({"type": "prompt", "message": prompt}));
        rpc.event("agent_settled");
    }
    let events = view(&rpc.seen, usage);
    drop(rpc);
    Outcome {
        events,
        requests: server.requests().len(),
    }
}

/// Runs the case through ours and, when installed, pi 1.6.0, asserts both showed the
/// same, and returns ours.
pub async fn compare(
    wire: &Wire,
    scripts: impl Fn() -> Vec<Script>,
    prompts: &[&str],
    usage: bool,
) -> Outcome {
    compare_part(wire, scripts, prompts, usage, |o| o).await
}

/// [`compare`] on the part of each outcome that `part` keeps.
pub async fn compare_part(
    wire: &Wire,
    scripts: impl Fn() -> Vec<Script>,
    prompts: &[&str],
    usage: bool,
    part: fn(Outcome) -> Outcome,
) -> Outcome {
    let our = part(run(ours(), wire, scripts(), prompts, usage).await);
    if let Some(wrapper) = ts16() {
        let their = part(run(ts16_pi(&wrapper), wire, scripts(), prompts, usage).await);
        assert_eq!(
            our, their,
            "{}: ours (left) and pi 1.6.0 (right) differ",
            wire.api
        );
    }
    our
}

/// An SSE body of named events, as Anthropic streams them.
pub fn sse(events: &[(&str, Value)]) -> String {
    events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect()
}

/// A script replaying `body` verbatim.
pub fn replay(body: String) -> Script {
    Script {
        raw_body: Some(body),
        ..Script::default()
    }
}

/// Runs one prompt with the model's entry extended by `fields` through ours and, when
/// installed, pi 1.6.0, with usage and cost kept; asserts both showed the same.
pub async fn compare_model(
    wire: &Wire,
    fields: Value,
    scripts: impl Fn() -> Vec<Script>,
) -> Outcome {
    let our = run_model(ours(), wire, &fields, scripts(), &["hello"], true).await;
    if let Some(wrapper) = ts16() {
        let their = run_model(
            ts16_pi(&wrapper),
            wire,
            &fields,
            scripts(),
            &["hello"],
            true,
        )
        .await;
        assert_eq!(
            our, their,
            "{}: ours (left) and pi 1.6.0 (right) differ",
            wire.api
        );
    }
    our
}
