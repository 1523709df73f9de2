//! Session events as pi 1.5 writes them in JSON and RPC mode: `message_update` carries only
//! the delta and the cumulative usage (no `message`, no `partial`), `toolcall_start` names
//! its call, and `agent_end` says whether an auto-retry follows. Every other event keeps its
//! serde shape (`tool_execution_end` carries the agent's `durationMs` of a tool that ran).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::{Map, Value, json};

use pi_agent_core::AgentEvent;
use pi_ai::{AssistantBlock, AssistantMessage, AssistantMessageEvent};

use crate::session_event::AgentSessionEvent;

/// Turns session events into their output lines; one per output stream.
pub struct WireEvents {
    will_retry: Arc<AtomicBool>,
}

impl WireEvents {
    /// `will_retry` is the session's flag (`AgentSession::will_retry_flag`).
    pub fn new(will_retry: Arc<AtomicBool>) -> Self {
        Self { will_retry }
    }

    /// The JSON object written for `event`.
    pub fn encode(&self, event: &AgentSessionEvent) -> Value {
        let AgentSessionEvent::Agent(agent_event) = event else {
            return serde_json::to_value(event).unwrap_or(Value::Null);
        };
        match agent_event {
            AgentEvent::MessageUpdate {
                message,
                assistant_message_event,
            } => message_update(message, assistant_message_event),
            AgentEvent::AgentEnd { .. } => {
                let mut value = serde_json::to_value(event).unwrap_or(Value::Null);
                if let Value::Object(map) = &mut value {
                    let will_retry = self.will_retry.load(Ordering::SeqCst);
                    map.insert("willRetry".into(), will_retry.into());
                }
                value
            }
            _ => serde_json::to_value(event).unwrap_or(Value::Null),
        }
    }
}

/// `{"type":"message_update","usage":…,"assistantMessageEvent":{…}}` without the partial
/// message; `toolcall_start` gains the call's `id` and `toolName`.
fn message_update(message: &AssistantMessage, event: &AssistantMessageEvent) -> Value {
    let mut inner = match serde_json::to_value(event) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    inner.remove("partial");
    if inner.get("type").and_then(Value::as_str) == Some("toolcall_start") {
        let index = inner
            .get("contentIndex")
            .and_then(Value::as_u64)
            .and_then(|i| usize::try_from(i).ok());
        if let Some(AssistantBlock::ToolCall(call)) = index.and_then(|i| message.content.get(i)) {
            inner.insert("id".into(), call.id.clone().into());
            inner.insert("toolName".into(), call.name.clone().into());
        }
    }
    json!({
        "type": "message_update",
        "usage": serde_json::to_value(message.usage).unwrap_or(Value::Null),
        "assistantMessageEvent": Value::Object(inner),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_ai::{ToolCall, Usage};

    fn streaming_tool_call() -> AssistantMessage {
        let mut message = AssistantMessage::default();
        message.content.push(AssistantBlock::ToolCall(ToolCall::new(
            "call_1",
            "read",
            Map::new(),
        )));
        message.usage = Usage {
            input: 12,
            output: 3,
            total_tokens: 15,
            ..Usage::default()
        };
        message
    }

    #[test]
    fn message_updates_carry_the_delta_and_usage_only() {
        let wire = WireEvents::new(Arc::new(AtomicBool::new(false)));
        let message = Arc::new(streaming_tool_call());
        let event = AgentSessionEvent::Agent(AgentEvent::MessageUpdate {
            message: message.clone(),
            assistant_message_event: AssistantMessageEvent::ToolcallStart {
                content_index: 0,
                partial: message.clone(),
            },
        });
        let value = wire.encode(&event);
        assert_eq!(
            value["assistantMessageEvent"],
            json!({"type": "toolcall_start", "contentIndex": 0, "id": "call_1", "toolName": "read"})
        );
        assert_eq!(value["usage"]["input"], 12);
        assert!(value.get("message").is_none());
        assert_eq!(
            value.as_object().unwrap().keys().collect::<Vec<_>>(),
            ["type", "usage", "assistantMessageEvent"]
        );
    }

    #[test]
    fn agent_end_says_whether_a_retry_follows() {
        let flag = Arc::new(AtomicBool::new(true));
        let wire = WireEvents::new(flag.clone());
        let end = AgentSessionEvent::Agent(AgentEvent::AgentEnd {
            messages: Vec::new(),
        });
        assert_eq!(
            wire.encode(&end),
            json!({"type": "agent_end", "messages": [], "willRetry": true})
        );
        flag.store(false, Ordering::SeqCst);
        assert_eq!(wire.encode(&end)["willRetry"], false);
    }
}
