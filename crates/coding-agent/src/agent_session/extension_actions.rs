//! What extensions may ask of a session (`pi.sendMessage`, `ctx.newSession`, …), and the
//! state snapshot their synchronous getters read.

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};

use futures_util::future::BoxFuture;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, InputBlock, ThinkingLevel};

use super::extensions::custom_message;
use super::{AgentSession, Inner, NavigateOptions, PromptOptions, StreamingBehavior, lock};
use crate::extensions::actions::{MirrorStatics, RunRequest, SessionMirror, StateSnapshot};
use crate::extensions::{
    ExtensionAction, ExtensionActions, ExtensionMessage, RunTrigger, SendMessageOptions,
};
use crate::session::EntryKind;

/// The session as extensions reach it (weakly: extensions never keep a session alive).
pub(super) struct SessionActions {
    inner: Weak<Inner>,
}

impl SessionActions {
    pub(super) fn new(session: &AgentSession) -> Self {
        Self {
            inner: std::sync::Arc::downgrade(&session.inner),
        }
    }

    fn session(&self) -> Option<AgentSession> {
        self.inner.upgrade().map(|inner| AgentSession { inner })
    }
}

impl ExtensionActions for SessionActions {
    fn perform(&self, action: ExtensionAction) -> BoxFuture<'_, Result<Value, String>> {
        let session = self.session();
        Box::pin(async move {
            match session {
                Some(session) => session.perform_extension_action(action).await,
                None => Err("The session has ended".into()),
            }
        })
    }

    fn expect_run(&self) -> Option<RunRequest> {
        let session = self.session()?;
        Some(RunRequest::new(Box::new(session.run_requested())))
    }

    fn abort_now(&self) {
        if let Some(session) = self.session() {
            if session.inner.ext.starting.load(Ordering::SeqCst) > 0 {
                session
                    .inner
                    .ext
                    .abort_at_start
                    .store(true, Ordering::SeqCst);
            }
            session.inner.agent.abort();
        }
    }

    fn refuses_unqueued_prompt(&self) -> bool {
        self.session()
            .is_some_and(|session| session.inner.ext.starting.load(Ordering::SeqCst) > 0)
    }

    fn queues_at_once(&self) -> bool {
        self.session().is_some_and(|session| {
            (session.is_streaming() || session.inner.ext.starting.load(Ordering::SeqCst) > 0)
                && !session.inner.ext.commands_running.is_running()
        })
    }

    fn fingerprint(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let Some(session) = self.session() else {
            return 0;
        };
        let mut hash = std::collections::hash_map::DefaultHasher::new();
        {
            let manager = lock(&session.inner.session);
            manager.session_id().hash(&mut hash);
            manager.entries().len().hash(&mut hash);
            manager.leaf_id().hash(&mut hash);
        }
        session.message_count().hash(&mut hash);
        let model = session.model();
        model.provider.hash(&mut hash);
        model.id.hash(&mut hash);
        session.thinking_level().as_str().hash(&mut hash);
        session.is_streaming().hash(&mut hash);
        session
            .inner
            .ext
            .starting
            .load(std::sync::atomic::Ordering::SeqCst)
            .hash(&mut hash);
        session.pending_message_count().hash(&mut hash);
        session
            .inner
            .ext
            .generation
            .load(Ordering::SeqCst)
            .hash(&mut hash);
        session.active_tool_names().hash(&mut hash);
        session.inner.agent.system_prompt().hash(&mut hash);
        serde_json::to_string(&*lock(&session.inner.ext.ui_state))
            .unwrap_or_default()
            .hash(&mut hash);
        // 0 means "no fingerprint"; keep it out of the range.
        hash.finish() | 1
    }

    fn snapshot(
        &self,
        entries_from: Option<(String, usize)>,
        known_generation: Option<u64>,
    ) -> StateSnapshot {
        match self.session() {
            Some(session) => session.extension_snapshot(entries_from, known_generation),
            None => StateSnapshot::default(),
        }
    }
}

/// The mirror's `models` field.
#[derive(serde::Serialize)]
struct MirrorModels<'a> {
    all: &'a [pi_ai::Model],
    available: Vec<&'a pi_ai::Model>,
}

fn json_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| "null".into())
}

fn to_value<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// `sendUserMessage` content: a string, or text and image blocks.
fn split_content(content: &Value) -> (String, Vec<ImageContent>) {
    match content {
        Value::String(text) => (text.clone(), Vec::new()),
        Value::Array(blocks) => {
            let mut texts = Vec::new();
            let mut images = Vec::new();
            for block in blocks {
                match serde_json::from_value::<InputBlock>(block.clone()) {
                    Ok(InputBlock::Text(text)) => texts.push(text.text),
                    Ok(InputBlock::Image(image)) => images.push(image),
                    Err(_) => {}
                }
            }
            (texts.join("\n"), images)
        }
        _ => (String::new(), Vec::new()),
    }
}

impl AgentSession {
    /// `request`, counted from now when nobody counted it yet (an action that did not
    /// come through the host's frames, e.g. a Rust extension's).
    fn held_request(&self, request: RunRequest) -> RunRequest {
        if request.is_held() {
            request
        } else {
            RunRequest::new(Box::new(self.run_requested()))
        }
    }

    /// Carries out one extension request.
    pub async fn perform_extension_action(&self, action: ExtensionAction) -> Result<Value, String> {
        match action {
            ExtensionAction::SendMessage {
                message,
                options,
                request,
            } => {
                let request = self.held_request(request);
                self.send_custom_message(&message, &options, &request).await;
                Ok(Value::Null)
            }
            ExtensionAction::SendUserMessage {
                content,
                options,
                request,
            } => {
                let request = self.held_request(request);
                let (text, images) = split_content(&content);
                let streaming_behavior = match options.deliver_as.as_deref() {
                    Some("followUp") => Some(StreamingBehavior::FollowUp),
                    Some("steer") => Some(StreamingBehavior::Steer),
                    _ => None,
                };
                self.inner.ext.commands_running.idle().await;
                self.inner.ext.settling.passed().await;
                // From an agent_end handler the run is over: the prompt starts the next
                // one once it is idle (the TypeScript pi's agent is idle by then).
                if streaming_behavior.is_none()
                    && self
                        .inner
                        .ext
                        .ending
                        .load(std::sync::atomic::Ordering::SeqCst)
                {
                    self.inner.agent.wait_for_idle().await;
                }
                let options = PromptOptions {
                    images,
                    streaming_behavior,
                    expand_templates: options.expand_prompt_templates,
                    source: Some("extension".into()),
                };
                // The count ends as the prompt starts its run (or is queued, or fails).
                let release = request.clone();
                let preflight: crate::agent_session::Preflight =
                    Box::new(move |_| release.release());
                self.prompt(&text, options, Some(preflight))
                    .await
                    .map(|()| Value::Null)
                    .map_err(|e| e.0)
            }
            ExtensionAction::AppendEntry { custom_type, data } => self
                .inner
                .append_announced(EntryKind::Custom { custom_type, data })
                .map(|_| Value::Null)
                .map_err(|e| e.to_string()),
            ExtensionAction::SetSessionName { name } => self
                .set_session_name(&name)
                .map(|()| Value::Null)
                .map_err(|e| e.0),
            ExtensionAction::SetLabel { entry_id, label } => lock(&self.inner.session)
                .append_label(&entry_id, label.as_deref())
                .map(|_| Value::Null)
                .map_err(|e| e.to_string()),
            ExtensionAction::SetActiveTools { tool_names } => {
                self.apply_tool_loadout(&tool_names);
                Ok(Value::Null)
            }
            ExtensionAction::RefreshTools {} => {
                self.refresh_extension_tools();
                Ok(Value::Null)
            }
            ExtensionAction::SetModel { provider, id } => {
                let Some(model) = self.registry().find(&provider, &id).cloned() else {
                    return Ok(Value::Bool(false));
                };
                Ok(Value::Bool(self.set_model(model).is_ok()))
            }
            ExtensionAction::SetThinkingLevel { level } => {
                if let Some(level) = ThinkingLevel::parse(&level) {
                    self.set_thinking_level(level);
                }
                Ok(Value::Null)
            }
            ExtensionAction::Abort {} => {
                self.abort().await;
                Ok(Value::Null)
            }
            ExtensionAction::Shutdown {} => {
                let handler = lock(&self.inner.ext.shutdown).clone();
                if let Some(handler) = handler {
                    handler();
                }
                Ok(Value::Null)
            }
            ExtensionAction::Compact {
                custom_instructions,
                started,
            } => self
                .compact_signalled(custom_instructions.as_deref(), &started)
                .await
                .map(|result| to_value(&result))
                .map_err(|e| e.0),
            ExtensionAction::RegisterProvider { name, config } => self
                .register_extension_provider(&name, &config)
                .map(|()| Value::Null),
            ExtensionAction::UnregisterProvider { name } => self
                .unregister_extension_provider(&name)
                .map(|()| Value::Null),
            ExtensionAction::RegisterVirtualModel { model } => {
                self.register_virtual_model(&model).map(|()| Value::Null)
            }
            ExtensionAction::UnregisterVirtualModel { provider, id } => self
                .unregister_virtual_model(&provider, &id)
                .map(|()| Value::Null),
            ExtensionAction::GetApiKeyAndHeaders { provider, id } => {
                let model = match id {
                    Some(id) => self.registry().find(&provider, &id).cloned(),
                    None => None,
                }
                .or_else(|| {
                    self.registry()
                        .all()
                        .iter()
                        .find(|m| m.provider == provider)
                        .cloned()
                });
                let Some(model) = model else {
                    return Ok(
                        json!({"ok": false, "error": format!("Unknown provider: {provider}")}),
                    );
                };
                match self.registry().request_auth(&model, None) {
                    Ok(auth) => {
                        Ok(json!({"ok": true, "apiKey": auth.api_key, "headers": auth.headers}))
                    }
                    Err(error) => Ok(json!({"ok": false, "error": error})),
                }
            }
            ExtensionAction::GetApiKeyForProvider { provider } => {
                let model = self
                    .registry()
                    .all()
                    .iter()
                    .find(|m| m.provider == provider)
                    .cloned();
                Ok(model
                    .and_then(|m| self.registry().request_auth(&m, None).ok())
                    .and_then(|auth| auth.api_key)
                    .map_or(Value::Null, Value::String))
            }
            ExtensionAction::WaitForIdle {} => {
                self.inner.agent.wait_for_idle().await;
                Ok(Value::Null)
            }
            ExtensionAction::NewSession {
                parent_session,
                setup_entries,
            } => {
                let cancelled = self
                    .new_session_with_extensions(parent_session, setup_entries)
                    .await?;
                Ok(json!({ "cancelled": cancelled }))
            }
            ExtensionAction::Fork { entry_id, position } => {
                let result = self
                    .fork_with_extensions(&entry_id, position.as_deref())
                    .await
                    .map_err(|e| e.0)?;
                Ok(json!({"cancelled": result.cancelled}))
            }
            ExtensionAction::NavigateTree {
                target_id,
                summarize,
                custom_instructions,
                replace_instructions,
                label,
            } => {
                let options = NavigateOptions {
                    summarize: summarize.unwrap_or(false),
                    custom_instructions,
                    replace_instructions: replace_instructions.unwrap_or(false),
                    label,
                };
                let result = self
                    .navigate_tree(&target_id, options)
                    .await
                    .map_err(|e| e.0)?;
                Ok(json!({"cancelled": result.cancelled}))
            }
            ExtensionAction::SwitchSession { session_path } => {
                let cancelled = self.switch_session_with_extensions(&session_path).await?;
                Ok(json!({ "cancelled": cancelled }))
            }
            ExtensionAction::Reload {} => {
                self.reload_resources();
                self.reload_extensions().await.map(|()| Value::Null)
            }
        }
    }

    /// Writes the entries a `newSession` setup appended (their kinds; ids are the file's).
    pub(super) fn append_setup_entries(&self, entries: Vec<Value>) {
        {
            let mut session = lock(&self.inner.session);
            for entry in entries {
                let Value::Object(object) = entry else {
                    continue;
                };
                if let Ok((Some(crate::session::entry::FileLine::Entry(entry)), _)) =
                    crate::session::entry::parse_object(object, 0)
                    && let Err(e) = session.append(entry.kind)
                {
                    eprintln!("Warning: {e}");
                }
            }
        }
        let messages = lock(&self.inner.session).build_context().messages;
        self.inner.agent.replace_messages(messages);
    }

    /// `sendMessage`, as pi 1.6.0: a custom message for the next turn; steered into (or
    /// followed up after) a running agent; run as a turn (`triggerTurn: true`); recorded at
    /// the end of the running turn (`triggerTurn: false` while streaming, so it never
    /// lands between a tool call and its result); or else added to the transcript at once.
    pub async fn send_custom_message(
        &self,
        message: &ExtensionMessage,
        options: &SendMessageOptions,
        request: &RunRequest,
    ) {
        let custom = custom_message(message);
        // Also from an agent_end handler: pi 1.6.0's run is active until its handlers are
        // done, and a message they steer continues it (see `settle`).
        // A run being started takes it too (pi 1.2.0): it is steered into that run.
        let streaming = self.is_streaming() || self.inner.ext.starting.load(Ordering::SeqCst) > 0;
        if options.deliver_as.as_deref() == Some("nextTurn") {
            lock(&self.inner.ext.next_turn).push(custom);
        } else if streaming && options.trigger_turn != Some(false) {
            if options.deliver_as.as_deref() == Some("followUp") {
                self.inner.agent.follow_up(custom);
            } else {
                self.inner.agent.steer(custom);
            }
        } else if options.trigger_turn == Some(true) {
            // The run starts once the session is idle, on its own task: the extension host
            // may be handling this request in line with its other frames, which must go on.
            let session = self.clone();
            let request = request.clone();
            tokio::spawn(async move {
                session.inner.ext.commands_running.idle().await;
                session.inner.ext.settling.passed().await;
                session.inner.agent.wait_for_idle().await;
                let run = session.run_guard();
                request.release();
                // pi 1.6.0: `before_agent_start` sees the message that starts the run.
                let started = pi_ai::oauth::now_ms();
                let trigger = RunTrigger::Custom {
                    message: serde_json::to_value(&custom).unwrap_or(Value::Null),
                };
                let mut messages = vec![custom];
                messages.extend(session.extension_prompt_messages(&trigger).await);
                if let Some(system) = session.system_message_for_run(started) {
                    messages.insert(0, system);
                }
                if session.inner.agent.prompt(messages).await.is_ok() {
                    session.settle(&run).await;
                } else {
                    session.inner.flush_pending_custom(false);
                }
            });
        } else if streaming {
            lock(&self.inner.ext.pending_custom).push((message.clone(), custom));
        } else {
            self.inner.record_custom(message, custom, false);
        }
    }

    /// What the extension host mirrors (see [`StateSnapshot`]).
    pub fn extension_snapshot(
        &self,
        entries_from: Option<(String, usize)>,
        known_generation: Option<u64>,
    ) -> StateSnapshot {
        let generation = self.inner.ext.generation.load(Ordering::SeqCst);
        let session = lock(&self.inner.session);
        let session_id = session.session_id().to_owned();
        let entries = session.entries();
        let (reset, from) = match &entries_from {
            Some((id, count)) if *id == session_id && *count <= entries.len() => (false, *count),
            _ => (true, 0),
        };
        let mirror = SessionMirror {
            reset,
            header: to_value(session.header()),
            entries: entries[from..]
                .iter()
                .filter_map(|e| e.to_json().ok().map(Value::Object))
                .collect(),
            total_entries: entries.len(),
            session_file: session.session_file().map(|p| p.display().to_string()),
            session_dir: session
                .session_dir()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            session_id,
            leaf_id: session.leaf_id().map(str::to_owned),
            name: session.name().map(str::to_owned),
        };
        drop(session);
        let statics =
            (known_generation != Some(generation)).then(|| self.mirror_statics(generation));
        StateSnapshot {
            model: to_value(&self.model()),
            thinking_level: self.thinking_level().as_str().to_owned(),
            is_idle: !self.is_streaming() && self.inner.ext.starting.load(Ordering::SeqCst) == 0,
            has_pending_messages: self.pending_message_count() > 0,
            active_tools: self.active_tool_names(),
            statics,
            system_prompt: self.inner.agent.system_prompt(),
            system_prompt_options: self.system_prompt_options(),
            scoped_models: self
                .scoped_models()
                .iter()
                .map(|scoped| {
                    let mut entry = json!({"model": to_value(&scoped.model)});
                    if let Some(level) = scoped.thinking_level {
                        entry["thinkingLevel"] = level.as_str().into();
                    }
                    entry
                })
                .collect(),
            context_usage: self.context_usage().map_or(Value::Null, |u| to_value(&u)),
            session: mirror,
            cwd: self.cwd().display().to_string(),
            generation,
            ui: lock(&self.inner.ext.ui_state).clone(),
        }
    }

    /// The parts of the mirror that change only with the generation (tools, commands,
    /// models), built once per generation.
    fn mirror_statics(&self, generation: u64) -> Arc<MirrorStatics> {
        if let Some((built, statics)) = lock(&self.inner.ext.static_cache).as_ref()
            && *built == generation
        {
            return statics.clone();
        }
        let defs = self.extension_runtime().tool_defs();
        let all_tools: Vec<Value> = self
            .all_tools()
            .iter()
            .map(|t| {
                let def = defs.iter().find(|d| d.name == t.name());
                let source = def
                    .map(|d| json!({"path": d.extension_path, "source": "extension", "scope": "temporary", "origin": "top-level"}))
                    .unwrap_or_else(|| {
                        // pi 1.6.0 names a core tool `builtin:<tool>` and a tool of a
                        // built-in extension after the extension (`builtin:mcp`).
                        let owner = if self.is_mcp_tool(t.name()) { "mcp" } else { t.name() };
                        json!({"path": format!("builtin:{owner}"), "source": "builtin", "scope": "temporary", "origin": "top-level"})
                    });
                let mut info = json!({"name": t.name(), "description": t.description(), "parameters": t.parameters(), "sourceInfo": source});
                // pi 1.6.0's ToolInfo carries an extension tool's `promptGuidelines`.
                if let Some(def) = def.filter(|d| !d.prompt_guidelines.is_empty()) {
                    info["promptGuidelines"] = json!(def.prompt_guidelines);
                }
                info
            })
            .collect();
        let registry = self.registry();
        let statics = Arc::new(MirrorStatics {
            all_tools: json_text(&all_tools),
            commands: json_text(&self.slash_commands()),
            models: json_text(&MirrorModels {
                all: registry.all(),
                available: registry.available(),
            }),
        });
        *lock(&self.inner.ext.static_cache) = Some((generation, statics.clone()));
        statics
    }

    /// The commands `get_commands` lists: extension commands (then the built-in `llama` and
    /// `mcp`),
    /// prompt templates, skills.
    pub fn slash_commands(&self) -> Vec<Value> {
        let runtime = self.extension_runtime();
        let sources: Vec<(String, Value)> = runtime
            .extensions()
            .into_iter()
            .map(|e| (e.path, e.source_info))
            .collect();
        let mut commands = Vec::new();
        for command in runtime.commands() {
            let source_info = sources
                .iter()
                .find(|(path, _)| *path == command.def.extension_path)
                .map(|(_, info)| info.clone())
                .unwrap_or(Value::Null);
            let mut entry = serde_json::Map::new();
            entry.insert("name".into(), command.invocation_name.into());
            if let Some(description) = command.def.description {
                entry.insert("description".into(), description.into());
            }
            entry.insert("source".into(), "extension".into());
            entry.insert("sourceInfo".into(), source_info);
            commands.push(Value::Object(entry));
        }
        // pi 1.6.0's built-in extensions come after the loaded ones, in its order: llama.cpp,
        // then MCP (`--no-mcp` leaves MCP out, as there).
        if self.registry().llama_enabled() {
            commands.push(crate::llama::command_entry());
        }
        if self.mcp().is_some() {
            commands.push(crate::mcp::command_entry());
        }
        for template in self.prompt_templates() {
            commands.push(json!({
                "name": template.name,
                "description": template.description,
                "source": "prompt",
                "sourceInfo": template.source_info,
            }));
        }
        for skill in self.skills() {
            commands.push(json!({
                "name": format!("skill:{}", skill.name),
                "description": skill.description,
                "source": "skill",
                "sourceInfo": skill.source_info,
            }));
        }
        commands
    }

    /// The messages a prompt sends with it: queued `nextTurn` messages, then what
    /// `before_agent_start` added; also applies or resets the system prompt.
    pub(super) async fn extension_prompt_messages(
        &self,
        trigger: &RunTrigger,
    ) -> Vec<AgentMessage> {
        let mut messages: Vec<AgentMessage> = std::mem::take(&mut *lock(&self.inner.ext.next_turn));
        self.inner.ext.abort_at_start.store(false, Ordering::SeqCst);
        // The session counts as busy while its run starts (pi 1.2.0): `ctx.isIdle()` is false.
        let _starting = Starting::new(&self.inner.ext.starting);
        let runtime = self.extension_runtime().clone();
        if runtime.is_empty() {
            return messages;
        }
        let base = self.base_system_prompt();
        let outcome = if runtime.has_handlers("before_agent_start") {
            runtime
                .emit_before_agent_start(
                    trigger,
                    &base,
                    self.system_prompt_options(),
                    CancellationToken::new(),
                )
                .await
        } else {
            None
        };
        // pi 1.6.0: a returned `systemPrompt` wins; else the prompt is rendered from the
        // options the handlers changed in place (a section added, say).
        let (added, prompt) = match outcome {
            Some(outcome) => {
                let prompt = outcome.system_prompt.or_else(|| {
                    outcome
                        .system_prompt_options
                        .map(|options| self.prompt_from_options(&options))
                });
                (outcome.messages, prompt)
            }
            None => (Vec::new(), None),
        };
        messages.extend(added.iter().map(custom_message));
        self.inner
            .agent
            .set_system_prompt(prompt.filter(|p| !p.is_empty()).unwrap_or(base));
        messages
    }
}

impl Inner {
    /// Adds an extension's custom message to the transcript and the session, and announces
    /// it (`message_start` / `message_end`). `in_run`: recorded while `turn_end` is handled,
    /// so the running loop's next request sees it too.
    pub(super) fn record_custom(
        &self,
        message: &ExtensionMessage,
        custom: AgentMessage,
        in_run: bool,
    ) {
        if in_run {
            self.agent.append_during_run(custom.clone());
        } else {
            self.agent.append_message(custom.clone());
        }
        if let Err(e) = lock(&self.session).append_custom_message(
            &message.custom_type,
            message.content.clone(),
            message.display,
            message.details.clone(),
        ) {
            eprintln!("Warning: {e}");
        }
        self.emit(&crate::session_event::AgentSessionEvent::Agent(
            pi_agent_core::AgentEvent::MessageStart {
                message: custom.clone(),
            },
        ));
        self.emit(&crate::session_event::AgentSessionEvent::Agent(
            pi_agent_core::AgentEvent::MessageEnd { message: custom },
        ));
    }

    /// Records the `triggerTurn: false` messages sent while the agent ran: at `turn_end`
    /// (after the turn's tool results), at the end of the run, and before the next run.
    pub(super) fn flush_pending_custom(&self, in_run: bool) {
        let pending = std::mem::take(&mut *lock(&self.ext.pending_custom));
        for (message, custom) in pending {
            self.record_custom(&message, custom, in_run);
        }
    }
}

/// Counts a run as starting while it lives.
struct Starting<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Starting<'a> {
    fn new(count: &'a std::sync::atomic::AtomicUsize) -> Self {
        count.fetch_add(1, Ordering::SeqCst);
        Self(count)
    }
}

impl Drop for Starting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
