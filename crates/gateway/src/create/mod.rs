//! Creating a session with the parameters of seed 000 §9.1: environment, auth, model,
//! tools (through the 7-layer pipeline, built once here), persistence, settings,
//! resources, lineage, cancellation and an event callback.

mod landlock_sandbox;

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentTool;
use pi_ai::{Model, ThinkingLevel};
use pi_coding_agent::agent_session::{AgentSession, AgentSessionConfig, ExtensionSetup};
use pi_coding_agent::config::settings_store::SettingsStore;
use pi_coding_agent::extensions::{
    Extension, ExtensionBackend, ExtensionErrorInfo, ExtensionRuntime, NoUi, RustBackend,
};
use pi_coding_agent::model_registry::ModelRegistry;
use pi_coding_agent::modes::system_prompt::{self, ContextFile, PromptInputs};
use pi_coding_agent::resources::{PromptTemplate, Skill};
use pi_coding_agent::session::SessionManager;
use pi_coding_agent::session_event::AgentSessionEvent;
use pi_coding_agent::tools::bash::BashOptions;

use crate::pipeline::{
    ChannelTool, PipelineError, PipelineInput, PipelineReport, PolicyTarget, RuntimeToolsInput,
    ToolPolicyConfig, build_pipeline,
};
use crate::runner::{AuthProfileStore, PromptMode, PromptParams, build_system_prompt};
use crate::sandbox::SandboxConfig;

pub use landlock_sandbox::LandlockSandbox;

/// Receives every event of the session.
pub type EventCallback = Arc<dyn Fn(&AgentSessionEvent) + Send + Sync>;

/// What the system prompt and prompt commands are built from (the resource loader's output).
#[derive(Debug, Clone, Default)]
pub struct SessionResources {
    /// AGENTS.md-style context files.
    pub context_files: Vec<ContextFile>,
    pub skills: Vec<Skill>,
    pub templates: Vec<PromptTemplate>,
}

/// The tool pipeline's inputs beyond the base tools.
#[derive(Default)]
pub struct ToolOptions {
    /// Confine `bash`/`exec` (layer 2); `None`: unconfined.
    pub sandbox: Option<SandboxConfig>,
    /// Runtime tools acting on the gateway (layer 3).
    pub runtime: Option<RuntimeToolsInput>,
    /// Tools of the client binding (layer 4).
    pub channel_tools: Vec<ChannelTool>,
    /// Scopes required by custom tools, by name.
    pub custom_tool_scopes: std::collections::BTreeMap<String, String>,
    /// Allow/deny cascade (layer 5).
    pub policy: ToolPolicyConfig,
    /// Agent id, group id and scopes the policy is applied for (provider and model are
    /// taken from the model).
    pub agent_id: Option<String>,
    pub group_id: Option<String>,
    pub scopes: Vec<String>,
}

/// `createAgentSession`'s parameters.
pub struct SessionParams {
    /// Where the tools act.
    pub cwd: PathBuf,
    /// The agent config dir (`models.json`, `settings.json`, `auth.json`, `sessions/`).
    pub agent_dir: PathBuf,
    /// API keys to rotate through, per provider (the registry's `auth.json` key is the
    /// fallback).
    pub auth: AuthProfileStore,
    pub registry: Arc<ModelRegistry>,
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    /// Built-in tool names (layer 1).
    pub tools: Vec<String>,
    /// The embedding code's own tools (layer 1; they replace built-ins of the same name).
    pub custom_tools: Vec<Arc<dyn AgentTool>>,
    pub tool_options: ToolOptions,
    /// Persistence: a new session, or one opened from its file (resume).
    pub session_manager: SessionManager,
    pub settings: Arc<SettingsStore>,
    pub resources: SessionResources,
    /// The session that started this one (sub-agents).
    pub parent_session_id: Option<String>,
    /// The session resumed, when resuming.
    pub session_id: Option<String>,
    /// `full`/`minimal`/`none`; `None` is pi's own system prompt.
    pub prompt_mode: Option<PromptMode>,
    /// Cancelling it aborts the session's run and refuses further tool calls.
    pub cancel: CancellationToken,
    pub on_event: Option<EventCallback>,
    /// In-process Rust extensions: their hooks see every event, their tools join layer 1
    /// (and so pass the same policy as the embedding code's tools).
    pub extensions: Vec<Arc<dyn Extension>>,
}

/// A created session.
pub struct CreatedSession {
    pub session: AgentSession,
    /// The final tool names, in order.
    pub tool_names: Vec<String>,
    /// What each pipeline layer did.
    pub pipeline: PipelineReport,
    pub auth: AuthProfileStore,
    pub parent_session_id: Option<String>,
    pub resumed_from: Option<String>,
    pub cancel: CancellationToken,
}

/// Why a session could not be created.
#[derive(Debug, thiserror::Error)]
pub enum CreateError {
    #[error(transparent)]
    Pipeline(#[from] PipelineError),
}

/// Bash options the way the `pi` binary derives them from settings.
pub fn bash_options(settings: &pi_coding_agent::config::settings::Settings) -> BashOptions {
    BashOptions::from_settings(settings)
}

/// Builds the tool pipeline once and the AgentSession around it.
pub fn create_agent_session(params: SessionParams) -> Result<CreatedSession, CreateError> {
    let SessionParams {
        cwd,
        agent_dir: _,
        auth,
        registry,
        model,
        thinking_level,
        tools,
        custom_tools,
        tool_options,
        session_manager,
        settings,
        resources,
        parent_session_id,
        session_id,
        prompt_mode,
        cancel,
        on_event,
        extensions,
    } = params;
    let runtime = Arc::new(ExtensionRuntime::new(
        extensions
            .into_iter()
            .map(|ext| Arc::new(RustBackend::new(ext, cwd.clone())) as Arc<dyn ExtensionBackend>)
            .collect(),
        Vec::new(),
    ));
    let mut custom_tools = custom_tools;
    for tool in runtime.tools() {
        custom_tools.retain(|t| t.name() != tool.name());
        custom_tools.push(tool);
    }
    let bash = bash_options(&settings.get());
    let sandbox = tool_options.sandbox.map(|config| {
        Arc::new(LandlockSandbox::new(config, &cwd, bash.clone()))
            as Arc<dyn crate::pipeline::ToolSandbox>
    });
    let target = PolicyTarget {
        agent_id: tool_options.agent_id,
        group_id: tool_options.group_id,
        scopes: tool_options.scopes,
        ..PolicyTarget::for_model(&model)
    };
    let pipeline = build_pipeline(PipelineInput {
        cwd: cwd.clone(),
        builtin_tools: tools,
        bash,
        custom_tools,
        custom_tool_scopes: tool_options.custom_tool_scopes,
        sandbox,
        runtime: tool_options.runtime,
        channel_tools: tool_options.channel_tools,
        policy: tool_options.policy,
        target,
        api: model.api.clone(),
        lifecycle: cancel.clone(),
    })?;
    let tool_names: Vec<String> = pipeline.tools.iter().map(|t| t.name().to_owned()).collect();
    let prompt = match prompt_mode {
        Some(mode) => build_system_prompt(
            mode,
            &PromptParams {
                tools: &tool_names,
                skills: &resources.skills,
                context_files: &resources.context_files,
                model: Some(&model.full_id()),
                thinking_level: Some(thinking_level),
                channel: None,
            },
            &cwd,
        ),
        None => system_prompt::build(
            &PromptInputs {
                custom: None,
                append: &[],
                tools: &tool_names,
                context_files: &resources.context_files,
                skills: &resources.skills,
                ..PromptInputs::default()
            },
            &cwd,
        ),
    };
    let session = AgentSession::new(AgentSessionConfig {
        cwd,
        registry,
        settings,
        session: session_manager,
        model,
        thinking_level,
        scoped_models: Vec::new(),
        tools: pipeline.tools,
        system_prompt: prompt,
        prompt_templates: resources.templates,
        skills: resources.skills,
        api_key: None,
        extensions: ExtensionSetup {
            runtime: runtime.clone(),
            ..ExtensionSetup::default()
        },
    });
    if let Some(callback) = on_event {
        session.subscribe(move |event| callback(event));
    }
    if !runtime.is_empty()
        && let Ok(handle) = tokio::runtime::Handle::try_current()
    {
        let session = session.clone();
        handle.spawn(async move {
            session
                .bind_extensions(
                    Arc::new(NoUi),
                    Arc::new(|error: ExtensionErrorInfo| {
                        eprintln!(
                            "Extension error ({}): {}",
                            error.extension_path, error.error
                        );
                    }),
                    Arc::new(|| {}),
                )
                .await;
        });
    }
    if let Ok(runtime) = tokio::runtime::Handle::try_current() {
        let cancel = cancel.clone();
        let session = session.clone();
        runtime.spawn(async move {
            cancel.cancelled().await;
            session.abort().await;
        });
    }
    Ok(CreatedSession {
        session,
        tool_names,
        pipeline: pipeline.report,
        auth,
        parent_session_id,
        resumed_from: session_id,
        cancel,
    })
}
