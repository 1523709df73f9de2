//! Layer 6 (tool part): wraps each tool so the model sees its schema normalized for the
//! provider ([`super::schema`]).
//!
//! `definition()` (what is sent to the model) carries the normalized schema. `parameters()`
//! stays the tool's original schema on purpose: pi-agent-core validates (and coerces) the
//! model's arguments against `parameters()`, and the normalized schemas are lossy — Gemini's
//! `nullable` is not JSON Schema (a `null` would then be coerced to `0`/`""`), and OpenAI's
//! added top-level `additionalProperties: false` would reject arguments the tool accepts.
//! Validating against the original keeps execution identical. The normalized schema is also
//! available as [`NormalizedTool::normalized_parameters`].

use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::Tool;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::schema::{SchemaFamily, normalize_schema};

/// A tool whose definition carries a provider-normalized schema; everything else delegates.
pub struct NormalizedTool {
    inner: Arc<dyn AgentTool>,
    normalized: Value,
}

impl NormalizedTool {
    /// Wraps `inner` with an already normalized schema.
    pub fn new(inner: Arc<dyn AgentTool>, normalized: Value) -> Self {
        Self { inner, normalized }
    }

    /// The schema sent to the model.
    pub fn normalized_parameters(&self) -> &Value {
        &self.normalized
    }
}

impl AgentTool for NormalizedTool {
    pi_coding_agent::delegate_tool_description!();

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        self.inner.execute(tool_call_id, args, cancel, on_update)
    }

    fn definition(&self) -> Tool {
        let mut definition = self.inner.definition();
        definition.parameters = self.normalized.clone();
        definition
    }
}

/// Normalizes every tool's schema for the model's `api`. Tools whose schema does not change
/// are returned as they are; the names of the rewritten ones are returned too.
pub fn normalize_tools(
    tools: Vec<Arc<dyn AgentTool>>,
    api: &str,
) -> (Vec<Arc<dyn AgentTool>>, Vec<String>) {
    let family = SchemaFamily::from_api(api);
    let mut changed = Vec::new();
    let tools = tools
        .into_iter()
        .map(|tool| {
            let original = tool.definition().parameters;
            let normalized = normalize_schema(&original, family);
            if normalized == original {
                tool
            } else {
                changed.push(tool.name().to_owned());
                Arc::new(NormalizedTool::new(tool, normalized)) as Arc<dyn AgentTool>
            }
        })
        .collect();
    (tools, changed)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::pipeline::test_support::{FakeTool, no_updates, result_text};
    use pi_agent_core::ToolExecutionMode;
    use serde_json::Map;

    fn nullable_tool() -> Arc<dyn AgentTool> {
        Arc::new(FakeTool::with_schema(
            "t",
            json!({"$schema": "x", "type": "object",
                   "properties": {"n": {"type": ["integer", "null"]}}}),
        ))
    }

    #[tokio::test]
    async fn definition_is_normalized_the_rest_delegates() {
        let original = nullable_tool();
        let (tools, changed) = normalize_tools(vec![original.clone()], "google-generative-ai");
        assert_eq!(changed, vec!["t".to_owned()]);
        let tool = &tools[0];
        assert_eq!(
            tool.definition().parameters,
            json!({"type": "object", "properties": {"n": {"type": "integer", "nullable": true}}})
        );
        assert_eq!(tool.definition().name, "t");
        assert_eq!(tool.definition().description, "t description");
        // Validation keeps the original schema, so `null` stays valid.
        assert_eq!(tool.parameters(), original.parameters());
        assert_eq!(tool.label(), "t label");
        assert_eq!(tool.execution_mode(), Some(ToolExecutionMode::Sequential));
        let prepared = tool.prepare_arguments(&Map::new()).unwrap();
        assert_eq!(prepared["prepared"], true);
        let result = tool
            .execute("c", json!({}), CancellationToken::new(), no_updates())
            .await
            .unwrap();
        assert_eq!(result_text(&result), "t");
    }

    #[test]
    fn unchanged_schemas_are_not_wrapped() {
        let plain: Arc<dyn AgentTool> = Arc::new(FakeTool::with_schema(
            "p",
            json!({"type": "object", "properties": {}, "additionalProperties": false}),
        ));
        for api in [
            "openai-responses",
            "anthropic-messages",
            "google-vertex",
            "mistral-conversations",
        ] {
            let (tools, changed) = normalize_tools(vec![plain.clone()], api);
            if api == "google-vertex" {
                assert_eq!(changed, vec!["p".to_owned()]);
                assert!(
                    tools[0]
                        .definition()
                        .parameters
                        .get("additionalProperties")
                        .is_none()
                );
            } else {
                assert!(changed.is_empty(), "{api}");
                assert!(Arc::ptr_eq(&tools[0], &plain));
            }
        }
    }

    #[test]
    fn openai_closes_the_top_level() {
        let (tools, _) = normalize_tools(vec![FakeTool::arc("o")], "openai-completions");
        assert_eq!(
            tools[0].definition().parameters,
            json!({"type": "object", "properties": {}, "additionalProperties": false})
        );
    }
}
