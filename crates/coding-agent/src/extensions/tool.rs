//! An extension's tool as an agent tool: the description from its registration, the run
//! delegated to the backend that registered it.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolExecutionMode, ToolUpdateFn};

use super::backend::ExtensionBackend;
use super::registry::ToolDef;

/// A registered tool, run by its backend.
pub struct ExtensionTool {
    def: ToolDef,
    backend: Arc<dyn ExtensionBackend>,
}

impl ExtensionTool {
    pub fn new(def: ToolDef, backend: Arc<dyn ExtensionBackend>) -> Self {
        Self { def, backend }
    }

    pub fn def(&self) -> &ToolDef {
        &self.def
    }
}

impl AgentTool for ExtensionTool {
    fn name(&self) -> &str {
        &self.def.name
    }

    fn label(&self) -> &str {
        if self.def.label.is_empty() {
            &self.def.name
        } else {
            &self.def.label
        }
    }

    fn description(&self) -> &str {
        &self.def.description
    }

    fn parameters(&self) -> &Value {
        &self.def.parameters
    }

    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        self.def.execution_mode
    }

    fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
        let value = self.def.constrained_sampling.clone()?;
        serde_json::from_value(value).ok()
    }

    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        if !self.def.has_prepare_arguments {
            return None;
        }
        // prepareArguments is synchronous in the agent; the host answers within the call.
        let backend = self.backend.clone();
        let name = self.def.name.clone();
        let args = Value::Object(arguments.clone());
        let prepared = block_on_host(async move { backend.prepare_arguments(&name, args).await })?;
        match prepared {
            Ok(Value::Object(map)) => Some(map),
            _ => None,
        }
    }

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        self.backend.clone().execute_tool(
            self.def.name.clone(),
            tool_call_id.to_owned(),
            args,
            cancel,
            on_update,
        )
    }
}

/// Runs a host round trip from synchronous code on a multi-threaded runtime; `None` on a
/// single-threaded runtime or outside one (the caller keeps its default).
pub(crate) fn block_on_host<F: std::future::Future>(future: F) -> Option<F::Output> {
    let handle = tokio::runtime::Handle::try_current().ok()?;
    if handle.runtime_flavor() != tokio::runtime::RuntimeFlavor::MultiThread {
        return None;
    }
    Some(tokio::task::block_in_place(|| handle.block_on(future)))
}
