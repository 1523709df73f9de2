//! Channel tools declared by a WebSocket client (pipeline layer 4): the model calls them
//! like any tool, the gateway sends a `tool_request` frame to the client that declared them
//! and waits for its `tool.result`.
//!
//! Request frame: `{"type":"tool_request","requestId","sessionId","toolCallId","name",
//! "arguments"}`; the client answers with the method `tool.result`
//! (`requestId`, `content` text, `isError?`).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock, Weak};

use axum::extract::ws::Utf8Bytes;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};

use super::outbox::Outbox;
use crate::pipeline::ChannelTool;

/// A tool as a client declares it in `session.create`'s `channelTools`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChannelToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// JSON Schema of the arguments (default: an object without properties).
    #[serde(default = "empty_object")]
    pub parameters: Value,
    /// The scope a principal needs to get the tool.
    #[serde(default)]
    pub scope: Option<String>,
}

fn empty_object() -> Value {
    json!({ "type": "object", "properties": {} })
}

/// The client's answer to a `tool_request`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolReply {
    pub request_id: String,
    #[serde(default)]
    pub content: String,
    #[serde(default)]
    pub is_error: bool,
}

/// One connection's side of its channel tools: where requests go, the calls waiting for an
/// answer, and whether the connection is still there.
pub struct ChannelBinding {
    outbox: Arc<Outbox>,
    closed: CancellationToken,
    pending: Mutex<HashMap<String, oneshot::Sender<ToolReply>>>,
}

impl ChannelBinding {
    pub fn new(outbox: Arc<Outbox>) -> Arc<Self> {
        Arc::new(Self {
            outbox,
            closed: CancellationToken::new(),
            pending: Mutex::new(HashMap::new()),
        })
    }

    /// Marks the connection gone: waiting calls fail, new ones fail at once.
    pub fn close(&self) {
        self.closed.cancel();
    }

    /// Delivers a client's answer; false when no call waits for it.
    pub fn resolve(&self, reply: ToolReply) -> bool {
        let waiting = self
            .pending
            .lock()
            .ok()
            .and_then(|mut pending| pending.remove(&reply.request_id));
        match waiting {
            Some(sender) => sender.send(reply).is_ok(),
            None => false,
        }
    }

    /// The tools of `specs`, bound to this connection; `session` is filled in once the
    /// session exists.
    pub fn tools(
        self: &Arc<Self>,
        specs: &[ChannelToolSpec],
        session: &Arc<OnceLock<String>>,
    ) -> Vec<ChannelTool> {
        specs
            .iter()
            .map(|spec| {
                let tool: Arc<dyn AgentTool> = Arc::new(RemoteTool {
                    binding: Arc::downgrade(self),
                    spec: spec.clone(),
                    session: Arc::clone(session),
                });
                match &spec.scope {
                    Some(scope) => ChannelTool::new(tool).with_scope(scope),
                    None => ChannelTool::new(tool),
                }
            })
            .collect()
    }

    fn forget(&self, request_id: &str) {
        if let Ok(mut pending) = self.pending.lock() {
            pending.remove(request_id);
        }
    }
}

/// A declared tool; executing it asks the client.
struct RemoteTool {
    binding: Weak<ChannelBinding>,
    spec: ChannelToolSpec,
    session: Arc<OnceLock<String>>,
}

impl AgentTool for RemoteTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    fn parameters(&self) -> &Value {
        &self.spec.parameters
    }

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let binding = self.binding.upgrade();
        let request_id = uuid::Uuid::new_v4().to_string();
        let frame = json!({
            "type": "tool_request",
            "requestId": request_id,
            "sessionId": self.session.get(),
            "toolCallId": tool_call_id,
            "name": self.spec.name,
            "arguments": args,
        });
        let name = self.spec.name.clone();
        async move {
            let disconnected =
                || ToolError::new(format!("{name}: the client that provides it disconnected"));
            let Some(binding) = binding.filter(|b| !b.closed.is_cancelled()) else {
                return Err(disconnected());
            };
            let (sender, answer) = oneshot::channel();
            if let Ok(mut pending) = binding.pending.lock() {
                pending.insert(request_id.clone(), sender);
            }
            if !binding.outbox.offer(Utf8Bytes::from(frame.to_string())) {
                binding.forget(&request_id);
                return Err(disconnected());
            }
            let reply = tokio::select! {
                reply = answer => reply.map_err(|_| disconnected()),
                _ = binding.closed.cancelled() => Err(disconnected()),
                _ = cancel.cancelled() => Err(ToolError::new(format!("{name}: aborted"))),
            };
            binding.forget(&request_id);
            let reply = reply?;
            if reply.is_error {
                return Err(ToolError::new(reply.content));
            }
            Ok(AgentToolResult::text(reply.content))
        }
        .boxed()
    }
}
