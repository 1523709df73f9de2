//! What the editor's requests do to the session: start, fresh or reopened, prompts that
//! run to their end while the updates stream, cancellation.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, PoisonError};

use agent_client_protocol::v1::schema::{
    AgentCapabilities, AvailableCommandsUpdate, CancelNotification, CloseSessionRequest,
    ConfigOptionUpdate, ContentBlock, ContentChunk, Cost, CurrentModeUpdate, DeleteSessionRequest,
    Implementation, InitializeRequest, InitializeResponse, ListSessionsRequest,
    ListSessionsResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, PromptResponse,
    ResumeSessionRequest, ResumeSessionResponse, SessionCapabilities, SessionCloseCapabilities,
    SessionConfigOption, SessionConfigOptionValue, SessionDeleteCapabilities, SessionId,
    SessionListCapabilities, SessionResumeCapabilities, SessionUpdate,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, StopReason, TextContent,
    UsageUpdate,
};
use agent_client_protocol::{Error, ErrorCode};
use tokio::sync::{mpsc, oneshot};

use super::auth;
use super::client_files::EditorFiles;
use super::commands;
use super::config::Modes;
use super::link::Link;
use super::listing;
use super::mcp;
use super::prompt;
use super::replay;
use super::starting::Opened;
use super::terminal::EditorTerminal;
use super::ui::AcpUi;
use super::updates::{Snapshot, Translator, snapshot_before};
use crate::agent_session::{AgentSession, PromptOptions};
use crate::session_event::AgentSessionEvent;
use crate::tools::client_terminal::ClientTerminal;

/// What the event forwarder is handed, in order.
enum Forward {
    /// An event, with the file an `edit` or `write` it starts is about to change.
    Event(Box<AgentSessionEvent>, Option<(String, Snapshot)>),
    /// Answered once every event before it was sent.
    Flush(oneshot::Sender<()>),
}

pub struct Server {
    session: AgentSession,
    pub link: Arc<Link>,
    forward: mpsc::UnboundedSender<Forward>,
    /// `session/cancel` arrived for the prompt running.
    cancelled: AtomicBool,
    /// The session pi started with was handed to a `session/new`.
    started_used: AtomicBool,
    /// The MCP servers the client gave last.
    client_servers: std::sync::Mutex<Vec<pi_mcp::config::ServerEntry>>,
    /// The project's trust is still to ask (see `Pending::settle_trust`).
    trust_unasked: AtomicBool,
    /// The project's resources were loaded (trusted).
    project_trusted: bool,
    /// The session's mode (default or read-only).
    modes: Modes,
    /// Replaced by a session in another folder: its events are no longer the editor's.
    retired: Arc<AtomicBool>,
    /// The config options as the editor last learned them.
    options_sent: std::sync::Mutex<Vec<SessionConfigOption>>,
}

fn invalid(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INVALID_PARAMS, message)
}

fn internal(message: impl Into<String>) -> Error {
    Error::new(ErrorCode::INTERNAL_ERROR, message)
}

fn same_folder(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    canonical(a) == canonical(b)
}

/// pi's capabilities: saved sessions load, prompts take images and embedded files, and
/// MCP servers given by the client may be stdio or HTTP.
pub fn initialize(link: &Arc<Link>, request: &InitializeRequest) -> InitializeResponse {
    let files = EditorFiles::offered(link.clone(), &request.client_capabilities.fs);
    crate::tools::client_files::set(
        files.map(|f| Arc::new(f) as Arc<dyn crate::tools::client_files::ClientFiles>),
    );
    let terminal = request
        .client_capabilities
        .terminal
        .then(|| Arc::new(EditorTerminal::new(link.clone())) as Arc<dyn ClientTerminal>);
    crate::tools::client_terminal::set(terminal);
    let auth_methods = auth::methods(&request.client_capabilities);
    link.set_auth_methods(auth_methods.clone());
    let forms = request.client_capabilities.elicitation.as_ref();
    link.set_forms(forms.is_some_and(|e| e.form.is_some()));
    InitializeResponse::new(request.protocol_version)
        .auth_methods(auth_methods)
        .agent_capabilities(
            AgentCapabilities::new()
                .load_session(true)
                .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
                .mcp_capabilities(McpCapabilities::new().http(true))
                .session_capabilities(
                    SessionCapabilities::new()
                        .list(SessionListCapabilities::new())
                        .delete(SessionDeleteCapabilities::new())
                        .resume(SessionResumeCapabilities::new())
                        .close(SessionCloseCapabilities::new()),
                ),
        )
        .agent_info(Implementation::new("pi", crate::PI_VERSION).title("pi".to_owned()))
}

impl Server {
    /// Binds the extensions to the editor's UI and starts forwarding the session's events.
    pub async fn start(opened: Opened, link: Arc<Link>) -> Self {
        let Opened {
            session,
            trust_unasked,
            project_trusted,
            sandboxed,
        } = opened;
        let modes = Modes::new(sandboxed, sandbox_offered(session.cwd()));
        let (forward, mut queue) = mpsc::unbounded_channel::<Forward>();
        {
            let forward = forward.clone();
            let cwd = session.cwd().to_path_buf();
            session.subscribe(move |event| {
                let before = snapshot_before(event, &cwd);
                let _ = forward.send(Forward::Event(Box::new(event.clone()), before));
            });
        }
        let retired = Arc::new(AtomicBool::new(false));
        {
            let link = link.clone();
            let cwd = session.cwd().to_path_buf();
            let retired = retired.clone();
            tokio::spawn(async move {
                let mut translator = Translator::new(&cwd, link.clone());
                while let Some(item) = queue.recv().await {
                    match item {
                        Forward::Event(event, before) => {
                            if let Some((id, snapshot)) = before {
                                translator.before(id, snapshot);
                            }
                            for update in translator.updates(&event) {
                                if !retired.load(Ordering::SeqCst) {
                                    link.update(update);
                                }
                            }
                        }
                        Forward::Flush(done) => {
                            let _ = done.send(());
                        }
                    }
                }
            });
        }
        session
            .bind_extensions(
                Arc::new(AcpUi::new(link.clone())),
                Arc::new(|error: crate::extensions::ExtensionErrorInfo| {
                    eprintln!(
                        "Extension error ({}, {}): {}",
                        error.extension_path, error.event, error.error
                    );
                }),
                Arc::new(|| {}),
            )
            .await;
        Self {
            session,
            link,
            forward,
            cancelled: AtomicBool::new(false),
            started_used: AtomicBool::new(false),
            client_servers: std::sync::Mutex::new(Vec::new()),
            trust_unasked: AtomicBool::new(trust_unasked),
            modes,
            project_trusted,
            retired,
            options_sent: std::sync::Mutex::new(Vec::new()),
        }
    }

    pub fn session(&self) -> &AgentSession {
        &self.session
    }

    pub fn project_trusted(&self) -> bool {
        self.project_trusted
    }

    /// Whether the session's tools run confined.
    pub fn sandboxed(&self) -> bool {
        self.modes.sandboxed()
    }

    /// Whether switching to `mode` needs the session built again, into the sandbox
    /// (`Some(true)`) or out of it.
    pub fn sandbox_switch(&self, mode: &str) -> Option<bool> {
        self.modes.sandbox_switch(mode)
    }

    /// The mode a `session/set_config_option` asks for, if it is the mode option.
    pub fn mode_option(
        &self,
        request: &SetSessionConfigOptionRequest,
    ) -> Result<Option<String>, Error> {
        if &*request.config_id.0 != super::config::MODE {
            return Ok(None);
        }
        match &request.value {
            SessionConfigOptionValue::ValueId { value } => Ok(Some(value.0.to_string())),
            _ => Err(invalid("Every option here takes one of its values")),
        }
    }

    /// Whether the project's trust is still to ask; asked once.
    pub fn take_trust_unasked(&self) -> bool {
        self.trust_unasked.swap(false, Ordering::SeqCst)
    }

    /// Takes over from `previous`, the same session built again: its mode, the client's
    /// MCP servers, and that the session pi started with is spoken for.
    pub async fn adopt(&self, previous: &Server) {
        self.started_used.store(true, Ordering::SeqCst);
        let _ = self.modes.set(&self.session, previous.modes.current());
        let servers = previous
            .client_servers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone();
        self.use_client_servers(servers).await;
    }

    /// Whether this session works in `cwd`.
    pub fn works_in(&self, cwd: &Path) -> bool {
        same_folder(cwd, self.session.cwd())
    }

    /// Stops this session for good (another took its place): its run ends, its
    /// extensions hear `session_shutdown`, its MCP servers close.
    pub async fn retire(&self) {
        self.retired.store(true, Ordering::SeqCst);
        super::shut_down(&self.session).await;
        self.session.close_mcp().await;
    }

    fn check_folder(&self, cwd: &Path) -> Result<(), Error> {
        if !cwd.is_absolute() {
            return Err(invalid(format!(
                "cwd must be an absolute path: {}",
                cwd.display()
            )));
        }
        if !same_folder(cwd, self.session.cwd()) {
            return Err(invalid(format!(
                "pi was started in {} and works there; start it in {} for this session",
                self.session.cwd().display(),
                cwd.display()
            )));
        }
        Ok(())
    }

    /// `session/new`: the session pi started with when it is still untouched, else a
    /// fresh one (as `/new`).
    pub async fn new_session(
        &self,
        request: NewSessionRequest,
    ) -> Result<NewSessionResponse, Error> {
        self.check_folder(&request.cwd)?;
        let servers = mcp::entries(&request.mcp_servers).map_err(invalid)?;
        self.check_login()?;
        let reuse =
            !self.started_used.swap(true, Ordering::SeqCst) && self.session.message_count() == 0;
        if !reuse {
            self.session
                .new_session_with_extensions(None, None)
                .await
                .map_err(internal)?;
        }
        self.use_client_servers(servers).await;
        let id = self.session.session_id();
        self.link.set_session_id(Some(id.clone()));
        Ok(NewSessionResponse::new(id)
            .modes(self.modes.state())
            .config_options(self.options()))
    }

    /// A model with a key is there (one is taken after a login made since, as a new
    /// session would), else the editor is asked to sign the user in (`auth_required`).
    pub fn check_login(&self) -> Result<(), Error> {
        if self.session.model_usable() {
            return Ok(());
        }
        // The user may have signed in since, in a terminal.
        self.session.reload_models_for_new_session();
        if self.session.model_usable() {
            Ok(())
        } else {
            Err(auth::required(&self.link.auth_methods()))
        }
    }

    /// Connects the client's MCP servers when they differ from those of the last session.
    async fn use_client_servers(&self, servers: Vec<pi_mcp::config::ServerEntry>) {
        let changed = {
            let mut last = self
                .client_servers
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            let changed = *last != servers;
            last.clone_from(&servers);
            changed
        };
        if changed {
            self.session.set_client_mcp_servers(servers).await;
        }
    }

    /// Tells the editor the commands it may offer (once a session was answered for).
    pub fn announce_commands(&self) {
        self.link.update(SessionUpdate::AvailableCommandsUpdate(
            AvailableCommandsUpdate::new(commands::available(&self.session)),
        ));
    }

    /// `session/load`: the saved session with this id, its history sent as updates before
    /// the answer.
    pub async fn load_session(
        &self,
        request: LoadSessionRequest,
    ) -> Result<LoadSessionResponse, Error> {
        self.open_saved(&request.session_id.0, &request.cwd, &request.mcp_servers)
            .await?;
        self.flush().await;
        for update in replay::history(&self.session.messages()) {
            self.link.update(update);
        }
        Ok(LoadSessionResponse::new()
            .modes(self.modes.state())
            .config_options(self.options()))
    }

    /// `session/resume`: a saved session continued without its history sent again.
    pub async fn resume_session(
        &self,
        request: ResumeSessionRequest,
    ) -> Result<ResumeSessionResponse, Error> {
        self.open_saved(&request.session_id.0, &request.cwd, &request.mcp_servers)
            .await?;
        Ok(ResumeSessionResponse::new()
            .modes(self.modes.state())
            .config_options(self.options()))
    }

    /// `session/close`: the editor is done with the session; a run still going is
    /// stopped and nothing more is sent for it (a prompt naming it is then an error).
    pub async fn close_session(&self, request: CloseSessionRequest) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        if self.link.session_id().as_deref() != Some(id.as_str()) {
            return Err(invalid(format!("Unknown session {id}")));
        }
        self.cancelled.store(true, Ordering::SeqCst);
        self.session.abort().await;
        self.flush().await;
        self.link.set_session_id(None);
        Ok(())
    }

    /// `session/list` (see [`listing`]).
    pub fn list_sessions(
        &self,
        request: &ListSessionsRequest,
    ) -> Result<ListSessionsResponse, Error> {
        let agent_dir = crate::config::paths::agent_dir();
        let current = self
            .session
            .session_file()
            .and_then(|f| f.parent().map(Path::to_path_buf));
        let all = listing::gather(&agent_dir, current.as_deref());
        listing::page(&all, request.cwd.as_deref(), request.cursor.as_deref()).map_err(invalid)
    }

    /// `session/delete`: a saved session's file goes (to the trash when there is one); not
    /// the session open now.
    pub fn delete_session(&self, request: &DeleteSessionRequest) -> Result<(), Error> {
        let id = request.session_id.0.to_string();
        if self.session.session_id() == id && self.link.session_id().is_some() {
            return Err(invalid(format!(
                "Session {id} is open: close it or open another before deleting it"
            )));
        }
        let path = self.find_session(&id)?;
        // Ids are looked up by prefix elsewhere; a deletion names the whole id.
        let exact = path
            .file_stem()
            .and_then(|stem| stem.to_str())
            .is_some_and(|stem| stem.ends_with(&format!("_{id}")));
        if !exact {
            return Err(invalid(format!("No session {id}")));
        }
        crate::session::delete::delete_session_file(&path).map_err(internal)?;
        Ok(())
    }

    /// Opens saved session `id` (in `cwd`, with the client's `servers`) as the current one.
    async fn open_saved(&self, id: &str, cwd: &Path, servers: &[McpServer]) -> Result<(), Error> {
        self.check_folder(cwd)?;
        let servers = mcp::entries(servers).map_err(invalid)?;
        let id = id.to_owned();
        self.started_used.store(true, Ordering::SeqCst);
        if self.session.session_id() != id {
            let path = self.find_session(&id)?;
            let cancelled = self
                .session
                .switch_session_with_extensions(&path.display().to_string())
                .await
                .map_err(internal)?;
            if cancelled {
                return Err(internal(
                    "An extension kept the session from being switched",
                ));
            }
        }
        self.use_client_servers(servers).await;
        self.link.set_session_id(Some(id));
        Ok(())
    }

    fn find_session(&self, id: &str) -> Result<PathBuf, Error> {
        let dir = self
            .session
            .session_file()
            .and_then(|f| f.parent().map(Path::to_path_buf))
            .ok_or_else(|| invalid("This pi keeps no session files (--no-session)"))?;
        let agent_dir = crate::config::paths::agent_dir();
        crate::session::select::find_by_id(id, &dir, &agent_dir)
            .ok_or_else(|| invalid(format!("No session {id} in {}", dir.display())))
    }

    /// `session/prompt`: runs the prompt to its end; the answer comes once every update of
    /// the run was sent.
    pub async fn prompt(&self, request: PromptRequest) -> Result<PromptResponse, Error> {
        let id = request.session_id.0.to_string();
        if self.link.session_id().as_deref() != Some(id.as_str()) {
            return Err(invalid(format!(
                "Unknown session {id}: start one with session/new or session/load"
            )));
        }
        let outcome = self.run_prompt(&request).await;
        self.flush().await;
        self.after_turn();
        outcome
    }

    async fn run_prompt(&self, request: &PromptRequest) -> Result<PromptResponse, Error> {
        let prompt = prompt::from_blocks(&request.prompt);
        self.cancelled.store(false, Ordering::SeqCst);
        if let Some(reply) = commands::run(&self.session, prompt.text.trim()).await {
            self.flush().await;
            self.link
                .update(SessionUpdate::AgentMessageChunk(ContentChunk::new(
                    ContentBlock::Text(TextContent::new(reply)),
                )));
            return Ok(PromptResponse::new(StopReason::EndTurn));
        }
        // A session that started with no model takes one from a login made since; one
        // with a model resolves its key in the prompt itself.
        if crate::auth_guidance::is_unknown_model(&self.session.model()) {
            self.session.reload_models_for_new_session();
        }
        let options = PromptOptions {
            images: prompt.images,
            source: Some("rpc".to_owned()),
            ..PromptOptions::default()
        };
        let outcome = self.session.prompt(&prompt.text, options, None).await;
        self.flush().await;
        if let Err(error) = outcome {
            // An extension's command runs without a model; anything else needed one.
            return Err(if self.session.model_usable() {
                internal(error.0)
            } else {
                auth::required(&self.link.auth_methods())
            });
        }
        if self.cancelled.swap(false, Ordering::SeqCst) {
            return Ok(PromptResponse::new(StopReason::Cancelled));
        }
        let last = self
            .session
            .messages()
            .into_iter()
            .rev()
            .find_map(|m| match m {
                pi_agent_core::AgentMessage::Llm(pi_ai::Message::Assistant(a)) => Some(a),
                _ => None,
            });
        let reason = match last
            .as_deref()
            .map(|a| (a.stop_reason, a.error_message.clone()))
        {
            Some((pi_ai::StopReason::Length, _)) => StopReason::MaxTokens,
            Some((pi_ai::StopReason::Aborted, _)) => StopReason::Cancelled,
            Some((pi_ai::StopReason::Error, message)) => {
                return Err(internal(
                    message.unwrap_or_else(|| "The model request failed".to_owned()),
                ));
            }
            _ => StopReason::EndTurn,
        };
        Ok(PromptResponse::new(reason))
    }

    pub fn check_session(&self, id: &SessionId) -> Result<(), Error> {
        if self.link.session_id().as_deref() != Some(&*id.0) {
            return Err(invalid(format!("Unknown session {}", id.0)));
        }
        Ok(())
    }

    /// Switches to `mode` within this session (no sandbox change) and tells the editor.
    pub fn set_mode_now(&self, mode: &str) -> Result<(), Error> {
        self.modes.set(&self.session, mode).map_err(invalid)?;
        self.link
            .update(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                self.modes.current(),
            )));
        Ok(())
    }

    /// `session/set_config_option`: the model, the thinking level or the mode; the answer
    /// holds every option as it is now.
    pub fn set_config_option(
        &self,
        request: &SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        self.check_session(&request.session_id)?;
        let value = match &request.value {
            SessionConfigOptionValue::ValueId { value } => value.0.to_string(),
            _ => return Err(invalid("Every option here takes one of its values")),
        };
        self.modes
            .set_option(&self.session, &request.config_id.0, &value)
            .map_err(invalid)?;
        Ok(SetSessionConfigOptionResponse::new(self.options()))
    }

    /// The config options now, as the editor is told them.
    fn options(&self) -> Vec<SessionConfigOption> {
        let options = self.modes.options(&self.session);
        options.clone_into(
            &mut self
                .options_sent
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        options
    }

    /// After a prompt: the options when they changed meanwhile (a command or an extension
    /// changed the model, say) and how full the context is, with the session's cost.
    fn after_turn(&self) {
        let options = self.modes.options(&self.session);
        let changed = {
            let mut sent = self
                .options_sent
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            let changed = *sent != options;
            sent.clone_from(&options);
            changed
        };
        if changed {
            self.link
                .update(SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(
                    options,
                )));
        }
        if let Some(usage) = self.session.context_usage()
            && let Some(tokens) = usage.tokens
        {
            let cost = Cost::new(self.session.session_stats().cost, "USD");
            self.link.update(SessionUpdate::UsageUpdate(
                UsageUpdate::new(tokens, usage.context_window).cost(cost),
            ));
        }
    }

    /// `session/cancel`: stops the run of that session.
    pub fn cancel(&self, notification: &CancelNotification) {
        if self.link.session_id().as_deref() != Some(&*notification.session_id.0) {
            return;
        }
        self.cancelled.store(true, Ordering::SeqCst);
        let session = self.session.clone();
        tokio::spawn(async move { session.abort().await });
    }

    /// Waits until every event so far was sent.
    async fn flush(&self) {
        let (done, sent) = oneshot::channel();
        if self.forward.send(Forward::Flush(done)).is_ok() {
            let _ = sent.await;
        }
    }
}

/// Whether the kernel can confine the tools of a session in `cwd` (the sandbox mode is
/// offered).
fn sandbox_offered(cwd: &Path) -> bool {
    crate::sandbox::cli::CliSandbox::for_run(&crate::config::paths::agent_dir(), cwd, true).is_ok()
}
