//! A backend runs a group of extensions: the node host runs the TypeScript ones, and each
//! in-process Rust extension is a backend of its own. The runtime combines backends in
//! load order with the same rules a backend applies to its own handlers.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentToolResult, ToolError, ToolUpdateFn};

use super::actions::ExtensionActions;
use super::discovery::DiscoveredExtension;
use super::event::ExtensionEvent;
use super::registry::{ExtensionErrorInfo, LoadError, LoadedExtension, ProviderDef};
use super::ui::ExtensionUi;

/// Why a backend could not answer (its process died, the channel broke).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BackendError(pub String);

/// Reports handler errors (`extension_error`).
pub type ErrorSink = Arc<dyn Fn(ExtensionErrorInfo) + Send + Sync>;

/// What a backend needs from the running session and mode.
#[derive(Clone)]
pub struct ExtensionBinding {
    pub actions: Arc<dyn ExtensionActions>,
    pub ui: Arc<dyn ExtensionUi>,
    pub errors: ErrorSink,
}

/// A group of extensions behind one dispatch.
pub trait ExtensionBackend: Send + Sync {
    /// The extensions it runs, in load order, with their registrations.
    fn extensions(&self) -> Vec<LoadedExtension>;

    /// Providers registered while loading.
    fn providers(&self) -> Vec<ProviderDef> {
        Vec::new()
    }

    /// Virtual models registered while loading.
    fn virtual_models(&self) -> Vec<crate::virtual_models::VirtualModelDef> {
        Vec::new()
    }

    /// Whether any of its extensions handles this event type.
    fn has_handlers(&self, kind: &str) -> bool;

    /// Connects it to the session and the mode's UI.
    fn bind(&self, binding: ExtensionBinding);

    /// Final values of the CLI flags its extensions registered.
    fn set_flags(&self, _values: &Map<String, Value>) {}

    /// The session runs in RPC or interactive mode: refresh the extensions' dynamic model
    /// catalogs in the background (pi 1.6.0 does so once running, not at startup).
    fn refresh_catalogs(&self) {}

    /// Runs every handler for the event and returns the combined result in the host
    /// protocol's shape (`extension-host/PROTOCOL.md`), `None` when there is nothing.
    fn dispatch<'a>(
        &'a self,
        event: &'a ExtensionEvent,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Option<Value>, BackendError>>;

    /// Dispatches several events one after the other in one exchange, when the backend
    /// can (`None`: it cannot; dispatch them one by one).
    fn dispatch_many<'a>(
        &'a self,
        _events: &'a [ExtensionEvent],
        _cancel: CancellationToken,
    ) -> Option<BoxFuture<'a, Result<Vec<Option<Value>>, BackendError>>> {
        None
    }

    /// Runs one of its tools.
    fn execute_tool(
        self: Arc<Self>,
        tool_name: String,
        tool_call_id: String,
        params: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>>;

    /// A tool's `prepareArguments`.
    fn prepare_arguments<'a>(
        &'a self,
        _tool_name: &'a str,
        args: Value,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async move { Ok(args) })
    }

    /// Runs a command's handler (`/name args`).
    fn run_command<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<(), String>>;

    /// Runs a shortcut's handler.
    fn run_shortcut<'a>(&'a self, _shortcut: &'a str) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }

    /// A command's argument completions for a prefix.
    fn command_completions<'a>(
        &'a self,
        _name: &'a str,
        _prefix: &'a str,
    ) -> BoxFuture<'a, Option<Value>> {
        Box::pin(async { None })
    }

    /// Stops it (the node host exits); later calls fail.
    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// A request of the host protocol outside the typed ones (component rendering, …);
    /// only the node host answers.
    fn call<'a>(
        &'a self,
        _kind: &'a str,
        _fields: Value,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async { Err(BackendError("not supported by this backend".into())) })
    }

    /// A host protocol request whose progress comes as notifications before its answer
    /// (`provider_stream`: each stream event; `bash_exec`: each output chunk), given to
    /// `on_event`. Only the node host can.
    fn call_streaming<'a>(
        &'a self,
        _kind: &'a str,
        _fields: Value,
        _cancel: CancellationToken,
        _on_event: Arc<dyn Fn(Value) + Send + Sync>,
    ) -> BoxFuture<'a, Result<Value, BackendError>> {
        Box::pin(async { Err(BackendError("not supported by this backend".into())) })
    }

    /// A notification of the host protocol (component disposal, focus, …).
    fn notify(&self, _kind: &str, _fields: Value) {}

    /// Loads these extensions again in place, every factory re-run (`/reload`, a replaced
    /// session), returning the ones that failed; `None` when it cannot and a new backend
    /// must be started (only the live node host can).
    fn reload_in_place<'a>(
        &'a self,
        _extensions: &'a [DiscoveredExtension],
    ) -> Option<BoxFuture<'a, Result<Vec<LoadError>, String>>> {
        None
    }

    /// Whether it still runs (false after the host died).
    fn is_alive(&self) -> bool {
        true
    }
}
