//! Hooks an application plugs into the loop: context transformation, message conversion,
//! API keys, tool-call interception and early stop.

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use pi_ai::{
    AssistantMessage, Context, InputBlock, Message, Model, SimpleStreamOptions, StreamOptions,
    ToolCall, ToolResultMessage,
};

use crate::message::{AgentMessage, default_convert_to_llm};
use crate::tool::AgentToolResult;

/// What `before_tool_call` sees.
pub struct BeforeToolCallContext<'a> {
    pub assistant_message: &'a AssistantMessage,
    pub tool_call: &'a ToolCall,
    /// Validated (and coerced) arguments.
    pub args: &'a Value,
    pub messages: &'a [AgentMessage],
    /// The call of the tool that made this one (a codemode script's call), else `None`.
    pub parent_tool_call_id: Option<&'a str>,
}

/// Where a request for a virtual model goes (pi 1.6's virtual models): the physical model,
/// with `options` already set for it (its level, key and headers) by the hook.
pub struct RoutedRequest {
    pub model: Model,
    pub options: SimpleStreamOptions,
    /// The session compacted for the routed model's context window: the transcript is
    /// read again (through `transform_context`) before the request is built.
    pub compacted: bool,
}

/// `before_tool_call`'s verdict: block the call, with the text the model will see, or run
/// it with changed arguments (a hook that edits the input in place).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeToolCallResult {
    pub block: bool,
    pub reason: Option<String>,
    /// Arguments to run the tool with instead of the validated ones.
    pub args: Option<Value>,
    /// A blocked call's error result terminates: when every result of the batch does, the
    /// loop ends without asking the model again (pi 1.6.0's blocked `tool_call` `terminate`).
    pub terminate: bool,
}

impl BeforeToolCallResult {
    /// Blocks the call with this reason.
    pub fn block(reason: impl Into<String>) -> Self {
        Self {
            block: true,
            reason: Some(reason.into()),
            args: None,
            terminate: false,
        }
    }
}

/// What `after_tool_call` sees.
pub struct AfterToolCallContext<'a> {
    pub assistant_message: &'a AssistantMessage,
    pub tool_call: &'a ToolCall,
    pub args: &'a Value,
    pub result: &'a AgentToolResult,
    pub is_error: bool,
    pub messages: &'a [AgentMessage],
    /// The call of the tool that made this one, else `None`.
    pub parent_tool_call_id: Option<&'a str>,
}

/// Field-by-field overrides of an executed result (`None` keeps the original).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AfterToolCallResult {
    pub content: Option<Vec<InputBlock>>,
    pub details: Option<Value>,
    pub is_error: Option<bool>,
    pub terminate: Option<bool>,
}

/// What `should_stop_after_turn` sees.
pub struct TurnContext<'a> {
    pub message: &'a AssistantMessage,
    pub tool_results: &'a [ToolResultMessage],
    pub messages: &'a [AgentMessage],
    pub new_messages: &'a [AgentMessage],
}

/// Application hooks; every method has a neutral default. Hooks must not panic: a panic
/// is caught and treated like an error where the loop can recover.
pub trait AgentHooks: Send + Sync {
    /// Turns the transcript into LLM messages, once per LLM call (default keeps
    /// user/assistant/toolResult).
    fn convert_to_llm(&self, messages: &[AgentMessage]) -> Vec<Message> {
        default_convert_to_llm(messages)
    }

    /// Rewrites the transcript before conversion (pruning, injection).
    /// `None` (the default) keeps the transcript as it is, without copying it.
    fn transform_context<'a>(
        &'a self,
        _messages: &'a [AgentMessage],
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<AgentMessage>>> {
        Box::pin(async { None })
    }

    /// The system messages of the transformed transcript, placed among the messages
    /// [`convert_to_llm`](Self::convert_to_llm) makes of it, for models that take them
    /// mid-conversation. The default: none.
    fn system_messages(&self, _messages: &[AgentMessage]) -> Vec<pi_ai::SystemMessage> {
        Vec::new()
    }

    /// Rewrites the request built from the transformed transcript (`messages`): its system
    /// prompt, messages and tool declarations, once per LLM call. `None` (the default) keeps
    /// it.
    fn transform_request<'a>(
        &'a self,
        _messages: &'a [AgentMessage],
        _request: &'a Context,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Context>> {
        Box::pin(async { None })
    }

    /// The physical model a request for a virtual model (`model`) goes to, asked once per
    /// LLM call with the request's (transformed) transcript. `None` (the default, and for
    /// any model that is not virtual) sends it to `model`; an error ends the turn with it.
    fn route_model<'a>(
        &'a self,
        _model: &'a Model,
        _messages: &'a [AgentMessage],
        _options: &'a SimpleStreamOptions,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Result<RoutedRequest, String>>> {
        Box::pin(async { None })
    }

    /// Adjusts the stream options of one LLM request after its key is known (its headers,
    /// for example). The default changes nothing.
    fn prepare_options<'a>(
        &'a self,
        _model: &'a Model,
        _options: &'a mut StreamOptions,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// The API key for a provider, asked before every LLM request (expiring tokens). `Ok(None)`
    /// keeps the configured key; an error (a token that could not be refreshed) ends the turn
    /// with that message instead of sending the request.
    fn get_api_key<'a>(
        &'a self,
        _provider: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        Box::pin(async { Ok(None) })
    }

    /// Called after validation; may block the call.
    fn before_tool_call<'a>(
        &'a self,
        _context: BeforeToolCallContext<'a>,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>> {
        Box::pin(async { None })
    }

    /// The `before_tool_call`s of several calls at once, in their order (calls prepared
    /// together for concurrent execution). A hook that answers them in one go (one round
    /// trip to an extension host instead of one per call) returns one verdict per context;
    /// `None`, the default, has them asked one by one.
    fn before_tool_calls<'a>(
        &'a self,
        _contexts: Vec<BeforeToolCallContext<'a>>,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<Option<BeforeToolCallResult>>>> {
        Box::pin(async { None })
    }

    /// Called after execution; may override the result field by field.
    fn after_tool_call<'a>(
        &'a self,
        _context: AfterToolCallContext<'a>,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<AfterToolCallResult>> {
        Box::pin(async { None })
    }

    /// Called before each turn after a run's first, once the previous turn's tool results
    /// are in and before its request is built (pi 1.6.0's `prepareNextTurn`): a session
    /// compacts here when those results pushed the context past its threshold. The default
    /// does nothing.
    fn before_next_turn<'a>(&'a self, _cancel: &'a CancellationToken) -> BoxFuture<'a, ()> {
        Box::pin(async {})
    }

    /// Called after each `turn_end` of a reply that did not fail, when the run goes on:
    /// `true` asks for one more model request even if the turn made no tool calls (pi
    /// 1.6.0's `turn_end` continuation). The default asks for none.
    fn continue_after_turn(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { false })
    }

    /// Called after each `turn_end`; `true` ends the run before the queues are polled.
    fn should_stop_after_turn<'a>(&'a self, _context: TurnContext<'a>) -> BoxFuture<'a, bool> {
        Box::pin(async { false })
    }
}

/// Hooks that change nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl AgentHooks for NoHooks {}

/// Where the loop takes steering and follow-up messages from.
pub trait MessageQueues: Send + Sync {
    /// Steering messages to inject before the next LLM call.
    fn steering(&self) -> Vec<AgentMessage>;
    /// Follow-up messages, taken only when the agent would otherwise stop.
    fn follow_ups(&self) -> Vec<AgentMessage>;
    /// Puts steering messages back at the front (taken but not used because the run stopped).
    fn restore_steering(&self, _messages: Vec<AgentMessage>) {}
    /// Messages the application recorded into the transcript while `turn_end` was handled
    /// (they start no turn): the loop adds them to its context right after `turn_end`, so
    /// the next request sees them after the turn's tool results.
    fn recorded(&self) -> Vec<AgentMessage> {
        Vec::new()
    }
}

/// No queued messages, ever.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoQueues;

impl MessageQueues for NoQueues {
    fn steering(&self) -> Vec<AgentMessage> {
        Vec::new()
    }

    fn follow_ups(&self) -> Vec<AgentMessage> {
        Vec::new()
    }
}
