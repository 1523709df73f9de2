//! The loop's invariants (seeds 001–003) against a scripted in-process stream: exact event
//! sequences, tool ordering, queues, terminate, blocking, validation, abort and continue.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::{Behaviour, Reply, Script, TestTool, kinds, model, text, tools};
use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use pi_agent_core::{
    AfterToolCallContext, AfterToolCallResult, AgentContext, AgentEvent, AgentHooks,
    AgentLoopConfig, AgentMessage, BeforeToolCallContext, BeforeToolCallResult, CustomMessage,
    LoopError, MessageQueues, SKIPPED_FOR_STEERING, ToolExecutionMode, TurnContext, agent_loop,
    agent_loop_continue,
};
use pi_ai::{InputBlock, Message, UserMessage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

fn config(script: &Script) -> AgentLoopConfig {
    let mut config = AgentLoopConfig::new(model());
    config.stream_fn = script.stream_fn();
    config
}

fn context(tools: Vec<Arc<dyn pi_agent_core::AgentTool>>) -> AgentContext {
    AgentContext {
        system_prompt: "sys".into(),
        messages: Vec::new(),
        tools,
    }
}

fn prompt(t: &str) -> Vec<AgentMessage> {
    vec![UserMessage::text(t).into()]
}

async fn run(
    prompts: Vec<AgentMessage>,
    ctx: AgentContext,
    cfg: AgentLoopConfig,
) -> (Vec<AgentEvent>, Vec<AgentMessage>) {
    let mut stream = agent_loop(prompts, ctx, cfg, CancellationToken::new());
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e);
    }
    let messages = stream.result().await;
    (events, messages)
}

fn tool_end_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolExecutionEnd { tool_call_id, .. } => Some(tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

fn result_message_ids(events: &[AgentEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageEnd {
                message: AgentMessage::Llm(Message::ToolResult(r)),
            } => Some(r.tool_call_id.clone()),
            _ => None,
        })
        .collect()
}

fn result_text(events: &[AgentEvent], id: &str) -> (String, bool) {
    events
        .iter()
        .find_map(|e| match e {
            AgentEvent::ToolExecutionEnd {
                tool_call_id,
                result,
                is_error,
                ..
            } if tool_call_id == id => Some((
                result.content[0].as_text().unwrap_or("").to_owned(),
                *is_error,
            )),
            _ => None,
        })
        .expect("tool_execution_end")
}

#[tokio::test]
async fn text_only_run_has_the_exact_event_sequence() {
    let script = Script::new(vec![text("hello")]);
    let (events, messages) = run(prompt("hi"), context(vec![]), config(&script)).await;
    assert_eq!(
        kinds(&events),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_update",
            "message_update",
            "message_update",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1].as_assistant().unwrap().text(), "hello");
    let AgentEvent::AgentEnd { messages: end } = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(end, &messages);
    // The LLM saw the system prompt and the prompt.
    let seen = script.context(0);
    assert_eq!(seen.system_prompt.as_deref(), Some("sys"));
    assert_eq!(seen.messages.len(), 1);
}

#[tokio::test]
async fn one_tool_call_matches_the_reference_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("call_1", "echo", json!({"value": "x"}))]),
        text("done"),
    ]);
    let (events, messages) = run(
        prompt("go"),
        context(vec![TestTool::new("echo", Behaviour::default(), &log)]),
        config(&script),
    )
    .await;
    let k = kinds(&events);
    let expected = [
        "agent_start",
        "turn_start",
        "message_start",
        "message_end",
        "message_start",
        "message_update",
        "message_update",
        "message_update",
        "message_end",
        "tool_execution_start",
        "tool_execution_end",
        "message_start",
        "message_end",
        "turn_end",
        "turn_start",
        "message_start",
        "message_update",
        "message_update",
        "message_update",
        "message_end",
        "turn_end",
        "agent_end",
    ];
    assert_eq!(k, expected);
    assert_eq!(result_text(&events, "call_1"), ("ok x".into(), false));
    assert_eq!(
        messages.iter().map(|m| m.role()).collect::<Vec<_>>(),
        ["user", "assistant", "toolResult", "assistant"]
    );
    // The second LLM call saw the tool result.
    assert_eq!(
        script.context(1).messages.last().unwrap().role(),
        "toolResult"
    );
    let AgentEvent::TurnEnd { tool_results, .. } = &events[13] else {
        panic!()
    };
    assert_eq!(tool_results.len(), 1);
}

#[tokio::test]
async fn parallel_tools_end_in_completion_order_but_results_keep_source_order() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let slow = Behaviour {
        delay_ms: 150,
        ..Default::default()
    };
    let fast = Behaviour {
        delay_ms: 10,
        ..Default::default()
    };
    let script = Script::new(vec![
        tools(&[
            ("tool-1", "slow", json!({"value": "a"})),
            ("tool-2", "fast", json!({"value": "b"})),
        ]),
        text("done"),
    ]);
    let ctx = context(vec![
        TestTool::new("slow", slow, &log),
        TestTool::new("fast", fast, &log),
    ]);
    let (events, _) = run(prompt("go"), ctx, config(&script)).await;
    assert_eq!(tool_end_ids(&events), ["tool-2", "tool-1"]);
    assert_eq!(result_message_ids(&events), ["tool-1", "tool-2"]);
    let turn_end = events.iter().find_map(|e| match e {
        AgentEvent::TurnEnd { tool_results, .. } if !tool_results.is_empty() => {
            Some(tool_results.clone())
        }
        _ => None,
    });
    let ids: Vec<_> = turn_end
        .unwrap()
        .iter()
        .map(|r| r.tool_call_id.clone())
        .collect();
    assert_eq!(ids, ["tool-1", "tool-2"]);
    // Both ran at the same time: the fast one started before the slow one ended.
    let log = log.lock().unwrap().clone();
    assert_eq!(
        log[..2],
        ["start:tool-1".to_owned(), "start:tool-2".to_owned()]
    );
    // Both starts are emitted before any end (preflight in source order).
    let k = kinds(&events);
    let last_start = k
        .iter()
        .rposition(|k| *k == "tool_execution_start")
        .unwrap();
    let first_end = k.iter().position(|k| *k == "tool_execution_end").unwrap();
    assert!(last_start < first_end);
}

#[tokio::test]
async fn one_sequential_tool_makes_the_whole_batch_sequential() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let slow = Behaviour {
        delay_ms: 80,
        mode: Some(ToolExecutionMode::Sequential),
        ..Default::default()
    };
    let script = Script::new(vec![
        tools(&[
            ("a", "slow", json!({"value": "1"})),
            ("b", "fast", json!({"value": "2"})),
        ]),
        text("done"),
    ]);
    let ctx = context(vec![
        TestTool::new("slow", slow, &log),
        TestTool::new("fast", Behaviour::default(), &log),
    ]);
    let (events, _) = run(prompt("go"), ctx, config(&script)).await;
    assert_eq!(
        *log.lock().unwrap(),
        ["start:a", "end:a", "start:b", "end:b"]
    );
    // Sequential: each call's end and result message come before the next call starts.
    let k = kinds(&events);
    let i = k.iter().position(|k| *k == "tool_execution_start").unwrap();
    assert_eq!(
        k[i..i + 8],
        [
            "tool_execution_start",
            "tool_execution_end",
            "message_start",
            "message_end",
            "tool_execution_start",
            "tool_execution_end",
            "message_start",
            "message_end"
        ]
    );
}

#[tokio::test]
async fn config_can_force_sequential_execution() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let slow = Behaviour {
        delay_ms: 60,
        ..Default::default()
    };
    let script = Script::new(vec![
        tools(&[
            ("a", "slow", json!({"value": "1"})),
            ("b", "fast", json!({"value": "2"})),
        ]),
        text("done"),
    ]);
    let ctx = context(vec![
        TestTool::new("slow", slow, &log),
        TestTool::new("fast", Behaviour::default(), &log),
    ]);
    let mut cfg = config(&script);
    cfg.tool_execution = ToolExecutionMode::Sequential;
    let (events, _) = run(prompt("go"), ctx, cfg).await;
    assert_eq!(
        *log.lock().unwrap(),
        ["start:a", "end:a", "start:b", "end:b"]
    );
    assert_eq!(tool_end_ids(&events), ["a", "b"]);
}

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

struct BlockingHooks;

impl AgentHooks for BlockingHooks {
    fn before_tool_call<'a>(
        &'a self,
        context: BeforeToolCallContext<'a>,
        _cancel: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<BeforeToolCallResult>> {
        Box::pin(async move {
            match context.args["value"].as_str() {
                Some("forbidden") => Some(BeforeToolCallResult::block("Not allowed here")),
                Some("silent") => Some(BeforeToolCallResult {
                    block: true,
                    reason: None,
                    args: None,
                }),
                _ => None,
            }
        })
    }
}

#[tokio::test]
async fn before_tool_call_can_block_with_a_reason() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[
            ("a", "echo", json!({"value": "forbidden"})),
            ("b", "echo", json!({"value": "silent"})),
            ("c", "echo", json!({"value": "fine"})),
        ]),
        text("ok"),
    ]);
    let mut cfg = config(&script);
    cfg.hooks = Arc::new(BlockingHooks);
    let (events, _) = run(
        prompt("go"),
        context(vec![TestTool::new("echo", Behaviour::default(), &log)]),
        cfg,
    )
    .await;
    assert_eq!(result_text(&events, "a"), ("Not allowed here".into(), true));
    assert_eq!(
        result_text(&events, "b"),
        ("Tool execution was blocked".into(), true)
    );
    assert_eq!(result_text(&events, "c"), ("ok fine".into(), false));
    assert_eq!(
        *log.lock().unwrap(),
        ["start:c", "end:c"],
        "blocked calls never execute"
    );
    assert_eq!(script.calls(), 2, "the loop goes on");
}

#[tokio::test]
async fn invalid_arguments_are_reported_then_a_corrected_call_succeeds() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("a", "echo", json!({"wrong": 1}))]),
        tools(&[("b", "echo", json!({"value": 42}))]),
        text("done"),
    ]);
    let (events, messages) = run(
        prompt("go"),
        context(vec![TestTool::new("echo", Behaviour::default(), &log)]),
        config(&script),
    )
    .await;
    let (text_a, error_a) = result_text(&events, "a");
    assert!(error_a);
    assert!(
        text_a.starts_with("Validation failed for tool \"echo\":"),
        "{text_a}"
    );
    assert!(text_a.contains("value"), "{text_a}");
    // 42 is coerced to "42" for a string parameter.
    assert_eq!(result_text(&events, "b"), ("ok 42".into(), false));
    assert_eq!(messages.len(), 6);
    assert_eq!(*log.lock().unwrap(), ["start:b", "end:b"]);
}

#[tokio::test]
async fn unknown_tool_becomes_an_error_result() {
    let script = Script::new(vec![tools(&[("a", "nope", json!({}))]), text("sorry")]);
    let (events, _) = run(prompt("go"), context(vec![]), config(&script)).await;
    assert_eq!(
        result_text(&events, "a"),
        ("Tool nope not found".into(), true)
    );
    assert_eq!(script.calls(), 2);
}

#[tokio::test]
async fn tool_errors_and_panics_become_error_results() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[
            ("a", "failing", json!({"value": "1"})),
            ("b", "panicky", json!({"value": "2"})),
        ]),
        text("recovered"),
    ]);
    let ctx = context(vec![
        TestTool::new(
            "failing",
            Behaviour {
                fail: Some("disk full".into()),
                ..Default::default()
            },
            &log,
        ),
        TestTool::new(
            "panicky",
            Behaviour {
                panic: true,
                ..Default::default()
            },
            &log,
        ),
    ]);
    let (events, messages) = run(prompt("go"), ctx, config(&script)).await;
    assert_eq!(result_text(&events, "a"), ("disk full".into(), true));
    let (text_b, error_b) = result_text(&events, "b");
    assert!(error_b && text_b.contains("tool exploded"), "{text_b}");
    assert_eq!(
        messages.last().unwrap().as_assistant().unwrap().text(),
        "recovered"
    );
}

#[tokio::test]
async fn abort_during_a_tool_is_seen_by_the_tool_and_ends_the_run() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("a", "waiter", json!({"value": "1"}))]),
        text("never"),
    ]);
    let ctx = context(vec![TestTool::new(
        "waiter",
        Behaviour {
            wait_for_cancel: true,
            ..Default::default()
        },
        &log,
    )]);
    let cancel = CancellationToken::new();
    let mut stream = agent_loop(prompt("go"), ctx, config(&script), cancel.clone());
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        if e.kind() == "tool_execution_start" {
            let c = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(std::time::Duration::from_millis(30)).await;
                c.cancel();
            });
        }
        events.push(e);
    }
    assert!(
        log.lock().unwrap().contains(&"cancelled:a".to_owned()),
        "the tool saw the cancellation"
    );
    assert_eq!(
        result_text(&events, "a"),
        ("cancelled by abort".into(), true)
    );
    let last_assistant = events.iter().rev().find_map(|e| match e {
        AgentEvent::MessageEnd { message } => message.as_assistant().cloned(),
        _ => None,
    });
    assert_eq!(
        last_assistant.unwrap().stop_reason,
        pi_ai::StopReason::Aborted
    );
    assert_eq!(kinds(&events).last(), Some(&"agent_end"));
}

#[tokio::test]
async fn abort_while_streaming_keeps_the_partial_message() {
    let script = Script::new(vec![Reply::Hang("partial answ".into())]);
    let cancel = CancellationToken::new();
    let mut stream = agent_loop(
        prompt("go"),
        context(vec![]),
        config(&script),
        cancel.clone(),
    );
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        if matches!(&e, AgentEvent::MessageUpdate { .. }) {
            cancel.cancel();
        }
        events.push(e);
    }
    let k = kinds(&events);
    assert_eq!(k[k.len() - 3..], ["message_end", "turn_end", "agent_end"]);
    let AgentEvent::MessageEnd { message } = &events[k.len() - 3] else {
        panic!()
    };
    let a = message.as_assistant().unwrap();
    assert_eq!(a.stop_reason, pi_ai::StopReason::Aborted);
    assert_eq!(a.text(), "partial answ");
}

#[tokio::test]
async fn provider_errors_end_the_run_with_turn_end_and_agent_end() {
    let script = Script::new(vec![Reply::Error("503 overloaded".into())]);
    let (events, messages) = run(prompt("go"), context(vec![]), config(&script)).await;
    assert_eq!(
        kinds(&events),
        [
            "agent_start",
            "turn_start",
            "message_start",
            "message_end",
            "message_start",
            "message_end",
            "turn_end",
            "agent_end"
        ]
    );
    assert_eq!(
        messages[1].as_assistant().unwrap().error_message.as_deref(),
        Some("503 overloaded")
    );
}

#[tokio::test]
async fn continue_refuses_empty_and_assistant_ending_contexts() {
    let script = Script::new(vec![]);
    let err = agent_loop_continue(context(vec![]), config(&script), CancellationToken::new()).err();
    assert_eq!(err, Some(LoopError::NoMessages));
    assert_eq!(
        err.unwrap().to_string(),
        "Cannot continue: no messages in context"
    );
    let mut ctx = context(vec![]);
    ctx.messages.push(UserMessage::text("q").into());
    ctx.messages
        .push(pi_ai::AssistantMessage::empty("a", "b", "c").into());
    let err = agent_loop_continue(ctx, config(&script), CancellationToken::new())
        .err()
        .unwrap();
    assert_eq!(
        err.to_string(),
        "Cannot continue from message role: assistant"
    );
}

#[tokio::test]
async fn continue_from_a_user_message_returns_only_new_messages() {
    let script = Script::new(vec![text("answer")]);
    let mut ctx = context(vec![]);
    ctx.messages.push(UserMessage::text("q").into());
    let mut stream = agent_loop_continue(ctx, config(&script), CancellationToken::new()).unwrap();
    let mut events = Vec::new();
    while let Some(e) = stream.next().await {
        events.push(e);
    }
    let messages = stream.result().await;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].role(), "assistant");
    // No user message events: the context already had it.
    assert_eq!(
        kinds(&events)[..3],
        ["agent_start", "turn_start", "message_start"]
    );
    let AgentEvent::MessageStart { message } = &events[2] else {
        panic!()
    };
    assert_eq!(message.role(), "assistant");
}

#[tokio::test]
async fn continue_from_a_tool_result_calls_the_model() {
    let script = Script::new(vec![text("saw the result")]);
    let mut ctx = context(vec![]);
    ctx.messages.push(
        pi_ai::ToolResultMessage {
            tool_call_id: "t".into(),
            tool_name: "x".into(),
            ..Default::default()
        }
        .into(),
    );
    let stream = agent_loop_continue(ctx, config(&script), CancellationToken::new()).unwrap();
    let messages = stream.result().await;
    assert_eq!(messages[0].as_assistant().unwrap().text(), "saw the result");
    assert_eq!(script.context(0).messages[0].role(), "toolResult");
}

struct PipelineHooks {
    api_key_calls: Arc<Mutex<Vec<String>>>,
}

impl AgentHooks for PipelineHooks {
    fn convert_to_llm(&self, messages: &[AgentMessage]) -> Vec<Message> {
        messages
            .iter()
            .filter_map(|m| match m {
                AgentMessage::Llm(m) => Some(m.clone()),
                AgentMessage::Custom(c) if c.role == "note" => {
                    let text = c.get("text").and_then(|v| v.as_str()).unwrap_or("");
                    Some(UserMessage::text(format!("[note] {text}")).into())
                }
                AgentMessage::Custom(_) => None,
            })
            .collect()
    }

    fn transform_context<'a>(
        &'a self,
        messages: &'a [AgentMessage],
        _c: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<Vec<AgentMessage>>> {
        Box::pin(async move {
            let mut fields = serde_json::Map::new();
            fields.insert("text".into(), json!("injected"));
            let mut messages = messages.to_vec();
            messages.insert(0, CustomMessage::new("note", fields).into());
            Some(messages)
        })
    }

    fn get_api_key<'a>(
        &'a self,
        provider: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, String>> {
        let calls = Arc::clone(&self.api_key_calls);
        Box::pin(async move {
            let mut calls = calls.lock().unwrap();
            calls.push(provider.to_owned());
            Ok(Some(format!("key-{}", calls.len())))
        })
    }
}

#[tokio::test]
async fn context_pipeline_transforms_converts_and_asks_for_a_key_each_call() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let calls = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("a", "echo", json!({"value": "1"}))]),
        text("done"),
    ]);
    let mut cfg = config(&script);
    cfg.hooks = Arc::new(PipelineHooks {
        api_key_calls: Arc::clone(&calls),
    });
    let mut ctx = context(vec![TestTool::new("echo", Behaviour::default(), &log)]);
    ctx.messages
        .push(CustomMessage::new("ui-only", serde_json::Map::new()).into());
    let (_, messages) = run(prompt("go"), ctx, cfg).await;
    assert_eq!(*calls.lock().unwrap(), ["scripted", "scripted"]);
    let keys: Vec<_> = script
        .options
        .lock()
        .unwrap()
        .iter()
        .map(|o| o.stream.api_key.clone())
        .collect();
    assert_eq!(keys, [Some("key-1".to_owned()), Some("key-2".to_owned())]);
    let first = script.context(0);
    // The injected note reached the model as a user message; the ui-only message did not.
    assert_eq!(first.messages.len(), 2);
    let Message::User(note) = &first.messages[0] else {
        panic!()
    };
    assert!(
        matches!(&note.content, pi_ai::UserContent::Blocks(b) if b[0].as_text() == Some("[note] injected"))
    );
    // The transform is per call: the transcript itself is unchanged.
    assert!(messages.iter().all(|m| m.role() != "note"));
}

struct OverridingHooks;

impl AgentHooks for OverridingHooks {
    fn after_tool_call<'a>(
        &'a self,
        context: AfterToolCallContext<'a>,
        _c: &'a CancellationToken,
    ) -> BoxFuture<'a, Option<AfterToolCallResult>> {
        Box::pin(async move {
            match context.tool_call.id.as_str() {
                "content" => Some(AfterToolCallResult {
                    content: Some(vec![InputBlock::text("rewritten")]),
                    ..Default::default()
                }),
                "flag" => Some(AfterToolCallResult {
                    is_error: Some(true),
                    details: Some(json!({"why": "policy"})),
                    ..Default::default()
                }),
                _ => None,
            }
        })
    }
}

#[tokio::test]
async fn after_tool_call_overrides_field_by_field() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[
            ("content", "echo", json!({"value": "1"})),
            ("flag", "echo", json!({"value": "2"})),
            ("plain", "echo", json!({"value": "3"})),
        ]),
        text("done"),
    ]);
    let mut cfg = config(&script);
    cfg.hooks = Arc::new(OverridingHooks);
    let (events, _) = run(
        prompt("go"),
        context(vec![TestTool::new("echo", Behaviour::default(), &log)]),
        cfg,
    )
    .await;
    assert_eq!(result_text(&events, "content"), ("rewritten".into(), false));
    assert_eq!(result_text(&events, "flag"), ("ok 2".into(), true));
    assert_eq!(result_text(&events, "plain"), ("ok 3".into(), false));
    let details = events.iter().find_map(|e| match e {
        AgentEvent::ToolExecutionEnd {
            tool_call_id,
            result,
            ..
        } if tool_call_id == "flag" => result.details.clone(),
        _ => None,
    });
    assert_eq!(details, Some(json!({"why": "policy"})));
}

#[tokio::test]
async fn tool_updates_are_emitted_before_the_end() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("a", "busy", json!({"value": "1"}))]),
        text("done"),
    ]);
    let ctx = context(vec![TestTool::new(
        "busy",
        Behaviour {
            updates: 3,
            delay_ms: 5,
            ..Default::default()
        },
        &log,
    )]);
    let (events, _) = run(prompt("go"), ctx, config(&script)).await;
    let k = kinds(&events);
    let start = k.iter().position(|k| *k == "tool_execution_start").unwrap();
    assert_eq!(
        k[start + 1..start + 5],
        [
            "tool_execution_update",
            "tool_execution_update",
            "tool_execution_update",
            "tool_execution_end"
        ]
    );
    let AgentEvent::ToolExecutionUpdate {
        partial_result,
        args,
        ..
    } = &events[start + 2]
    else {
        panic!()
    };
    assert_eq!(partial_result.content[0].as_text(), Some("progress 1"));
    assert_eq!(args, &json!({"value": "1"}));
}

struct StopAfterFirstTurn;

impl AgentHooks for StopAfterFirstTurn {
    fn should_stop_after_turn<'a>(&'a self, context: TurnContext<'a>) -> BoxFuture<'a, bool> {
        Box::pin(async move { !context.tool_results.is_empty() })
    }
}

#[tokio::test]
async fn should_stop_after_turn_ends_the_run() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let script = Script::new(vec![
        tools(&[("a", "echo", json!({"value": "1"}))]),
        text("never"),
    ]);
    let mut cfg = config(&script);
    cfg.hooks = Arc::new(StopAfterFirstTurn);
    let (events, _) = run(
        prompt("go"),
        context(vec![TestTool::new("echo", Behaviour::default(), &log)]),
        cfg,
    )
    .await;
    assert_eq!(script.calls(), 1);
    let k = kinds(&events);
    assert_eq!(k[k.len() - 2..], ["turn_end", "agent_end"]);
}

#[tokio::test]
async fn message_updates_carry_the_stream_events() {
    let script = Script::new(vec![text("hey")]);
    let (events, _) = run(prompt("go"), context(vec![]), config(&script)).await;
    let inner: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::MessageUpdate {
                assistant_message_event,
                ..
            } => Some(assistant_message_event.kind()),
            _ => None,
        })
        .collect();
    assert_eq!(inner, ["text_start", "text_delta", "text_end"]);
    let AgentEvent::MessageUpdate { message, .. } = &events[6] else {
        panic!()
    };
    assert_eq!(message.text(), "hey");
}
