//! The `tool_call` hooks of calls prepared together: one exchange with the backend for
//! all of them, and a backend's answer read as an outcome.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::event::ExtensionEvent;
use super::outcome::ToolCallOutcome;
use super::runtime::ExtensionRuntime;

impl ExtensionRuntime {
    /// The `tool_call` events of calls prepared together, answered in one exchange when
    /// only one backend handles `tool_call` and nobody listens to the tool execution events
    /// that would come between them (so the extensions see the same sequence); `None`
    /// otherwise.
    pub async fn emit_tool_calls_together(
        &self,
        calls: Vec<(String, String, Value)>,
        cancel: CancellationToken,
    ) -> Option<Vec<ToolCallOutcome>> {
        if self.has_handlers("tool_execution_start") || self.has_handlers("tool_execution_end") {
            return None;
        }
        let handling = self.handling("tool_call");
        let [backend] = handling.as_slice() else {
            return None;
        };
        let events: Vec<ExtensionEvent> = calls
            .iter()
            .map(|(name, id, input)| ExtensionEvent::ToolCall {
                tool_call_id: id.clone(),
                tool_name: name.clone(),
                input: input.clone(),
                parent_tool_call_id: None,
            })
            .collect();
        let answers = backend.dispatch_many(&events, cancel)?.await;
        Some(
            calls
                .into_iter()
                .enumerate()
                .map(|(at, (_, _, input))| match &answers {
                    Ok(answers) => tool_call_outcome(answers.get(at).cloned().flatten(), input),
                    Err(error) => ToolCallOutcome {
                        block: true,
                        reason: Some(format!("Extension failed, blocking execution: {error}")),
                        input,
                        terminate: false,
                    },
                })
                .collect(),
        )
    }
}

/// One backend's `tool_call` answer as an outcome: its changed input, and whether it blocks.
pub(super) fn tool_call_outcome(answer: Option<Value>, input: Value) -> ToolCallOutcome {
    let Some(answer) = answer else {
        return ToolCallOutcome {
            block: false,
            reason: None,
            input,
            terminate: false,
        };
    };
    let input = answer.get("input").cloned().unwrap_or(input);
    let block = answer.get("block").and_then(Value::as_bool) == Some(true);
    ToolCallOutcome {
        block,
        reason: answer
            .get("reason")
            .and_then(Value::as_str)
            .map(str::to_owned),
        input,
        // Only a blocked call can terminate (pi 1.6.0).
        terminate: block && answer.get("terminate").and_then(Value::as_bool) == Some(true),
    }
}
