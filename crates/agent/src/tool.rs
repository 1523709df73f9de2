//! Tools the agent can execute.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use pi_ai::{ConstrainedSampling, InputBlock, Tool};

/// How the calls of one assistant message run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ToolExecutionMode {
    /// Prepared in source order, executed concurrently.
    #[default]
    Parallel,
    /// Each call prepared, executed and finalized before the next starts.
    Sequential,
}

/// What a tool returns: content for the model, details for the UI, and an optional hint
/// that the agent should stop after this batch.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentToolResult {
    pub content: Vec<InputBlock>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    /// Stop the run after this batch (only when every result of the batch says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub terminate: Option<bool>,
    /// A result that reports a failure with its own content (an MCP `isError` result); the
    /// loop records it as an error result. Not part of the wire shape.
    #[serde(skip)]
    pub is_error: bool,
    /// The machine-readable result (pi 1.5: an MCP call's whole result, without `_meta`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Box<Value>>,
}

impl AgentToolResult {
    /// A result holding one text block.
    pub fn text(text: impl Into<pi_ai::SharedStr>) -> Self {
        Self {
            content: vec![InputBlock::text(text)],
            details: None,
            terminate: None,
            is_error: false,
            structured_content: None,
        }
    }

    /// An error result as the loop builds it: the text, and empty details.
    pub fn error(text: impl Into<pi_ai::SharedStr>) -> Self {
        Self {
            content: vec![InputBlock::text(text)],
            details: Some(Value::Object(Map::new())),
            terminate: None,
            is_error: false,
            structured_content: None,
        }
    }
}

/// A failed tool execution; the message becomes the text of an error result.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ToolError(pub String);

impl ToolError {
    /// An error with this message.
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// A group of tools (an MCP server's): its name, and what its server says of it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ToolNamespace {
    pub name: String,
    pub description: Option<String>,
    pub instructions: Option<String>,
}

/// Receives partial results while a tool runs; each becomes a `tool_execution_update`.
pub type ToolUpdateFn = Arc<dyn Fn(AgentToolResult) + Send + Sync>;

/// A tool: its description for the model, and how to run it.
pub trait AgentTool: Send + Sync {
    /// The name the model calls it by.
    fn name(&self) -> &str;

    /// A human-readable label for UIs.
    fn label(&self) -> &str {
        self.name()
    }

    /// What the tool does, for the model.
    fn description(&self) -> &str;

    /// JSON Schema of the arguments.
    fn parameters(&self) -> &Value;

    /// Whether the model should sample the arguments constrained by the schema (pi 1.6's
    /// built-in read, bash, edit and write prefer strict JSON-schema sampling).
    fn constrained_sampling(&self) -> Option<ConstrainedSampling> {
        None
    }

    /// `Some(Sequential)` forces the whole batch containing this tool to run sequentially.
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        None
    }

    /// Reshapes raw model arguments before validation (e.g. legacy parameter names);
    /// `None` keeps them as they are.
    fn prepare_arguments(&self, _arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        None
    }

    /// Runs the tool with validated arguments. `cancel` fires when the run is aborted.
    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>>;

    /// JSON Schema of what a codemode script's call resolves to (`structured_content`);
    /// `None`: the call resolves to the result's text.
    fn output_schema(&self) -> Option<&Value> {
        None
    }

    /// The group the tool belongs to (an MCP server), for codemode's listings.
    fn namespace(&self) -> Option<ToolNamespace> {
        None
    }

    /// Whether requests declare the tool to the model. An active tool that is not declared
    /// (pi 1.6's hidden declarations, as `codemode.mode: "only"` makes them) stays callable.
    fn declared(&self) -> bool {
        true
    }

    /// The description sent to the model.
    fn definition(&self) -> Tool {
        Tool {
            name: self.name().to_owned(),
            description: self.description().to_owned(),
            parameters: self.parameters().clone(),
            constrained_sampling: self.constrained_sampling(),
        }
    }
}
