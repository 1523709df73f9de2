//! AgentSession: the coding agent every mode drives. It owns the [`Agent`], the session
//! file and the settings, records every change as a session entry, and adds what a single
//! agent run lacks: prompt templates and skills, queued-message bookkeeping, auto-retry,
//! compaction, bash messages, model and thinking-level changes, and session switching.

mod announced;
mod bash;
mod bash_text;
mod boundary;
mod bug_report;
mod builtin_commands;
mod cache_warming;
#[cfg(feature = "codemode")]
mod codemode;
mod compaction;
mod events;
mod extension_actions;
mod extensions;
mod images;
mod llama;
mod mcp;
mod models;
mod navigation;
mod prompt;
mod prompt_options;
mod providers;
mod queue;
mod replacement;
mod request_hooks;
mod retry;
mod session_hooks;
mod settle;
mod startup;
mod stats;
mod system_message;
mod tool_restore;
mod user_bash;
mod virtual_routing;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use pi_agent_core::{Agent, AgentMessage, AgentTool};
use pi_ai::{AssistantMessage, ImageContent, Message, Model, ThinkingLevel};

use crate::config::settings_store::SettingsStore;
use crate::model_registry::{ModelRegistry, RequestAuth};
use crate::resources::{PromptTemplate, Skill};
use crate::session::SessionManager;
use crate::session_event::AgentSessionEvent;

pub use bash::{BashResult, parse_bash_input};
pub use bug_report::BugReportChoices;
pub use cache_warming::{CacheWarmingState, CacheWarmingStatus, format_cache_warming_status};
pub use extensions::ExtensionSetup;
pub use mcp::McpToolFilter;
pub use models::{ModelCycleResult, ScopedModel};
pub use navigation::{ForkResult, NavigateOptions, NavigateResult};
pub use stats::{ContextUsage, SessionStats, TokenTotals};

/// Why a session operation was refused or failed; the text is what a user sees.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SessionOpError(pub String);

impl SessionOpError {
    fn new(text: impl Into<String>) -> Self {
        Self(text.into())
    }
}

/// How a prompt sent while the agent works is queued.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StreamingBehavior {
    Steer,
    FollowUp,
}

impl StreamingBehavior {
    /// The wire name (`streamingBehavior` of RPC `prompt` and of the `input` event).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Steer => "steer",
            Self::FollowUp => "followUp",
        }
    }
}

/// Options of [`AgentSession::prompt`].
#[derive(Debug, Clone)]
pub struct PromptOptions {
    pub images: Vec<ImageContent>,
    /// Required while the agent streams: where the message goes.
    pub streaming_behavior: Option<StreamingBehavior>,
    /// Expand `/skill:name` and `/template` commands, and run extension commands
    /// (default true).
    pub expand_templates: bool,
    /// Where the input came from, for the `input` event: `interactive` (default), `rpc`
    /// or `extension`.
    pub source: Option<String>,
}

impl Default for PromptOptions {
    fn default() -> Self {
        Self {
            images: Vec::new(),
            streaming_behavior: None,
            expand_templates: true,
            source: None,
        }
    }
}

/// What became of a prompt that passed its checks (pi 1.5's RPC `disposition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disposition {
    /// A run started with it.
    Started,
    /// It waits in the steering or follow-up queue.
    Queued,
    /// An extension command or `input` handler consumed it.
    Handled,
}

impl Disposition {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Started => "started",
            Self::Queued => "queued",
            Self::Handled => "handled",
        }
    }
}

/// Called once when a prompt passed (`Ok`) or failed (`Err`) its checks, before the run.
pub type Preflight = Box<dyn FnOnce(Result<Disposition, String>) + Send>;

/// A subscriber to session events.
pub type SessionListener = Arc<dyn Fn(&AgentSessionEvent) + Send + Sync>;

/// Everything a session starts from.
pub struct AgentSessionConfig {
    pub cwd: PathBuf,
    pub registry: Arc<ModelRegistry>,
    pub settings: Arc<SettingsStore>,
    pub session: SessionManager,
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    /// `--models`: the models Ctrl+P / `cycle_model` go through.
    pub scoped_models: Vec<ScopedModel>,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub system_prompt: String,
    pub prompt_templates: Vec<PromptTemplate>,
    pub skills: Vec<Skill>,
    /// `--api-key`: used for the initial model's provider.
    pub api_key: Option<String>,
    /// Loaded extensions, every tool they can activate, and how to rebuild the prompt.
    pub extensions: ExtensionSetup,
}

/// Texts of the queued steering and follow-up messages, as shown to users.
#[derive(Debug, Default)]
struct QueuedTexts {
    steering: Vec<String>,
    follow_up: Vec<String>,
}

pub(crate) struct Inner {
    agent: Agent,
    session: Mutex<SessionManager>,
    settings: Arc<SettingsStore>,
    registry: providers::SessionRegistry,
    cwd: PathBuf,
    api_key: Option<(String, String)>,
    /// The models Ctrl+P cycles through (`--models`, `enabledModels`, `/scoped-models`).
    scoped_models: Mutex<Vec<ScopedModel>>,
    prompt_templates: Mutex<Vec<PromptTemplate>>,
    skills: Mutex<Vec<Skill>>,
    listeners: Mutex<Vec<(u64, SessionListener)>>,
    next_listener: AtomicU64,
    queued: Mutex<QueuedTexts>,
    /// The last assistant message of the current run.
    last_assistant: Mutex<Option<AssistantMessage>>,
    /// The last assistant message of the run that ended (checked for retry and compaction).
    ended_assistant: Mutex<Option<AssistantMessage>>,
    /// The failed response an automatic retry follows (a virtual model's `request.failed`).
    failed_response: Mutex<Option<AssistantMessage>>,
    /// `agent_end` was emitted; the agent finishes its run without further events.
    run_ended: AtomicBool,
    /// Compact after a run whose context passed the threshold (off in print mode).
    compact_after_runs: AtomicBool,
    retry_attempt: AtomicU32,
    /// Runs started and not yet settled (see `settle.rs`).
    active_runs: AtomicU32,
    /// Active runs that already reported `agent_settled` (see `settle::RunGuard`).
    settled_runs: AtomicU32,
    /// How many `agent_settled` events were emitted (a handled prompt checks for its own).
    settled_count: AtomicU64,
    /// Runs an extension asked for (`sendUserMessage`, a turn-triggering `sendMessage`)
    /// and that have not finished: their own `agent_settled` will end the prompt.
    requested_runs: Arc<AtomicU32>,
    /// Set right before `agent_end` when an auto-retry will follow (pi 1.5's `willRetry`).
    will_retry: Arc<AtomicBool>,
    retry_cancel: Mutex<Option<CancellationToken>>,
    compaction_cancel: Mutex<Option<CancellationToken>>,
    auto_compaction_cancel: Mutex<Option<CancellationToken>>,
    /// Told when a threshold or overflow compaction ends (its cancel slot is cleared).
    auto_compaction_ended: tokio::sync::Notify,
    branch_summary_cancel: Mutex<Option<CancellationToken>>,
    overflow_recovery_attempted: AtomicBool,
    bash_cancel: bash::BashCancels,
    pending_bash: Mutex<Vec<AgentMessage>>,
    /// Keeps the latest request's prompt cache warm (`cacheWarming`).
    cache_warmer: cache_warming::CacheWarmer,
    ext: extensions::ExtensionState,
    mcp: Mutex<Option<Arc<mcp::McpState>>>,
    llama_refreshes: Mutex<llama::LlamaRefreshes>,
}

/// An [`AgentSession`] that may have ended.
#[derive(Clone)]
pub struct WeakAgentSession(std::sync::Weak<Inner>);

impl WeakAgentSession {
    /// The session, while it lives.
    pub fn upgrade(&self) -> Option<AgentSession> {
        self.0.upgrade().map(|inner| AgentSession { inner })
    }
}

/// A running coding-agent session; cheap to clone (all clones are the same session).
#[derive(Clone)]
pub struct AgentSession {
    inner: Arc<Inner>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The text blocks of a user message, joined.
pub(crate) fn user_text(message: &AgentMessage) -> Option<String> {
    match message {
        AgentMessage::Llm(Message::User(user)) => Some(user.text_content()),
        _ => None,
    }
}

impl AgentSession {
    /// The agent underneath.
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// Runs `read` with the session manager.
    pub fn with_session<R>(&self, read: impl FnOnce(&SessionManager) -> R) -> R {
        read(&lock(&self.inner.session))
    }

    /// Records a `custom` entry (kept in the file, never sent to the model): what a host
    /// notes about the session, such as a gateway recording a turn it lost.
    pub fn append_custom_entry(
        &self,
        custom_type: &str,
        data: Option<serde_json::Value>,
    ) -> Result<String, crate::session::SessionError> {
        lock(&self.inner.session).append(crate::session::EntryKind::Custom {
            custom_type: custom_type.to_owned(),
            data,
        })
    }

    pub fn cwd(&self) -> &Path {
        &self.inner.cwd
    }

    pub fn settings(&self) -> &SettingsStore {
        &self.inner.settings
    }

    /// The model registry as it stands (extensions may register providers later).
    pub fn registry(&self) -> Arc<ModelRegistry> {
        self.inner.registry.current()
    }

    pub fn model(&self) -> Model {
        self.inner.agent.model()
    }

    pub fn thinking_level(&self) -> ThinkingLevel {
        self.inner.agent.thinking_level()
    }

    /// Whether a run is in progress; false from its `agent_end` on, as clients see it.
    pub fn is_streaming(&self) -> bool {
        self.inner.agent.is_streaming() && !self.inner.run_ended.load(Ordering::SeqCst)
    }

    /// Whether a manual or automatic compaction (or a branch summary) is running.
    pub fn is_compacting(&self) -> bool {
        lock(&self.inner.compaction_cancel).is_some()
            || lock(&self.inner.auto_compaction_cancel).is_some()
            || lock(&self.inner.branch_summary_cancel).is_some()
    }

    /// Whether a run that ends over the compaction threshold compacts at once (the default)
    /// or only before the next prompt, as print mode does so it can exit when the reply is
    /// in; an overflow is always recovered.
    pub fn set_compact_after_runs(&self, enabled: bool) {
        self.inner
            .compact_after_runs
            .store(enabled, Ordering::SeqCst);
    }

    /// Whether an auto-retry sleep is in progress.
    pub fn is_retrying(&self) -> bool {
        lock(&self.inner.retry_cancel).is_some()
    }

    pub fn messages(&self) -> Vec<AgentMessage> {
        self.inner.agent.messages()
    }

    pub fn message_count(&self) -> usize {
        self.inner.agent.with_messages(<[AgentMessage]>::len)
    }

    pub fn session_file(&self) -> Option<PathBuf> {
        lock(&self.inner.session)
            .session_file()
            .map(Path::to_path_buf)
    }

    /// A handle that does not keep the session alive (for what the session itself owns).
    pub fn downgrade(&self) -> WeakAgentSession {
        WeakAgentSession(Arc::downgrade(&self.inner))
    }

    /// The variables pi 1.x gives the bash tool's commands about this session.
    pub fn bash_env(&self) -> Vec<(&'static str, String)> {
        let model = self.model();
        let mut vars = vec![("PI_SESSION_ID", self.session_id())];
        if let Some(file) = self.session_file() {
            vars.push(("PI_SESSION_FILE", file.display().to_string()));
        }
        vars.push(("PI_PROVIDER", model.provider));
        vars.push(("PI_MODEL", model.id));
        vars.push((
            "PI_REASONING_LEVEL",
            self.thinking_level().as_str().to_owned(),
        ));
        vars
    }

    pub fn session_id(&self) -> String {
        lock(&self.inner.session).session_id().to_owned()
    }

    pub fn session_name(&self) -> Option<String> {
        lock(&self.inner.session).name().map(str::to_owned)
    }

    pub fn prompt_templates(&self) -> Vec<PromptTemplate> {
        lock(&self.inner.prompt_templates).clone()
    }

    pub fn skills(&self) -> Vec<Skill> {
        lock(&self.inner.skills).clone()
    }

    pub fn scoped_models(&self) -> Vec<ScopedModel> {
        lock(&self.inner.scoped_models).clone()
    }

    /// Sets the models Ctrl+P cycles through for this session (empty: every model).
    pub fn set_scoped_models(&self, models: Vec<ScopedModel>) {
        *lock(&self.inner.scoped_models) = models;
    }

    pub fn steering_mode(&self) -> pi_agent_core::QueueMode {
        self.inner.agent.steering_mode()
    }

    pub fn follow_up_mode(&self) -> pi_agent_core::QueueMode {
        self.inner.agent.follow_up_mode()
    }

    /// Sets how steering messages are delivered, and saves it to settings.
    pub fn set_steering_mode(&self, mode: pi_agent_core::QueueMode) {
        self.inner.agent.set_steering_mode(mode);
        self.inner
            .settings
            .set("steeringMode", serde_json::json!(mode));
    }

    /// Sets how follow-up messages are delivered, and saves it to settings.
    pub fn set_follow_up_mode(&self, mode: pi_agent_core::QueueMode) {
        self.inner.agent.set_follow_up_mode(mode);
        self.inner
            .settings
            .set("followUpMode", serde_json::json!(mode));
    }

    pub fn auto_compaction_enabled(&self) -> bool {
        self.inner.settings.get().compaction_settings().enabled
    }

    pub fn set_auto_compaction_enabled(&self, enabled: bool) {
        self.inner
            .settings
            .set_nested("compaction", "enabled", enabled.into());
    }

    pub fn auto_retry_enabled(&self) -> bool {
        self.inner.settings.get().retry.unwrap_or_default().enabled
    }

    pub fn set_auto_retry_enabled(&self, enabled: bool) {
        self.inner
            .settings
            .set_nested("retry", "enabled", enabled.into());
    }
}

impl AgentSession {
    /// Whether a prompt could reach a model now: one is selected and has a key (or needs
    /// none).
    pub fn model_usable(&self) -> bool {
        let model = self.model();
        !crate::auth_guidance::is_unknown_model(&model) && self.inner.request_auth(&model).is_ok()
    }
}

impl Inner {
    /// Key and headers for `model`; `--api-key` applies to the provider it was given for.
    fn request_auth(&self, model: &Model) -> Result<RequestAuth, SessionOpError> {
        // A virtual model needs no key of its own: each request takes its routed model's.
        if crate::virtual_models::is_virtual(model) {
            return Ok(RequestAuth::default());
        }
        let cli_key = self
            .api_key
            .as_ref()
            .filter(|(provider, _)| *provider == model.provider)
            .map(|(_, key)| key.as_str());
        match self.registry.current().request_auth(model, cli_key) {
            // A key, the provider's auth resolved to a header (`ANTHROPIC_AUTH_TOKEN`), or
            // Anthropic's workload identity federation.
            Ok(auth) if auth.api_key.is_some() || auth.header_auth || auth.federation => Ok(auth),
            Ok(_) => Err(SessionOpError::new(crate::auth_guidance::no_api_key_found(
                &model.provider,
            ))),
            Err(message) => Err(SessionOpError::new(message)),
        }
    }
}
