//! Print-mode runs of one pi against the mock, returning the request bodies it sent: the
//! `parity` provider of a wire API with one model whose `models.json` fields a case sets.
//! Used to compare what ours and pi 1.6.0 (`PI_TS16`) send for the same session.
#![allow(dead_code)]

use std::process::{Command, Stdio};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};

use super::errors::Wire;
use super::rpc::Env;
use super::ts16::{ours, ts16, ts16_pi};

/// A file the sessions can read.
pub const NOTES_FILE: &str = "notes.txt";

/// One session: the model, its `models.json` fields, the mock's answers and the runs
/// (each run's arguments after `--model`; later runs continue with `-c`).
pub struct Session<'a> {
    pub wire: &'a Wire,
    pub model: Value,
    pub scripts: Vec<Script>,
    pub runs: Vec<Vec<&'a str>>,
    /// Files written into the work dir first (name, content), e.g. an extension.
    pub files: Vec<(&'a str, &'a str)>,
}

/// The model entry: `id`, reasoning, 128k window, free, with `fields` merged over it.
pub fn model(id: &str, fields: Value) -> Value {
    let mut model = json!({"id": id, "name": id, "reasoning": true, "input": ["text", "image"],
        "contextWindow": 128_000, "maxTokens": 16_384,
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}});
    if let (Some(model), Value::Object(fields)) = (model.as_object_mut(), fields) {
        model.extend(fields);
    }
    model
}

/// The recorded requests of `session` through `program` (made fresh for each run): each
/// one's headers (lowercase names) and body.
pub async fn requests(program: impl Fn() -> Command, session: &Session<'_>) -> Vec<(Value, Value)> {
    let server = MockServer::start().await.unwrap();
    server.push_all(session.scripts.clone());
    let env = Env::new(&server, 128_000, json!({}));
    let provider = session.wire.provider;
    let mut models = json!({"providers": {provider: {
        "baseUrl": format!("{}{}", server.url(), session.wire.base_path),
        "api": session.wire.api, "models": [session.model.clone()],
    }}});
    // No key at all where the wire authenticates otherwise (Bedrock's SigV4 keys).
    if !session.wire.api_key.is_empty() {
        models["providers"][provider]["apiKey"] = Value::from(session.wire.api_key);
    }
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(env.agent.join("settings.json"), "{}").unwrap();
    std::fs::write(env.work.join(NOTES_FILE), "the parity notes\n").unwrap();
    for (name, content) in &session.files {
        std::fs::write(env.work.join(name), content).unwrap();
    }
    let model = format!("{provider}/{}", session.model["id"].as_str().unwrap());
    for args in &session.runs {
        let mut command = program();
        command
            .arg("--model")
            .arg(&model)
            .args(args)
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env("PI_OFFLINE", "1")
            .env("PI_SKIP_VERSION_CHECK", "1")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("OPENAI_API_KEY")
            .env_remove("GEMINI_API_KEY")
            .stdin(Stdio::null());
        for (key, value) in session.wire.env {
            command.env(key, value);
        }
        let output = command.output().expect("pi runs");
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    server
        .requests()
        .into_iter()
        .map(|r| (json!(r.headers), r.body))
        .collect()
}

/// The requests of `session` through ours and, when installed, pi 1.6.0, each reduced by
/// `part`; asserts both are the same and returns ours.
pub async fn compare(session: &Session<'_>, part: impl Fn(&[(Value, Value)]) -> Value) -> Value {
    let our = part(&requests(ours, session).await);
    if let Some(wrapper) = ts16() {
        let their = part(&requests(|| ts16_pi(&wrapper), session).await);
        assert_eq!(
            our, their,
            "{}: ours (left) and pi 1.6.0 (right) differ",
            session.wire.api
        );
    }
    our
}
