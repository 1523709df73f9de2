//! Fakes shared by the pipeline's unit tests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolExecutionMode, ToolUpdateFn};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// A tool that answers with its own name (and counts its calls).
pub struct FakeTool {
    pub name: String,
    pub label: String,
    pub description: String,
    pub parameters: Value,
    pub calls: AtomicUsize,
}

impl FakeTool {
    pub fn new(name: &str) -> Self {
        Self::with_schema(name, json!({"type": "object", "properties": {}}))
    }

    pub fn with_schema(name: &str, parameters: Value) -> Self {
        Self {
            name: name.to_owned(),
            label: format!("{name} label"),
            description: format!("{name} description"),
            parameters,
            calls: AtomicUsize::new(0),
        }
    }

    pub fn arc(name: &str) -> Arc<dyn AgentTool> {
        Arc::new(Self::new(name))
    }
}

impl AgentTool for FakeTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn label(&self) -> &str {
        &self.label
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn execution_mode(&self) -> Option<ToolExecutionMode> {
        Some(ToolExecutionMode::Sequential)
    }
    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        let mut out = arguments.clone();
        out.insert("prepared".into(), true.into());
        Some(out)
    }
    fn execute(
        &self,
        _tool_call_id: &str,
        _args: Value,
        _cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let name = self.name.clone();
        async move { Ok(AgentToolResult::text(name)) }.boxed()
    }
}

/// The names of tools, in order.
pub fn names(tools: &[Arc<dyn AgentTool>]) -> Vec<String> {
    tools.iter().map(|t| t.name().to_owned()).collect()
}

/// Owned strings.
pub fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|i| (*i).to_owned()).collect()
}

/// An update callback that ignores updates.
pub fn no_updates() -> ToolUpdateFn {
    Arc::new(|_| {})
}

/// The text of the first content block of a result.
pub fn result_text(result: &AgentToolResult) -> String {
    result
        .content
        .first()
        .and_then(|b| b.as_text())
        .unwrap_or_default()
        .to_owned()
}

/// A runtime host answering `{}` to everything.
pub struct NullHost;

impl crate::pipeline::RuntimeHost for NullHost {
    fn branch(&self, _: &str, _: Option<&str>) -> BoxFuture<'static, Result<Value, String>> {
        async { Ok(json!({})) }.boxed()
    }
    fn navigate(&self, _: &str, _: &str, _: bool) -> BoxFuture<'static, Result<Value, String>> {
        async { Ok(json!({})) }.boxed()
    }
    fn reload(&self) -> BoxFuture<'static, Result<Value, String>> {
        async { Ok(json!({})) }.boxed()
    }
    fn interrupt(&self, _: &str, _: &str) -> BoxFuture<'static, Result<Value, String>> {
        async { Ok(json!({})) }.boxed()
    }
}

/// A sandbox replacing `bash` and `exec` by fakes described as "sandboxed <name>".
pub struct FakeSandbox;

impl crate::pipeline::ToolSandbox for FakeSandbox {
    fn substitute(&self, tool: Arc<dyn AgentTool>) -> Result<Arc<dyn AgentTool>, String> {
        match tool.name() {
            "bash" | "exec" => {
                let mut fake = FakeTool::new(tool.name());
                fake.description = format!("sandboxed {}", tool.name());
                Ok(Arc::new(fake))
            }
            _ => Ok(tool),
        }
    }
}
