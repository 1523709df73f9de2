//! The loop's message queues and stopping: steering during sequential and parallel tools,
//! follow-ups, one-at-a-time and all-at-once queue modes, and tools that terminate the run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::loop_run::{config, context, prompt, result_text, run};
use common::{Behaviour, Script, TestTool, kinds, text, tools};
use futures_util::future::BoxFuture;
use pi_agent_core::{AgentMessage, MessageQueues, SKIPPED_FOR_STEERING, ToolExecutionMode};
use pi_ai::{Message, UserMessage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// Queues whose contents tests control.
#[derive(Default)]
struct TestQueues {
    steering: Mutex<Vec<AgentMessage>>,
    follow_ups: Mutex<Vec<AgentMessage>>,
    one_at_a_time: bool,
}

impl MessageQueues for TestQueues {
    fn steering(&self) -> Vec<AgentMessage> {
        let mut q = self.steering.lock().unwrap();
        if self.one_at_a_time && !q.is_empty() {
            vec![q.remove(0)]
        } else {
            std::mem::take(&mut *q)
        }
    }

    fn follow_ups(&self) -> Vec<AgentMessage> {
        let mut q = self.follow_ups.lock().unwrap();
        if self.one_at_a_time && !q.is_empty() {
            vec![q.remove(0)]
        } else {
            std::mem::take(&mut *q)
        }
    }
}

/// A tool that queues a steering message while it runs.
struct SteeringTool(Arc<TestQueues>, serde_json::Value);

impl pi_agent_core::AgentTool for SteeringTool {
    fn name(&self) -> &str {
        "steer"
    }
    fn description(&self) -> &str {
        "queues a steering message"
    }
    fn parameters(&self) -> &serde_json::Value {
        &self.1
    }
    fn execute(
        &self,
        _id: &str,
        _args: serde_json::Value,
        _cancel: CancellationToken,
        _on_update: pi_agent_core::ToolUpdateFn,
    ) -> BoxFuture<'static, Result<pi_agent_core::AgentToolResult, pi_agent_core::ToolError>> {
        self.0
            .steering
            .lock()
            .unwrap()
            .push(UserMessage::text("stop, do this instead").into());
        Box::pin(async { Ok(pi_agent_core::AgentToolResult::text("steered")) })
    }
}

#[tokio::test]
async fn steering_during_sequential_tools_skips_the_remaining_calls() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let queues = Arc::new(TestQueues::default());
    let steer: Arc<dyn pi_agent_core::AgentTool> =
        Arc::new(SteeringTool(Arc::clone(&queues), json!({"type": "object"})));
    let script = Script::new(vec![
        tools(&[
            ("s", "steer", json!({})),
            ("x", "echo", json!({"value": "1"})),
            ("y", "echo", json!({"value": "2"})),
        ]),
        text("changed course"),
    ]);
    let mut cfg = config(&script);
    cfg.tool_execution = ToolExecutionMode::Sequential;
    cfg.queues = queues;
    let ctx = context(vec![
        steer,
        TestTool::new("echo", Behaviour::default(), &log),
    ]);
    let (events, messages) = run(prompt("go"), ctx, cfg).await;
    assert!(log.lock().unwrap().is_empty(), "skipped tools never ran");
    assert_eq!(
        result_text(&events, "x"),
        (SKIPPED_FOR_STEERING.into(), true)
    );
    assert_eq!(
        result_text(&events, "y"),
        (SKIPPED_FOR_STEERING.into(), true)
    );
    // Every call still has exactly one result, then the steering message, then the next turn.
    let roles: Vec<&str> = messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "toolResult",
            "user",
            "assistant"
        ]
    );
    let second = script.context(1);
    let Message::User(u) = second.messages.last().unwrap() else {
        panic!()
    };
    assert!(
        matches!(&u.content, pi_ai::UserContent::Blocks(b) if b[0].as_text() == Some("stop, do this instead"))
    );
}

#[tokio::test]
async fn steering_in_parallel_mode_is_injected_after_all_tools() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let queues = Arc::new(TestQueues::default());
    let steer: Arc<dyn pi_agent_core::AgentTool> =
        Arc::new(SteeringTool(Arc::clone(&queues), json!({"type": "object"})));
    let script = Script::new(vec![
        tools(&[
            ("s", "steer", json!({})),
            ("x", "echo", json!({"value": "1"})),
        ]),
        text("ok"),
    ]);
    let mut cfg = config(&script);
    cfg.queues = queues;
    let (events, messages) = run(
        prompt("go"),
        context(vec![
            steer,
            TestTool::new("echo", Behaviour::default(), &log),
        ]),
        cfg,
    )
    .await;
    assert_eq!(
        result_text(&events, "x"),
        ("ok 1".into(), false),
        "not skipped in parallel mode"
    );
    let roles: Vec<&str> = messages.iter().map(|m| m.role()).collect();
    assert_eq!(
        roles,
        [
            "user",
            "assistant",
            "toolResult",
            "toolResult",
            "user",
            "assistant"
        ]
    );
}

#[tokio::test]
async fn follow_up_starts_another_turn_only_when_the_agent_would_stop() {
    let queues = Arc::new(TestQueues::default());
    queues
        .follow_ups
        .lock()
        .unwrap()
        .push(UserMessage::text("and then?").into());
    let script = Script::new(vec![text("first"), text("second")]);
    let mut cfg = config(&script);
    cfg.queues = queues;
    let (events, messages) = run(prompt("go"), context(vec![]), cfg).await;
    assert_eq!(script.calls(), 2);
    let roles: Vec<&str> = messages.iter().map(|m| m.role()).collect();
    assert_eq!(roles, ["user", "assistant", "user", "assistant"]);
    assert_eq!(
        kinds(&events)
            .iter()
            .filter(|k| **k == "turn_start")
            .count(),
        2
    );
    assert_eq!(
        kinds(&events).iter().filter(|k| **k == "agent_end").count(),
        1
    );
}

#[tokio::test]
async fn queue_modes_release_one_or_all() {
    for (one_at_a_time, calls) in [(true, 3), (false, 2)] {
        let queues = Arc::new(TestQueues {
            one_at_a_time,
            ..Default::default()
        });
        queues
            .follow_ups
            .lock()
            .unwrap()
            .extend([UserMessage::text("a").into(), UserMessage::text("b").into()]);
        let script = Script::new(vec![text("1"), text("2"), text("3")]);
        let mut cfg = config(&script);
        cfg.queues = queues;
        let _ = run(prompt("go"), context(vec![]), cfg).await;
        assert_eq!(script.calls(), calls, "one_at_a_time={one_at_a_time}");
    }
}

#[tokio::test]
async fn terminate_from_every_result_stops_without_another_llm_call() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let term = Behaviour {
        terminate: true,
        ..Default::default()
    };
    let script = Script::new(vec![
        tools(&[
            ("a", "t", json!({"value": "1"})),
            ("b", "t", json!({"value": "2"})),
        ]),
        text("never"),
    ]);
    let (events, _) = run(
        prompt("go"),
        context(vec![TestTool::new("t", term, &log)]),
        config(&script),
    )
    .await;
    assert_eq!(script.calls(), 1);
    assert_eq!(kinds(&events).last(), Some(&"agent_end"));
    // One terminating and one normal result: the loop goes on.
    let script = Script::new(vec![
        tools(&[
            ("a", "t", json!({"value": "1"})),
            ("b", "n", json!({"value": "2"})),
        ]),
        text("next"),
    ]);
    let ctx = context(vec![
        TestTool::new(
            "t",
            Behaviour {
                terminate: true,
                ..Default::default()
            },
            &log,
        ),
        TestTool::new("n", Behaviour::default(), &log),
    ]);
    let _ = run(prompt("go"), ctx, config(&script)).await;
    assert_eq!(script.calls(), 2);
}
