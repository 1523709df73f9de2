//! The stateful [`Agent`]: owns the transcript, runs the loop, reduces its events into
//! state, awaits listeners in order, and exposes the steering and follow-up queues.

use std::collections::BTreeSet;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use pi_ai::{
    AssistantMessage, ImageContent, InputBlock, InputKind, Model, ModelCost, SimpleStreamOptions,
    ThinkingBudgets, ThinkingLevel, UserMessage,
};

use crate::agent_loop::{failure_message, run_agent_loop, run_agent_loop_continue};
use crate::config::{AgentContext, AgentLoopConfig, StreamFn, default_stream_fn};
use crate::event::AgentEvent;
use crate::hooks::{AgentHooks, MessageQueues, NoHooks};
use crate::message::AgentMessage;
use crate::queue::{PendingMessageQueue, QueueMode};
use crate::sink::EventSink;
use crate::tool::{AgentTool, ToolExecutionMode};

/// Why an agent call was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgentError {
    #[error(
        "Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion."
    )]
    AlreadyPrompting,
    #[error("Agent is already processing. Wait for completion before continuing.")]
    AlreadyContinuing,
    /// `reset` during a run: the transcript stays (pi-agent-core 1.6.0 rejects it too).
    #[error("Agent is already processing. Wait for completion before resetting.")]
    AlreadyResetting,
    #[error("No messages to continue from")]
    NoMessages,
    #[error("Cannot continue from message role: assistant")]
    ContinueFromAssistant,
}

/// Receives every event of the agent's runs; listeners are awaited one after another, and a
/// run is idle only after the `agent_end` listeners finish.
pub trait AgentListener: Send + Sync {
    fn on_event<'a>(
        &'a self,
        event: &'a AgentEvent,
        cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ()>;
}

struct FnListener<F>(F);

impl<F: Fn(&AgentEvent) + Send + Sync> AgentListener for FnListener<F> {
    fn on_event<'a>(
        &'a self,
        event: &'a AgentEvent,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, ()> {
        (self.0)(event);
        Box::pin(async {})
    }
}

/// What a prompt can be.
#[derive(Debug, Clone)]
pub enum PromptInput {
    /// Text and optional images, as one user message.
    Text {
        text: String,
        images: Vec<ImageContent>,
    },
    /// Ready messages.
    Messages(Vec<AgentMessage>),
}

impl From<&str> for PromptInput {
    fn from(text: &str) -> Self {
        Self::Text {
            text: text.to_owned(),
            images: Vec::new(),
        }
    }
}

impl From<String> for PromptInput {
    fn from(text: String) -> Self {
        Self::Text {
            text,
            images: Vec::new(),
        }
    }
}

impl From<AgentMessage> for PromptInput {
    fn from(message: AgentMessage) -> Self {
        Self::Messages(vec![message])
    }
}

impl From<Vec<AgentMessage>> for PromptInput {
    fn from(messages: Vec<AgentMessage>) -> Self {
        Self::Messages(messages)
    }
}

/// The agent's state as observers see it.
#[derive(Clone)]
pub struct AgentState {
    pub system_prompt: String,
    pub model: Model,
    pub thinking_level: ThinkingLevel,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub messages: Vec<AgentMessage>,
    pub is_streaming: bool,
    /// The message being streamed (set at `message_start`, updated, cleared at `message_end`).
    pub streaming_message: Option<AgentMessage>,
    /// The streamed message as the provider shares it; turned into `streaming_message` only
    /// when someone reads the state, so a delta costs no copy of the whole message.
    streaming_partial: Option<Arc<AssistantMessage>>,
    /// Ids of tool calls that started and have not ended.
    pub pending_tool_calls: BTreeSet<String>,
    /// The last run's error, if it ended in one.
    pub error_message: Option<String>,
}

/// A placeholder model until one is set.
fn unknown_model() -> Model {
    Model {
        id: "unknown".into(),
        name: "unknown".into(),
        api: "unknown".into(),
        provider: "unknown".into(),
        base_url: String::new(),
        reasoning: false,
        thinking_level_map: None,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 0,
        max_tokens: 0,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

/// How to build an [`Agent`].
#[derive(Clone)]
pub struct AgentOptions {
    pub system_prompt: String,
    pub model: Option<Model>,
    pub thinking_level: ThinkingLevel,
    pub tools: Vec<Arc<dyn AgentTool>>,
    pub messages: Vec<AgentMessage>,
    pub hooks: Arc<dyn AgentHooks>,
    pub stream_fn: StreamFn,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    pub tool_execution: ToolExecutionMode,
    /// Base stream options (session id, retry cap, payload hook, …); reasoning comes from
    /// the thinking level.
    pub stream_options: pi_ai::StreamOptions,
    pub thinking_budgets: Option<ThinkingBudgets>,
}

impl Default for AgentOptions {
    fn default() -> Self {
        Self {
            system_prompt: String::new(),
            model: None,
            thinking_level: ThinkingLevel::Off,
            tools: Vec::new(),
            messages: Vec::new(),
            hooks: Arc::new(NoHooks),
            stream_fn: default_stream_fn(),
            steering_mode: QueueMode::OneAtATime,
            follow_up_mode: QueueMode::OneAtATime,
            tool_execution: ToolExecutionMode::Parallel,
            stream_options: pi_ai::StreamOptions::default(),
            thinking_budgets: None,
        }
    }
}

struct ActiveRun {
    cancel: CancellationToken,
    idle: watch::Receiver<bool>,
}

struct Settings {
    hooks: Arc<dyn AgentHooks>,
    stream_fn: StreamFn,
    tool_execution: ToolExecutionMode,
    stream_options: pi_ai::StreamOptions,
    thinking_budgets: Option<ThinkingBudgets>,
}

/// The queues as the loop sees them, with the one-time skip of the initial steering poll
/// used when `continue` starts from queued steering messages.
struct Queues {
    steering: Arc<PendingMessageQueue>,
    follow_up: Arc<PendingMessageQueue>,
    recorded: Arc<Mutex<Vec<AgentMessage>>>,
    skip_initial_steering: AtomicBool,
}

impl MessageQueues for Queues {
    fn steering(&self) -> Vec<AgentMessage> {
        if self.skip_initial_steering.swap(false, Ordering::SeqCst) {
            return Vec::new();
        }
        self.steering.drain()
    }

    fn follow_ups(&self) -> Vec<AgentMessage> {
        self.follow_up.drain()
    }

    fn recorded(&self) -> Vec<AgentMessage> {
        std::mem::take(&mut *lock(&self.recorded))
    }

    fn restore_steering(&self, messages: Vec<AgentMessage>) {
        let rest = self.steering.snapshot();
        self.steering.clear();
        for message in messages.into_iter().chain(rest) {
            self.steering.enqueue(message);
        }
    }
}

/// A stateful agent around the loop.
pub struct Agent {
    state: Mutex<AgentState>,
    /// The active tools, shared with the running loop (it reads them before each turn).
    live_tools: Arc<Mutex<Vec<Arc<dyn AgentTool>>>>,
    settings: Mutex<Settings>,
    listeners: Mutex<Vec<(u64, Arc<dyn AgentListener>)>>,
    next_listener: AtomicU64,
    steering: Arc<PendingMessageQueue>,
    follow_up: Arc<PendingMessageQueue>,
    /// Messages appended to the transcript during a run ([`Agent::append_during_run`]),
    /// not yet in the running loop's context.
    recorded: Arc<Mutex<Vec<AgentMessage>>>,
    active: Mutex<Option<ActiveRun>>,
    /// Serializes event processing: one event's state update and listeners finish before
    /// the next event (from a concurrently finishing tool) is processed.
    emit_lock: tokio::sync::Mutex<()>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Agent {
    /// An agent with these options.
    pub fn new(options: AgentOptions) -> Self {
        Self {
            live_tools: Arc::new(Mutex::new(options.tools.clone())),
            state: Mutex::new(AgentState {
                system_prompt: options.system_prompt,
                model: options.model.unwrap_or_else(unknown_model),
                thinking_level: options.thinking_level,
                tools: options.tools,
                messages: options.messages,
                is_streaming: false,
                streaming_message: None,
                streaming_partial: None,
                pending_tool_calls: BTreeSet::new(),
                error_message: None,
            }),
            settings: Mutex::new(Settings {
                hooks: options.hooks,
                stream_fn: options.stream_fn,
                tool_execution: options.tool_execution,
                stream_options: options.stream_options,
                thinking_budgets: options.thinking_budgets,
            }),
            listeners: Mutex::new(Vec::new()),
            next_listener: AtomicU64::new(1),
            steering: Arc::new(PendingMessageQueue::new(options.steering_mode)),
            follow_up: Arc::new(PendingMessageQueue::new(options.follow_up_mode)),
            recorded: Arc::new(Mutex::new(Vec::new())),
            active: Mutex::new(None),
            emit_lock: tokio::sync::Mutex::new(()),
        }
    }

    /// A copy of the current state.
    pub fn state(&self) -> AgentState {
        let mut state = lock(&self.state).clone();
        if let Some(partial) = state.streaming_partial.take() {
            state.streaming_message = Some(AgentMessage::from((*partial).clone()));
        }
        state
    }

    /// The transcript.
    pub fn messages(&self) -> Vec<AgentMessage> {
        lock(&self.state).messages.clone()
    }

    /// Reads the transcript in place, without copying it.
    pub fn with_messages<R>(&self, read: impl FnOnce(&[AgentMessage]) -> R) -> R {
        read(&lock(&self.state).messages)
    }

    /// Changes the transcript in place.
    pub fn update_messages<R>(&self, change: impl FnOnce(&mut Vec<AgentMessage>) -> R) -> R {
        change(&mut lock(&self.state).messages)
    }

    /// The model in use.
    pub fn model(&self) -> Model {
        lock(&self.state).model.clone()
    }

    /// The thinking level in use.
    pub fn thinking_level(&self) -> ThinkingLevel {
        lock(&self.state).thinking_level
    }

    /// The base stream options of the next requests.
    pub fn stream_options(&self) -> pi_ai::StreamOptions {
        lock(&self.settings).stream_options.clone()
    }

    /// Replaces the base stream options (for example the API key after a model change).
    pub fn set_stream_options(&self, options: pi_ai::StreamOptions) {
        lock(&self.settings).stream_options = options;
    }

    /// Whether a run is in progress.
    pub fn is_streaming(&self) -> bool {
        lock(&self.state).is_streaming
    }

    /// Adds a listener; returns its id for [`Self::unsubscribe`].
    pub fn subscribe(&self, listener: Arc<dyn AgentListener>) -> u64 {
        let id = self.next_listener.fetch_add(1, Ordering::SeqCst);
        lock(&self.listeners).push((id, listener));
        id
    }

    /// Adds a synchronous listener.
    pub fn subscribe_fn(&self, listener: impl Fn(&AgentEvent) + Send + Sync + 'static) -> u64 {
        self.subscribe(Arc::new(FnListener(listener)))
    }

    /// Removes a listener.
    pub fn unsubscribe(&self, id: u64) {
        lock(&self.listeners).retain(|(i, _)| *i != id);
    }

    /// The system prompt of the next LLM call.
    pub fn system_prompt(&self) -> String {
        lock(&self.state).system_prompt.clone()
    }

    pub fn set_system_prompt(&self, prompt: impl Into<String>) {
        lock(&self.state).system_prompt = prompt.into();
    }

    pub fn set_model(&self, model: Model) {
        lock(&self.state).model = model;
    }

    pub fn set_thinking_level(&self, level: ThinkingLevel) {
        lock(&self.state).thinking_level = level;
    }

    /// The active tools.
    pub fn tools(&self) -> Vec<Arc<dyn AgentTool>> {
        lock(&self.state).tools.clone()
    }

    pub fn set_tools(&self, tools: Vec<Arc<dyn AgentTool>>) {
        *lock(&self.live_tools) = tools.clone();
        lock(&self.state).tools = tools;
    }

    pub fn set_hooks(&self, hooks: Arc<dyn AgentHooks>) {
        lock(&self.settings).hooks = hooks;
    }

    pub fn set_stream_fn(&self, stream_fn: StreamFn) {
        lock(&self.settings).stream_fn = stream_fn;
    }

    pub fn set_tool_execution(&self, mode: ToolExecutionMode) {
        lock(&self.settings).tool_execution = mode;
    }

    /// Replaces the transcript.
    pub fn replace_messages(&self, messages: Vec<AgentMessage>) {
        lock(&self.state).messages = messages;
    }

    /// Appends to the transcript.
    pub fn append_message(&self, message: AgentMessage) {
        lock(&self.state).messages.push(message);
    }

    /// Appends a message to the transcript that starts no turn; called while a listener
    /// handles `turn_end`, the running loop also adds it to its context after the turn's
    /// tool results (the next request sees it). A run that starts later reads it from the
    /// transcript.
    pub fn append_during_run(&self, message: AgentMessage) {
        lock(&self.state).messages.push(message.clone());
        if lock(&self.active).is_some() {
            lock(&self.recorded).push(message);
        }
    }

    /// Empties the transcript.
    pub fn clear_messages(&self) {
        lock(&self.state).messages.clear();
    }

    /// Queues a message to inject after the current turn's tools finish.
    pub fn steer(&self, message: impl Into<AgentMessage>) {
        self.steering.enqueue(message.into());
    }

    /// Queues a message to run when the agent would otherwise stop.
    pub fn follow_up(&self, message: impl Into<AgentMessage>) {
        self.follow_up.enqueue(message.into());
    }

    pub fn clear_steering_queue(&self) {
        self.steering.clear();
    }

    pub fn clear_follow_up_queue(&self) {
        self.follow_up.clear();
    }

    pub fn clear_all_queues(&self) {
        self.clear_steering_queue();
        self.clear_follow_up_queue();
    }

    /// Whether either queue holds messages.
    pub fn has_queued_messages(&self) -> bool {
        !self.steering.is_empty() || !self.follow_up.is_empty()
    }

    /// The queued steering messages.
    pub fn steering_messages(&self) -> Vec<AgentMessage> {
        self.steering.snapshot()
    }

    /// The queued follow-up messages.
    pub fn follow_up_messages(&self) -> Vec<AgentMessage> {
        self.follow_up.snapshot()
    }

    pub fn steering_mode(&self) -> QueueMode {
        self.steering.mode()
    }

    pub fn set_steering_mode(&self, mode: QueueMode) {
        self.steering.set_mode(mode);
    }

    pub fn follow_up_mode(&self) -> QueueMode {
        self.follow_up.mode()
    }

    pub fn set_follow_up_mode(&self, mode: QueueMode) {
        self.follow_up.set_mode(mode);
    }

    /// Aborts the current run (the stream and running tools see the cancellation).
    pub fn abort(&self) {
        if let Some(run) = lock(&self.active).as_ref() {
            run.cancel.cancel();
        }
    }

    /// Resolves when no run is active and the last run's listeners have finished.
    pub async fn wait_for_idle(&self) {
        let idle = lock(&self.active).as_ref().map(|run| run.idle.clone());
        if let Some(mut idle) = idle {
            let _ = idle.wait_for(|done| *done).await;
        }
    }

    /// Clears the transcript, runtime state and both queues; refused while a run is
    /// active, which would otherwise go on writing into the cleared state.
    pub fn reset(&self) -> Result<(), AgentError> {
        let active = lock(&self.active);
        if active.is_some() {
            return Err(AgentError::AlreadyResetting);
        }
        {
            let mut state = lock(&self.state);
            state.messages.clear();
            state.is_streaming = false;
            state.streaming_message = None;
            state.streaming_partial = None;
            state.pending_tool_calls.clear();
            state.error_message = None;
        }
        drop(active);
        self.clear_all_queues();
        Ok(())
    }

    /// Runs a prompt to the end of the run. Refused while a run is active.
    pub async fn prompt(&self, input: impl Into<PromptInput>) -> Result<(), AgentError> {
        let messages = match input.into() {
            PromptInput::Messages(messages) => messages,
            PromptInput::Text { text, images } => {
                let mut blocks = vec![InputBlock::text(text)];
                blocks.extend(images.into_iter().map(InputBlock::Image));
                vec![AgentMessage::from(UserMessage::blocks(blocks))]
            }
        };
        let (cancel, done) = self.begin_run().ok_or(AgentError::AlreadyPrompting)?;
        self.run_prompt(messages, false, cancel).await;
        self.finish_run(done);
        Ok(())
    }

    /// Continues from the transcript. When it ends with an assistant message, queued
    /// steering (then follow-up) messages are run instead; with none, this is refused.
    pub async fn continue_run(&self) -> Result<(), AgentError> {
        if self.is_streaming() {
            return Err(AgentError::AlreadyContinuing);
        }
        let last_is_assistant = {
            let state = lock(&self.state);
            match state.messages.last() {
                None => return Err(AgentError::NoMessages),
                Some(last) => last.is_assistant(),
            }
        };
        if last_is_assistant {
            let (queued, skip_steering) = match self.steering.drain() {
                steering if !steering.is_empty() => (steering, true),
                _ => (self.follow_up.drain(), false),
            };
            if queued.is_empty() {
                return Err(AgentError::ContinueFromAssistant);
            }
            let (cancel, done) = self.begin_run().ok_or(AgentError::AlreadyContinuing)?;
            self.run_prompt(queued, skip_steering, cancel).await;
            self.finish_run(done);
            return Ok(());
        }
        let (cancel, done) = self.begin_run().ok_or(AgentError::AlreadyContinuing)?;
        let (context, config) = self.snapshot(false);
        let outcome = AssertUnwindSafe(run_agent_loop_continue(context, &config, self, &cancel))
            .catch_unwind()
            .await;
        if outcome.is_err() {
            self.handle_failure(&config, &cancel, "The agent loop failed".into())
                .await;
        }
        self.finish_run(done);
        Ok(())
    }

    fn begin_run(&self) -> Option<(CancellationToken, watch::Sender<bool>)> {
        let mut active = lock(&self.active);
        if active.is_some() {
            return None;
        }
        let cancel = CancellationToken::new();
        let (done, idle) = watch::channel(false);
        // Recorded after the last run's final turn: the new run reads them from the state.
        lock(&self.recorded).clear();
        *active = Some(ActiveRun {
            cancel: cancel.clone(),
            idle,
        });
        let mut state = lock(&self.state);
        state.is_streaming = true;
        state.streaming_message = None;
        state.streaming_partial = None;
        state.error_message = None;
        Some((cancel, done))
    }

    fn finish_run(&self, done: watch::Sender<bool>) {
        {
            let mut state = lock(&self.state);
            state.is_streaming = false;
            state.streaming_message = None;
            state.streaming_partial = None;
            state.pending_tool_calls.clear();
        }
        *lock(&self.active) = None;
        let _ = done.send(true);
    }

    fn snapshot(&self, skip_initial_steering: bool) -> (AgentContext, AgentLoopConfig) {
        let state = lock(&self.state);
        let settings = lock(&self.settings);
        let context = AgentContext {
            system_prompt: state.system_prompt.clone(),
            messages: state.messages.clone(),
            tools: state.tools.clone(),
        };
        let config = AgentLoopConfig {
            model: state.model.clone(),
            options: SimpleStreamOptions {
                stream: settings.stream_options.clone(),
                reasoning: Some(state.thinking_level).filter(|l| *l != ThinkingLevel::Off),
                thinking_budgets: settings.thinking_budgets,
            },
            tool_execution: settings.tool_execution,
            hooks: Arc::clone(&settings.hooks),
            queues: Arc::new(Queues {
                steering: Arc::clone(&self.steering),
                follow_up: Arc::clone(&self.follow_up),
                recorded: Arc::clone(&self.recorded),
                skip_initial_steering: AtomicBool::new(skip_initial_steering),
            }),
            stream_fn: Arc::clone(&settings.stream_fn),
            tools_source: Some({
                let live = Arc::clone(&self.live_tools);
                Arc::new(move || lock(&live).clone())
            }),
        };
        (context, config)
    }

    async fn run_prompt(
        &self,
        messages: Vec<AgentMessage>,
        skip_initial_steering: bool,
        cancel: CancellationToken,
    ) {
        let (context, config) = self.snapshot(skip_initial_steering);
        let outcome = AssertUnwindSafe(run_agent_loop(messages, context, &config, self, &cancel))
            .catch_unwind()
            .await;
        if outcome.is_err() {
            self.handle_failure(&config, &cancel, "The agent loop failed".into())
                .await;
        }
    }

    async fn handle_failure(
        &self,
        config: &AgentLoopConfig,
        cancel: &CancellationToken,
        text: String,
    ) {
        let failure: AssistantMessage = failure_message(config, cancel.is_cancelled(), text);
        {
            let mut state = lock(&self.state);
            state.error_message = failure.error_message.clone();
            state.messages.push(failure.clone().into());
        }
        self.dispatch(
            AgentEvent::AgentEnd {
                messages: vec![failure.into()],
            },
            cancel,
        )
        .await;
    }

    fn reduce(&self, event: &AgentEvent) {
        let mut state = lock(&self.state);
        match event {
            AgentEvent::MessageStart { message } => {
                state.streaming_message = Some(message.clone());
                state.streaming_partial = None;
            }
            AgentEvent::MessageUpdate { message, .. } => {
                state.streaming_partial = Some(Arc::clone(message));
            }
            AgentEvent::MessageEnd { message } => {
                state.streaming_message = None;
                state.streaming_partial = None;
                state.messages.push(message.clone());
            }
            AgentEvent::ToolExecutionStart { tool_call_id, .. } => {
                state.pending_tool_calls.insert(tool_call_id.clone());
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => {
                state.pending_tool_calls.remove(tool_call_id);
            }
            AgentEvent::TurnEnd { message, .. } => {
                if let Some(error) = message.as_assistant().and_then(|a| a.error_message.clone()) {
                    state.error_message = Some(error);
                }
            }
            AgentEvent::AgentEnd { messages } => {
                state.streaming_message = None;
                state.streaming_partial = None;
                // A failure inside the loop ends the run without a turn_end.
                if let Some(error) = messages
                    .last()
                    .and_then(AgentMessage::as_assistant)
                    .filter(|a| a.stop_reason.is_failure())
                    .and_then(|a| a.error_message.clone())
                {
                    state.error_message = Some(error);
                }
            }
            AgentEvent::AgentStart
            | AgentEvent::TurnStart
            | AgentEvent::ToolExecutionUpdate { .. } => {}
        }
    }

    async fn dispatch(&self, event: AgentEvent, cancel: &CancellationToken) {
        let _serial = self.emit_lock.lock().await;
        self.reduce(&event);
        let listeners: Vec<Arc<dyn AgentListener>> = lock(&self.listeners)
            .iter()
            .map(|(_, l)| Arc::clone(l))
            .collect();
        for listener in listeners {
            // A panicking listener must not take the run down with it, whether it panics
            // while building its future or while running it.
            let started =
                std::panic::catch_unwind(AssertUnwindSafe(|| listener.on_event(&event, cancel)));
            if let Ok(future) = started {
                let _ = AssertUnwindSafe(future).catch_unwind().await;
            }
        }
    }
}

impl EventSink for Agent {
    fn emit(&self, event: AgentEvent) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            let cancel = lock(&self.active)
                .as_ref()
                .map(|r| r.cancel.clone())
                .unwrap_or_default();
            self.dispatch(event, &cancel).await;
        })
    }
}
