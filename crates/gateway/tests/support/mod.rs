//! A gateway on an ephemeral port with a `mock` provider on mock-llm, and a client that
//! collects events.
#![allow(dead_code)]

pub mod gateway_cluster;
pub mod lossy_link;
pub mod nats;
pub mod netns;

use std::path::PathBuf;
use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::MockServer;
use pi_gateway::events::Limits;
use pi_gateway::server::client::Client;
use pi_gateway::server::{GatewayConfig, GatewayHandle, serve};

/// OpenClaw's own client (`scripts/install-openclaw-client.sh`), or `None`: then the test
/// says it skipped, unless CI requires the client (`PI_TEST_REQUIRE_OPENCLAW`).
pub fn openclaw_client() -> Option<PathBuf> {
    let path = std::env::var_os("PI_TEST_OPENCLAW").map_or_else(
        || {
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../target/openclaw-client/bin/openclaw")
        },
        PathBuf::from,
    );
    if !path.exists() {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_OPENCLAW").is_none(),
            "the openclaw client is not installed (scripts/install-openclaw-client.sh)"
        );
        eprintln!(
            "the openclaw client is not installed: skipped (scripts/install-openclaw-client.sh)"
        );
        return None;
    }
    Some(path)
}

/// The token of principal `alice`; `bob` has [`BOB`].
pub const ALICE: &str = "alice-token";
pub const BOB: &str = "bob-token";

/// A scratch agent dir and work dir, mock-llm, and a running gateway.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub agent: PathBuf,
    pub work: PathBuf,
    pub mock: MockServer,
    pub gateway: Option<GatewayHandle>,
}

/// `file` with the work dir (`<agent>/../work`) added to the workspaces of alice and bob,
/// the folder every test session opens in.
pub fn with_workspaces(agent: &std::path::Path, mut file: Value) -> Value {
    let work = agent.parent().unwrap().join("work");
    for principal in ["alice", "bob"] {
        let entry = &mut file["principals"][principal];
        if entry.get("workspaces").is_none() {
            entry["workspaces"] = json!([work]);
        }
    }
    file
}

/// Writes models.json and settings.json for a `mock` provider on `mock`.
pub fn write_agent_dir(agent: &std::path::Path, mock: &MockServer) {
    std::fs::create_dir_all(agent).unwrap();
    let models = json!({"providers": {"mock": {
        "baseUrl": mock.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]
    }}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let settings = json!({"defaultProvider": "mock", "defaultModel": "mock-model",
                          "retry": {"enabled": false}});
    std::fs::write(agent.join("settings.json"), settings.to_string()).unwrap();
}

impl Env {
    pub async fn start(limits: Limits) -> Env {
        Env::start_with(limits, |c| c).await
    }

    pub async fn start_with(
        limits: Limits,
        adjust: impl FnOnce(GatewayConfig) -> GatewayConfig,
    ) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&work).unwrap();
        let mock = MockServer::start().await.unwrap();
        write_agent_dir(&agent, &mock);
        std::fs::write(
            agent.join("gateway.json"),
            with_workspaces(&agent, json!({})).to_string(),
        )
        .unwrap();
        let config = GatewayConfig::new(&agent)
            .with_token(ALICE, "alice")
            .with_token(BOB, "bob")
            .with_limits(limits);
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let gateway = serve(listener, adjust(config)).await.unwrap();
        Env {
            dir,
            agent,
            work,
            mock,
            gateway: Some(gateway),
        }
    }

    pub fn url(&self) -> String {
        self.gateway.as_ref().unwrap().url()
    }

    pub async fn client(&self, token: &str) -> Client {
        Client::connect(&self.url(), Some(token)).await.unwrap()
    }

    /// Creates a session in the work dir; returns its id.
    pub async fn create(&self, client: &mut Client, extra: Value) -> String {
        let mut params = json!({"cwd": self.work.to_string_lossy()});
        if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
            p.extend(extra);
        }
        let result = client.call("session.create", params).await.unwrap();
        result["sessionId"].as_str().unwrap().to_owned()
    }
}

/// The limits tests use unless they test the limits: long enough never to fire.
pub fn relaxed() -> Limits {
    Limits {
        hard: Duration::from_secs(600),
        idle: Duration::from_secs(120),
    }
}

/// Reads frames until `done` says stop (checked on events), with a timeout; responses are
/// kept too.
pub async fn collect_until(
    client: &mut Client,
    mut done: impl FnMut(&Value) -> bool,
) -> Vec<Value> {
    let mut buffered = std::mem::take(&mut client.events).into_iter();
    let mut frames = Vec::new();
    for frame in buffered.by_ref() {
        let stop = done(&frame);
        frames.push(frame);
        if stop {
            client.events = buffered.collect();
            return frames;
        }
    }
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        let frame = tokio::time::timeout_at(deadline, client.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out; frames so far: {frames:#?}"))
            .unwrap()
            .unwrap_or_else(|| panic!("connection closed; frames so far: {frames:#?}"));
        let stop = done(&frame);
        frames.push(frame);
        if stop {
            return frames;
        }
    }
}

/// Whether `frame` is event `name` of session `id`.
pub fn is_event(frame: &Value, name: &str, id: &str) -> bool {
    frame["type"] == "event" && frame["event"] == name && frame["sessionId"] == id
}

/// The events among `frames`, as `(seq, name, sessionId)`.
pub fn events(frames: &[Value]) -> Vec<(u64, String, String)> {
    frames
        .iter()
        .filter(|f| f["type"] == "event")
        .map(|f| {
            (
                f["seq"].as_u64().unwrap(),
                f["event"].as_str().unwrap().to_owned(),
                f["sessionId"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Reads frames until `agent_end` of `id`, returning its payload and every frame read.
pub async fn until_agent_end(client: &mut Client, id: &str) -> (Value, Vec<Value>) {
    let frames = collect_until(client, |f| is_event(f, "agent_end", id)).await;
    let end = frames.last().unwrap()["payload"].clone();
    (end, frames)
}
