//! A Rust in-process extension on a real AgentSession against mock-llm: its tool runs, its
//! `tool_call` gate blocks a bash call, its `before_agent_start` changes the system prompt,
//! its command sends a custom message, and its `session_start` sees the binding — the same
//! runtime TypeScript extensions use, without node.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use mock_llm::{MockServer, Script};
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::ThinkingLevel;
use pi_coding_agent::agent_session::{
    AgentSession, AgentSessionConfig, ExtensionSetup, PromptOptions,
};
use pi_coding_agent::config::{paths, settings_store::SettingsStore};
use pi_coding_agent::extensions::registry::CommandDef;
use pi_coding_agent::extensions::{
    Extension, ExtensionAction, ExtensionBackend, ExtensionContext, ExtensionEvent,
    ExtensionMessage, ExtensionRuntime, NoUi, Registrations, RustBackend, SendMessageOptions,
};
use pi_coding_agent::model_registry::ModelRegistry;
use pi_coding_agent::session::{EntryKind, SessionManager};
use pi_coding_agent::tools;
use support::rpc::Env;

/// A tool that returns a fixed stamp.
struct Stamp;

impl AgentTool for Stamp {
    fn name(&self) -> &str {
        "stamp"
    }
    fn description(&self) -> &str {
        "Returns the stamp"
    }
    fn parameters(&self) -> &Value {
        static SCHEMA: std::sync::OnceLock<Value> = std::sync::OnceLock::new();
        SCHEMA.get_or_init(|| json!({"type": "object", "properties": {}}))
    }
    fn execute(
        &self,
        _id: &str,
        _args: Value,
        _cancel: CancellationToken,
        _update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        Box::pin(async { Ok(AgentToolResult::text("STAMPED")) })
    }
}

/// The extension under test.
struct Guard {
    log: Arc<Mutex<Vec<String>>>,
}

impl Extension for Guard {
    fn path(&self) -> &str {
        "<rust:guard>"
    }

    fn register(&self) -> Registrations {
        Registrations {
            events: vec!["session_start", "tool_call", "before_agent_start"],
            tools: vec![Arc::new(Stamp)],
            commands: vec![CommandDef {
                name: "note".into(),
                description: Some("Adds a note".into()),
                extension_path: "<rust:guard>".into(),
                has_argument_completions: false,
            }],
            ..Registrations::default()
        }
    }

    fn on_event<'a>(
        &'a self,
        event: &'a mut ExtensionEvent,
        ctx: &'a ExtensionContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async move {
            self.log.lock().unwrap().push(event.kind().to_owned());
            match event {
                ExtensionEvent::SessionStart { reason, .. } => {
                    assert_eq!(reason, "startup");
                    assert!(!ctx.has_ui());
                    Ok(None)
                }
                ExtensionEvent::ToolCall {
                    tool_name, input, ..
                } if tool_name == "bash" => {
                    if input["command"].as_str().unwrap_or("").contains("rm ") {
                        return Ok(Some(json!({"block": true, "reason": "no deleting"})));
                    }
                    Ok(None)
                }
                ExtensionEvent::BeforeAgentStart { system_prompt, .. } => Ok(Some(
                    json!({"systemPrompt": format!("{system_prompt}\nGuarded.")}),
                )),
                _ => Ok(None),
            }
        })
    }

    fn run_command<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
        ctx: &'a ExtensionContext,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            assert_eq!(name, "note");
            ctx.perform(ExtensionAction::SendMessage {
                message: ExtensionMessage {
                    custom_type: "note".into(),
                    content: json!(args),
                    display: true,
                    details: None,
                },
                options: SendMessageOptions::default(),
                request: Default::default(),
            })
            .await
            .map(|_| ())
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rust_extension_runs_in_process_on_the_same_runtime() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::tool_call("stamp", json!({})),
        Script::tool_call("bash", json!({"command": "rm -rf build"})),
        Script::text("all done"),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let log = Arc::new(Mutex::new(Vec::new()));
    let runtime = Arc::new(ExtensionRuntime::new(
        vec![Arc::new(RustBackend::new(
            Arc::new(Guard { log: log.clone() }),
            env.work.clone(),
        )) as Arc<dyn ExtensionBackend>],
        Vec::new(),
    ));
    let mut active = tools::build_tools(&["bash".into()], &env.work, Default::default()).unwrap();
    active.extend(runtime.tools());
    let registry = ModelRegistry::load(&env.agent);
    let model = registry.find("mock", "mock-model").unwrap().clone();
    let settings = Arc::new(SettingsStore::load(
        &paths::settings_path(&env.agent),
        &paths::project_settings_path(&env.work),
    ));
    let session = AgentSession::new(AgentSessionConfig {
        cwd: env.work.clone(),
        registry: Arc::new(registry),
        settings,
        session: SessionManager::in_memory(&env.work),
        model,
        thinking_level: ThinkingLevel::Off,
        scoped_models: Vec::new(),
        tools: active,
        system_prompt: "Base prompt.".into(),
        prompt_templates: Vec::new(),
        skills: Vec::new(),
        api_key: None,
        extensions: ExtensionSetup {
            runtime: runtime.clone(),
            ..ExtensionSetup::default()
        },
    });
    session
        .bind_extensions(Arc::new(NoUi), Arc::new(|_| {}), Arc::new(|| {}))
        .await;
    session
        .prompt("stamp then clean", PromptOptions::default(), None)
        .await
        .unwrap();
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(system.ends_with("Base prompt.\nGuarded."), "{system}");
    let results: Vec<Value> = requests[2].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .cloned()
        .collect();
    assert_eq!(results[0]["content"], "STAMPED");
    assert_eq!(results[1]["content"], "no deleting");
    // The command runs at once and its message lands in the session.
    session
        .prompt("/note remember this", PromptOptions::default(), None)
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 3, "a command makes no request");
    let note = session.with_session(|s| {
        s.entries().iter().find_map(|e| match &e.kind {
            EntryKind::CustomMessage {
                custom_type,
                content,
                ..
            } if custom_type == "note" => Some(content.clone()),
            _ => None,
        })
    });
    assert_eq!(note, Some(json!("remember this")));
    let commands = session.slash_commands();
    assert_eq!(commands[0]["name"], "note");
    let seen = log.lock().unwrap().clone();
    assert_eq!(seen[0], "session_start");
    assert!(
        seen.iter().filter(|e| *e == "tool_call").count() == 2,
        "{seen:?}"
    );
}
