//! In-process extensions written in Rust, for embedders and the gateway: the same events,
//! combination rules, tools, commands and actions as TypeScript extensions, without node.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};

use super::actions::{ExtensionAction, ExtensionActions};
use super::backend::{BackendError, ExtensionBackend, ExtensionBinding};
use super::event::ExtensionEvent;
use super::registry::{
    CommandDef, ExtensionErrorInfo, FlagDef, LoadedExtension, ShortcutDef, ToolDef,
};
use super::ui::{ExtensionUi, NoUi, UiDialog, UiNotice};

/// What a Rust extension registers.
#[derive(Default)]
pub struct Registrations {
    /// Event types it handles (see [`super::EVENT_TYPES`]).
    pub events: Vec<&'static str>,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub commands: Vec<CommandDef>,
    pub flags: Vec<FlagDef>,
    pub shortcuts: Vec<ShortcutDef>,
}

/// What a handler can reach: the session's actions, the mode's UI, and the abort signal.
#[derive(Clone)]
pub struct ExtensionContext {
    pub cwd: PathBuf,
    pub signal: CancellationToken,
    actions: Option<Arc<dyn ExtensionActions>>,
    ui: Arc<dyn ExtensionUi>,
}

impl ExtensionContext {
    /// `ctx.hasUI`.
    pub fn has_ui(&self) -> bool {
        self.ui.has_ui()
    }

    /// Asks pi to do something (send a message, set the model, start a session, …).
    pub async fn perform(&self, action: ExtensionAction) -> Result<Value, String> {
        match &self.actions {
            Some(actions) => actions.perform(action).await,
            None => Err("Extension runtime not initialized. Action methods cannot be called during extension loading.".into()),
        }
    }

    /// Opens a dialog and waits for the answer.
    pub async fn dialog(&self, dialog: UiDialog) -> Value {
        self.ui.dialog(dialog, self.signal.clone()).await
    }

    /// A fire-and-forget UI call.
    pub fn notice(&self, notice: UiNotice) {
        self.ui.notice(notice);
    }
}

/// A Rust extension. Handlers answer as a TypeScript handler would (`{"block": true,
/// "reason": …}` for `tool_call`, the new payload for `before_provider_request`, …) and
/// may change the event in place (a `tool_call`'s `input`).
pub trait Extension: Send + Sync {
    /// Names the extension in errors and listings (like a TypeScript extension's path).
    fn path(&self) -> &str;

    /// Its registrations, read once when it is added.
    fn register(&self) -> Registrations;

    /// Handles one event it registered for; an `Err` becomes an `extension_error` (and
    /// blocks a `tool_call`, as a thrown error does in TypeScript).
    fn on_event<'a>(
        &'a self,
        _event: &'a mut ExtensionEvent,
        _ctx: &'a ExtensionContext,
    ) -> BoxFuture<'a, Result<Option<Value>, String>> {
        Box::pin(async { Ok(None) })
    }

    /// Runs one of its commands.
    fn run_command<'a>(
        &'a self,
        _name: &'a str,
        _args: &'a str,
        _ctx: &'a ExtensionContext,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async { Ok(()) })
    }
}

/// Runs one Rust extension as a backend of the runtime.
pub struct RustBackend {
    extension: Arc<dyn Extension>,
    tools: Vec<Arc<dyn AgentTool>>,
    loaded: LoadedExtension,
    events: HashSet<&'static str>,
    cwd: PathBuf,
    binding: Mutex<Option<ExtensionBinding>>,
}

impl RustBackend {
    pub fn new(extension: Arc<dyn Extension>, cwd: PathBuf) -> Self {
        let registrations = extension.register();
        let path = extension.path().to_owned();
        let loaded = LoadedExtension {
            path: path.clone(),
            handlers: registrations
                .events
                .iter()
                .map(|e| (*e).to_owned())
                .collect(),
            tools: registrations
                .tools
                .iter()
                .map(|tool| ToolDef {
                    name: tool.name().to_owned(),
                    label: tool.label().to_owned(),
                    description: tool.description().to_owned(),
                    parameters: tool.parameters().clone(),
                    prompt_snippet: None,
                    prompt_guidelines: Vec::new(),
                    builtin_prompt: false,
                    execution_mode: tool.execution_mode(),
                    constrained_sampling: tool
                        .constrained_sampling()
                        .and_then(|c| serde_json::to_value(c).ok()),
                    default_active: true,
                    has_prepare_arguments: false,
                    has_render_call: false,
                    has_render_result: false,
                    extension_path: path.clone(),
                })
                .collect(),
            commands: registrations.commands.clone(),
            flags: registrations.flags.clone(),
            shortcuts: registrations.shortcuts.clone(),
            message_renderers: Vec::new(),
            entry_renderers: Vec::new(),
            tool_renderers: false,
            source_info: serde_json::json!({"path": path, "source": "sdk", "scope": "temporary", "origin": "top-level"}),
        };
        Self {
            extension,
            events: registrations.events.iter().copied().collect(),
            tools: registrations.tools,
            loaded,
            cwd,
            binding: Mutex::new(None),
        }
    }

    fn binding(&self) -> Option<ExtensionBinding> {
        self.binding
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    fn context(&self, signal: CancellationToken) -> ExtensionContext {
        let binding = self.binding();
        ExtensionContext {
            cwd: self.cwd.clone(),
            signal,
            actions: binding.as_ref().map(|b| b.actions.clone()),
            ui: binding
                .map(|b| b.ui)
                .unwrap_or_else(|| Arc::new(NoUi) as Arc<dyn ExtensionUi>),
        }
    }

    fn report(&self, event: &str, error: String) {
        let info = ExtensionErrorInfo {
            extension_path: self.loaded.path.clone(),
            event: event.to_owned(),
            error,
            stack: None,
        };
        match self.binding() {
            Some(binding) => (binding.errors)(info),
            None => eprintln!("Extension error ({}): {}", info.extension_path, info.error),
        }
    }
}

/// Turns a handler's answer into the protocol's combined shape for one handler.
fn to_protocol(event: &ExtensionEvent, answer: Option<Value>) -> Option<Value> {
    match event {
        ExtensionEvent::ToolCall { input, .. } => {
            let mut result = answer.unwrap_or_else(|| json!({}));
            if let Value::Object(map) = &mut result {
                map.insert("input".into(), input.clone());
            }
            Some(result)
        }
        ExtensionEvent::BeforeProviderRequest { .. } => {
            answer.map(|payload| json!({ "payload": payload }))
        }
        // Handlers change the headers in place, as TypeScript ones do.
        ExtensionEvent::BeforeProviderHeaders { headers } => Some(json!({ "headers": headers })),
        ExtensionEvent::BeforeAgentStart { .. } => answer.map(|mut a| {
            if let Some(message) = a.as_object_mut().and_then(|m| m.remove("message")) {
                a["messages"] = json!([message]);
            }
            a
        }),
        _ => answer,
    }
}

impl ExtensionBackend for RustBackend {
    fn extensions(&self) -> Vec<LoadedExtension> {
        vec![self.loaded.clone()]
    }

    fn has_handlers(&self, kind: &str) -> bool {
        self.events.contains(kind)
    }

    fn bind(&self, binding: ExtensionBinding) {
        *self.binding.lock().unwrap_or_else(|p| p.into_inner()) = Some(binding);
    }

    fn dispatch<'a>(
        &'a self,
        event: &'a ExtensionEvent,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<Option<Value>, BackendError>> {
        Box::pin(async move {
            let ctx = self.context(cancel);
            let mut event = event.clone();
            match self.extension.on_event(&mut event, &ctx).await {
                Ok(answer) => Ok(to_protocol(&event, answer)),
                Err(error) if event.kind() == "tool_call" => {
                    Ok(Some(json!({"block": true, "reason": error})))
                }
                Err(error) => {
                    self.report(event.kind(), error);
                    Ok(None)
                }
            }
        })
    }

    fn execute_tool(
        self: Arc<Self>,
        tool_name: String,
        tool_call_id: String,
        params: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let tool = self.tools.iter().find(|t| t.name() == tool_name).cloned();
        match tool {
            Some(tool) => tool.execute(&tool_call_id, params, cancel, on_update),
            None => {
                Box::pin(async move { Err(ToolError::new(format!("Tool {tool_name} not found"))) })
            }
        }
    }

    fn run_command<'a>(
        &'a self,
        name: &'a str,
        args: &'a str,
        cancel: CancellationToken,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let ctx = self.context(cancel);
            self.extension.run_command(name, args, &ctx).await
        })
    }
}
