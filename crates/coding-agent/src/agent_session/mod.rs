//! AgentSession: the coding agent every mode drives. It owns the [`Agent`], the session
//! file and the settings, records every change as a session entry, and adds what a single
//! agent run lacks: prompt templates and skills, queued-message bookkeeping, auto-retry,
//! compaction, bash messages, model and thinking-level changes, and session switching.

mod announced;
mod bash;
mod compaction;
mod extension_actions;
mod extensions;
mod mcp;
mod models;
mod navigation;
mod providers;
mod replacement;
mod retry;
mod settle;
mod stats;
mod system_message;
mod user_bash;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

use tokio_util::sync::CancellationToken;

use pi_agent_core::{Agent, AgentEvent, AgentMessage, AgentOptions, AgentTool};
use pi_ai::{
    AssistantMessage, ImageContent, InputBlock, Message, Model, StreamOptions, ThinkingLevel,
    UserMessage,
};

use crate::config::settings_store::SettingsStore;
use crate::model_registry::{ModelRegistry, RequestAuth};
use crate::resources::{PromptTemplate, Skill};
use crate::session::SessionManager;
use crate::session_event::{AgentSessionEvent, SessionOnlyEvent};

pub use bash::{BashResult, parse_bash_input};
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
    scoped_models: Vec<ScopedModel>,
    prompt_templates: Mutex<Vec<PromptTemplate>>,
    skills: Mutex<Vec<Skill>>,
    listeners: Mutex<Vec<(u64, SessionListener)>>,
    next_listener: AtomicU64,
    queued: Mutex<QueuedTexts>,
    /// The last assistant message of the current run.
    last_assistant: Mutex<Option<AssistantMessage>>,
    /// The last assistant message of the run that ended (checked for retry and compaction).
    ended_assistant: Mutex<Option<AssistantMessage>>,
    /// `agent_end` was emitted; the agent finishes its run without further events.
    run_ended: AtomicBool,
    /// Compact after a run whose context passed the threshold (off in print mode).
    compact_after_runs: AtomicBool,
    retry_attempt: AtomicU32,
    /// Runs started and not yet settled (see `settle.rs`).
    active_runs: AtomicU32,
    /// Set right before `agent_end` when an auto-retry will follow (pi 1.5's `willRetry`).
    will_retry: Arc<AtomicBool>,
    retry_cancel: Mutex<Option<CancellationToken>>,
    compaction_cancel: Mutex<Option<CancellationToken>>,
    auto_compaction_cancel: Mutex<Option<CancellationToken>>,
    branch_summary_cancel: Mutex<Option<CancellationToken>>,
    overflow_recovery_attempted: AtomicBool,
    bash_cancel: Mutex<Option<CancellationToken>>,
    pending_bash: Mutex<Vec<AgentMessage>>,
    ext: extensions::ExtensionState,
    mcp: Mutex<Option<Arc<mcp::McpState>>>,
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
    /// Starts a session: the agent gets the session's messages, and a new session records
    /// its model and thinking level first (a resumed one its thinking level if it has none).
    pub fn new(config: AgentSessionConfig) -> Self {
        let AgentSessionConfig {
            cwd,
            registry,
            settings,
            mut session,
            model,
            thinking_level,
            scoped_models,
            tools,
            system_prompt,
            prompt_templates,
            skills,
            api_key,
            extensions: setup,
        } = config;
        let thinking_level = pi_ai::clamp_thinking_level(&model, thinking_level);
        let context = session.build_context();
        crate::timing::mark("context built");
        record_initial_entries(
            &mut session,
            &model,
            thinking_level,
            !context.messages.is_empty(),
        );
        let current = settings.get();
        let auth = registry
            .request_auth(&model, api_key.as_deref())
            .unwrap_or_default();
        let base_prompt = system_prompt.clone();
        let agent = Agent::new(AgentOptions {
            system_prompt,
            model: Some(model.clone()),
            thinking_level,
            tools,
            messages: context.messages,
            hooks: extensions::hooks(
                &setup.runtime,
                registry.auth_path().map(|path| extensions::OAuthKeys {
                    auth_path: path.to_path_buf(),
                    cli_key_provider: api_key.as_ref().map(|_| model.provider.clone()),
                }),
            ),
            steering_mode: current.steering_mode.unwrap_or_default(),
            follow_up_mode: current.follow_up_mode.unwrap_or_default(),
            stream_options: extensions::with_payload_hook(
                stream_options(auth, &current),
                &setup.runtime,
            ),
            ..AgentOptions::default()
        });
        let ext = extensions::ExtensionState::new(setup, base_prompt);
        let inner = Arc::new_cyclic(|weak: &Weak<Inner>| {
            agent.subscribe(Arc::new(extensions::SessionListener(weak.clone())));
            Inner {
                agent,
                session: Mutex::new(session),
                settings,
                registry: providers::SessionRegistry::new(registry),
                cwd,
                api_key: api_key.map(|key| (model.provider.clone(), key)),
                scoped_models,
                prompt_templates: Mutex::new(prompt_templates),
                skills: Mutex::new(skills),
                listeners: Mutex::new(Vec::new()),
                next_listener: AtomicU64::new(1),
                queued: Mutex::new(QueuedTexts::default()),
                last_assistant: Mutex::new(None),
                ended_assistant: Mutex::new(None),
                run_ended: AtomicBool::new(true),
                compact_after_runs: AtomicBool::new(true),
                retry_attempt: AtomicU32::new(0),
                active_runs: AtomicU32::new(0),
                will_retry: Arc::new(AtomicBool::new(false)),
                retry_cancel: Mutex::new(None),
                compaction_cancel: Mutex::new(None),
                auto_compaction_cancel: Mutex::new(None),
                branch_summary_cancel: Mutex::new(None),
                overflow_recovery_attempted: AtomicBool::new(false),
                bash_cancel: Mutex::new(None),
                pending_bash: Mutex::new(Vec::new()),
                ext,
                mcp: Mutex::new(None),
            }
        });
        Self { inner }
    }

    /// The agent underneath.
    pub fn agent(&self) -> &Agent {
        &self.inner.agent
    }

    /// Adds a listener for every session event; returns its id.
    pub fn subscribe(&self, listener: impl Fn(&AgentSessionEvent) + Send + Sync + 'static) -> u64 {
        let id = self.inner.next_listener.fetch_add(1, Ordering::SeqCst);
        lock(&self.inner.listeners).push((id, Arc::new(listener)));
        id
    }

    /// Removes a listener.
    pub fn unsubscribe(&self, id: u64) {
        lock(&self.inner.listeners).retain(|(i, _)| *i != id);
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

    pub fn scoped_models(&self) -> &[ScopedModel] {
        &self.inner.scoped_models
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

    /// Queued steering texts.
    pub fn steering_texts(&self) -> Vec<String> {
        lock(&self.inner.queued).steering.clone()
    }

    /// Queued follow-up texts.
    pub fn follow_up_texts(&self) -> Vec<String> {
        lock(&self.inner.queued).follow_up.clone()
    }

    /// Steering plus follow-up messages waiting.
    pub fn pending_message_count(&self) -> usize {
        let queued = lock(&self.inner.queued);
        queued.steering.len() + queued.follow_up.len()
    }

    /// Empties both queues and returns what they held.
    pub fn clear_queue(&self) -> (Vec<String>, Vec<String>) {
        let taken = std::mem::take(&mut *lock(&self.inner.queued));
        self.inner.agent.clear_all_queues();
        self.inner.emit_queue_update();
        (taken.steering, taken.follow_up)
    }

    /// Expands `/skill:name args` and `/template args` (when the text starts with one).
    pub fn expand(&self, text: &str) -> String {
        let expanded = match crate::resources::expand_skill_command(text, &self.skills()) {
            Ok(expanded) => expanded,
            Err(_) => text.to_owned(),
        };
        crate::resources::expand_prompt_template(&expanded, &self.prompt_templates())
    }

    /// Sends a prompt: expands templates and skills, queues it while the agent streams (as
    /// `streaming_behavior` says), otherwise checks the model's key, compacts if due, and
    /// runs it to the end, with auto-retry and compaction afterwards.
    pub async fn prompt(
        &self,
        text: &str,
        options: PromptOptions,
        preflight: Option<Preflight>,
    ) -> Result<(), SessionOpError> {
        let mut preflight = preflight;
        let mut report = |result: Result<Disposition, String>| {
            if let Some(callback) = preflight.take() {
                callback(result);
            }
        };
        // Extension commands run at once, even while streaming.
        if options.expand_templates && text.starts_with('/') {
            let running = self.inner.ext.commands_running.start();
            if self.run_extension_command(text).await.is_some() {
                // Prompts the command asked for start after its answer (as in the
                // TypeScript pi, where they begin on a later tick).
                report(Ok(Disposition::Handled));
                drop(running);
                return Ok(());
            }
            drop(running);
        }
        let mut options = options;
        let mut text = text.to_owned();
        let runtime = self.inner.ext.runtime.clone();
        if runtime.has_handlers("input") {
            let source = options
                .source
                .clone()
                .unwrap_or_else(|| "interactive".into());
            let images = (!options.images.is_empty()).then(|| options.images.clone());
            match runtime
                .emit_input(&text, images, &source, CancellationToken::new())
                .await
            {
                crate::extensions::InputOutcome::Handled => {
                    report(Ok(Disposition::Handled));
                    return Ok(());
                }
                crate::extensions::InputOutcome::Transform {
                    text: changed,
                    images,
                } => {
                    text = changed;
                    if let Some(images) = images {
                        options.images = images;
                    }
                }
                crate::extensions::InputOutcome::Continue => {}
            }
        }
        let text = if options.expand_templates {
            self.expand(&text)
        } else {
            text
        };
        if self.is_streaming() {
            let Some(behavior) = options.streaming_behavior else {
                let error = SessionOpError::new(
                    "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.",
                );
                report(Err(error.0.clone()));
                return Err(error);
            };
            match behavior {
                StreamingBehavior::FollowUp => self.inner.queue_follow_up(text, options.images),
                StreamingBehavior::Steer => self.inner.queue_steer(text, options.images),
            }
            report(Ok(Disposition::Queued));
            return Ok(());
        }
        self.inner.flush_pending_bash();
        self.sync_mcp_tools().await;
        let model = self.model();
        if let Err(error) = self.inner.request_auth(&model) {
            report(Err(error.0.clone()));
            return Err(error);
        }
        let last = self.inner.agent.with_messages(|messages| {
            messages
                .iter()
                .rev()
                .find_map(|m| m.as_assistant().cloned())
        });
        if let Some(last) = last {
            self.check_compaction(&last, false, true).await;
        }
        // The system message is recorded before the prompt, so it is not younger than it.
        let started = pi_ai::oauth::now_ms();
        let mut blocks = vec![InputBlock::text(text.clone())];
        blocks.extend(options.images.iter().cloned().map(InputBlock::Image));
        let mut messages = vec![AgentMessage::from(UserMessage::blocks(blocks))];
        messages.extend(self.extension_prompt_messages(&text, &options.images).await);
        // pi 1.5 records the system prompt (or what changed in it) before the prompt.
        if let Some(system) = self.system_message_for_run(started) {
            messages.insert(0, system);
        }
        report(Ok(Disposition::Started));
        // The previous run may still be finishing after its agent_end.
        self.inner.agent.wait_for_idle().await;
        let _run = self.run_guard();
        if let Err(e) = self.inner.agent.prompt(messages).await {
            return Err(SessionOpError::new(e.to_string()));
        }
        self.settle().await;
        Ok(())
    }

    /// Queues a steering message (delivered after the current tool calls).
    pub fn steer(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text);
        self.inner.queue_steer(text, images);
    }

    /// Queues a follow-up message (delivered when the agent would stop).
    pub fn follow_up(&self, text: &str, images: Vec<ImageContent>) {
        let text = self.expand(text);
        self.inner.queue_follow_up(text, images);
    }

    /// Stops the run, a retry sleep and a running compaction, and waits until idle.
    pub async fn abort(&self) {
        self.abort_retry_and_wait().await;
        self.inner.agent.abort();
        self.inner.agent.wait_for_idle().await;
    }
}

/// A new session records its model and thinking level; a resumed session without a
/// thinking-level entry records the level in effect; a resumed session whose recorded
/// model differs records the change.
fn record_initial_entries(
    session: &mut SessionManager,
    model: &Model,
    thinking_level: ThinkingLevel,
    has_messages: bool,
) {
    let result = if has_messages {
        let has_thinking_entry = session.branch_entries().iter().any(|e| {
            matches!(
                e.kind,
                crate::session::entry::EntryKind::ThinkingLevelChange { .. }
            )
        });
        let recorded = session.build_context().model;
        let mut result = Ok(String::new());
        if recorded.as_ref() != Some(&(model.provider.clone(), model.id.clone())) {
            result = session.append_model_change(&model.provider, &model.id);
        }
        if !has_thinking_entry && result.is_ok() {
            result = session.append_thinking_level_change(thinking_level.as_str());
        }
        result
    } else {
        session
            .append_model_change(&model.provider, &model.id)
            .and_then(|_| session.append_thinking_level_change(thinking_level.as_str()))
    };
    if let Err(e) = result {
        eprintln!("Warning: {e}");
    }
}

/// Stream options from the key and headers of the model, plus the provider retry settings.
fn stream_options(
    auth: RequestAuth,
    settings: &crate::config::settings::Settings,
) -> StreamOptions {
    let provider = settings.retry.unwrap_or_default().provider;
    let mut options = StreamOptions {
        api_key: auth.api_key,
        headers: auth.headers,
        ..StreamOptions::default()
    };
    if let Some(provider) = provider {
        if let Some(ms) = provider.max_retry_delay_ms {
            options.max_retry_delay_ms = Some(ms);
        }
        if let Some(retries) = provider.max_retries {
            options.max_retries = Some(retries);
        }
        if let Some(ms) = provider.timeout_ms {
            options.timeout_ms = Some(ms);
        }
    }
    options
}

impl Inner {
    fn emit(&self, event: &AgentSessionEvent) {
        let listeners: Vec<SessionListener> = lock(&self.listeners)
            .iter()
            .map(|(_, l)| l.clone())
            .collect();
        for listener in listeners {
            listener(event);
        }
    }

    fn emit_session(&self, event: SessionOnlyEvent) {
        self.emit(&AgentSessionEvent::Session(event));
    }

    fn emit_queue_update(&self) {
        let (steering, follow_up) = {
            let queued = lock(&self.queued);
            (queued.steering.clone(), queued.follow_up.clone())
        };
        self.emit_session(SessionOnlyEvent::QueueUpdate {
            steering,
            follow_up,
        });
    }

    fn queue_steer(&self, text: String, images: Vec<ImageContent>) {
        lock(&self.queued).steering.push(text.clone());
        self.emit_queue_update();
        let mut blocks = vec![InputBlock::text(text)];
        blocks.extend(images.into_iter().map(InputBlock::Image));
        self.agent
            .steer(AgentMessage::from(UserMessage::blocks(blocks)));
    }

    fn queue_follow_up(&self, text: String, images: Vec<ImageContent>) {
        lock(&self.queued).follow_up.push(text.clone());
        self.emit_queue_update();
        let mut blocks = vec![InputBlock::text(text)];
        blocks.extend(images.into_iter().map(InputBlock::Image));
        self.agent
            .follow_up(AgentMessage::from(UserMessage::blocks(blocks)));
    }

    /// Key and headers for `model`; `--api-key` applies to the provider it was given for.
    fn request_auth(&self, model: &Model) -> Result<RequestAuth, SessionOpError> {
        let cli_key = self
            .api_key
            .as_ref()
            .filter(|(provider, _)| *provider == model.provider)
            .map(|(_, key)| key.as_str());
        match self.registry.current().request_auth(model, cli_key) {
            Ok(auth) if auth.api_key.is_some() => Ok(auth),
            Ok(_) => Err(SessionOpError::new(format!(
                "No API key found for {}. Set the provider's API key environment variable, or configure it in auth.json.",
                model.provider
            ))),
            Err(message) => Err(SessionOpError::new(message)),
        }
    }

    /// Persists finished messages, keeps the queue texts in step with delivered messages,
    /// and ends a retry sequence when a reply succeeds.
    fn on_agent_event(&self, event: &AgentEvent) {
        if let AgentEvent::MessageStart { message } = event
            && let Some(text) = user_text(message)
        {
            {
                self.overflow_recovery_attempted
                    .store(false, Ordering::SeqCst);
                let removed = {
                    let mut queued = lock(&self.queued);
                    if let Some(at) = queued.steering.iter().position(|t| *t == text) {
                        queued.steering.remove(at);
                        true
                    } else if let Some(at) = queued.follow_up.iter().position(|t| *t == text) {
                        queued.follow_up.remove(at);
                        true
                    } else {
                        false
                    }
                };
                if removed {
                    self.emit_queue_update();
                }
            }
        }
        match event {
            AgentEvent::AgentStart => self.run_ended.store(false, Ordering::SeqCst),
            AgentEvent::AgentEnd { .. } => {
                let ended = lock(&self.last_assistant).take();
                let will_retry = ended.as_ref().is_some_and(|m| self.retry_follows(m));
                self.will_retry.store(will_retry, Ordering::SeqCst);
                *lock(&self.ended_assistant) = ended;
                self.run_ended.store(true, Ordering::SeqCst);
            }
            _ => {}
        }
        self.emit(&AgentSessionEvent::Agent(event.clone()));
        let AgentEvent::MessageEnd { message } = event else {
            return;
        };
        let stored = match message {
            AgentMessage::Llm(_) => lock(&self.session).append_message(message.clone()),
            AgentMessage::Custom(custom) if custom.role == "system" => {
                lock(&self.session).append_message(message.clone())
            }
            AgentMessage::Custom(custom) if custom.role == "custom" => {
                let get = |key: &str| custom.get(key).cloned();
                lock(&self.session).append_custom_message(
                    custom
                        .get("customType")
                        .and_then(serde_json::Value::as_str)
                        .unwrap_or_default(),
                    get("content").unwrap_or_default(),
                    custom
                        .get("display")
                        .and_then(serde_json::Value::as_bool)
                        .unwrap_or(false),
                    get("details"),
                )
            }
            AgentMessage::Custom(_) => Ok(String::new()),
        };
        if let Err(e) = stored {
            eprintln!("Warning: {e}");
        }
        if let Some(assistant) = message.as_assistant() {
            *lock(&self.last_assistant) = Some(assistant.clone());
            if assistant.stop_reason != pi_ai::StopReason::Error {
                self.overflow_recovery_attempted
                    .store(false, Ordering::SeqCst);
                let attempt = self.retry_attempt.swap(0, Ordering::SeqCst);
                if attempt > 0 {
                    self.emit_session(SessionOnlyEvent::AutoRetryEnd {
                        success: true,
                        attempt,
                        final_error: None,
                    });
                }
            }
        }
    }
}
