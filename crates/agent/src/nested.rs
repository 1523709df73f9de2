//! Tool calls made by a running tool (codemode's scripts): each goes through the same
//! validation, `before_tool_call`/`after_tool_call` hooks and events as the model's own
//! calls, run by the loop that runs the calling tool.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use pi_ai::ToolCall;

use crate::tool::{AgentTool, AgentToolResult};

tokio::task_local! {
    static CALLER: NestedCaller;
}

/// One call asked for by a running tool.
pub(crate) struct NestedRequest {
    pub tool: Arc<dyn AgentTool>,
    pub call: ToolCall,
    pub cancel: CancellationToken,
    pub reply: oneshot::Sender<NestedOutcome>,
}

/// What a nested call gave, after the hooks.
#[derive(Debug, Clone)]
pub struct NestedOutcome {
    /// The id the loop gave the call: the caller's id, `/`, and its number (`call_1/2`).
    pub tool_call_id: String,
    pub result: AgentToolResult,
    pub is_error: bool,
    /// How long the tool ran; `None` when it never started.
    pub duration_ms: Option<u64>,
}

/// The way back into the loop for a tool that calls other tools. Only a tool run by the
/// agent loop has one ([`NestedCaller::current`] inside its `execute`).
#[derive(Clone)]
pub struct NestedCaller(pub(crate) mpsc::UnboundedSender<NestedRequest>);

impl NestedCaller {
    /// The caller of the tool whose `execute` is being polled, if the loop runs it.
    pub fn current() -> Option<Self> {
        CALLER.try_with(Clone::clone).ok()
    }

    /// Runs `tool` with `arguments`; `None` when the calling tool's run has ended (the loop
    /// no longer takes calls). `cancel` stops this call alone.
    pub async fn call(
        &self,
        tool: Arc<dyn AgentTool>,
        arguments: serde_json::Map<String, Value>,
        cancel: CancellationToken,
    ) -> Option<NestedOutcome> {
        let (reply, answer) = oneshot::channel();
        let call = ToolCall {
            name: tool.name().to_owned(),
            arguments,
            ..Default::default()
        };
        self.0
            .send(NestedRequest {
                tool,
                call,
                cancel,
                reply,
            })
            .ok()?;
        answer.await.ok()
    }

    /// Polls `future` with this caller current.
    pub(crate) async fn scope<F: std::future::Future>(self, future: F) -> F::Output {
        CALLER.scope(self, future).await
    }
}

/// Most calls a result records.
const MAX_CALLS: usize = 256;
/// Largest arguments kept per call, and for all calls together (longer ones keep only
/// their size).
const MAX_ARGUMENT_BYTES: usize = 8 * 1024;
const MAX_ARGUMENT_BYTES_TOTAL: usize = 32 * 1024;
const MAX_ERROR_CHARS: usize = 500;

/// How one nested call went, for the calling tool's result message.
#[derive(Debug, Clone)]
pub(crate) struct NestedRecord {
    /// Its number under the caller (ids are `caller/number`).
    pub number: usize,
    pub id: String,
    pub name: String,
    pub arguments: serde_json::Map<String, Value>,
    /// `ok`, `error`, or `unfinished` (still running when the calling tool returned).
    pub status: &'static str,
    pub duration_ms: Option<u64>,
    pub error: Option<String>,
}

/// The `nestedCalls` of a tool result message (pi 1.6), `None` when the tool made none.
pub(crate) fn nested_calls(mut records: Vec<NestedRecord>) -> Option<Value> {
    if records.is_empty() {
        return None;
    }
    records.sort_by_key(|r| r.number);
    let complete = records.len() <= MAX_CALLS;
    let mut budget = MAX_ARGUMENT_BYTES_TOTAL;
    let calls: Vec<Value> = records
        .into_iter()
        .take(MAX_CALLS)
        .map(|record| {
            let mut call = serde_json::Map::new();
            call.insert("id".into(), Value::String(record.id));
            call.insert("name".into(), Value::String(record.name));
            call.insert("status".into(), Value::String(record.status.into()));
            let arguments = Value::Object(record.arguments);
            let bytes = arguments.to_string().len();
            if bytes <= MAX_ARGUMENT_BYTES && bytes <= budget {
                budget -= bytes;
                call.insert("arguments".into(), arguments);
            } else {
                call.insert("argumentsBytes".into(), Value::from(bytes));
            }
            if let Some(ms) = record.duration_ms {
                call.insert("durationMs".into(), Value::from(ms));
            }
            if let Some(error) = record.error {
                let cut: String = error.chars().take(MAX_ERROR_CHARS).collect();
                call.insert("error".into(), Value::String(cut));
            }
            Value::Object(call)
        })
        .collect();
    Some(serde_json::json!({ "calls": calls, "complete": complete }))
}
