//! The loop's event order against a scripted in-process stream (seeds 001–003): the exact
//! sequence of a text-only run and of a tool call, parallel and sequential tool batches, tool
//! updates before their end, and message updates carrying the stream's events.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::loop_run::{
    config, context, prompt, result_message_ids, result_text, run, tool_end_ids,
};
use common::{Behaviour, Script, TestTool, kinds, text, tools};
use pi_agent_core::{AgentEvent, ToolExecutionMode};
use serde_json::json;

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
