//! The loop when something fails: invalid arguments, unknown tools, tool errors and panics,
//! aborts during a tool or while streaming, and provider errors; each ends as the reference
//! does.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::loop_run::{config, context, prompt, result_text, run};
use common::{Behaviour, Reply, Script, TestTool, kinds, text, tools};
use futures_util::StreamExt;
use pi_agent_core::{AgentEvent, agent_loop};
use serde_json::json;
use tokio_util::sync::CancellationToken;

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
