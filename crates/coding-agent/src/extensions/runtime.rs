//! The extension runtime: every loaded extension behind one dispatch, in load order, with
//! the TypeScript pi's combination rules applied across backends. It knows no mode: the
//! session calls it at the seed's points and a mode binds its UI.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentMessage, AgentTool};
use pi_ai::{ImageContent, InputBlock};

use super::actions::ExtensionMessage;
use super::backend::{BackendError, ExtensionBackend, ExtensionBinding};
use super::event::{ExtensionEvent, RunTrigger};
use super::outcome::{
    BeforeAgentStartOutcome, InputOutcome, ResourcePaths, SessionBeforeOutcome, ToolCallOutcome,
    ToolResultPatch, UserBashAnswer,
};
use super::registry::{
    ExtensionErrorInfo, FlagDef, LoadError, LoadedExtension, ResolvedCommand, ShortcutDef, ToolDef,
    resolve_commands,
};
use super::tool::ExtensionTool;
mod providers;
use super::tool_calls::tool_call_outcome;

/// Every loaded extension, across backends.
pub struct ExtensionRuntime {
    backends: std::sync::RwLock<Vec<Arc<dyn ExtensionBackend>>>,
    load_errors: Mutex<Vec<LoadError>>,
    binding: Mutex<Option<ExtensionBinding>>,
    reloader: Mutex<Option<Reloader>>,
    /// The final CLI flag values, given again to backends a reload starts.
    flags: Mutex<Option<Map<String, Value>>>,
}

/// Loads the extensions again (`/reload`, a replaced session), given the current backends
/// (a live one may load again in place and be returned): the backends and the extensions
/// that failed.
pub type Reloader = Arc<
    dyn Fn(
            Vec<Arc<dyn ExtensionBackend>>,
        ) -> futures_util::future::BoxFuture<
            'static,
            Result<(Vec<Arc<dyn ExtensionBackend>>, Vec<LoadError>), String>,
        > + Send
        + Sync,
>;

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl ExtensionRuntime {
    /// A runtime over these backends (in load order) and the extensions that failed.
    pub fn new(backends: Vec<Arc<dyn ExtensionBackend>>, load_errors: Vec<LoadError>) -> Self {
        Self {
            backends: std::sync::RwLock::new(backends),
            load_errors: Mutex::new(load_errors),
            binding: Mutex::new(None),
            reloader: Mutex::new(None),
            flags: Mutex::new(None),
        }
    }

    /// A runtime with no extension.
    pub fn empty() -> Self {
        Self::new(Vec::new(), Vec::new())
    }

    pub fn is_empty(&self) -> bool {
        self.backends
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    pub fn load_errors(&self) -> Vec<LoadError> {
        lock(&self.load_errors).clone()
    }

    /// The backends, in load order.
    fn backends(&self) -> Vec<Arc<dyn ExtensionBackend>> {
        self.backends
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    /// Whether the extensions can load again (a reloader was set; embedders' runtimes
    /// without one keep their extensions across sessions).
    pub fn can_reload(&self) -> bool {
        lock(&self.reloader).is_some()
    }

    /// Sets how `/reload` loads the extensions again.
    pub fn set_reloader(&self, reloader: Reloader) {
        *lock(&self.reloader) = Some(reloader);
    }

    /// Stops the backends and loads the extensions again (a dead host comes back), bound
    /// to the same session and UI; returns the load errors.
    pub async fn reload(&self) -> Result<Vec<LoadError>, String> {
        let reloader = lock(&self.reloader)
            .clone()
            .ok_or_else(|| "These extensions cannot be reloaded".to_owned())?;
        let (backends, errors) = reloader(self.backends()).await?;
        let old = std::mem::replace(
            &mut *self.backends.write().unwrap_or_else(|p| p.into_inner()),
            backends.clone(),
        );
        let same = |a: &Arc<dyn ExtensionBackend>, b: &Arc<dyn ExtensionBackend>| {
            std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
        };
        for backend in old {
            if !backends.iter().any(|kept| same(kept, &backend)) {
                backend.shutdown().await;
            }
        }
        let flags = lock(&self.flags).clone();
        if let Some(flags) = flags {
            for backend in &backends {
                backend.set_flags(&flags);
            }
        }
        *lock(&self.load_errors) = errors.clone();
        let binding = lock(&self.binding).clone();
        if let Some(binding) = binding {
            for backend in self.backends() {
                backend.bind(binding.clone());
            }
        }
        Ok(errors)
    }

    /// The loaded extensions, in load order.
    pub fn extensions(&self) -> Vec<LoadedExtension> {
        self.backends()
            .iter()
            .flat_map(|b| b.extensions())
            .collect()
    }

    /// Connects every backend to the session and the mode's UI.
    pub fn bind(&self, binding: ExtensionBinding) {
        for backend in &self.backends() {
            backend.bind(binding.clone());
        }
        *lock(&self.binding) = Some(binding);
    }

    /// Reports a handler error the way a backend does.
    pub fn report_error(&self, error: ExtensionErrorInfo) {
        let sink = lock(&self.binding).as_ref().map(|b| b.errors.clone());
        match sink {
            Some(sink) => sink(error),
            None => eprintln!(
                "Extension error ({}, {}): {}",
                error.extension_path, error.event, error.error
            ),
        }
    }

    pub(super) fn report_backend_error(&self, event: &str, error: &BackendError) {
        self.report_error(ExtensionErrorInfo {
            extension_path: "<extension host>".into(),
            event: event.to_owned(),
            error: error.0.clone(),
            stack: None,
        });
    }

    /// Whether any extension handles this event type.
    pub fn has_handlers(&self, kind: &str) -> bool {
        self.backends().iter().any(|b| b.has_handlers(kind))
    }

    pub(super) fn handling(&self, kind: &str) -> Vec<Arc<dyn ExtensionBackend>> {
        self.backends()
            .iter()
            .filter(|b| b.has_handlers(kind))
            .cloned()
            .collect()
    }

    /// Every registered tool, in load order (a later one with the same name wins).
    pub fn tool_defs(&self) -> Vec<ToolDef> {
        self.extensions()
            .into_iter()
            .flat_map(|e| e.tools)
            .collect()
    }

    /// The registered tools as agent tools.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        let mut tools: Vec<Arc<dyn AgentTool>> = Vec::new();
        for backend in &self.backends() {
            for def in backend.extensions().into_iter().flat_map(|e| e.tools) {
                tools.retain(|t| t.name() != def.name);
                tools.push(Arc::new(ExtensionTool::new(def, backend.clone())));
            }
        }
        tools
    }

    /// Names of the tools registered with `defaultActive: false` (the last registration of
    /// a name decides).
    pub fn inactive_tools(&self) -> Vec<String> {
        let mut inactive: Vec<String> = Vec::new();
        for backend in &self.backends() {
            for def in backend.extensions().into_iter().flat_map(|e| e.tools) {
                inactive.retain(|name| *name != def.name);
                if !def.default_active {
                    inactive.push(def.name);
                }
            }
        }
        inactive
    }

    /// The registered commands, duplicates numbered.
    pub fn commands(&self) -> Vec<ResolvedCommand> {
        let mut all = Vec::new();
        for (index, backend) in self.backends().iter().enumerate() {
            for ext in backend.extensions() {
                all.extend(ext.commands.into_iter().map(|c| (index, c)));
            }
        }
        resolve_commands(all)
    }

    /// The command a `/name args` text invokes, with its arguments.
    pub fn find_command(&self, text: &str) -> Option<(ResolvedCommand, String)> {
        let rest = text.strip_prefix('/')?;
        let (name, args) = match rest.find(' ') {
            Some(at) => (&rest[..at], &rest[at + 1..]),
            None => (rest, ""),
        };
        let command = self
            .commands()
            .into_iter()
            .find(|c| c.invocation_name == name)?;
        Some((command, args.to_owned()))
    }

    /// Runs a resolved command's handler; an error is reported as an `extension_error`.
    pub async fn run_command(
        &self,
        command: &ResolvedCommand,
        args: &str,
        cancel: CancellationToken,
    ) -> Result<(), String> {
        let Some(backend) = self.backends().get(command.backend).cloned() else {
            return Err(format!("Unknown command: {}", command.invocation_name));
        };
        let result = backend.run_command(&command.def.name, args, cancel).await;
        if let Err(error) = &result {
            self.report_error(ExtensionErrorInfo {
                extension_path: command.def.extension_path.clone(),
                event: "command".into(),
                error: error.clone(),
                stack: None,
            });
        }
        result
    }

    /// The flags extensions registered.
    pub fn flags(&self) -> Vec<FlagDef> {
        self.extensions()
            .into_iter()
            .flat_map(|e| e.flags)
            .collect()
    }

    /// Hands the parsed flag values to the backends.
    pub fn set_flags(&self, values: &Map<String, Value>) {
        *lock(&self.flags) = Some(values.clone());
        for backend in &self.backends() {
            backend.set_flags(values);
        }
    }

    /// Starts the background refresh of the extensions' dynamic model catalogs.
    pub fn refresh_catalogs(&self) {
        for backend in &self.backends() {
            backend.refresh_catalogs();
        }
    }

    pub fn shortcuts(&self) -> Vec<ShortcutDef> {
        self.extensions()
            .into_iter()
            .flat_map(|e| e.shortcuts)
            .collect()
    }

    /// Runs the handler of a registered shortcut.
    pub async fn run_shortcut(&self, shortcut: &str) -> Result<(), String> {
        for backend in &self.backends() {
            let owns = backend
                .extensions()
                .iter()
                .any(|e| e.shortcuts.iter().any(|s| s.shortcut == shortcut));
            if owns {
                return backend.run_shortcut(shortcut).await;
            }
        }
        Ok(())
    }

    /// Whether a custom message type has a renderer.
    pub fn has_message_renderer(&self, custom_type: &str) -> bool {
        self.extensions()
            .iter()
            .any(|e| e.message_renderers.iter().any(|r| r == custom_type))
    }

    /// A host protocol request to the node host (component rendering and the like);
    /// `None` without a host or when it failed.
    pub async fn host_call(&self, kind: &str, fields: Value) -> Option<Value> {
        for backend in &self.backends() {
            match backend.call(kind, fields.clone()).await {
                Ok(value) => return Some(value),
                Err(_) => continue,
            }
        }
        None
    }

    /// A host protocol notification to every backend that takes them.
    pub fn host_notify(&self, kind: &str, fields: Value) {
        for backend in &self.backends() {
            backend.notify(kind, fields.clone());
        }
    }

    /// Stops every backend.
    pub async fn shutdown(&self) {
        for backend in &self.backends() {
            backend.shutdown().await;
        }
    }

    /// An event without a combined answer (or a `session_before_*` one: the first cancel
    /// wins, else the last answer).
    pub async fn emit(&self, event: &ExtensionEvent, cancel: CancellationToken) -> Option<Value> {
        let mut result = None;
        for backend in self.handling(event.kind()) {
            match backend.dispatch(event, cancel.clone()).await {
                Ok(Some(answer)) if event.is_session_before() => {
                    let cancelled = answer.get("cancel").and_then(Value::as_bool) == Some(true);
                    result = Some(answer);
                    if cancelled {
                        return result;
                    }
                }
                Ok(_) => {}
                Err(error) => self.report_backend_error(event.kind(), &error),
            }
        }
        result
    }

    /// `cache_warming_decision`: the action the last handler returned, else `event`'s.
    pub async fn emit_cache_warming_decision(&self, event: &ExtensionEvent) -> Option<String> {
        let mut action = None;
        for backend in self.handling(event.kind()) {
            match backend.dispatch(event, CancellationToken::new()).await {
                Ok(Some(answer)) => {
                    if let Some(chosen) = answer.get("action").and_then(Value::as_str) {
                        action = Some(chosen.to_owned());
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error(event.kind(), &error),
            }
        }
        action
    }

    /// `session_before_*`: whether an extension cancelled, and its answer.
    pub async fn emit_session_before(
        &self,
        event: &ExtensionEvent,
        cancel: CancellationToken,
    ) -> SessionBeforeOutcome {
        let result = self.emit(event, cancel).await.unwrap_or(Value::Null);
        SessionBeforeOutcome {
            cancel: result.get("cancel").and_then(Value::as_bool) == Some(true),
            result,
        }
    }

    /// `tool_call`: the first block wins; each backend sees the input as earlier ones left
    /// it. A backend that cannot answer blocks the call (a gate must not fail open).
    /// `parent` is the call of the tool that made this one (a codemode script's call).
    pub async fn emit_tool_call(
        &self,
        tool_name: &str,
        tool_call_id: &str,
        parent: Option<&str>,
        input: Value,
        cancel: CancellationToken,
    ) -> ToolCallOutcome {
        let mut input = input;
        for backend in self.handling("tool_call") {
            let event = ExtensionEvent::ToolCall {
                tool_call_id: tool_call_id.to_owned(),
                tool_name: tool_name.to_owned(),
                input: input.clone(),
                parent_tool_call_id: parent.map(str::to_owned),
            };
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    if let Some(changed) = answer.get("input") {
                        input = changed.clone();
                    }
                    if answer.get("block").and_then(Value::as_bool) == Some(true) {
                        return tool_call_outcome(Some(answer), input);
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    return ToolCallOutcome {
                        block: true,
                        reason: Some(format!("Extension failed, blocking execution: {error}")),
                        input,
                        terminate: false,
                    };
                }
            }
        }
        ToolCallOutcome {
            block: false,
            reason: None,
            input,
            terminate: false,
        }
    }

    /// `tool_result`: patches merge in sequence; `None` when nothing changed.
    #[allow(clippy::too_many_arguments)]
    pub async fn emit_tool_result(
        &self,
        tool_name: &str,
        tool_call_id: &str,
        parent: Option<&str>,
        input: &Value,
        content: Vec<InputBlock>,
        details: Value,
        is_error: bool,
        cancel: CancellationToken,
    ) -> Option<ToolResultPatch> {
        let (mut content, mut details, mut is_error) = (content, details, is_error);
        let mut merged = ToolResultPatch::default();
        for backend in self.handling("tool_result") {
            let event = ExtensionEvent::ToolResult {
                tool_call_id: tool_call_id.to_owned(),
                tool_name: tool_name.to_owned(),
                input: input.clone(),
                content: content.clone(),
                details: details.clone(),
                is_error,
                parent_tool_call_id: parent.map(str::to_owned),
            };
            let answer = match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => answer,
                Ok(None) => continue,
                Err(error) => {
                    self.report_backend_error("tool_result", &error);
                    continue;
                }
            };
            let Ok(patch) = serde_json::from_value::<ToolResultPatch>(answer) else {
                continue;
            };
            if let Some(c) = patch.content {
                content = c.clone();
                merged.content = Some(c);
            }
            if let Some(d) = patch.details {
                details = d.clone();
                merged.details = Some(d);
            }
            if let Some(e) = patch.is_error {
                is_error = e;
                merged.is_error = Some(e);
            }
        }
        (!merged.is_empty()).then_some(merged)
    }

    /// `context`: the messages the LLM gets, chained; `None` when no extension handles it.
    pub async fn emit_context(
        &self,
        messages: &[AgentMessage],
        cancel: CancellationToken,
    ) -> Option<Vec<AgentMessage>> {
        let backends = self.handling("context");
        if backends.is_empty() {
            return None;
        }
        let mut current = messages.to_vec();
        for backend in backends {
            let event = ExtensionEvent::Context {
                messages: current.clone(),
            };
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    if let Some(list) = answer.get("messages")
                        && let Ok(parsed) = serde_json::from_value(list.clone())
                    {
                        current = parsed;
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error("context", &error),
            }
        }
        Some(current)
    }

    /// `before_provider_request`: the request body, chained; `None` when untouched.
    pub async fn emit_before_provider_request(
        &self,
        payload: &Value,
        cancel: CancellationToken,
    ) -> Option<Value> {
        let mut current: Option<Value> = None;
        for backend in self.handling("before_provider_request") {
            let event = ExtensionEvent::BeforeProviderRequest {
                payload: current.clone().unwrap_or_else(|| payload.clone()),
            };
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    if let Some(changed) = answer.get("payload") {
                        current = Some(changed.clone());
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error("before_provider_request", &error),
            }
        }
        current
    }

    /// `before_agent_start`: messages collect, the system prompt and the prompt options chain.
    pub async fn emit_before_agent_start(
        &self,
        trigger: &RunTrigger,
        system_prompt: &str,
        system_prompt_options: Value,
        cancel: CancellationToken,
    ) -> Option<BeforeAgentStartOutcome> {
        let mut outcome = BeforeAgentStartOutcome::default();
        let mut current = system_prompt.to_owned();
        let mut options = system_prompt_options;
        for backend in self.handling("before_agent_start") {
            let event = ExtensionEvent::BeforeAgentStart {
                trigger: trigger.clone(),
                system_prompt: current.clone(),
                system_prompt_options: options.clone(),
            };
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    if let Some(list) = answer.get("messages").and_then(Value::as_array) {
                        outcome.messages.extend(list.iter().filter_map(|m| {
                            serde_json::from_value::<ExtensionMessage>(m.clone()).ok()
                        }));
                    }
                    if let Some(prompt) = answer.get("systemPrompt").and_then(Value::as_str) {
                        current = prompt.to_owned();
                        outcome.system_prompt = Some(current.clone());
                    }
                    if let Some(changed) =
                        answer.get("systemPromptOptions").filter(|o| o.is_object())
                    {
                        options = changed.clone();
                        outcome.system_prompt_options = Some(options.clone());
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error("before_agent_start", &error),
            }
        }
        (!outcome.messages.is_empty()
            || outcome.system_prompt.is_some()
            || outcome.system_prompt_options.is_some())
        .then_some(outcome)
    }

    /// `input`: transforms chain, `handled` stops. `streaming_behavior` is how a prompt
    /// sent while the agent streams is queued (`steer`, `followUp`), `None` otherwise.
    pub async fn emit_input(
        &self,
        text: &str,
        images: Option<Vec<ImageContent>>,
        source: &str,
        streaming_behavior: Option<&str>,
        cancel: CancellationToken,
    ) -> InputOutcome {
        let (mut current_text, mut current_images) = (text.to_owned(), images.clone());
        let mut transformed = false;
        for backend in self.handling("input") {
            let event = ExtensionEvent::Input {
                text: current_text.clone(),
                images: current_images.clone(),
                source: source.to_owned(),
                streaming_behavior: streaming_behavior.map(str::to_owned),
            };
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => match answer.get("action").and_then(Value::as_str) {
                    Some("handled") => return InputOutcome::Handled,
                    Some("transform") => {
                        if let Some(t) = answer.get("text").and_then(Value::as_str) {
                            current_text = t.to_owned();
                        }
                        if let Some(list) = answer.get("images")
                            && let Ok(parsed) = serde_json::from_value(list.clone())
                        {
                            current_images = Some(parsed);
                        }
                        transformed = true;
                    }
                    _ => {}
                },
                Ok(None) => {}
                Err(error) => self.report_backend_error("input", &error),
            }
        }
        if transformed && (current_text != text || current_images != images) {
            InputOutcome::Transform {
                text: current_text,
                images: current_images,
            }
        } else {
            InputOutcome::Continue
        }
    }

    /// `message_end`: a replacement of the same role, chained.
    pub async fn emit_message_end(
        &self,
        message: &AgentMessage,
        cancel: CancellationToken,
    ) -> Option<AgentMessage> {
        let mut current: Option<AgentMessage> = None;
        for backend in self.handling("message_end") {
            let event = ExtensionEvent::MessageEnd {
                message: current.clone().unwrap_or_else(|| message.clone()),
            };
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    let Some(parsed) = answer
                        .get("message")
                        .and_then(|m| serde_json::from_value::<AgentMessage>(m.clone()).ok())
                    else {
                        continue;
                    };
                    if parsed.role() == message.role() {
                        current = Some(parsed);
                    } else {
                        self.report_error(ExtensionErrorInfo {
                            extension_path: backend
                                .extensions()
                                .first()
                                .map(|e| e.path.clone())
                                .unwrap_or_default(),
                            event: "message_end".into(),
                            error: "message_end handlers must return a message with the same role"
                                .into(),
                            stack: None,
                        });
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error("message_end", &error),
            }
        }
        current
    }

    /// `resources_discover`: the union of every extension's paths.
    pub async fn emit_resources_discover(
        &self,
        cwd: &str,
        reason: &str,
        cancel: CancellationToken,
    ) -> ResourcePaths {
        let mut paths = ResourcePaths::default();
        let event = ExtensionEvent::ResourcesDiscover {
            cwd: cwd.to_owned(),
            reason: reason.to_owned(),
        };
        for backend in self.handling("resources_discover") {
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    if let Ok(found) = serde_json::from_value::<ResourcePaths>(answer) {
                        paths.skill_paths.extend(found.skill_paths);
                        paths.prompt_paths.extend(found.prompt_paths);
                        paths.theme_paths.extend(found.theme_paths);
                    }
                }
                Ok(None) => {}
                Err(error) => self.report_backend_error("resources_discover", &error),
            }
        }
        paths
    }

    /// `user_bash`: the first extension that answers decides how the user's `!command`
    /// runs (its own result, or its own operations). Fails closed as pi 1.6.0: a handler
    /// that throws or answers something invalid (or a host that cannot answer) is an error,
    /// and the command must not run.
    pub async fn emit_user_bash(
        &self,
        command: &str,
        exclude_from_context: bool,
        cwd: &str,
        cancel: CancellationToken,
    ) -> Result<Option<UserBashAnswer>, String> {
        let event = ExtensionEvent::UserBash {
            command: command.to_owned(),
            exclude_from_context,
            cwd: cwd.to_owned(),
        };
        for backend in self.handling("user_bash") {
            match backend.dispatch(&event, cancel.clone()).await {
                Ok(Some(answer)) => {
                    // The host reported the handler's error already.
                    if let Some(message) = answer.get("failed").and_then(Value::as_str) {
                        return Err(message.to_owned());
                    }
                    if let Some(result) = answer.get("result").filter(|r| !r.is_null()) {
                        return Ok(Some(UserBashAnswer::Result(result.clone())));
                    }
                    if let Some(handle) = answer.pointer("/operations/handle") {
                        return Ok(Some(UserBashAnswer::Operations {
                            backend,
                            handle: handle.clone(),
                        }));
                    }
                }
                Ok(None) => {}
                Err(error) => {
                    self.report_backend_error("user_bash", &error);
                    return Err(error.0);
                }
            }
        }
        Ok(None)
    }

    /// The active extension tools' prompt snippets ("" for none) and guidelines for the
    /// system prompt.
    pub fn prompt_additions(&self, active: &[String]) -> (Vec<(String, String)>, Vec<String>) {
        let mut snippets = Vec::new();
        let mut guidelines = Vec::new();
        for def in self.tool_defs() {
            if !active.contains(&def.name) {
                continue;
            }
            // Every active extension tool is named, with "" when it has no snippet: a
            // built-in it overrides is then not listed (as the TypeScript pi does).
            snippets.retain(|(name, _)| *name != def.name);
            if def.builtin_prompt {
                continue;
            }
            snippets.push((
                def.name.clone(),
                def.prompt_snippet.clone().unwrap_or_default(),
            ));
            guidelines.extend(def.prompt_guidelines.iter().cloned());
        }
        (snippets, guidelines)
    }
}

/// `{"cancel": true}`: what a cancelled answer looks like (for tests and Rust extensions).
pub fn cancelled() -> Value {
    json!({"cancel": true})
}
