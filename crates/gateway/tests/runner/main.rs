//! The embedded runner (seed 004) against mock-llm, row by row of its retry table: auth
//! profile rotation and cooldowns, timeouts, thinking downgrades, errors that are not
//! retried, the loop cap, three-tier overflow recovery, usage accounting, chunked
//! compaction and the system prompt modes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod chunks;
mod overflow;
mod prompt_usage;
mod recovery;
mod rotation;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use mock_llm::{Fault, MockServer, RecordedRequest, Script};
use pi_agent_core::{AgentMessage, AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::ThinkingLevel;
use pi_coding_agent::agent_session::{AgentSession, AgentSessionConfig};
use pi_coding_agent::compaction::summarize::SUMMARIZATION_SYSTEM_PROMPT;
use pi_coding_agent::config::{paths, settings_store::SettingsStore};
use pi_coding_agent::model_registry::ModelRegistry;
use pi_coding_agent::session::{EntryKind, SessionManager};
use pi_gateway::runner::{
    AuthProfile, AuthProfileStore, CooldownConfig, EmbeddedRunParams, EmbeddedRunResult,
    FailureKind, RunnerConfig,
};

/// Keys of the test profiles; none may show up in results or errors.
pub const KEY_A: &str = "sk-test-aaaa-1111";
pub const KEY_B: &str = "sk-test-bbbb-2222";
pub const KEY_C: &str = "sk-test-cccc-3333";
/// The session's own key from models.json.
pub const SESSION_KEY: &str = "mock-key";
/// The session's system prompt outside a run's prompt mode.
pub const SESSION_PROMPT: &str = "You are a test.";

/// A scratch agent dir and work dir with a `mock` provider on a running mock-llm.
pub struct Env {
    pub dir: tempfile::TempDir,
    pub agent: PathBuf,
    pub work: PathBuf,
    pub server: MockServer,
}

impl Env {
    /// `context_window` for both models; `settings` merged into settings.json.
    pub async fn new(context_window: u64, settings: Value) -> Env {
        let server = MockServer::start().await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let work = dir.path().join("work");
        std::fs::create_dir_all(&agent).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let models = json!({"providers": {
            "mock": {"baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": SESSION_KEY,
                     "models": [
                        {"id": "mock-model", "name": "Mock Model", "input": ["text", "image"],
                         "contextWindow": context_window, "maxTokens": 4096},
                        {"id": "mock-thinker", "name": "Mock Thinker", "reasoning": true,
                         "contextWindow": context_window, "maxTokens": 4096},
                        {"id": "mock-picky", "name": "Mock Picky", "reasoning": true,
                         "thinkingLevelMap": {"minimal": null},
                         "contextWindow": context_window, "maxTokens": 4096}
                     ]}
        }});
        std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
        let mut all = json!({"defaultProvider": "mock", "defaultModel": "mock-model"});
        if let (Some(all), Value::Object(extra)) = (all.as_object_mut(), settings) {
            all.extend(extra);
        }
        std::fs::write(agent.join("settings.json"), all.to_string()).unwrap();
        Env {
            dir,
            agent,
            work,
            server,
        }
    }

    pub fn registry(&self) -> ModelRegistry {
        ModelRegistry::load(&self.agent)
    }

    /// An in-memory session on `model_id` with the [`BigTool`].
    pub fn session(&self, model_id: &str, thinking: ThinkingLevel) -> AgentSession {
        let registry = self.registry();
        let model = registry.find("mock", model_id).unwrap().clone();
        let settings = Arc::new(SettingsStore::load(
            &paths::settings_path(&self.agent),
            &paths::project_settings_path(&self.work),
        ));
        AgentSession::new(AgentSessionConfig {
            cwd: self.work.clone(),
            registry: Arc::new(registry),
            settings,
            session: SessionManager::in_memory(&self.work),
            model,
            thinking_level: thinking,
            scoped_models: Vec::new(),
            tools: vec![Arc::new(BigTool)],
            system_prompt: SESSION_PROMPT.into(),
            prompt_templates: Vec::new(),
            skills: Vec::new(),
            api_key: None,
            extensions: Default::default(),
        })
    }
}

/// A tool answering with `size` characters of a recognizable pattern; its details carry a
/// marker that must never reach a summary request.
pub struct BigTool;

pub const DETAILS_MARKER: &str = "details-never-summarized";

/// The text [`BigTool`] returns for `size`.
pub fn big_text(size: usize) -> String {
    "0123456789".chars().cycle().take(size).collect()
}

static BIG_PARAMETERS: std::sync::LazyLock<Value> = std::sync::LazyLock::new(
    || json!({"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]}),
);

impl AgentTool for BigTool {
    fn name(&self) -> &str {
        "big"
    }

    fn description(&self) -> &str {
        "Returns `size` characters of output."
    }

    fn parameters(&self) -> &Value {
        &BIG_PARAMETERS
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        _cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let size = args["size"].as_u64().unwrap_or(0) as usize;
        Box::pin(async move {
            let mut result = AgentToolResult::text(big_text(size));
            result.details = Some(json!({"marker": DETAILS_MARKER}));
            Ok(result)
        })
    }
}

/// Profiles `(id, key)` of provider `mock`, in rotation order, cooling down for a minute.
pub fn profiles(list: &[(&str, &str)]) -> AuthProfileStore {
    AuthProfileStore::new(
        list.iter()
            .map(|(id, key)| AuthProfile::new(*id, "mock", *key))
            .collect(),
        CooldownConfig::uniform(Duration::from_secs(60)),
    )
}

/// Run params with fast test settings.
pub fn params(
    session: &AgentSession,
    prompt: &str,
    store: &AuthProfileStore,
    config: RunnerConfig,
) -> EmbeddedRunParams {
    let mut params = EmbeddedRunParams::new(session.clone(), prompt, store.clone());
    params.config = config;
    params
}

/// The runner config of most tests: short pauses, long enough timeouts.
pub fn fast_config() -> RunnerConfig {
    RunnerConfig {
        idle_timeout_ms: Some(10_000),
        summary_retry_delay: Duration::from_millis(1),
        ..RunnerConfig::default()
    }
}

/// An HTTP error whose OpenAI-style body carries `message`.
pub fn http_error(status: u16, message: &str) -> Script {
    Script::default().with_fault(Fault::HttpError {
        status,
        retry_after: None,
        retry_after_ms: None,
        body: Some(
            json!({"error": {"message": message, "type": "invalid_request_error", "param": null, "code": null}})
                .to_string(),
        ),
    })
}

/// The text pi-ai gives for [`http_error`]: the status and the body's error object.
pub fn http_error_text(status: u16, message: &str) -> String {
    format!(
        "{status}: {}",
        json!({"message": message, "type": "invalid_request_error", "param": null, "code": null})
    )
}

/// The bearer key of each request.
pub fn bearer_keys(requests: &[RecordedRequest]) -> Vec<String> {
    requests
        .iter()
        .map(|r| {
            r.headers
                .get("authorization")
                .and_then(|v| v.strip_prefix("Bearer "))
                .unwrap_or_default()
                .to_owned()
        })
        .collect()
}

/// The system (or developer) message text of a request.
pub fn system_text(request: &RecordedRequest) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "system" || m["role"] == "developer")
        .map(|m| match &m["content"] {
            Value::String(s) => s.clone(),
            other => other
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|b| b["text"].as_str())
                .collect(),
        })
        .unwrap_or_default()
}

/// Whether a request is a compaction summary call.
pub fn is_summary_request(request: &RecordedRequest) -> bool {
    system_text(request) == SUMMARIZATION_SYSTEM_PROMPT
}

/// `(profile, failure)` of each attempt.
pub fn attempt_log(result: &EmbeddedRunResult) -> Vec<(Option<String>, Option<FailureKind>)> {
    result
        .attempts
        .iter()
        .map(|a| (a.profile_id.clone(), a.failure))
        .collect()
}

/// Roles of the session's current context.
pub fn roles(session: &AgentSession) -> Vec<String> {
    session
        .messages()
        .iter()
        .map(|m| m.role().to_owned())
        .collect()
}

/// Compaction entries on the session's branch.
pub fn compaction_entries(session: &AgentSession) -> usize {
    session.with_session(|s| {
        s.branch_entries()
            .iter()
            .filter(|e| matches!(e.kind, EntryKind::Compaction { .. }))
            .count()
    })
}

/// The secrets rule: no key in the result (payloads, errors, attempt records) in any form.
pub fn assert_no_secrets(result: &EmbeddedRunResult) {
    let json = serde_json::to_string(result).unwrap();
    let debug = format!("{result:?}");
    for key in [KEY_A, KEY_B, KEY_C, SESSION_KEY] {
        assert!(!json.contains(key), "key {key} in {json}");
        assert!(!debug.contains(key), "key {key} in {debug}");
    }
}

/// The text of a tool result message.
pub fn tool_result_text(message: &AgentMessage) -> Option<String> {
    match message {
        AgentMessage::Llm(pi_ai::Message::ToolResult(r)) => Some(
            r.content
                .iter()
                .filter_map(pi_ai::InputBlock::as_text)
                .collect(),
        ),
        _ => None,
    }
}
