//! One configured server: connected on first need, again after it dropped, and closed with
//! pi. Its state and error are what `pi mcp list` and `/mcp` show, worded as pi words them.

// Roots and logging are deprecated by the newest MCP revision (SEP-2577), but servers in use
// today still ask for roots and log through `notifications/message`, and pi serves both.
#![allow(deprecated)]

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

mod handler;
mod http;
mod progress;

pub use progress::Progress;
use progress::{ProgressRoutes, ProgressTap};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientCapabilities, ClientConfig, ClientRequest, Implementation, Root, ServerResult, Tool,
};
use rmcp::service::{PeerRequestOptions, RunningService};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Map, Value};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::config::{ServerEntry, Transport};
use crate::log::ServerLog;
use crate::oauth::{AuthStore, Challenge};
use crate::stdio::{Launch, ServerProcess, expand_home};
use handler::Handler;

const DEFAULT_TIMEOUT_SECS: f64 = 60.0;

/// Where a server stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Connecting,
    Connected,
    Failed,
    Disconnected,
    NeedsAuth,
    Disabled,
    Closed,
}

impl State {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Connecting => "connecting",
            Self::Connected => "connected",
            Self::Failed => "failed",
            Self::Disconnected => "disconnected",
            Self::NeedsAuth => "needs-auth",
            Self::Disabled => "disabled",
            Self::Closed => "closed",
        }
    }
}

/// Resolves a config value (`${NAME}`, `!command`); the error names what failed.
pub type ResolveValue = Arc<dyn Fn(&str, &str) -> Result<String, String> + Send + Sync>;

/// What every connection shares.
#[derive(Clone)]
pub struct Context {
    /// The session's working directory: the servers' default cwd and root.
    pub cwd: PathBuf,
    pub home: Option<PathBuf>,
    pub log: Arc<ServerLog>,
    pub resolve: ResolveValue,
    /// Called when a server's state or tools change.
    pub on_change: Arc<dyn Fn(&str) + Send + Sync>,
    /// pi's version, sent as the client's.
    pub version: String,
    /// `mcp-auth.json`, for servers that sign in with OAuth.
    pub auth: Option<AuthStore>,
    /// A `/login` provider's key or token, for servers with `auth.provider`.
    pub provider_token: Option<ProviderToken>,
}

/// Resolves a provider's key or (refreshed) OAuth token.
pub type ProviderToken =
    Arc<dyn Fn(String) -> futures_util::future::BoxFuture<'static, Option<String>> + Send + Sync>;

/// A snapshot of a server for lists and the tool registry.
#[derive(Debug, Clone)]
pub struct Status {
    pub state: State,
    pub error: Option<String>,
    pub tools: Vec<Tool>,
    pub has_resources: bool,
    pub instructions: Option<String>,
}

/// Why a call failed.
#[derive(Debug, thiserror::Error)]
pub enum CallError {
    #[error("{0}")]
    Connect(String),
    #[error("{0}")]
    Call(String),
    #[error("aborted")]
    Aborted,
}

/// One server.
pub struct Connection {
    pub entry: ServerEntry,
    context: Context,
    status: Mutex<Status>,
    live: tokio::sync::Mutex<Option<Live>>,
    routes: ProgressRoutes,
    closed: CancellationToken,
    /// The last `WWW-Authenticate` challenge; set with the needs-auth state.
    challenge: Mutex<Option<Challenge>>,
}

struct Live {
    service: Arc<RunningService<RoleClient, Handler>>,
    process: Option<ServerProcess>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Connection {
    pub fn new(entry: ServerEntry, context: Context) -> Arc<Self> {
        let state = if entry.config.enabled {
            State::Connecting
        } else {
            State::Disabled
        };
        Arc::new(Self {
            entry,
            context,
            status: Mutex::new(Status {
                state,
                error: None,
                tools: Vec::new(),
                has_resources: false,
                instructions: None,
            }),
            live: tokio::sync::Mutex::new(None),
            routes: ProgressRoutes::default(),
            closed: CancellationToken::new(),
            challenge: Mutex::new(None),
        })
    }

    pub fn name(&self) -> &str {
        &self.entry.name
    }

    pub fn status(&self) -> Status {
        lock(&self.status).clone()
    }

    fn timeout(&self) -> Duration {
        let secs = self
            .entry
            .config
            .timeout_secs
            .unwrap_or(DEFAULT_TIMEOUT_SECS);
        Duration::from_secs_f64(secs.clamp(0.001, 86_400.0))
    }

    fn set(&self, change: impl FnOnce(&mut Status)) {
        change(&mut lock(&self.status));
        (self.context.on_change)(&self.entry.name);
    }

    /// Connects unless connected; the error is pi's "failed to connect" message.
    pub async fn connect(self: &Arc<Self>) -> Result<(), String> {
        self.service().await.map(|_| ())
    }

    async fn service(self: &Arc<Self>) -> Result<Arc<RunningService<RoleClient, Handler>>, String> {
        if self.closed.is_cancelled() {
            return Err(format!("MCP server \"{}\" is shut down", self.entry.name));
        }
        let mut live = self.live.lock().await;
        if let Some(current) = live.as_ref() {
            if !current.service.is_transport_closed() {
                return Ok(current.service.clone());
            }
            if let Some(old) = live.take() {
                self.dropped(old);
            }
        }
        self.set(|s| {
            s.state = State::Connecting;
        });
        let connecting = tokio::select! {
            result = tokio::time::timeout(self.timeout(), self.open()) => result
                .unwrap_or_else(|_| Err((format!("timed out after {} seconds", self.timeout().as_secs_f64()), None))),
            () = self.closed.cancelled() => Err(("shut down while connecting".into(), None)),
        };
        match connecting {
            Ok(opened) => {
                let service = opened.service.clone();
                *live = Some(opened);
                Ok(service)
            }
            Err((error, _)) if error.starts_with(http::NEEDS_SIGN_IN) => {
                self.set(|s| {
                    s.state = State::NeedsAuth;
                    s.error = None;
                });
                let how = error
                    .strip_prefix(http::NEEDS_SIGN_IN)
                    .and_then(|rest| rest.strip_prefix(" with "))
                    .unwrap_or("/mcp");
                Err(format!(
                    "MCP server \"{}\" requires sign-in. Run {how} to sign in.",
                    self.entry.name
                ))
            }
            Err((error, stderr)) => {
                let error = match stderr {
                    Some(tail) => format!("{error}\n{tail}"),
                    None => error,
                };
                let closed = self.closed.is_cancelled();
                self.set(|s| {
                    s.state = if closed { State::Closed } else { State::Failed };
                    s.error = Some(error.clone());
                });
                Err(format!(
                    "MCP server \"{}\" failed to connect: {error}",
                    self.entry.name
                ))
            }
        }
    }

    /// A connection that went away: the next call reconnects; until then the state says why.
    fn dropped(&self, old: Live) {
        let stderr = old.process.as_ref().and_then(ServerProcess::stderr_tail);
        if let Some(process) = old.process {
            tokio::spawn(process.stop());
        }
        self.set(|s| {
            s.state = State::Disconnected;
            s.error = Some(match stderr {
                Some(tail) => format!("Connection closed\n{tail}"),
                None => "Connection closed".into(),
            });
        });
    }

    async fn open(self: &Arc<Self>) -> Result<Live, (String, Option<String>)> {
        let handler = Handler {
            server: self.entry.name.clone(),
            log: self.context.log.clone(),
            roots: self.roots(),
            info: self.client_info(),
            tools_changed: Arc::downgrade(self),
        };
        match &self.entry.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => {
                let home = self.context.home.as_deref();
                let mut resolved = Vec::with_capacity(env.len());
                for (key, value) in env {
                    let what = format!("MCP server \"{}\" env \"{key}\"", self.entry.name);
                    resolved.push((
                        key.clone(),
                        (self.context.resolve)(value, &what).map_err(|e| (e, None))?,
                    ));
                }
                let args: Vec<String> = args.iter().map(|a| expand_home(a, home)).collect();
                let cwd = self
                    .context
                    .cwd
                    .join(expand_home(cwd.as_deref().unwrap_or("."), home));
                let command = expand_home(command, home);
                let launch = Launch {
                    server: &self.entry.name,
                    command: &command,
                    args: &args,
                    env: resolved,
                    cwd: &cwd,
                };
                let (process, stdout, stdin) =
                    ServerProcess::spawn(&launch, self.context.log.clone())
                        .map_err(|e| (spawn_error(&command, &e), None))?;
                let invalid = crate::json_lines::Invalid::default();
                let stdout = crate::json_lines::JsonLines::new(stdout, invalid.clone());
                let mut process = process;
                process.invalid = invalid;
                let transport = rmcp::transport::IntoTransport::<RoleClient, _, _>::into_transport(
                    (stdout, stdin),
                );
                match handler
                    .serve(ProgressTap::new(transport, self.routes.clone()))
                    .await
                {
                    Ok(service) => self.ready(service, Some(process)).await,
                    Err(e) => {
                        // Give stderr a moment to arrive: it usually says why.
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        let error = match process.ended() {
                            Some(ended) => format!("the server {ended} before it answered"),
                            None => e.to_string(),
                        };
                        let tail = process.stderr_tail();
                        tokio::spawn(process.stop());
                        Err((error, tail))
                    }
                }
            }
            Transport::Http { url, headers, .. } => {
                let service = self.open_http(handler, url, headers).await?;
                self.ready(service, None).await
            }
        }
    }

    async fn ready(
        &self,
        service: RunningService<RoleClient, Handler>,
        process: Option<ServerProcess>,
    ) -> Result<Live, (String, Option<String>)> {
        let info = service.peer_info();
        let capabilities = info.as_ref().map(|i| i.capabilities.clone());
        let tools = if capabilities.as_ref().is_some_and(|c| c.tools.is_some()) {
            match service.list_all_tools().await {
                Ok(tools) => tools,
                Err(e) => {
                    let tail = process.as_ref().and_then(ServerProcess::stderr_tail);
                    if let Some(p) = process {
                        tokio::spawn(p.stop());
                    }
                    let error = match e {
                        // A result that does not parse: a tool without a name or an object
                        // input schema, for one.
                        rmcp::ServiceError::UnexpectedResponse => {
                            "Invalid entry in MCP tools/list result".to_owned()
                        }
                        other => other.to_string(),
                    };
                    return Err((error, tail));
                }
            }
        } else {
            Vec::new()
        };
        let instructions = info
            .as_ref()
            .and_then(|i| i.instructions.as_deref())
            .map(str::trim)
            .filter(|i| !i.is_empty())
            .map(str::to_owned);
        self.set(|s| {
            s.state = State::Connected;
            s.error = None;
            s.tools = tools;
            s.has_resources = capabilities.is_some_and(|c| c.resources.is_some());
            s.instructions = instructions;
        });
        Ok(Live {
            service: Arc::new(service),
            process,
        })
    }

    fn client_info(&self) -> ClientConfig {
        let mut capabilities = ClientCapabilities::default();
        capabilities.roots = Some(Default::default());
        ClientConfig::new(
            capabilities,
            Implementation::new("pi", self.context.version.clone()),
        )
    }

    fn roots(&self) -> Vec<Root> {
        let cwd = &self.context.cwd;
        let uri = url::Url::from_file_path(cwd)
            .map_or_else(|()| format!("file://{}", cwd.display()), |u| u.to_string());
        let name = cwd.file_name().map(|n| n.to_string_lossy().into_owned());
        let mut root = Root::new(uri);
        root.name = name;
        vec![root]
    }

    /// Calls a tool; progress goes to `progress`; `cancel` sends the server a cancellation.
    /// A dropped connection is reconnected once before the call; a call is never retried.
    pub async fn call_tool(
        self: &Arc<Self>,
        tool: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
        progress: mpsc::UnboundedSender<Progress>,
    ) -> Result<CallToolResult, CallError> {
        let service = self.service().await.map_err(CallError::Connect)?;
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = Some(arguments);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut options = PeerRequestOptions::with_timeout(self.timeout());
        options.reset_timeout_on_progress = true;
        let handle = service
            .send_request_with_option(request, options)
            .await
            .map_err(|e| self.call_failed_now(&e))?;
        let token = handle.progress_token.clone();
        let request_id = handle.id.clone();
        self.routes.open(token.clone(), progress);
        let outcome = tokio::select! {
            response = handle.await_response() => Some(response),
            () = cancel.cancelled() => None,
        };
        self.routes.close(&token);
        match outcome {
            None => {
                let cancelled = CancelledNotificationParam::new(
                    Some(request_id),
                    Some("The user aborted the tool call".into()),
                );
                let _ = service.notify_cancelled(cancelled).await;
                Err(CallError::Aborted)
            }
            Some(Ok(ServerResult::CallToolResult(result))) => Ok(result),
            Some(Ok(_)) => Err(CallError::Call(
                "the server answered with something other than a tool result".into(),
            )),
            Some(Err(e)) => Err(self.call_failed(e).await),
        }
    }

    fn call_failed_now(&self, error: &rmcp::ServiceError) -> CallError {
        CallError::Call(format!("MCP server \"{}\": {error}", self.entry.name))
    }

    /// A failed call, worded for the model: a timeout in seconds, a closed connection with
    /// how the server ended and what it last wrote to stderr, a server error as it said it.
    async fn call_failed(&self, error: rmcp::ServiceError) -> CallError {
        let name = &self.entry.name;
        let text = match error {
            rmcp::ServiceError::Timeout { timeout } => {
                format!("the call timed out after {} seconds", timeout.as_secs_f64())
            }
            rmcp::ServiceError::TransportClosed => {
                let mut live = self.live.lock().await;
                let mut text = "the connection closed".to_owned();
                if let Some(process) = live.as_mut().and_then(|l| l.process.as_mut()) {
                    // Let the exit and the last stderr lines arrive.
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    if let Some(invalid) = process.invalid_output() {
                        text = invalid;
                    } else if let Some(ended) = process.ended() {
                        text = format!("the server {ended}");
                    }
                    if let Some(tail) = process.stderr_tail() {
                        text = format!("{text}\n{tail}");
                    }
                }
                if let Some(old) = live.take() {
                    self.dropped(old);
                }
                text
            }
            rmcp::ServiceError::McpError(e) => e.message.to_string(),
            other => transport_cause(&other.to_string()).to_owned(),
        };
        CallError::Call(format!("MCP server \"{name}\": {text}"))
    }

    /// Runs a read-only request with the server's timeout; errors are worded for the model.
    async fn read_only<T, F>(
        self: &Arc<Self>,
        run: impl FnOnce(Arc<RunningService<RoleClient, Handler>>) -> F,
    ) -> Result<T, String>
    where
        F: std::future::Future<Output = Result<T, rmcp::ServiceError>>,
    {
        let service = self.service().await?;
        match tokio::time::timeout(self.timeout(), run(service)).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(e)) => Err(match self.call_failed(e).await {
                CallError::Call(text) | CallError::Connect(text) => text,
                CallError::Aborted => "aborted".into(),
            }),
            Err(_) => Err(format!(
                "MCP server \"{}\": the request timed out after {} seconds",
                self.entry.name,
                self.timeout().as_secs_f64()
            )),
        }
    }

    /// One page of the server's resources, as JSON, and the cursor of the next.
    pub async fn resources_page(
        self: &Arc<Self>,
        cursor: Option<String>,
    ) -> Result<(Vec<Value>, Option<String>), String> {
        let result = self
            .read_only(|s| async move { s.list_resources(Some(page(cursor))).await })
            .await?;
        Ok((to_values(&result.resources), result.next_cursor))
    }

    /// Every resource of the server, as JSON.
    pub async fn all_resources(self: &Arc<Self>) -> Result<Vec<Value>, String> {
        let resources = self
            .read_only(|s| async move { s.list_all_resources().await })
            .await?;
        Ok(to_values(&resources))
    }

    /// One page of the server's resource templates (none when it does not list them).
    pub async fn templates_page(
        self: &Arc<Self>,
        cursor: Option<String>,
    ) -> Result<(Vec<Value>, Option<String>), String> {
        let result = self
            .read_only(|s| async move {
                match s.list_resource_templates(Some(page(cursor))).await {
                    Err(rmcp::ServiceError::McpError(e))
                        if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
                    {
                        Ok(rmcp::model::ListResourceTemplatesResult::default())
                    }
                    other => other,
                }
            })
            .await?;
        Ok((to_values(&result.resource_templates), result.next_cursor))
    }

    /// Every resource template of the server (none when it does not list them).
    pub async fn all_templates(self: &Arc<Self>) -> Result<Vec<Value>, String> {
        let templates = self
            .read_only(|s| async move {
                match s.list_all_resource_templates().await {
                    Err(rmcp::ServiceError::McpError(e))
                        if e.code == rmcp::model::ErrorCode::METHOD_NOT_FOUND =>
                    {
                        Ok(Vec::new())
                    }
                    other => other,
                }
            })
            .await?;
        Ok(to_values(&templates))
    }

    /// The contents of a resource.
    pub async fn read_resource(
        self: &Arc<Self>,
        uri: &str,
    ) -> Result<Vec<rmcp::model::ResourceContents>, String> {
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_owned());
        let result = self
            .read_only(|s| async move { s.read_resource(params).await })
            .await?;
        Ok(result.contents)
    }

    /// Re-reads the tool list (after `notifications/tools/list_changed`).
    pub(crate) async fn refresh_tools(self: Arc<Self>) {
        let service = match self.live.lock().await.as_ref() {
            Some(live) => live.service.clone(),
            None => return,
        };
        match service.list_all_tools().await {
            Ok(tools) => self.set(|s| s.tools = tools),
            Err(e) => self.set(|s| s.error = Some(format!("Failed to refresh tools: {e}"))),
        }
    }

    /// Drops the current connection (stopping its process) and connects again.
    pub async fn reconnect(self: &Arc<Self>) -> Result<(), String> {
        let old = self.live.lock().await.take();
        if let Some(process) = old.and_then(|old| old.process) {
            process.stop().await;
        }
        self.connect().await
    }

    /// Closes the connection and stops the server process.
    pub async fn close(&self) {
        self.closed.cancel();
        let live = self.live.lock().await.take();
        if let Some(live) = live {
            let Live { service, process } = live;
            if let Ok(service) = Arc::try_unwrap(service) {
                let _ = service.cancel().await;
            }
            if let Some(process) = process {
                process.stop().await;
            }
        }
        self.set(|s| s.state = State::Closed);
    }
}

fn spawn_error(command: &str, error: &std::io::Error) -> String {
    if error.kind() == std::io::ErrorKind::NotFound {
        format!("spawn {command} ENOENT")
    } else {
        format!("spawn {command}: {error}")
    }
}

fn page(cursor: Option<String>) -> rmcp::model::PaginatedRequestParams {
    let mut params = rmcp::model::PaginatedRequestParams::default();
    params.cursor = cursor;
    params
}

fn to_values<T: serde::Serialize>(items: &[T]) -> Vec<Value> {
    items
        .iter()
        .filter_map(|item| serde_json::to_value(item).ok())
        .collect()
}

/// rmcp's transport errors name the transport's Rust type (`Transport send error:
/// Transport [..] error: HTTP 500`): the model is told the cause only.
fn transport_cause(text: &str) -> &str {
    text.split_once("] error: ")
        .map_or(text, |(_, cause)| cause)
}
