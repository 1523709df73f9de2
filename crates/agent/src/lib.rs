//! pi-agent-core: the agent loop over [`pi_ai`] — two nested loops, tool preparation,
//! execution and finalization, steering and follow-up queues, abort — and the stateful
//! [`Agent`] around it. It knows nothing of providers (it calls a swappable stream
//! function) and nothing of files or sessions.

pub mod agent;
pub mod agent_loop;
pub mod config;
pub mod event;
pub mod hooks;
pub mod message;
pub mod nested;
pub mod proxy;
pub mod queue;
pub mod sink;
mod stream_response;
pub mod tool;
mod tool_exec;

pub use agent::{Agent, AgentError, AgentListener, AgentOptions, AgentState, PromptInput};
pub use agent_loop::{agent_loop, agent_loop_continue, run_agent_loop, run_agent_loop_continue};
pub use config::{AgentContext, AgentLoopConfig, StreamFn, ToolsSource, default_stream_fn};
pub use event::AgentEvent;
pub use hooks::{
    AfterToolCallContext, AfterToolCallResult, AgentHooks, BeforeToolCallContext,
    BeforeToolCallResult, MessageQueues, NoHooks, NoQueues, RoutedRequest, TurnContext,
};
pub use message::{AgentMessage, CustomMessage, default_convert_to_llm};
pub use nested::{NestedCaller, NestedOutcome};
pub use pi_ai;
pub use queue::{PendingMessageQueue, QueueMode};
pub use sink::{AgentEventStream, EventSink, LoopError};
pub use tool::{
    AgentTool, AgentToolResult, ToolError, ToolExecutionMode, ToolNamespace, ToolUpdateFn,
};
pub use tool_exec::SKIPPED_FOR_STEERING;
