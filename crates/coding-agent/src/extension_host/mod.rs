//! The node extension host: runs the TypeScript pi's extensions unchanged in one node
//! process (its JavaScript is `extension-host/`, embedded in the binary) and speaks the
//! host protocol with it over a Unix socket. Started only when extensions were found.

mod connection;
pub mod install;
pub mod protocol;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentToolResult, ToolError, ToolUpdateFn};

use crate::extensions::backend::{BackendError, ExtensionBackend, ExtensionBinding};
use crate::extensions::discovery::DiscoveredExtension;
use crate::extensions::event::ExtensionEvent;
use crate::extensions::registry::{LoadError, LoadedExtension, ProviderDef};
use crate::virtual_models::VirtualModelDef;

use connection::Connection;
use protocol::InitResult;

/// How long an aborted extension tool may take to finish with its own result.
const ABORTED_TOOL_GRACE: std::time::Duration = std::time::Duration::from_secs(3);
/// How to start the host.
#[derive(Debug, Clone)]
pub struct HostOptions {
    pub agent_dir: PathBuf,
    pub cwd: PathBuf,
    /// `rpc`, `print`, `json` or `interactive`.
    pub mode: String,
    pub extensions: Vec<DiscoveredExtension>,
    /// Flag values from the command line, by flag name (without `--`).
    pub flag_values: Map<String, Value>,
    pub theme: String,
    /// The effective project trust decision (`ctx.isProjectTrusted()`): true when the
    /// project has nothing that needs trust, else whether the user trusts it.
    pub project_trusted: bool,
}

/// Why the host did not start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HostStartError {
    #[error(
        "Node.js was not found, so these extensions were skipped: {}. Install Node.js 20 or newer (https://nodejs.org) and make sure `node` is on PATH (or set PI_NODE).",
        extensions.join(", ")
    )]
    NoNode { extensions: Vec<String> },
    #[error(transparent)]
    Install(#[from] install::InstallError),
    #[error("the extension host failed to start: {0}")]
    Start(String),
}

/// The running host: one backend for every TypeScript extension.
pub struct NodeHost {
    connection: Arc<Connection>,
    providers: Mutex<Vec<ProviderDef>>,
    virtual_models: Mutex<Vec<VirtualModelDef>>,
    child: Mutex<Option<tokio::process::Child>>,
}

impl NodeHost {
    /// Installs (once), starts node, loads the extensions, and returns the host with the
    /// extensions that failed to load.
    pub async fn start(
        options: HostOptions,
    ) -> Result<(Arc<Self>, Vec<LoadError>), HostStartError> {
        let names: Vec<String> = options
            .extensions
            .iter()
            .map(|e| e.path.display().to_string())
            .collect();
        let place = install::prepare(&options.agent_dir)?;
        let entry = place.entry;
        let socket_path = crate::temp_files::path("ext", ".sock");
        let listener = tokio::net::UnixListener::bind(&socket_path).map_err(|e| {
            HostStartError::Start(format!("cannot listen on {}: {e}", socket_path.display()))
        })?;
        let node = std::env::var_os("PI_NODE").unwrap_or_else(|| "node".into());
        let stdout = std::os::fd::AsFd::as_fd(&std::io::stderr())
            .try_clone_to_owned()
            .map(std::process::Stdio::from)
            .unwrap_or_else(|_| std::process::Stdio::null());
        let pi_binary = std::env::current_exe().unwrap_or_default();
        let mut command = tokio::process::Command::new(&node);
        if let Some(cache) = &place.cache
            && std::env::var_os("PI_EXT_HOST_CACHE").is_none()
        {
            command.env("PI_EXT_HOST_CACHE", cache);
        }
        let spawned = command
            .arg(&entry)
            .current_dir(&options.cwd)
            .env("PI_EXT_HOST_SOCKET", &socket_path)
            .envs(crate::tools::bash_env::CHILD_ENV)
            .envs(pi_ai::http::settings_proxy_env())
            .env("PI_EXT_HOST_PI", &pi_binary)
            // In the terminal UI the host shares pi's terminal: an extension that stops
            // the TUI (`tui.stop()`) runs interactive programs on it (interactive-shell).
            .stdin(if options.mode == "interactive" {
                std::process::Stdio::inherit()
            } else {
                std::process::Stdio::null()
            })
            .stdout(stdout)
            .kill_on_drop(true)
            .spawn();
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let _ = std::fs::remove_file(&socket_path);
                return Err(HostStartError::NoNode { extensions: names });
            }
            Err(e) => {
                let _ = std::fs::remove_file(&socket_path);
                return Err(HostStartError::Start(e.to_string()));
            }
        };
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted.map(|(stream, _)| stream).map_err(|e| e.to_string()),
            status = child.wait() => Err(format!("node exited before connecting ({})", describe(status))),
            () = tokio::time::sleep(std::time::Duration::from_secs(60)) => Err("node did not connect within 60 s".into()),
        };
        let _ = std::fs::remove_file(&socket_path);
        let stream = accepted.map_err(HostStartError::Start)?;
        let pid = child.id();
        let connection = Connection::start(stream, move || match pid {
            Some(pid) => format!("process {pid} ended"),
            None => "process ended".into(),
        });
        let init = json!({
            "type": "init",
            "extensions": extension_list(&options.extensions),
            "cwd": options.cwd,
            "agentDir": options.agent_dir,
            "mode": options.mode,
            "flagValues": options.flag_values,
            "themeName": options.theme,
            // Outside interactive mode extensions get pi 1.6.0's non-interactive theme,
            // painted here (the interactive mode sends its own theme's name).
            "theme": (options.mode != "interactive").then(|| {
                crate::modes::interactive::theme::non_interactive_theme(
                    &options.agent_dir,
                    &options.cwd,
                    options.project_trusted,
                )
                .host_spec()
            }),
            "projectTrusted": options.project_trusted,
        });
        let Value::Object(init) = init else {
            return Err(HostStartError::Start("bad init frame".into()));
        };
        let answer = tokio::select! {
            answer = connection.request(init, None, None) => answer,
            status = child.wait() => Err(format!("node exited while loading extensions ({})", describe(status))),
        };
        let result: InitResult = answer
            .and_then(|v| serde_json::from_value(v).map_err(|e| e.to_string()))
            .map_err(HostStartError::Start)?;
        record_loaded(&connection, &options.extensions, result.extensions);
        let host = Arc::new(Self {
            connection,
            providers: Mutex::new(result.providers),
            virtual_models: Mutex::new(result.virtual_models),
            child: Mutex::new(Some(child)),
        });
        Ok((host, result.errors))
    }

    fn frame(kind: &str, fields: Value) -> Map<String, Value> {
        let mut map = match fields {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        map.insert("type".into(), kind.into());
        map
    }
}

/// The extensions to load, as `init` and `reload` carry them.
fn extension_list(extensions: &[DiscoveredExtension]) -> Vec<Value> {
    extensions
        .iter()
        .map(|e| json!({"path": e.path, "sourceInfo": e.source_info}))
        .collect()
}

/// Keeps what loaded (with each extension's `sourceInfo` from discovery).
fn record_loaded(
    connection: &Connection,
    extensions: &[DiscoveredExtension],
    loaded: Vec<LoadedExtension>,
) {
    let mut registry = connection.registry();
    registry.sources = extensions
        .iter()
        .map(|e| {
            (
                e.path.display().to_string(),
                serde_json::to_value(&e.source_info).unwrap_or_default(),
            )
        })
        .collect();
    registry.set(loaded);
}

fn describe(status: std::io::Result<std::process::ExitStatus>) -> String {
    match status {
        Ok(status) => status.to_string(),
        Err(e) => e.to_string(),
    }
}

impl ExtensionBackend for NodeHost {
    fn extensions(&self) -> Vec<LoadedExtension> {
        self.connection.registry().loaded.clone()
    }

    fn providers(&self) -> Vec<ProviderDef> {
        self.providers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn virtual_models(&self) -> Vec<VirtualModelDef> {
        self.virtual_models
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn has_handlers(&self, kind: &str) -> bool {
        self.connection.registry().handlers.contains(kind)
    }

    fn bind(&self, binding: ExtensionBinding) {
        self.connection.bind(binding);
        self.connection.sync_state();
    }

    fn set_flags(&self, values: &Map<String, Value>) {
        self.connection
            .notify(json!({"type": "flags", "values": values}));
    }

    fn refresh_catalogs(&self) {
        self.connection.notify(json!({"type": "refresh_catalogs"}));
    }

    fn dispatch<'a>(
        &'a self,
        event: &'a ExtensionEvent,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Option<Value>, BackendError>> {
        Box::pin(async move {
            self.connection.sync_state();
            let frame = Self::frame("event", json!({ "event": event }));
            match self.connection.request(frame, Some(cancel), None).await {
                Ok(Value::Null) => Ok(None),
                Ok(value) => Ok(Some(value)),
                Err(error) => Err(BackendError(error)),
            }
        })
    }

    fn dispatch_many<'a>(
        &'a self,
        events: &'a [ExtensionEvent],
        cancel: CancellationToken,
    ) -> Option<BoxFuture<'a, Result<Vec<Option<Value>>, BackendError>>> {
        Some(Box::pin(async move {
            self.connection.sync_state();
            let frame = Self::frame("events", json!({ "events": events }));
            let answer = self
                .connection
                .request(frame, Some(cancel), None)
                .await
                .map_err(BackendError)?;
            match answer {
                Value::Array(answers) => Ok(answers
                    .into_iter()
                    .map(|a| (!a.is_null()).then_some(a))
                    .collect()),
                other => Err(BackendError(format!(
                    "the extension host answered events with {other}"
                ))),
            }
        }))
    }

    fn execute_tool(
        self: Arc<Self>,
        tool_name: String,
        tool_call_id: String,
        params: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        Box::pin(async move {
            self.connection.sync_state();
            let frame = Self::frame(
                "tool_execute",
                json!({"toolName": tool_name, "toolCallId": tool_call_id, "params": params}),
            );
            let answer = self
                .connection
                .request_tool(frame, cancel, on_update, ABORTED_TOOL_GRACE)
                .await
                .map_err(ToolError::new)?;
            // `isError: true` is a failure with the tool's own content and details (pi
            // 1.6.0's bash on a non-zero exit), not part of AgentToolResult's wire shape
            let is_error = answer.get("isError").and_then(Value::as_bool) == Some(true);
            let mut result = serde_json::from_value::<AgentToolResult>(answer).map_err(|e| {
                ToolError::new(format!("Tool {tool_name} returned an invalid result: {e}"))
            })?;
            result.is_error = is_error;
            Ok(result)
        })
    }

    fn prepare_arguments<'a>(
        &'a self,
        tool_name: &'a str,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            let frame = Self::frame("tool_prepare", json!({"toolName": tool_name, "args": args}));
            self.connection
                .request(frame, None, None)
                .await
                .map_err(BackendError)
        })
    }

    fn run_command<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.connection.sync_state();
            let frame = Self::frame("command", json!({"name": name, "args": args}));
            self.connection
                .request(frame, Some(cancel), None)
                .await
                .map(|_| ())
        })
    }

    fn run_shortcut<'a>(&'a self, shortcut: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            self.connection.sync_state();
            let frame = Self::frame("shortcut", json!({ "shortcut": shortcut }));
            self.connection.request(frame, None, None).await.map(|_| ())
        })
    }

    fn command_completions<'a>(
        &'a self,
        name: &'a str,
        prefix: &'a str,
    ) -> BoxFuture<'a, Option<Value>> {
        Box::pin(async move {
            let frame = Self::frame(
                "command_completions",
                json!({"name": name, "prefix": prefix}),
            );
            self.connection
                .request(frame, None, None)
                .await
                .ok()
                .filter(|v| !v.is_null())
        })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.connection.stop();
            let child = self.child.lock().unwrap_or_else(|p| p.into_inner()).take();
            if let Some(mut child) = child {
                let waited =
                    tokio::time::timeout(std::time::Duration::from_secs(2), child.wait()).await;
                if waited.is_err() {
                    let _ = child.kill().await;
                }
            }
        })
    }

    fn is_alive(&self) -> bool {
        self.connection.is_alive()
    }

    fn reload_in_place<'a>(
        &'a self,
        extensions: &'a [DiscoveredExtension],
    ) -> Option<BoxFuture<'a, Result<Vec<LoadError>, String>>> {
        if !self.connection.is_alive() {
            return None;
        }
        Some(Box::pin(async move {
            let frame = Self::frame(
                "reload",
                json!({ "extensions": extension_list(extensions) }),
            );
            let answer = self.connection.request(frame, None, None).await?;
            let result: InitResult = serde_json::from_value(answer).map_err(|e| e.to_string())?;
            record_loaded(&self.connection, extensions, result.extensions);
            *self.providers.lock().unwrap_or_else(|p| p.into_inner()) = result.providers;
            *self
                .virtual_models
                .lock()
                .unwrap_or_else(|p| p.into_inner()) = result.virtual_models;
            Ok(result.errors)
        }))
    }

    fn call<'a>(
        &'a self,
        kind: &'a str,
        fields: Value,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            self.connection.sync_state();
            self.connection
                .request(Self::frame(kind, fields), None, None)
                .await
                .map_err(BackendError)
        })
    }

    fn call_streaming<'a>(
        &'a self,
        kind: &'a str,
        fields: Value,
        cancel: CancellationToken,
        on_event: Arc<dyn Fn(Value) + Send + Sync>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move {
            self.connection.sync_state();
            self.connection
                .request_stream(Self::frame(kind, fields), cancel, on_event)
                .await
                .map_err(BackendError)
        })
    }

    fn notify(&self, kind: &str, fields: Value) {
        self.connection
            .notify(Value::Object(Self::frame(kind, fields)));
    }
}
