//! The gateway's state: configuration, principals, live sessions, the session tree, the
//! global `seq` counter; creating, resuming and branching sessions; shutdown.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use pi_ai::{Model, ThinkingLevel};
use pi_coding_agent::config::paths;
use pi_coding_agent::config::settings_store::SettingsStore;
use pi_coding_agent::model_registry::ModelRegistry;
use pi_coding_agent::modes::system_prompt::{self, ContextFile};
use pi_coding_agent::resources::{
    DiscoveryOptions, PromptTemplate, ResourceSettings, Skill, load_prompt_templates, load_skills,
};
use pi_coding_agent::session::SessionManager;
use pi_coding_agent::session::select::{self, SessionChoice};
use pi_coding_agent::tools;

use super::cluster_hooks::ClusterHooks;
use super::protocol::{ApiError, BranchParams, CreateParams, codes};
use super::runtime_host::GatewayHost;
use super::session::{LiveSession, OnAbort, RunOutcome, SessionShared};
use super::tree::{NodeStore, SessionNode};
use crate::config_file::{ConfigFileError, GatewayFile};
use crate::create::{SessionParams, SessionResources, ToolOptions, create_agent_session};
use crate::events::{Limits, RunInfo, TerminationReason};
use crate::pipeline::{ChannelTool, RuntimeToolsInput};

/// How a gateway is set up.
#[derive(Clone)]
pub struct GatewayConfig {
    /// The pi agent dir: `models.json`, `settings.json`, `auth.json`, `sessions/`.
    pub agent_dir: PathBuf,
    /// Token → principal.
    pub tokens: HashMap<String, String>,
    pub limits: Limits,
    /// Events kept per session for replay.
    pub event_log: usize,
    /// Frames buffered per connection before it counts as lagging and is closed.
    pub outbound_buffer: usize,
    /// How long shutdown waits for aborted runs to end.
    pub shutdown_grace: Duration,
    /// Tools the client binding of a principal injects into its sessions (layer 4).
    pub channel_tools: HashMap<String, Vec<ChannelTool>>,
    /// In-process Rust extensions every session runs.
    pub extensions: Vec<Arc<dyn pi_coding_agent::extensions::Extension>>,
}

impl std::fmt::Debug for GatewayConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GatewayConfig")
            .field("agent_dir", &self.agent_dir)
            .field("principals", &self.tokens.values().collect::<Vec<_>>())
            .field("limits", &self.limits)
            .field("event_log", &self.event_log)
            .finish_non_exhaustive()
    }
}

impl GatewayConfig {
    /// Defaults: 48 h / 120 s limits, 4096 events per session, 16384 frames per connection.
    pub fn new(agent_dir: impl Into<PathBuf>) -> Self {
        Self {
            agent_dir: agent_dir.into(),
            tokens: HashMap::new(),
            limits: Limits::default(),
            event_log: 4096,
            outbound_buffer: 16384,
            shutdown_grace: Duration::from_secs(10),
            channel_tools: HashMap::new(),
            extensions: Vec::new(),
        }
    }

    /// Adds a token for `principal`.
    pub fn with_token(mut self, token: impl Into<String>, principal: impl Into<String>) -> Self {
        self.tokens.insert(token.into(), principal.into());
        self
    }

    pub fn with_limits(mut self, limits: Limits) -> Self {
        self.limits = limits;
        self
    }
}

/// What sessions in one directory share: settings, context files, skills, templates.
struct CwdResources {
    settings: Arc<SettingsStore>,
    context_files: Vec<ContextFile>,
    skills: Vec<Skill>,
    templates: Vec<PromptTemplate>,
}

/// The gateway.
pub struct Gateway {
    config: GatewayConfig,
    /// `gateway.json`, replaced by `gateway_reload`.
    file: Mutex<Arc<GatewayFile>>,
    /// Auth profiles and their cooldowns, shared by every session.
    auth: crate::runner::AuthProfileStore,
    registry: Arc<ModelRegistry>,
    seq: Arc<AtomicU64>,
    pub(super) live: Mutex<HashMap<String, Arc<LiveSession>>>,
    pub(super) nodes: Mutex<HashMap<String, SessionNode>>,
    pub(super) store: NodeStore,
    resources: Mutex<HashMap<PathBuf, Arc<CwdResources>>>,
    closing: CancellationToken,
    shutting_down: AtomicBool,
    next_conn: AtomicU64,
    /// Set when this gateway is a node of a cluster.
    cluster: OnceLock<Arc<dyn ClusterHooks>>,
    self_ref: Weak<Gateway>,
}

pub(super) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A session about to become live.
struct Opening {
    manager: SessionManager,
    /// Tools of the client binding that opens the session.
    channel: Vec<ChannelTool>,
    cwd: PathBuf,
    model: Model,
    thinking: ThinkingLevel,
    tools: Vec<String>,
    owner: String,
    parent_id: Option<String>,
    branch_point: Option<String>,
    resumed_from: Option<String>,
    created_at: Option<i64>,
}

impl Gateway {
    /// A gateway over `config.agent_dir`, with the nodes saved there and the settings of
    /// its `gateway.json`.
    pub fn new(config: GatewayConfig) -> Result<Arc<Self>, ConfigFileError> {
        let file = GatewayFile::load(&config.agent_dir)?;
        let auth = file.auth_store();
        let registry = ModelRegistry::load(&config.agent_dir);
        if let Some(error) = registry.load_error() {
            eprintln!("Warning: errors loading models.json:\n{error}");
        }
        let store = NodeStore::new(&config.agent_dir);
        let nodes = store.load_all();
        Ok(Arc::new_cyclic(|weak| Gateway {
            config,
            file: Mutex::new(Arc::new(file)),
            auth,
            registry: Arc::new(registry),
            seq: Arc::new(AtomicU64::new(0)),
            live: Mutex::new(HashMap::new()),
            nodes: Mutex::new(nodes),
            store,
            resources: Mutex::new(HashMap::new()),
            closing: CancellationToken::new(),
            shutting_down: AtomicBool::new(false),
            next_conn: AtomicU64::new(1),
            cluster: OnceLock::new(),
            self_ref: weak.clone(),
        }))
    }

    /// The current `gateway.json`.
    pub fn file(&self) -> Arc<GatewayFile> {
        Arc::clone(&lock(&self.file))
    }

    /// Re-reads `gateway.json` (policy, sandbox, principals, profiles) and the per-directory
    /// resources; sessions opened from now on use them.
    pub fn reload(&self) -> Result<Value, String> {
        let file = GatewayFile::load(&self.config.agent_dir).map_err(|e| e.to_string())?;
        for (provider, keys) in &file.auth_profiles {
            for key in keys {
                self.auth.add(crate::runner::AuthProfile::new(
                    &key.id,
                    provider,
                    &key.api_key,
                ));
            }
        }
        *lock(&self.file) = Arc::new(file);
        lock(&self.resources).clear();
        Ok(json!({ "reloaded": true }))
    }

    pub fn config(&self) -> &GatewayConfig {
        &self.config
    }

    /// Makes this gateway a node of a cluster; set once, before serving.
    pub fn set_cluster(&self, cluster: Arc<dyn ClusterHooks>) {
        let _ = self.cluster.set(cluster);
    }

    /// The cluster this gateway is a node of, if any.
    pub fn cluster(&self) -> Option<&Arc<dyn ClusterHooks>> {
        self.cluster.get()
    }

    /// The model a new session in `cwd` gets (`provider/id`), if any.
    pub fn default_model_id(&self, cwd: &Path) -> Option<String> {
        let settings = self.resources(cwd).settings.get();
        self.registry
            .default_model(
                settings.default_provider.as_deref(),
                settings.default_model.as_deref(),
            )
            .map(|m| m.full_id())
    }

    /// The models sessions can use (a key or login is there for them).
    pub fn registry(&self) -> &ModelRegistry {
        &self.registry
    }

    /// The principal of a token.
    pub fn principal(&self, token: &str) -> Option<String> {
        super::secrets::principal_of(&self.config.tokens, token)
    }

    /// The last `seq` handed out.
    pub fn seq(&self) -> u64 {
        self.seq.load(Ordering::SeqCst)
    }

    pub(crate) fn next_conn_id(&self) -> u64 {
        self.next_conn.fetch_add(1, Ordering::SeqCst)
    }

    /// Cancelled when connections must close (end of shutdown).
    pub fn closing(&self) -> CancellationToken {
        self.closing.clone()
    }

    pub fn is_shutting_down(&self) -> bool {
        self.shutting_down.load(Ordering::SeqCst)
    }

    fn refuse_when_closing(&self) -> Result<(), ApiError> {
        if self.is_shutting_down() {
            return Err(ApiError::new(
                codes::SHUTTING_DOWN,
                "the gateway is shutting down",
            ));
        }
        Ok(())
    }

    fn resources(&self, cwd: &Path) -> Arc<CwdResources> {
        if let Some(found) = lock(&self.resources).get(cwd) {
            return Arc::clone(found);
        }
        let agent_dir = &self.config.agent_dir;
        let settings = Arc::new(SettingsStore::load(
            &paths::settings_path(agent_dir),
            &paths::project_settings_path(cwd),
        ));
        let resource_settings = ResourceSettings::load(
            &paths::settings_path(agent_dir),
            &paths::project_settings_path(cwd),
        );
        let discovery = |user: &[String], project: &[String]| {
            let mut options = DiscoveryOptions::new(cwd, agent_dir);
            options.user_entries = user.to_vec();
            options.project_entries = project.to_vec();
            options
        };
        let loaded = Arc::new(CwdResources {
            settings,
            context_files: system_prompt::load_context_files(agent_dir, cwd),
            skills: load_skills(&discovery(
                &resource_settings.user_skills,
                &resource_settings.project_skills,
            ))
            .skills,
            templates: load_prompt_templates(&discovery(
                &resource_settings.user_prompts,
                &resource_settings.project_prompts,
            )),
        });
        lock(&self.resources).insert(cwd.to_path_buf(), Arc::clone(&loaded));
        loaded
    }

    /// The live session `id`, whoever owns it.
    pub fn live_session(&self, id: &str) -> Option<Arc<LiveSession>> {
        lock(&self.live).get(id).cloned()
    }

    /// The live session `id` of `principal`, reopening it from disk when it is not live.
    pub fn session(&self, principal: &str, id: &str) -> Result<Arc<LiveSession>, ApiError> {
        if let Some(live) = lock(&self.live).get(id) {
            if live.owner != principal {
                return Err(ApiError::not_found(id));
            }
            return Ok(Arc::clone(live));
        }
        self.resume(principal, id)
    }

    /// Reopens session `id` of `principal` from its file.
    pub fn resume(&self, principal: &str, id: &str) -> Result<Arc<LiveSession>, ApiError> {
        self.refuse_when_closing()?;
        if let Some(live) = lock(&self.live).get(id) {
            if live.owner != principal {
                return Err(ApiError::not_found(id));
            }
            return Ok(Arc::clone(live));
        }
        let node = self
            .node(id)
            .filter(|n| n.owner == principal)
            .ok_or_else(|| ApiError::not_found(id))?;
        if let Some(cluster) = self.cluster()
            && !cluster.may_open(id)
        {
            return Err(ApiError::failed(format!(
                "session {id} runs on another node of the cluster"
            )));
        }
        let cwd = PathBuf::from(&node.cwd);
        super::workspaces::check_cwd(&self.file(), &self.config.agent_dir, principal, &cwd)?;
        let file = node
            .file
            .clone()
            .map(PathBuf::from)
            .ok_or_else(|| ApiError::failed(format!("session {id} was never saved")))?;
        let manager = if file.exists() {
            SessionManager::open(&file, &cwd).map_err(|e| ApiError::failed(e.to_string()))?
        } else if self.cluster().is_some() {
            // Taken over before its first reply was stored: nothing was written anywhere,
            // so it starts again under its id (written with its first reply, as before).
            let dir = file.parent().unwrap_or(&cwd);
            SessionManager::create(&cwd, dir).with_id(id)
        } else {
            return Err(ApiError::failed(format!(
                "session {id} has no saved history (it is written after the first reply)"
            )));
        };
        let resources = self.resources(&cwd);
        let settings = resources.settings.get();
        let context = manager.build_context();
        let model = context
            .model
            .as_ref()
            .and_then(|(provider, model)| self.registry.find(provider, model).cloned())
            .or_else(|| {
                self.registry.default_model(
                    settings.default_provider.as_deref(),
                    settings.default_model.as_deref(),
                )
            })
            .ok_or_else(|| ApiError::failed("no model available"))?;
        let thinking = ThinkingLevel::parse(&context.thinking_level)
            .or_else(|| ThinkingLevel::parse(&node.thinking_level))
            .unwrap_or_default();
        self.open(Opening {
            channel: Vec::new(),
            manager,
            cwd,
            model,
            thinking,
            tools: node.tools.clone(),
            owner: principal.to_owned(),
            parent_id: node.parent_id.clone(),
            branch_point: node.branch_point.clone(),
            resumed_from: Some(node.id.clone()),
            created_at: Some(node.created_at),
        })
    }

    /// Creates a session (or resumes one when `sessionId` is given).
    pub fn create(
        &self,
        principal: &str,
        params: &CreateParams,
        channel: Vec<ChannelTool>,
    ) -> Result<Arc<LiveSession>, ApiError> {
        self.refuse_when_closing()?;
        if let Some(id) = &params.session_id {
            return self.resume(principal, id);
        }
        let cwd = PathBuf::from(&params.cwd);
        if !cwd.is_absolute() || !cwd.is_dir() {
            return Err(ApiError::invalid(format!(
                "cwd must be an existing absolute directory: {}",
                params.cwd
            )));
        }
        super::workspaces::check_cwd(&self.file(), &self.config.agent_dir, principal, &cwd)?;
        let parent_file = match &params.parent_id {
            Some(parent) => Some(self.session(principal, parent)?.session.session_file()),
            None => None,
        };
        let resources = self.resources(&cwd);
        let settings = resources.settings.get();
        let (model, pattern_level) = match &params.model {
            Some(pattern) => self
                .registry
                .resolve_pattern(pattern, None)
                .map_err(ApiError::invalid)?,
            None => (
                self.registry
                    .default_model(
                        settings.default_provider.as_deref(),
                        settings.default_model.as_deref(),
                    )
                    .ok_or_else(|| ApiError::failed("no model available"))?,
                None,
            ),
        };
        let requested = match &params.thinking_level {
            Some(text) => Some(
                ThinkingLevel::parse(text)
                    .ok_or_else(|| ApiError::invalid(format!("invalid thinking level {text}")))?,
            ),
            None => None,
        };
        let thinking = requested
            .or(pattern_level)
            .or_else(|| {
                settings
                    .default_thinking_level
                    .as_deref()
                    .and_then(ThinkingLevel::parse)
            })
            .unwrap_or_default();
        let tools = params.tools.clone().unwrap_or_else(|| {
            tools::DEFAULT_TOOLS
                .iter()
                .map(|t| (*t).to_owned())
                .collect()
        });
        let choice = SessionChoice {
            settings_dir: settings.session_dir.as_deref(),
            ..SessionChoice::default()
        };
        let dir = select::session_dir(&choice, &self.config.agent_dir, &cwd);
        let mut manager = SessionManager::create(&cwd, &dir);
        if let Some(parent) = parent_file {
            manager.new_session(parent.map(|p| p.to_string_lossy().into_owned()));
        }
        self.open(Opening {
            channel,
            manager,
            cwd,
            model,
            thinking,
            tools,
            owner: principal.to_owned(),
            parent_id: params.parent_id.clone(),
            branch_point: None,
            resumed_from: None,
            created_at: None,
        })
    }

    /// A new session holding the history of `sessionId` up to `fromMessage`.
    pub fn branch(
        &self,
        principal: &str,
        params: &BranchParams,
    ) -> Result<Arc<LiveSession>, ApiError> {
        self.refuse_when_closing()?;
        let source = self.session(principal, &params.session_id)?;
        let entry = source.entry_for(&params.from_message).ok_or_else(|| {
            ApiError::invalid(format!(
                "no message {} in session {}",
                params.from_message, params.session_id
            ))
        })?;
        let file = source.session.session_file().ok_or_else(|| {
            ApiError::failed("the session is not saved to a file; nothing to branch from")
        })?;
        if !file.exists() {
            return Err(ApiError::failed(
                "the session has no saved history yet (it is written after the first reply)",
            ));
        }
        let cwd = source.session.cwd().to_path_buf();
        let mut manager =
            SessionManager::open(&file, &cwd).map_err(|e| ApiError::failed(e.to_string()))?;
        manager
            .create_branched_session(&entry)
            .map_err(|e| ApiError::failed(e.to_string()))?;
        let info = source.info();
        let live = self.open(Opening {
            channel: Vec::new(),
            manager,
            cwd,
            model: source.session.model(),
            thinking: source.session.thinking_level(),
            tools: self.node(&source.id).map(|n| n.tools).unwrap_or(info.tools),
            owner: principal.to_owned(),
            parent_id: Some(source.id.clone()),
            branch_point: Some(params.from_message.clone()),
            resumed_from: None,
            created_at: None,
        })?;
        source.bump_state();
        Ok(live)
    }

    /// Builds the AgentSession, makes it live and records its node.
    fn open(&self, opening: Opening) -> Result<Arc<LiveSession>, ApiError> {
        let Opening {
            channel,
            mut manager,
            cwd,
            model,
            thinking,
            tools: tool_names,
            owner,
            parent_id,
            branch_point,
            resumed_from,
            created_at,
        } = opening;
        let resources = self.resources(&cwd);
        let file = self.file();
        let principal = file.principal(&owner);
        let sandbox = file
            .sandbox_config(&cwd)
            .map_err(|e| ApiError::failed(e.to_string()))?;
        let session_id = manager.session_id().to_owned();
        if let Some(sink) = self.cluster().and_then(|c| c.line_sink(&session_id)) {
            manager.set_line_sink(sink);
        }
        let created = create_agent_session(SessionParams {
            cwd: cwd.clone(),
            agent_dir: self.config.agent_dir.clone(),
            auth: self.auth.clone(),
            registry: Arc::clone(&self.registry),
            model,
            thinking_level: thinking,
            tools: tool_names.clone(),
            custom_tools: Vec::new(),
            tool_options: ToolOptions {
                sandbox,
                runtime: Some(RuntimeToolsInput {
                    host: GatewayHost::new(self.self_ref.clone(), &owner),
                    session_id,
                }),
                channel_tools: self
                    .config
                    .channel_tools
                    .get(&owner)
                    .cloned()
                    .unwrap_or_default()
                    .into_iter()
                    .chain(channel)
                    .collect(),
                custom_tool_scopes: Default::default(),
                policy: file.policy.clone(),
                agent_id: principal.agent_id.clone(),
                group_id: principal.group_id.clone(),
                scopes: principal.scopes.clone(),
            },
            session_manager: manager,
            settings: Arc::clone(&resources.settings),
            resources: SessionResources {
                context_files: resources.context_files.clone(),
                skills: resources.skills.clone(),
                templates: resources.templates.clone(),
            },
            parent_session_id: parent_id.clone(),
            session_id: resumed_from.clone(),
            prompt_mode: file.prompt_mode,
            cancel: self.closing.child_token(),
            on_event: None,
            extensions: self.config.extensions.clone(),
        })
        .map_err(|e| ApiError::invalid(e.to_string()))?;
        for warning in &created.pipeline.warnings {
            eprintln!(
                "pi-gateway: session {}: {warning}",
                created.session.session_id()
            );
        }
        let session = created.session;
        let requested_tools = tool_names;
        let tool_names = created.tool_names;
        let model = session.model();
        let thinking = session.thinking_level();
        let info = RunInfo {
            model: model.full_id(),
            tools: tool_names.clone(),
            thinking_level: thinking.as_str().to_owned(),
        };
        let weak = self.self_ref.clone();
        let on_limit: OnAbort = Arc::new(move |id: &str, _reason: TerminationReason| {
            if let Some(gateway) = weak.upgrade() {
                gateway.abort_descendants(id, TerminationReason::AbortSignal);
            }
        });
        let live = LiveSession::start(
            session,
            owner.clone(),
            info,
            resumed_from,
            SessionShared {
                seq: Arc::clone(&self.seq),
                limits: self.config.limits,
                event_log: self.config.event_log,
                auth: self.auth.clone(),
                runner: self.file().runner_config(),
            },
            on_limit,
        );
        let now = pi_ai::now_ms();
        let node = SessionNode {
            id: live.id.clone(),
            parent_id,
            branch_point,
            created_at: created_at.unwrap_or(now),
            last_active_at: now,
            owner,
            cwd: cwd.to_string_lossy().into_owned(),
            file: live
                .session
                .session_file()
                .map(|p| p.to_string_lossy().into_owned()),
            model: model.full_id(),
            thinking_level: thinking.as_str().to_owned(),
            tools: requested_tools,
            last_termination: self.node(&live.id).and_then(|n| n.last_termination),
            key: self.node(&live.id).and_then(|n| n.key),
            workspace_node: self
                .node(&live.id)
                .and_then(|n| n.workspace_node)
                .or_else(|| self.cluster().map(|c| c.node_id().to_owned())),
        };
        self.save_node(&node);
        lock(&self.nodes).insert(node.id.clone(), node);
        lock(&self.live).insert(live.id.clone(), Arc::clone(&live));
        if let Some(cluster) = self.cluster() {
            cluster.opened(&live);
        }
        Ok(live)
    }

    /// Queues a prompt on the session's lane; returns the operations ahead of it and the
    /// outcome to come.
    pub fn prompt(
        &self,
        live: &Arc<LiveSession>,
        text: String,
    ) -> Result<(usize, oneshot::Receiver<RunOutcome>), ApiError> {
        self.refuse_when_closing()?;
        let (done, outcome) = oneshot::channel();
        let session = Arc::clone(live);
        let gateway = self.self_ref.clone();
        let ahead = live.enqueue(async move {
            let result = session.run_prompt(text).await;
            if let Some(gateway) = gateway.upgrade() {
                gateway.touch(&session.id, result.termination);
            }
            let _ = done.send(result);
        })?;
        Ok((ahead, outcome))
    }

    /// Queues tree navigation on the session's lane.
    pub fn navigate(
        &self,
        live: &Arc<LiveSession>,
        target: &str,
        summarize: bool,
    ) -> Result<oneshot::Receiver<Result<Value, ApiError>>, ApiError> {
        self.refuse_when_closing()?;
        let entry = live.entry_for(target).ok_or_else(|| {
            ApiError::invalid(format!("no entry {target} in session {}", live.id))
        })?;
        let (done, result) = oneshot::channel();
        let session = Arc::clone(live);
        let gateway = self.self_ref.clone();
        live.enqueue(async move {
            let outcome = session.navigate(&entry, summarize).await;
            if let Some(gateway) = gateway.upgrade() {
                gateway.touch(&session.id, None);
            }
            let _ = done.send(outcome);
        })?;
        Ok(result)
    }

    /// The session as create, resume and branch return it.
    pub fn describe(&self, live: &LiveSession) -> Value {
        let info = live.info();
        json!({
            "sessionId": live.id,
            "node": self.node(&live.id).map(|n| n.to_json(live.is_running())),
            "model": info.model,
            "tools": info.tools,
            "thinkingLevel": info.thinking_level,
            "stateVersion": live.state_version(),
            "seq": live.last_seq(),
        })
    }

    /// Interrupts session `id` and its sub-agents; returns the ids aborted.
    pub fn interrupt(&self, principal: &str, id: &str) -> Result<Vec<String>, ApiError> {
        let live = self.session(principal, id)?;
        let mut aborted = Vec::new();
        if live.terminate(TerminationReason::AbortSignal) {
            aborted.push(live.id.clone());
        }
        aborted.extend(self.abort_descendants(id, TerminationReason::AbortSignal));
        Ok(aborted)
    }

    /// Aborts the running sub-agents below `id` (children without a branch point).
    pub fn abort_descendants(&self, id: &str, reason: TerminationReason) -> Vec<String> {
        let mut aborted = Vec::new();
        let mut stack = vec![id.to_owned()];
        let mut seen = std::collections::HashSet::new();
        while let Some(parent) = stack.pop() {
            if !seen.insert(parent.clone()) {
                continue;
            }
            let children: Vec<String> = lock(&self.nodes)
                .values()
                .filter(|n| n.parent_id.as_deref() == Some(&parent) && n.branch_point.is_none())
                .map(|n| n.id.clone())
                .collect();
            for child in children {
                let live = lock(&self.live).get(&child).cloned();
                if let Some(live) = live
                    && live.terminate(reason)
                {
                    aborted.push(child.clone());
                }
                stack.push(child);
            }
        }
        aborted
    }

    /// Ends every running prompt with `gateway_disconnected`, waits (bounded) for the
    /// runs to finish, saves every node, then closes the connections.
    pub async fn shutdown(&self) {
        self.shutting_down.store(true, Ordering::SeqCst);
        let live: Vec<Arc<LiveSession>> = lock(&self.live).values().cloned().collect();
        let mut stopped = Vec::new();
        for session in &live {
            if session.terminate(TerminationReason::GatewayDisconnected) {
                stopped.push(session.id.clone());
            }
        }
        let deadline = Instant::now() + self.config.shutdown_grace;
        while live.iter().any(|s| s.is_running()) && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        for id in &stopped {
            let mut nodes = lock(&self.nodes);
            if let Some(node) = nodes.get_mut(id) {
                node.last_termination = Some(TerminationReason::GatewayDisconnected);
                node.last_active_at = pi_ai::now_ms();
            }
        }
        let nodes: Vec<SessionNode> = lock(&self.nodes).values().cloned().collect();
        for node in &nodes {
            self.save_node(node);
        }
        self.closing.cancel();
    }
}
