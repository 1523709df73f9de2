//! The loop's hooks: `before_tool_call` blocking, the context pipeline (transform, convert,
//! an API key per call), `after_tool_call` overriding field by field, and
//! `should_stop_after_turn`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};

use common::loop_run::{config, context, prompt, result_text, run};
use common::{Behaviour, Script, TestTool, kinds, text, tools};
use futures_util::future::BoxFuture;
use pi_agent_core::{
    AfterToolCallContext, AfterToolCallResult, AgentEvent, AgentHooks, AgentMessage,
    BeforeToolCallContext, BeforeToolCallResult, CustomMessage, TurnContext,
};
use pi_ai::{InputBlock, Message, UserMessage};
use serde_json::json;
use tokio_util::sync::CancellationToken;

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
                    terminate: false,
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
