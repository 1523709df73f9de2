//! Tests of the runtime tools against a fake host.

use std::sync::Mutex;

use serde_json::json;

use super::*;
use crate::pipeline::test_support::{names, no_updates, result_text, strings};

/// Records every call; answers with canned JSON, or fails / hangs when told to.
#[derive(Default)]
struct FakeHost {
    calls: Mutex<Vec<String>>,
    fail: bool,
    hang: bool,
}

impl FakeHost {
    fn answer(&self, call: String, value: Value) -> BoxFuture<'static, Result<Value, String>> {
        if let Ok(mut calls) = self.calls.lock() {
            calls.push(call);
        }
        let (fail, hang) = (self.fail, self.hang);
        async move {
            if hang {
                std::future::pending::<()>().await;
            }
            if fail {
                Err("lane closed".to_owned())
            } else {
                Ok(value)
            }
        }
        .boxed()
    }

    fn calls(&self) -> Vec<String> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl RuntimeHost for FakeHost {
    fn branch(
        &self,
        session_id: &str,
        from_entry: Option<&str>,
    ) -> BoxFuture<'static, Result<Value, String>> {
        self.answer(
            format!("branch {session_id} {from_entry:?}"),
            json!({"sessionId": "s-2"}),
        )
    }
    fn navigate(
        &self,
        session_id: &str,
        target_entry_id: &str,
        summarize: bool,
    ) -> BoxFuture<'static, Result<Value, String>> {
        self.answer(
            format!("navigate {session_id} {target_entry_id} {summarize}"),
            json!({"queued": true}),
        )
    }
    fn reload(&self) -> BoxFuture<'static, Result<Value, String>> {
        self.answer("reload".into(), Value::Null)
    }
    fn interrupt(
        &self,
        session_id: &str,
        reason: &str,
    ) -> BoxFuture<'static, Result<Value, String>> {
        self.answer(format!("interrupt {session_id} {reason}"), json!({}))
    }
}

fn tool(host: &Arc<FakeHost>, name: &str) -> Arc<dyn AgentTool> {
    let host: Arc<dyn RuntimeHost> = host.clone();
    runtime_tools(host, "s-1")
        .into_iter()
        .find(|t| t.name() == name)
        .unwrap()
}

async fn run(tool: &Arc<dyn AgentTool>, args: Value) -> Result<AgentToolResult, ToolError> {
    tool.execute("call-1", args, CancellationToken::new(), no_updates())
        .await
}

#[test]
fn four_tools_with_descriptions_and_object_schemas() {
    let host: Arc<dyn RuntimeHost> = Arc::new(FakeHost::default());
    let tools = runtime_tools(host, "s-1");
    assert_eq!(names(&tools), strings(&RUNTIME_TOOL_NAMES));
    for t in &tools {
        assert!(!t.description().is_empty());
        assert_ne!(t.label(), t.name());
        assert_eq!(t.parameters()["type"], "object");
        assert!(t.parameters()["properties"].is_object());
    }
    assert_eq!(tools[1].parameters()["required"], json!(["targetEntryId"]));
}

#[tokio::test]
async fn branch_calls_the_host_and_reports_the_new_session() {
    let host = Arc::new(FakeHost::default());
    let branch = tool(&host, SESSION_BRANCH);
    let result = run(&branch, json!({})).await.unwrap();
    assert_eq!(
        result_text(&result),
        "Created branch session s-2 from the latest entry. This session continues unchanged."
    );
    assert_eq!(result.details, Some(json!({"sessionId": "s-2"})));
    run(&branch, json!({"fromEntryId": "e7"})).await.unwrap();
    assert_eq!(
        host.calls(),
        strings(&["branch s-1 None", "branch s-1 Some(\"e7\")"])
    );
}

#[tokio::test]
async fn navigate_is_queued_until_the_run_ends() {
    let host = Arc::new(FakeHost::default());
    let navigate = tool(&host, SESSION_NAVIGATE);
    let result = run(&navigate, json!({"targetEntryId": "e3", "summarize": true}))
        .await
        .unwrap();
    let text = result_text(&result);
    assert!(text.contains("entry e3"), "{text}");
    assert!(text.contains("after the run ends"), "{text}");
    assert!(text.contains("summary"), "{text}");
    assert_eq!(result.details, Some(json!({"queued": true})));
    assert_eq!(host.calls(), strings(&["navigate s-1 e3 true"]));

    let err = run(&navigate, json!({})).await.unwrap_err();
    assert!(err.0.contains("targetEntryId"));
}

#[tokio::test]
async fn reload_and_interrupt() {
    let host = Arc::new(FakeHost::default());
    let reload = run(&tool(&host, GATEWAY_RELOAD), json!({})).await.unwrap();
    assert_eq!(
        result_text(&reload),
        "Gateway configuration reload requested."
    );
    assert_eq!(reload.terminate, None);

    let interrupt = run(&tool(&host, AGENT_INTERRUPT), json!({})).await.unwrap();
    assert!(result_text(&interrupt).contains("agent-requested"));
    assert_eq!(interrupt.terminate, Some(true));
    run(&tool(&host, AGENT_INTERRUPT), json!({"reason": "done"}))
        .await
        .unwrap();
    assert_eq!(
        host.calls(),
        strings(&[
            "reload",
            "interrupt s-1 agent-requested",
            "interrupt s-1 done"
        ])
    );
}

#[tokio::test]
async fn host_errors_become_tool_errors() {
    let host = Arc::new(FakeHost {
        fail: true,
        ..Default::default()
    });
    let err = run(&tool(&host, GATEWAY_RELOAD), json!({}))
        .await
        .unwrap_err();
    assert_eq!(err.0, "gateway_reload failed: lane closed");
}

#[tokio::test]
async fn cancellation_stops_waiting_for_the_host() {
    let host = Arc::new(FakeHost {
        hang: true,
        ..Default::default()
    });
    let cancel = CancellationToken::new();
    let fut = tool(&host, SESSION_BRANCH).execute("c", json!({}), cancel.clone(), no_updates());
    cancel.cancel();
    let err = fut.await.unwrap_err();
    assert_eq!(err.0, "session_branch aborted");
}

#[tokio::test]
async fn interrupt_is_answered_even_when_it_cancels_the_run() {
    let host = Arc::new(FakeHost::default());
    let cancel = CancellationToken::new();
    cancel.cancel();
    let result = tool(&host, AGENT_INTERRUPT)
        .execute("c", json!({}), cancel, no_updates())
        .await
        .unwrap();
    assert_eq!(result.terminate, Some(true));
}
