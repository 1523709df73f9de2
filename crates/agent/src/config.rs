//! What one run of the loop needs besides the context.

use std::sync::Arc;

use pi_ai::{AssistantMessageEventStream, Context, Model, SimpleStreamOptions};

use crate::hooks::{AgentHooks, MessageQueues, NoHooks, NoQueues};
use crate::message::AgentMessage;
use crate::tool::{AgentTool, ToolExecutionMode};

/// The function that streams an assistant response (pi-ai's `stream_simple` by default;
/// a proxy or a scripted stream in tests).
pub type StreamFn =
    Arc<dyn Fn(&Model, &Context, SimpleStreamOptions) -> AssistantMessageEventStream + Send + Sync>;

/// The default stream function: pi-ai's `stream_simple`.
pub fn default_stream_fn() -> StreamFn {
    Arc::new(pi_ai::stream_simple)
}

/// The transcript and tools a run starts from.
#[derive(Clone, Default)]
pub struct AgentContext {
    pub system_prompt: String,
    pub messages: Vec<AgentMessage>,
    pub tools: Vec<Arc<dyn AgentTool>>,
}

impl AgentContext {
    /// The tool with this name.
    pub fn tool(&self, name: &str) -> Option<&Arc<dyn AgentTool>> {
        self.tools.iter().find(|t| t.name() == name)
    }
}

/// Settings of one run.
#[derive(Clone)]
pub struct AgentLoopConfig {
    pub model: Model,
    /// Stream options: reasoning level, budgets, session id, retry cap, payload hook, …
    /// (`api_key` is filled from the hooks before each call).
    pub options: SimpleStreamOptions,
    pub tool_execution: ToolExecutionMode,
    pub hooks: Arc<dyn AgentHooks>,
    pub queues: Arc<dyn MessageQueues>,
    pub stream_fn: StreamFn,
    /// The active tools now: read before every turn after the first, so tools activated
    /// during a run (by `tool_search`, an extension) are declared from the next model call.
    pub tools_source: Option<ToolsSource>,
}

/// Gives the active tools.
pub type ToolsSource = Arc<dyn Fn() -> Vec<Arc<dyn AgentTool>> + Send + Sync>;

impl AgentLoopConfig {
    /// A config for `model` with defaults everywhere else.
    pub fn new(model: Model) -> Self {
        Self {
            model,
            options: SimpleStreamOptions::default(),
            tool_execution: ToolExecutionMode::Parallel,
            hooks: Arc::new(NoHooks),
            queues: Arc::new(NoQueues),
            stream_fn: default_stream_fn(),
            tools_source: None,
        }
    }
}
