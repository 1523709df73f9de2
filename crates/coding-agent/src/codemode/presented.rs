//! A tool as codemode presents it to the model: its description replaced (the note on
//! calling it from scripts, or codemode's own with the listed tools) or its declaration
//! left out of requests while it stays active and callable.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolNamespace, ToolUpdateFn};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

pub(super) struct Presented {
    pub inner: Arc<dyn AgentTool>,
    pub description: String,
    pub declared: bool,
}

impl Presented {
    /// `tool` with another description.
    pub fn described(tool: Arc<dyn AgentTool>, description: String) -> Arc<dyn AgentTool> {
        Arc::new(Presented {
            inner: tool,
            description,
            declared: true,
        })
    }

    /// `tool` active and callable, but not declared to the model.
    pub fn hidden(tool: Arc<dyn AgentTool>) -> Arc<dyn AgentTool> {
        let description = tool.description().to_owned();
        Arc::new(Presented {
            inner: tool,
            description,
            declared: false,
        })
    }
}

impl AgentTool for Presented {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn label(&self) -> &str {
        self.inner.label()
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        self.inner.parameters()
    }
    fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
        self.inner.constrained_sampling()
    }
    fn execution_mode(&self) -> Option<pi_agent_core::ToolExecutionMode> {
        self.inner.execution_mode()
    }
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        self.inner.prepare_arguments(arguments)
    }
    fn output_schema(&self) -> Option<&Value> {
        self.inner.output_schema()
    }
    fn namespace(&self) -> Option<ToolNamespace> {
        self.inner.namespace()
    }
    fn declared(&self) -> bool {
        self.declared
    }
    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        self.inner.execute(tool_call_id, args, cancel, on_update)
    }
}
