//! An `AgentSession` for library-API tests: the env's `mock` model, its settings, a short
//! system prompt, and the tools given.
#![allow(dead_code)]

use std::sync::Arc;

use pi_agent_core::AgentTool;
use pi_ai::ThinkingLevel;
use pi_coding_agent::agent_session::{AgentSession, AgentSessionConfig};
use pi_coding_agent::config::{paths, settings_store::SettingsStore};
use pi_coding_agent::model_registry::ModelRegistry;
use pi_coding_agent::session::SessionManager;

use super::rpc::Env;

pub fn session(env: &Env, manager: SessionManager, tools: Vec<Arc<dyn AgentTool>>) -> AgentSession {
    let registry = ModelRegistry::load(&env.agent);
    let model = registry.find("mock", "mock-model").unwrap().clone();
    let settings = Arc::new(SettingsStore::load(
        &paths::settings_path(&env.agent),
        &paths::project_settings_path(&env.work),
    ));
    AgentSession::new(AgentSessionConfig {
        cwd: env.work.clone(),
        registry: Arc::new(registry),
        settings,
        session: manager,
        model,
        thinking_level: ThinkingLevel::Off,
        scoped_models: Vec::new(),
        tools,
        system_prompt: "You are a test.".into(),
        prompt_templates: Vec::new(),
        skills: Vec::new(),
        api_key: None,
        extensions: Default::default(),
    })
}
