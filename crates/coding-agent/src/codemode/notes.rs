//! While codemode is active, each other declared tool tells the model how a script calls
//! it and what the call resolves to (pi 1.6's `codemode.mode: "on"`).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolNamespace, ToolUpdateFn};
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

use super::CODEMODE;
use super::catalog::script_call_note;

/// Tools that stay declared to the model only, never called from scripts.
const MODEL_ONLY: [&str; 2] = [CODEMODE, crate::mcp::tool_search::TOOL_SEARCH];

/// A declared tool with the codemode note in its description.
struct Noted {
    inner: Arc<dyn AgentTool>,
    description: String,
}

impl AgentTool for Noted {
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

/// `tools` as declared: with codemode among them, every other tool a script can call
/// carries the note. `originals` gives each tool as registered (without a note).
pub fn annotate(
    tools: Vec<Arc<dyn AgentTool>>,
    originals: &[Arc<dyn AgentTool>],
) -> Vec<Arc<dyn AgentTool>> {
    let original = |tool: Arc<dyn AgentTool>| {
        originals
            .iter()
            .find(|o| o.name() == tool.name())
            .cloned()
            .unwrap_or(tool)
    };
    let active = tools.iter().any(|t| t.name() == CODEMODE);
    tools
        .into_iter()
        .map(|tool| {
            let tool = original(tool);
            let noted = tool.description().contains("\n\nCodemode: `tools.");
            if !active || noted || MODEL_ONLY.contains(&tool.name()) {
                return tool;
            }
            let description = script_call_note(tool.as_ref());
            Arc::new(Noted {
                inner: tool,
                description,
            }) as Arc<dyn AgentTool>
        })
        .collect()
}
