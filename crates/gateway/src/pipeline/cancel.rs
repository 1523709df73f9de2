//! Layer 7: cancellation wrapping. Every tool is tied to the session's lifecycle token: it
//! refuses to start once the session is cancelled, and the token it runs with fires when
//! either the call's token or the lifecycle token fires.

use std::sync::Arc;

use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::Tool;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

/// The error of a call made after the session was cancelled.
pub const ABORTED_BEFORE_START: &str = "Tool execution aborted before start";

/// A tool bound to a session's lifecycle token; everything else delegates.
pub struct CancellableTool {
    inner: Arc<dyn AgentTool>,
    lifecycle: CancellationToken,
}

impl CancellableTool {
    /// Wraps `inner` with the session's `lifecycle` token.
    pub fn new(inner: Arc<dyn AgentTool>, lifecycle: CancellationToken) -> Self {
        Self { inner, lifecycle }
    }
}

impl AgentTool for CancellableTool {
    pi_coding_agent::delegate_tool_description!();

    fn definition(&self) -> Tool {
        self.inner.definition()
    }

    fn execute(
        &self,
        tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        if self.lifecycle.is_cancelled() {
            return async { Err(ToolError::new(ABORTED_BEFORE_START)) }.boxed();
        }
        // Fires with the lifecycle token (a child) or, forwarded below, with the call's.
        let merged = self.lifecycle.child_token();
        if cancel.is_cancelled() {
            merged.cancel();
        }
        let run = self
            .inner
            .execute(tool_call_id, args, merged.clone(), on_update);
        async move {
            let mut run = run;
            tokio::select! {
                biased;
                result = &mut run => return result,
                () = cancel.cancelled() => merged.cancel(),
            }
            // The tool saw the cancellation; let it finish (and clean up) on its own terms.
            run.await
        }
        .boxed()
    }
}

/// Wraps every tool with the session's `lifecycle` token.
pub fn wrap_cancellation(
    tools: Vec<Arc<dyn AgentTool>>,
    lifecycle: &CancellationToken,
) -> Vec<Arc<dyn AgentTool>> {
    tools
        .into_iter()
        .map(|tool| Arc::new(CancellableTool::new(tool, lifecycle.clone())) as Arc<dyn AgentTool>)
        .collect()
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::Ordering;
    use std::time::Duration;

    use serde_json::json;

    use super::*;
    use crate::pipeline::test_support::{FakeTool, no_updates, result_text};
    use pi_agent_core::ToolExecutionMode;
    use serde_json::Map;

    /// Waits for its token, then reports that it was cancelled.
    struct WaitsForCancel;

    impl AgentTool for WaitsForCancel {
        fn name(&self) -> &str {
            "wait"
        }
        fn description(&self) -> &str {
            "waits"
        }
        fn parameters(&self) -> &Value {
            static NULL: Value = Value::Null;
            &NULL
        }
        fn execute(
            &self,
            _id: &str,
            _args: Value,
            cancel: CancellationToken,
            _on_update: ToolUpdateFn,
        ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
            async move {
                cancel.cancelled().await;
                Ok(AgentToolResult::text("saw cancel"))
            }
            .boxed()
        }
    }

    fn wrapped(tool: Arc<dyn AgentTool>, lifecycle: &CancellationToken) -> Arc<dyn AgentTool> {
        wrap_cancellation(vec![tool], lifecycle).remove(0)
    }

    #[tokio::test]
    async fn refuses_to_start_after_the_session_is_cancelled() {
        let fake = Arc::new(FakeTool::new("t"));
        let lifecycle = CancellationToken::new();
        let tool = wrapped(fake.clone(), &lifecycle);
        lifecycle.cancel();
        let err = tool
            .execute("c", json!({}), CancellationToken::new(), no_updates())
            .await
            .unwrap_err();
        assert_eq!(err.0, ABORTED_BEFORE_START);
        assert_eq!(fake.calls.load(Ordering::SeqCst), 0);
    }

    #[tokio::test]
    async fn the_call_token_reaches_the_tool() {
        let tool = wrapped(Arc::new(WaitsForCancel), &CancellationToken::new());
        let call = CancellationToken::new();
        let run = tokio::spawn(tool.execute("c", json!({}), call.clone(), no_updates()));
        tokio::time::sleep(Duration::from_millis(10)).await;
        call.cancel();
        let result = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(result_text(&result), "saw cancel");
    }

    #[tokio::test]
    async fn the_lifecycle_token_reaches_a_running_tool() {
        let lifecycle = CancellationToken::new();
        let tool = wrapped(Arc::new(WaitsForCancel), &lifecycle);
        let call = CancellationToken::new();
        let run = tokio::spawn(tool.execute("c", json!({}), call.clone(), no_updates()));
        tokio::time::sleep(Duration::from_millis(10)).await;
        lifecycle.cancel();
        let result = tokio::time::timeout(Duration::from_secs(5), run)
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        assert_eq!(result_text(&result), "saw cancel");
        assert!(!call.is_cancelled(), "the call's own token is not touched");
    }

    #[tokio::test]
    async fn an_already_cancelled_call_token_is_passed_on() {
        let tool = wrapped(Arc::new(WaitsForCancel), &CancellationToken::new());
        let call = CancellationToken::new();
        call.cancel();
        let result = tool
            .execute("c", json!({}), call, no_updates())
            .await
            .unwrap();
        assert_eq!(result_text(&result), "saw cancel");
    }

    #[tokio::test]
    async fn everything_else_delegates() {
        let lifecycle = CancellationToken::new();
        let tool = wrapped(
            Arc::new(FakeTool::with_schema("t", json!({"type": "object"}))),
            &lifecycle,
        );
        assert_eq!(tool.name(), "t");
        assert_eq!(tool.label(), "t label");
        assert_eq!(tool.description(), "t description");
        assert_eq!(tool.parameters(), &json!({"type": "object"}));
        assert_eq!(tool.definition().parameters, json!({"type": "object"}));
        assert_eq!(tool.execution_mode(), Some(ToolExecutionMode::Sequential));
        assert_eq!(
            tool.prepare_arguments(&Map::new()).unwrap()["prepared"],
            true
        );
        let result = tool
            .execute("c", json!({}), CancellationToken::new(), no_updates())
            .await
            .unwrap();
        assert_eq!(result_text(&result), "t");
        // A finished call leaves the lifecycle token alone.
        assert!(!lifecycle.is_cancelled());
    }
}
