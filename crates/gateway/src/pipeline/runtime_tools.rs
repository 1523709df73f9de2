//! Layer 3: the gateway's runtime tools (OpenClaw's extension tools): `session_branch`,
//! `session_navigate`, `gateway_reload` and `agent_interrupt`. They act through a
//! [`RuntimeHost`], which the gateway implements.

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Name of the tool branching the current session.
pub const SESSION_BRANCH: &str = "session_branch";
/// Name of the tool moving the session to another entry of its tree.
pub const SESSION_NAVIGATE: &str = "session_navigate";
/// Name of the tool reloading the gateway configuration.
pub const GATEWAY_RELOAD: &str = "gateway_reload";
/// Name of the tool stopping the current run.
pub const AGENT_INTERRUPT: &str = "agent_interrupt";
/// All runtime tool names, in the order [`runtime_tools`] returns them.
pub const RUNTIME_TOOL_NAMES: [&str; 4] = [
    SESSION_BRANCH,
    SESSION_NAVIGATE,
    GATEWAY_RELOAD,
    AGENT_INTERRUPT,
];

/// What the runtime tools ask the gateway to do. Each answer is JSON (shown to the model
/// and kept as the result's `details`) or an error message.
pub trait RuntimeHost: Send + Sync {
    /// Creates a new session branched from `from_entry` (default: the latest entry) of
    /// `session_id`; the answer should carry the new `sessionId`.
    fn branch(
        &self,
        session_id: &str,
        from_entry: Option<&str>,
    ) -> BoxFuture<'static, Result<Value, String>>;

    /// Queues a move of `session_id` to `target_entry_id`, optionally summarizing the branch
    /// left behind. The session's lane is busy with the calling run, so the gateway applies
    /// it after that run ends.
    fn navigate(
        &self,
        session_id: &str,
        target_entry_id: &str,
        summarize: bool,
    ) -> BoxFuture<'static, Result<Value, String>>;

    /// Reloads the gateway configuration.
    fn reload(&self) -> BoxFuture<'static, Result<Value, String>>;

    /// Requests a graceful stop of the current run of `session_id`.
    fn interrupt(
        &self,
        session_id: &str,
        reason: &str,
    ) -> BoxFuture<'static, Result<Value, String>>;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Branch,
    Navigate,
    Reload,
    Interrupt,
}

/// Turns the host's answer into the text for the model.
type Describe = Box<dyn FnOnce(&Value) -> String + Send>;

/// One runtime tool bound to a session.
struct RuntimeTool {
    kind: Kind,
    name: &'static str,
    label: &'static str,
    description: &'static str,
    parameters: Value,
    host: Arc<dyn RuntimeHost>,
    session_id: String,
}

/// The four runtime tools of `session_id`, acting through `host`.
pub fn runtime_tools(host: Arc<dyn RuntimeHost>, session_id: &str) -> Vec<Arc<dyn AgentTool>> {
    let make = |kind, name, label, description, parameters| -> Arc<dyn AgentTool> {
        Arc::new(RuntimeTool {
            kind,
            name,
            label,
            description,
            parameters,
            host: host.clone(),
            session_id: session_id.to_owned(),
        })
    };
    vec![
        make(
            Kind::Branch,
            SESSION_BRANCH,
            "Branch session",
            "Create a new session that branches off this one (by default at its latest \
             entry) and return the new session's id. This session continues unchanged.",
            json!({
                "type": "object",
                "properties": {
                    "fromEntryId": {
                        "type": "string",
                        "description": "Id of the session entry to branch from (default: the latest entry)"
                    }
                }
            }),
        ),
        make(
            Kind::Navigate,
            SESSION_NAVIGATE,
            "Navigate session",
            "Move this session to another entry of its tree, continuing from there. The move \
             happens after the current run ends, so finish your reply after calling it.",
            json!({
                "type": "object",
                "properties": {
                    "targetEntryId": {
                        "type": "string",
                        "description": "Id of the session entry to move to"
                    },
                    "summarize": {
                        "type": "boolean",
                        "description": "Summarize the branch being left into the session (default: false)"
                    }
                },
                "required": ["targetEntryId"]
            }),
        ),
        make(
            Kind::Reload,
            GATEWAY_RELOAD,
            "Reload gateway",
            "Reload the gateway configuration (tool policies, models, agents). Running \
             sessions keep their tools until they are created or resumed again.",
            json!({"type": "object", "properties": {}}),
        ),
        make(
            Kind::Interrupt,
            AGENT_INTERRUPT,
            "Interrupt agent",
            "Request a graceful stop of the current run: it ends after this batch of tool \
             calls.",
            json!({
                "type": "object",
                "properties": {
                    "reason": {
                        "type": "string",
                        "description": "Why the run should stop (default: agent-requested)"
                    }
                }
            }),
        ),
    ]
}

impl AgentTool for RuntimeTool {
    fn name(&self) -> &str {
        self.name
    }

    fn label(&self) -> &str {
        self.label
    }

    fn description(&self) -> &str {
        self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let name = self.name;
        let text_arg = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let (call, describe): (_, Describe) = match self.kind {
            Kind::Branch => {
                let from = text_arg("fromEntryId");
                let call = self.host.branch(&self.session_id, from.as_deref());
                (call, Box::new(move |v| branch_text(v, from.as_deref())))
            }
            Kind::Navigate => {
                let Some(target) = text_arg("targetEntryId") else {
                    return async {
                        Err(ToolError::new(
                            "session_navigate: targetEntryId is required",
                        ))
                    }
                    .boxed();
                };
                let summarize = args
                    .get("summarize")
                    .and_then(Value::as_bool)
                    .unwrap_or(false);
                let call = self.host.navigate(&self.session_id, &target, summarize);
                (
                    call,
                    Box::new(move |v| navigate_text(v, &target, summarize)),
                )
            }
            Kind::Reload => (
                self.host.reload(),
                Box::new(|v| with_answer("Gateway configuration reload requested.", v)),
            ),
            Kind::Interrupt => {
                let reason = text_arg("reason").unwrap_or_else(|| "agent-requested".to_owned());
                let call = self.host.interrupt(&self.session_id, &reason);
                (
                    call,
                    Box::new(move |v| {
                        with_answer(
                            &format!(
                                "Interrupt requested ({reason}); the run stops after this batch of tool calls."
                            ),
                            v,
                        )
                    }),
                )
            }
        };
        let interrupt = self.kind == Kind::Interrupt;
        async move {
            // The interrupt itself may cancel this run; its answer is still awaited.
            let answer = if interrupt {
                call.await
            } else {
                tokio::select! {
                    biased;
                    answer = call => answer,
                    () = cancel.cancelled() => return Err(ToolError::new(format!("{name} aborted"))),
                }
            };
            let value = answer.map_err(|e| ToolError::new(format!("{name} failed: {e}")))?;
            let mut result = AgentToolResult::text(describe(&value));
            result.details = Some(value);
            result.terminate = interrupt.then_some(true);
            Ok(result)
        }
        .boxed()
    }
}

fn branch_text(answer: &Value, from: Option<&str>) -> String {
    let from = from.map_or("the latest entry".to_owned(), |e| format!("entry {e}"));
    match answer.get("sessionId").and_then(Value::as_str) {
        Some(id) => {
            format!("Created branch session {id} from {from}. This session continues unchanged.")
        }
        None => with_answer(&format!("Branched this session from {from}."), answer),
    }
}

fn navigate_text(answer: &Value, target: &str, summarize: bool) -> String {
    let summary = if summarize {
        ", with a summary of the branch left behind"
    } else {
        ""
    };
    with_answer(
        &format!(
            "Navigation to entry {target}{summary} is queued: this session is busy with the \
             current run, so the gateway applies it after the run ends. Finish your reply now."
        ),
        answer,
    )
}

/// `text`, followed by the host's answer unless it is empty.
fn with_answer(text: &str, answer: &Value) -> String {
    let empty = match answer {
        Value::Null => true,
        Value::Object(map) => map.is_empty(),
        _ => false,
    };
    if empty {
        text.to_owned()
    } else {
        format!("{text} Gateway answer: {answer}")
    }
}

#[cfg(test)]
#[path = "runtime_tools_tests.rs"]
mod tests;
