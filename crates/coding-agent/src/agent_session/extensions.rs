//! AgentSession's side of the extension runtime: its extension state, agent events handed
//! to extensions before anyone else sees them (`turn_end` as a boundary), extension
//! commands, the active tool set, and binding a mode's UI. The agent hooks are in
//! `session_hooks`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentEvent, AgentListener, AgentMessage, AgentTool, CustomMessage};

use super::{AgentSession, Inner, lock};
use crate::extensions::actions::MirrorStatics;
use crate::extensions::backend::{ErrorSink, ExtensionBinding};
use crate::extensions::{ExtensionEvent, ExtensionMessage, ExtensionRuntime, ExtensionUi};
use crate::modes::system_prompt::PromptRecipe;
use crate::tool_selection::ToolEdits;

/// What a session needs to run extensions.
#[derive(Clone)]
pub struct ExtensionSetup {
    pub runtime: Arc<ExtensionRuntime>,
    /// Every tool that can be active (built-in and extension tools); empty: the
    /// session's tools.
    pub tool_registry: Vec<Arc<dyn AgentTool>>,
    /// How to rebuild the system prompt when the tools change; `None` keeps it fixed.
    pub prompt_recipe: Option<PromptRecipe>,
    /// Set when the tools follow the defaults: a resumed branch's recorded tools replace
    /// them, with these `+name`/`-name` edits applied.
    pub restore_tools: Option<ToolEdits>,
    /// Where skills, prompt templates and context files come from, read again by
    /// `/reload`; `None` keeps the ones the session started with.
    pub resource_sources: Option<crate::session_resources::ResourceSources>,
}

impl Default for ExtensionSetup {
    fn default() -> Self {
        Self {
            runtime: Arc::new(ExtensionRuntime::empty()),
            tool_registry: Vec::new(),
            prompt_recipe: None,
            restore_tools: None,
            resource_sources: None,
        }
    }
}

/// Counts running extension commands; prompts and turns they send wait until they ended.
#[derive(Default)]
pub(super) struct CommandGate {
    running: std::sync::atomic::AtomicUsize,
    ended: tokio::sync::Notify,
}

/// Held while a command runs.
pub(super) struct CommandRunning<'a>(&'a CommandGate);

impl Drop for CommandRunning<'_> {
    fn drop(&mut self) {
        self.0.running.fetch_sub(1, Ordering::SeqCst);
        self.0.ended.notify_waiters();
    }
}

impl CommandGate {
    pub(super) fn start(&self) -> CommandRunning<'_> {
        self.running.fetch_add(1, Ordering::SeqCst);
        CommandRunning(self)
    }

    /// Whether a command runs now.
    pub(super) fn is_running(&self) -> bool {
        self.running.load(Ordering::SeqCst) > 0
    }

    /// Waits until no command runs, at most a moment: a command may itself wait for the
    /// prompt it sent (a `withSession` context awaits `sendUserMessage`).
    pub(super) async fn idle(&self) {
        let wait = async {
            loop {
                let ended = self.ended.notified();
                if self.running.load(Ordering::SeqCst) == 0 {
                    return;
                }
                ended.await;
            }
        };
        let _ = tokio::time::timeout(std::time::Duration::from_millis(200), wait).await;
    }
}

/// Open while extensions handle `agent_settled`: runs they ask for meanwhile start once
/// every settled handler finished and clients heard `agent_settled` (pi 1.6.0).
#[derive(Default)]
pub(super) struct SettledGate {
    open: std::sync::atomic::AtomicBool,
    closed: tokio::sync::Notify,
}

impl SettledGate {
    pub(super) fn open(&self) {
        self.open.store(true, Ordering::SeqCst);
    }

    pub(super) fn close(&self) {
        self.open.store(false, Ordering::SeqCst);
        self.closed.notify_waiters();
    }

    /// Waits until the settled handlers finished (at once when none run).
    pub(super) async fn passed(&self) {
        loop {
            let closed = self.closed.notified();
            if !self.open.load(Ordering::SeqCst) {
                return;
            }
            closed.await;
        }
    }
}

/// An item of the queue of events sent by synchronous code.
#[allow(clippy::large_enum_variant)] // rare: model and thinking-level changes
pub(super) enum Later {
    Event(ExtensionEvent),
    /// Answered once everything before it was handled.
    Barrier(tokio::sync::oneshot::Sender<()>),
}

/// The session's extension state.
pub(super) struct ExtensionState {
    pub(super) runtime: Arc<ExtensionRuntime>,
    pub(super) registry: Mutex<Vec<Arc<dyn AgentTool>>>,
    pub(super) recipe: Mutex<Option<PromptRecipe>>,
    /// See [`ExtensionSetup::resource_sources`].
    pub(super) resource_sources: Option<crate::session_resources::ResourceSources>,
    /// The system prompt without `before_agent_start` changes.
    pub(super) base_prompt: Mutex<String>,
    turn_index: AtomicU64,
    /// Extension commands being run (prompts they send wait for them).
    pub(super) commands_running: CommandGate,
    /// `agent_settled` handlers are running (runs they ask for wait for them).
    pub(super) settling: SettledGate,
    /// `agent_end` handlers are running: the run is over but not yet idle.
    pub(super) ending: std::sync::atomic::AtomicBool,
    /// Runs being started (their `before_agent_start` handlers run): the session is busy.
    pub(super) starting: std::sync::atomic::AtomicUsize,
    /// `ctx.abort()` came while a run was starting: the run is aborted as it starts, before
    /// its first request (pi 1.6.0 aborts at `agent_start`).
    pub(super) abort_at_start: std::sync::atomic::AtomicBool,
    /// A `turn_end` handler asked for one more model request (taken by the loop).
    pub(super) boundary_continue: std::sync::atomic::AtomicBool,
    /// Boundary entries were appended during the run: its requests read the session's
    /// projection until the run settles.
    pub(super) reproject: std::sync::atomic::AtomicBool,
    /// `sendMessage(…, {deliverAs: "nextTurn"})` messages, sent with the next prompt.
    pub(super) next_turn: Mutex<Vec<AgentMessage>>,
    /// `sendMessage(…, {triggerTurn: false})` messages sent while the agent ran, recorded
    /// at the end of the turn (see `Inner::flush_pending_custom`).
    pub(super) pending_custom: Mutex<Vec<(ExtensionMessage, AgentMessage)>>,
    pub(super) shutdown: Mutex<Option<Arc<dyn Fn() + Send + Sync>>>,
    /// The mode's UI, also without extensions (pi's built-in commands notify through it).
    pub(super) ui: Mutex<Option<Arc<dyn ExtensionUi>>>,
    /// Bumped when tools, commands or models change (the host re-reads them).
    pub(super) generation: AtomicU64,
    /// Fields the mode adds to the host's mirror (terminal size, editor text, …).
    pub(super) ui_state: Mutex<Map<String, Value>>,
    /// Events sent by synchronous code (model and thinking-level changes), in order.
    pub(super) later: Mutex<Option<tokio::sync::mpsc::UnboundedSender<Later>>>,
    /// Names of the extension tools in the registry (replaced on refresh and reload).
    pub(super) extension_tools: Mutex<Vec<String>>,
    /// See [`ExtensionSetup::restore_tools`].
    pub(super) restore_tools: Option<ToolEdits>,
    /// Restored tools not registered yet (see `tool_restore`).
    pub(super) pending_tools: Mutex<Vec<String>>,
    /// `allTools`, `commands` and `models` of the mirror, built once per generation.
    pub(super) static_cache: Mutex<Option<(u64, Arc<MirrorStatics>)>>,
}

impl ExtensionState {
    pub(super) fn new(setup: ExtensionSetup, base_prompt: String) -> Self {
        Self {
            runtime: setup.runtime,
            registry: Mutex::new(setup.tool_registry),
            recipe: Mutex::new(setup.prompt_recipe),
            resource_sources: setup.resource_sources,
            restore_tools: setup.restore_tools,
            pending_tools: Mutex::new(Vec::new()),
            base_prompt: Mutex::new(base_prompt),
            turn_index: AtomicU64::new(0),
            ending: std::sync::atomic::AtomicBool::new(false),
            starting: std::sync::atomic::AtomicUsize::new(0),
            abort_at_start: std::sync::atomic::AtomicBool::new(false),
            boundary_continue: std::sync::atomic::AtomicBool::new(false),
            reproject: std::sync::atomic::AtomicBool::new(false),
            commands_running: CommandGate::default(),
            settling: SettledGate::default(),
            next_turn: Mutex::new(Vec::new()),
            pending_custom: Mutex::new(Vec::new()),
            shutdown: Mutex::new(None),
            ui: Mutex::new(None),
            generation: AtomicU64::new(1),
            ui_state: Mutex::new(Map::new()),
            static_cache: Mutex::new(None),
            extension_tools: Mutex::new(Vec::new()),
            later: Mutex::new(None),
        }
    }
}

/// Hands each agent event to extensions first (awaiting them, as the TypeScript pi's
/// event queue does), then to the session.
pub(super) struct SessionListener(pub(super) Weak<Inner>);

impl AgentListener for SessionListener {
    fn on_event<'a>(
        &'a self,
        event: &'a AgentEvent,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            crate::timing::mark(event.kind());
            let Some(inner) = self.0.upgrade() else {
                return;
            };
            if let AgentEvent::AgentStart = event
                && inner.ext.abort_at_start.swap(false, Ordering::SeqCst)
            {
                cancel.cancel();
            }
            let replaced = inner.dispatch_to_extensions(event, cancel).await;
            inner.on_agent_event(replaced.as_ref().unwrap_or(event));
            // After the turn's tool results (and what turn_end handlers sent), as pi 1.6.0;
            // what `agent_end` handlers sent waits for the next turn's end or the settle.
            if let AgentEvent::TurnEnd { .. } = event {
                inner.flush_pending_custom(true);
            }
        })
    }
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

impl Inner {
    /// The extension event of an agent event; a `message_end` replacement comes back as
    /// the event the session goes on with.
    async fn dispatch_to_extensions(
        &self,
        event: &AgentEvent,
        cancel: &CancellationToken,
    ) -> Option<AgentEvent> {
        let runtime = &self.ext.runtime;
        if let AgentEvent::AgentStart = event {
            self.ext.turn_index.store(0, Ordering::SeqCst);
        }
        // The persisted system message (pi 1.5) is the session's record, not a message
        // extensions written for 0.73 expect to see.
        if let AgentEvent::MessageStart { message } | AgentEvent::MessageEnd { message } = event
            && message.role() == "system"
        {
            return None;
        }
        if !runtime.has_handlers(event.kind()) {
            if let AgentEvent::TurnEnd { .. } = event {
                self.ext.turn_index.fetch_add(1, Ordering::SeqCst);
            }
            return None;
        }
        let turn_index = self.ext.turn_index.load(Ordering::SeqCst);
        if let AgentEvent::TurnEnd {
            message,
            tool_results,
        } = event
            && let Some(reply) = message.as_assistant()
        {
            self.turn_end_boundary(turn_index, reply, tool_results)
                .await;
            self.ext.turn_index.fetch_add(1, Ordering::SeqCst);
            return None;
        }
        let extension_event = match event {
            AgentEvent::AgentStart => ExtensionEvent::AgentStart,
            AgentEvent::AgentEnd { messages } => ExtensionEvent::AgentEnd {
                messages: messages
                    .iter()
                    .filter(|m| m.role() != "system")
                    .cloned()
                    .collect(),
            },
            AgentEvent::TurnStart => ExtensionEvent::TurnStart {
                turn_index,
                timestamp: now_ms(),
            },
            // A reply that is not an assistant message (only a custom stream function
            // makes one) gets the plain event.
            AgentEvent::TurnEnd {
                message,
                tool_results,
            } => ExtensionEvent::TurnEnd {
                turn_index,
                message: message.clone(),
                tool_results: tool_results.iter().map(to_value).collect(),
                message_entry_id: None,
                tool_result_entry_ids: Vec::new(),
                outcome: "completed".into(),
                entries: Vec::new(),
                continue_: false,
                context: Value::Null,
            },
            AgentEvent::MessageStart { message } => ExtensionEvent::MessageStart {
                message: message.clone(),
            },
            AgentEvent::MessageUpdate {
                message,
                assistant_message_event,
            } => ExtensionEvent::MessageUpdate {
                message: AgentMessage::from((**message).clone()),
                assistant_message_event: to_value(assistant_message_event),
            },
            AgentEvent::MessageEnd { message } => {
                let replacement = runtime.emit_message_end(message, cancel.clone()).await?;
                self.agent.update_messages(|messages| {
                    if let Some(at) = messages.iter().rposition(|m| m == message) {
                        messages[at] = replacement.clone();
                    }
                });
                return Some(AgentEvent::MessageEnd {
                    message: replacement,
                });
            }
            AgentEvent::ToolExecutionStart {
                tool_call_id,
                tool_name,
                args,
                parent_tool_call_id,
            } => ExtensionEvent::ToolExecutionStart {
                tool_call_id: tool_call_id.clone(),
                tool_name: tool_name.clone(),
                args: args.clone(),
                parent_tool_call_id: parent_tool_call_id.clone(),
            },
            AgentEvent::ToolExecutionUpdate {
                tool_call_id,
                tool_name,
                args,
                partial_result,
                parent_tool_call_id,
            } => ExtensionEvent::ToolExecutionUpdate {
                tool_call_id: tool_call_id.clone(),
                tool_name: tool_name.clone(),
                args: args.clone(),
                partial_result: to_value(partial_result),
                parent_tool_call_id: parent_tool_call_id.clone(),
            },
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                tool_name,
                result,
                is_error,
                duration_ms,
                parent_tool_call_id,
            } => ExtensionEvent::ToolExecutionEnd {
                tool_call_id: tool_call_id.clone(),
                tool_name: tool_name.clone(),
                result: to_value(result),
                is_error: *is_error,
                duration_ms: *duration_ms,
                parent_tool_call_id: parent_tool_call_id.clone(),
            },
        };
        let ending = matches!(event, AgentEvent::AgentEnd { .. });
        if ending {
            self.ext.ending.store(true, Ordering::SeqCst);
        }
        runtime.emit(&extension_event, cancel.clone()).await;
        if ending {
            // The run counts as over before the flag drops, so a prompt an agent_end
            // handler sent never finds the session busy.
            self.run_ended.store(true, Ordering::SeqCst);
            self.ext.ending.store(false, Ordering::SeqCst);
        }
        if let AgentEvent::TurnEnd { .. } = event {
            self.ext.turn_index.fetch_add(1, Ordering::SeqCst);
        }
        None
    }
}

/// A custom message as `sendMessage` and `before_agent_start` create it.
pub(super) fn custom_message(message: &ExtensionMessage) -> AgentMessage {
    let mut fields = Map::new();
    fields.insert("customType".into(), message.custom_type.clone().into());
    fields.insert("content".into(), message.content.clone());
    fields.insert("display".into(), message.display.into());
    if let Some(details) = &message.details {
        fields.insert("details".into(), details.clone());
    }
    fields.insert("timestamp".into(), now_ms().into());
    AgentMessage::Custom(CustomMessage::new("custom", fields))
}

impl AgentSession {
    /// The loaded extensions.
    pub fn extension_runtime(&self) -> &Arc<ExtensionRuntime> {
        &self.inner.ext.runtime
    }

    /// Connects the extensions to this session and the mode's UI, then tells them the
    /// session started (`session_start`).
    pub async fn bind_extensions(
        &self,
        ui: Arc<dyn ExtensionUi>,
        errors: ErrorSink,
        shutdown: Arc<dyn Fn() + Send + Sync>,
    ) {
        *lock(&self.inner.ext.shutdown) = Some(shutdown);
        *lock(&self.inner.ext.ui) = Some(ui.clone());
        let runtime = self.inner.ext.runtime.clone();
        if runtime.is_empty() {
            return;
        }
        runtime.bind(ExtensionBinding {
            actions: Arc::new(super::extension_actions::SessionActions::new(self)),
            ui,
            errors,
        });
        let event = ExtensionEvent::SessionStart {
            reason: "startup".into(),
            previous_session_file: None,
        };
        runtime.emit(&event, CancellationToken::new()).await;
        self.extend_resources_from_extensions("startup").await;
    }

    /// `resources_discover`: skills and prompt templates extensions point to join the
    /// session's (as `extension:<name>` sources); the system prompt is rebuilt.
    pub(super) async fn extend_resources_from_extensions(&self, reason: &str) {
        let runtime = self.inner.ext.runtime.clone();
        if !runtime.has_handlers("resources_discover") {
            return;
        }
        let cwd = self.inner.cwd.display().to_string();
        let found = runtime
            .emit_resources_discover(&cwd, reason, CancellationToken::new())
            .await;
        if found.skill_paths.is_empty() && found.prompt_paths.is_empty() {
            return;
        }
        let agent_dir = crate::config::paths::agent_dir();
        let label = |extension_path: &str| {
            let name = std::path::Path::new(extension_path)
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            format!(
                "extension:{}",
                name.trim_end_matches(".ts").trim_end_matches(".js")
            )
        };
        let base_dir = |extension_path: &str| {
            (!extension_path.starts_with('<'))
                .then(|| {
                    std::path::Path::new(extension_path)
                        .parent()
                        .map(std::path::Path::to_path_buf)
                })
                .flatten()
        };
        for entry in &found.skill_paths {
            let mut options = crate::resources::DiscoveryOptions::new(&self.inner.cwd, &agent_dir);
            options.cli_paths = vec![entry.path.clone()];
            options.include_defaults = false;
            let loaded = crate::resources::load_skills(&options);
            let mut skills = lock(&self.inner.skills);
            for mut skill in loaded.skills {
                if skills.iter().any(|s| s.name == skill.name) {
                    continue;
                }
                skill.source_info.source = label(&entry.extension_path);
                skill.source_info.scope = crate::resources::SourceScope::Temporary;
                skill.source_info.base_dir = base_dir(&entry.extension_path);
                skills.push(skill);
            }
        }
        for entry in &found.prompt_paths {
            let mut options = crate::resources::DiscoveryOptions::new(&self.inner.cwd, &agent_dir);
            options.cli_paths = vec![entry.path.clone()];
            options.include_defaults = false;
            let loaded = crate::resources::load_prompt_templates(&options);
            let mut templates = lock(&self.inner.prompt_templates);
            for mut template in loaded {
                if templates.iter().any(|t| t.name == template.name) {
                    continue;
                }
                template.source_info.source = label(&entry.extension_path);
                template.source_info.scope = crate::resources::SourceScope::Temporary;
                template.source_info.base_dir = base_dir(&entry.extension_path);
                templates.push(template);
            }
        }
        self.inner.ext.generation.fetch_add(1, Ordering::SeqCst);
        self.rebuild_system_prompt();
    }

    /// Tells extensions pi is quitting (`session_shutdown`) and stops their host.
    pub async fn shutdown_extensions(&self) {
        let runtime = self.inner.ext.runtime.clone();
        if runtime.is_empty() {
            return;
        }
        let event = ExtensionEvent::SessionShutdown {
            reason: "quit".into(),
            target_session_file: None,
        };
        runtime.emit(&event, CancellationToken::new()).await;
        runtime.shutdown().await;
    }

    /// Runs `/name args` when `name` is an extension command; `None` when it is not one.
    /// A failing handler is reported as an `extension_error`; the prompt counts as handled.
    pub async fn run_extension_command(&self, text: &str) -> Option<()> {
        let runtime = self.inner.ext.runtime.clone();
        let (command, args) = runtime.find_command(text)?;
        let _ = runtime
            .run_command(&command, &args, CancellationToken::new())
            .await;
        Some(())
    }

    /// Sets a field the mode adds to the extension host's mirror (`terminal`,
    /// `editorText`, `toolsExpanded`, `themeName`, `footer`).
    pub fn set_extension_ui_state(&self, key: &str, value: Value) {
        lock(&self.inner.ext.ui_state).insert(key.to_owned(), value);
    }

    /// The names of the active tools.
    pub fn active_tool_names(&self) -> Vec<String> {
        self.inner
            .agent
            .tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect()
    }

    /// Every tool that can be made active.
    pub fn all_tools(&self) -> Vec<Arc<dyn AgentTool>> {
        let registry = lock(&self.inner.ext.registry).clone();
        if registry.is_empty() {
            self.inner.agent.tools()
        } else {
            registry
        }
    }

    /// Activates these tools, in this order (unknown names are skipped), and rebuilds the
    /// system prompt.
    pub fn set_active_tools(&self, names: &[String]) {
        let all = self.all_tools();
        let tools: Vec<Arc<dyn AgentTool>> = names
            .iter()
            .filter_map(|name| all.iter().find(|t| t.name() == name).cloned())
            .collect();
        #[cfg(feature = "codemode")]
        let tools = crate::codemode::loadout::prepare(
            tools,
            &lock(&self.inner.ext.registry),
            crate::codemode::loadout::Presentation::from_settings(self.settings()),
        );
        self.inner.agent.set_tools(tools);
        self.rebuild_system_prompt();
    }

    /// An extension's `pi.setActiveTools()`: as pi 1.6.0's loadout, the tools already active
    /// keep their places and the others follow in the order given, so the same tools in
    /// another order change nothing.
    pub fn apply_tool_loadout(&self, names: &[String]) {
        let current = self.active_tool_names();
        let mut ordered: Vec<String> = current
            .iter()
            .filter(|n| names.contains(n))
            .cloned()
            .collect();
        for name in names {
            if !ordered.contains(name) {
                ordered.push(name.clone());
            }
        }
        self.set_active_tools(&ordered);
    }

    /// Re-reads the extensions' tools (one registered or replaced a tool after loading):
    /// new tools become active.
    pub fn refresh_extension_tools(&self) {
        let mut known = lock(&self.inner.ext.extension_tools);
        let before: Vec<String> = self
            .all_tools()
            .iter()
            .map(|t| t.name().to_owned())
            .collect();
        let mut active = self.active_tool_names();
        let fresh = self.inner.ext.runtime.tools();
        let inactive = self.inner.ext.runtime.inactive_tools();
        {
            let mut registry = lock(&self.inner.ext.registry);
            if registry.is_empty() {
                *registry = self.inner.agent.tools();
            }
            if known.is_empty() {
                // The first refresh: the session started with these extension tools.
                *known = fresh.iter().map(|t| t.name().to_owned()).collect();
            }
            registry.retain(|t| !known.iter().any(|n| n == t.name()));
            for tool in &fresh {
                registry.retain(|t| t.name() != tool.name());
                if !before.iter().any(|n| n == tool.name())
                    && !inactive.iter().any(|n| n == tool.name())
                {
                    active.push(tool.name().to_owned());
                }
                registry.push(tool.clone());
            }
        }
        *known = fresh.iter().map(|t| t.name().to_owned()).collect();
        drop(known);
        self.inner.ext.generation.fetch_add(1, Ordering::SeqCst);
        self.set_active_tools(&active);
    }

    /// The system prompt before `before_agent_start` changes.
    pub fn base_system_prompt(&self) -> String {
        lock(&self.inner.ext.base_prompt).clone()
    }

    /// The prompt `recipe` gives for the active tools, their snippets and guidelines (then
    /// `extra_guidelines`), the skills and the MCP section.
    pub(super) fn prompt_from_recipe(
        &self,
        recipe: &PromptRecipe,
        extra_guidelines: Vec<String>,
    ) -> String {
        // Tools whose declarations are hidden (codemode's `only` mode) are left out.
        let names: Vec<String> = self
            .inner
            .agent
            .tools()
            .iter()
            .filter(|t| t.declared())
            .map(|t| t.name().to_owned())
            .collect();
        let (snippets, mut guidelines) = self.inner.ext.runtime.prompt_additions(&names);
        guidelines.extend(extra_guidelines);
        let prompt = recipe.build(
            &names,
            &self.skills(),
            &snippets,
            &guidelines,
            &self.inner.cwd,
        );
        self.with_mcp_section(prompt)
    }

    /// Rebuilds the base prompt from the active tools (when the session has a recipe).
    pub(super) fn rebuild_system_prompt(&self) {
        let Some(recipe) = lock(&self.inner.ext.recipe).clone() else {
            return;
        };
        let prompt = self.prompt_from_recipe(&recipe, Vec::new());
        *lock(&self.inner.ext.base_prompt) = prompt.clone();
        self.inner.agent.set_system_prompt(prompt);
    }
}
