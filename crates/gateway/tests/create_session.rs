//! `create_agent_session` as a library: the seed's parameters, the pipeline built once,
//! custom tools, the event callback and the cancellation token.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use mock_llm::{Fault, MockServer, Script};
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::ThinkingLevel;
use pi_coding_agent::agent_session::PromptOptions;
use pi_coding_agent::config::paths;
use pi_coding_agent::config::settings_store::SettingsStore;
use pi_coding_agent::model_registry::ModelRegistry;
use pi_coding_agent::session::SessionManager;
use pi_coding_agent::session_event::AgentSessionEvent;
use pi_gateway::create::{SessionParams, SessionResources, ToolOptions, create_agent_session};
use pi_gateway::pipeline::ToolPolicyConfig;
use pi_gateway::runner::AuthProfileStore;

/// A custom tool that answers with its argument.
struct Echo {
    schema: Value,
}

impl AgentTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }
    fn description(&self) -> &str {
        "Repeats the text it is given."
    }
    fn parameters(&self) -> &Value {
        &self.schema
    }
    fn execute(
        &self,
        _id: &str,
        args: Value,
        _cancel: CancellationToken,
        _update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let text = args["text"].as_str().unwrap_or_default().to_owned();
        async move { Ok(AgentToolResult::text(format!("echo: {text}"))) }.boxed()
    }
}

fn params(
    mock: &MockServer,
    dir: &std::path::Path,
    cancel: CancellationToken,
    seen: Arc<Mutex<Vec<String>>>,
) -> SessionParams {
    let agent = dir.join("agent");
    support::write_agent_dir(&agent, mock);
    let registry = Arc::new(ModelRegistry::load(&agent));
    let model = registry.find("mock", "mock-model").unwrap().clone();
    let settings = Arc::new(SettingsStore::load(
        &paths::settings_path(&agent),
        &paths::project_settings_path(dir),
    ));
    let mut policy = ToolPolicyConfig::default();
    policy.tools.deny = Some(vec!["write".to_owned()]);
    SessionParams {
        cwd: dir.to_path_buf(),
        agent_dir: agent.clone(),
        auth: AuthProfileStore::default(),
        registry,
        model,
        thinking_level: ThinkingLevel::Off,
        tools: vec!["read".into(), "write".into()],
        custom_tools: vec![Arc::new(Echo {
            schema: json!({"type": "object", "properties": {"text": {"type": "string"}},
                           "required": ["text"]}),
        })],
        tool_options: ToolOptions {
            policy,
            ..ToolOptions::default()
        },
        session_manager: SessionManager::in_memory(dir),
        settings,
        resources: SessionResources::default(),
        parent_session_id: Some("parent-1".into()),
        session_id: None,
        prompt_mode: None,
        cancel,
        on_event: Some(Arc::new(move |event: &AgentSessionEvent| {
            if let AgentSessionEvent::Agent(e) = event {
                seen.lock().unwrap().push(
                    format!("{e:?}")
                        .split([' ', '{', '('])
                        .next()
                        .unwrap()
                        .to_owned(),
                );
            }
        })),
        extensions: Vec::new(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_created_session_runs_its_pipeline_tools_and_reports_events() {
    let mock = MockServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let created = create_agent_session(params(
        &mock,
        dir.path(),
        CancellationToken::new(),
        Arc::clone(&seen),
    ))
    .unwrap();
    assert_eq!(
        created.tool_names,
        ["read", "echo"],
        "write denied by the policy"
    );
    assert_eq!(created.parent_session_id.as_deref(), Some("parent-1"));
    assert_eq!(
        created.pipeline.tools_after("base").unwrap(),
        ["read", "write", "echo"]
    );
    mock.push(Script::tool_call("echo", json!({"text": "hi"})));
    mock.push(Script::text("done"));
    created
        .session
        .prompt("use echo", PromptOptions::default(), None)
        .await
        .unwrap();
    let requests = mock.requests();
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(tools, ["read", "echo"]);
    let second = requests[1].body.to_string();
    assert!(second.contains("echo: hi"), "{second}");
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.first().map(String::as_str), Some("AgentStart"));
    assert_eq!(seen.last().map(String::as_str), Some("AgentEnd"));
    assert!(seen.iter().any(|e| e == "ToolExecutionEnd"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelling_the_token_aborts_the_run() {
    let mock = MockServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let created = create_agent_session(params(
        &mock,
        dir.path(),
        cancel.clone(),
        Arc::new(Mutex::new(Vec::new())),
    ))
    .unwrap();
    mock.push(
        Script::text("never ends")
            .with_chunk_size(3)
            .with_fault(Fault::stall(2, 30_000)),
    );
    let session = created.session.clone();
    let run =
        tokio::spawn(async move { session.prompt("go", PromptOptions::default(), None).await });
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    cancel.cancel();
    tokio::time::timeout(std::time::Duration::from_secs(10), run)
        .await
        .expect("the run ends once the token is cancelled")
        .unwrap()
        .unwrap();
    let last = created
        .session
        .agent()
        .with_messages(|m| m.last().cloned())
        .unwrap();
    assert_eq!(
        last.as_assistant().map(|a| a.stop_reason),
        Some(pi_ai::StopReason::Aborted)
    );
}
