//! Running the agent loop against a [`Script`](super::Script) and reading its events: the
//! configuration, context and prompt of a run, and which tool calls ended in which order.

use std::sync::Arc;

use futures_util::StreamExt;
use pi_agent_core::{AgentContext, AgentEvent, AgentLoopConfig, AgentMessage, agent_loop};
use pi_ai::{Message, UserMessage};
use tokio_util::sync::CancellationToken;

use super::{Script, model};

/// A loop configuration streaming from `script`.
pub fn config(script: &Script) -> AgentLoopConfig {
    let mut config = AgentLoopConfig::new(model());
    config.stream_fn = script.stream_fn();
    config
}

/// A context with system prompt "sys", no messages and `tools`.
pub fn context(tools: Vec<Arc<dyn pi_agent_core::AgentTool>>) -> AgentContext {
    AgentContext {
        system_prompt: "sys".into(),
        messages: Vec::new(),
        tools,
    }
}

/// One user message.
pub fn prompt(t: &str) -> Vec<AgentMessage> {
    vec![UserMessage::text(t).into()]
}

/// Runs the loop to its end; every event and the new messages.
pub async fn run(
    prompts: Vec<AgentMessage>,
    ctx: AgentContext,
    cfg: AgentLoopConfig,
) -> (Vec<AgentEvent>, Vec<AgentMessage>) {
    let mut stream = agent_loop(prompts, ctx, cfg, CancellationToken::new());
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e);
    }
    let messages = stream.result().await;
    (events, messages)
}

/// The tool-call ids in the order their executions ended.
pub fn tool_end_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

/// The tool-call ids in the order their result messages ended.
pub fn result_message_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd {
                message: AgentMessage::Llm(Message::ToolResult(r)),
            } => Some(r.tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

/// The first text of the result of call `id`, and whether it is an error.
pub fn result_text(events: &[AgentEvent], id: &str) -> (String, bool) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } if tool_call_id == id => Some((
                result.content[0].as_text().unwrap_or("").to_owned(),
                *is_error,
            )),
            _ => None,
        })
        .expect("tool_execution_end")
}
