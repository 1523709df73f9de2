//! Cross-provider handoff: one conversation runs on Anthropic, then OpenAI Responses, then
//! Google, then OpenAI Completions, with thinking and tool calls on the way. Every request
//! body is checked against its API's rules: roles, where tool results go, that every tool
//! call has exactly one result, tool-call ids each API accepts, and foreign thinking turned
//! into text (never sent as the other provider's signed thinking).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::{BTreeMap, BTreeSet};

use common::{collect, final_message, mock_model, options, server};
use mock_llm::{Item, Script};
use pi_ai::{
    AssistantMessage, Context, ImageContent, InputBlock, InputKind, Message, Model, ModelCost,
    StopReason, TextContent, Tool, UserMessage, api,
};
use serde_json::{Value, json};

fn model(api: &str, provider: &str, id: &str, base_url: String, images: bool) -> Model {
    Model {
        input: if images {
            vec![InputKind::Text, InputKind::Image]
        } else {
            vec![InputKind::Text]
        },
        cost: ModelCost::default(),
        max_tokens: 8_192,
        ..mock_model(api, provider, id, base_url)
    }
}

async fn run(model: &Model, context: &Context) -> AssistantMessage {
    let events = collect(model, context, options()).await;
    let message = AssistantMessage::clone(final_message(&events));
    assert_ne!(
        message.stop_reason,
        StopReason::Error,
        "{}: {:?}",
        model.api,
        message.error_message
    );
    message
}

fn tool_result(call: &pi_ai::ToolCall, text: &str) -> Message {
    common::tool_result(
        &call.id,
        &call.name,
        vec![InputBlock::Text(TextContent::new(text))],
    )
}

fn tools() -> Vec<Tool> {
    vec![
        Tool {
            name: "read".into(),
            description: "Read a file".into(),
            parameters: json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                               "additionalProperties": false,
                               "properties": {"path": {"type": "string"}}, "required": ["path"]}),
            constrained_sampling: None,
        },
        Tool {
            name: "ls".into(),
            description: "List a directory".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}}}),
            constrained_sampling: None,
        },
    ]
}

/// Calls and results of an Anthropic request: each tool_use answered in the next user turn.
fn check_anthropic(body: &Value) {
    let messages = body["messages"].as_array().unwrap();
    let mut last_role = "";
    for (i, message) in messages.iter().enumerate() {
        let role = message["role"].as_str().unwrap();
        assert_ne!(role, last_role, "roles alternate: {body}");
        last_role = role;
        let blocks = message["content"].as_array().cloned().unwrap_or_default();
        let uses: BTreeSet<String> = blocks
            .iter()
            .filter(|b| b["type"] == "tool_use")
            .map(|b| b["id"].as_str().unwrap().to_owned())
            .collect();
        if !uses.is_empty() {
            let next = &messages[i + 1]["content"];
            let results: BTreeSet<String> = next
                .as_array()
                .unwrap()
                .iter()
                .filter(|b| b["type"] == "tool_result")
                .map(|b| b["tool_use_id"].as_str().unwrap().to_owned())
                .collect();
            assert_eq!(uses, results, "{body}");
        }
        for id in &uses {
            assert!(
                id.chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-'),
                "{id}"
            );
        }
    }
}

/// Responses input: every function_call has exactly one function_call_output; no chat roles.
fn check_responses(body: &Value) {
    let input = body["input"].as_array().unwrap();
    let mut calls = BTreeMap::new();
    let mut outputs = BTreeMap::new();
    for item in input {
        assert_ne!(item["role"], "tool", "{item}");
        match item["type"].as_str() {
            Some("function_call") => {
                *calls
                    .entry(item["call_id"].as_str().unwrap().to_owned())
                    .or_insert(0) += 1;
                assert!(item["arguments"].is_string());
            }
            Some("function_call_output") => {
                *outputs
                    .entry(item["call_id"].as_str().unwrap().to_owned())
                    .or_insert(0) += 1;
            }
            _ => {}
        }
    }
    assert!(!calls.is_empty());
    assert_eq!(calls, outputs, "{body}");
    assert!(calls.values().all(|n| *n == 1));
}

/// Gemini contents: roles user/model; functionCall in model turns, functionResponse in user
/// turns with the same names; no thought parts carrying another provider's signature.
fn check_google(body: &Value) {
    let contents = body["contents"].as_array().unwrap();
    let mut called = Vec::new();
    let mut answered = Vec::new();
    for content in contents {
        let role = content["role"].as_str().unwrap();
        assert!(role == "user" || role == "model", "{content}");
        for part in content["parts"].as_array().unwrap() {
            if let Some(call) = part.get("functionCall") {
                assert_eq!(role, "model");
                called.push(call["name"].as_str().unwrap().to_owned());
            }
            if let Some(response) = part.get("functionResponse") {
                assert_eq!(role, "user");
                answered.push(response["name"].as_str().unwrap().to_owned());
            }
            assert_ne!(
                part["thought"], true,
                "foreign thinking is not sent as thought: {part}"
            );
        }
    }
    assert!(!called.is_empty());
    assert_eq!(called, answered, "{body}");
    let text = body.to_string();
    assert!(!text.contains("$schema"), "schema normalized for Gemini");
}

/// Chat Completions: each assistant tool_calls id has one tool message right after.
fn check_completions(body: &Value) {
    let messages = body["messages"].as_array().unwrap();
    let mut pending: BTreeSet<String> = BTreeSet::new();
    let mut seen_calls = 0;
    for message in messages {
        match message["role"].as_str().unwrap() {
            "assistant" => {
                assert!(
                    pending.is_empty(),
                    "results precede the next assistant: {body}"
                );
                for call in message["tool_calls"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default()
                {
                    let id = call["id"].as_str().unwrap().to_owned();
                    assert!(id.len() <= 40, "{id}");
                    pending.insert(id);
                    seen_calls += 1;
                }
            }
            "tool" => {
                let id = message["tool_call_id"].as_str().unwrap();
                assert!(pending.remove(id), "a result for a known call: {body}");
            }
            _ => assert!(pending.is_empty(), "{body}"),
        }
    }
    assert!(pending.is_empty());
    assert!(seen_calls >= 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_conversation_across_four_providers() {
    let server = server().await;
    let url = server.url();
    let anthropic = model(
        api::ANTHROPIC_MESSAGES,
        "anthropic",
        "claude-mock",
        server.anthropic_base_url(),
        true,
    );
    let responses = model(
        api::OPENAI_RESPONSES,
        "openai",
        "gpt-mock",
        format!("{url}/v1"),
        true,
    );
    let google = model(
        api::GOOGLE_GENERATIVE_AI,
        "google",
        "gemini-mock",
        format!("{url}/v1beta"),
        true,
    );
    let completions = model(
        api::OPENAI_COMPLETIONS,
        "groq",
        "text-only",
        server.openai_base_url(),
        false,
    );

    let image = ImageContent::new("iVBORw0KGgo=", "image/png");
    let mut context = Context {
        system_prompt: Some("You are a test.".into()),
        messages: vec![Message::User(UserMessage::blocks(vec![
            InputBlock::Text(TextContent::new("Look at this and read a.txt")),
            InputBlock::Image(image),
        ]))],
        tools: tools(),
        ..Default::default()
    };

    // 1. Anthropic thinks and calls read.
    server.push(Script::new(vec![
        Item::thinking("I should read the file."),
        Item::tool_call("read", json!({"path": "a.txt"})),
    ]));
    let reply = run(&anthropic, &context).await;
    let call = reply.tool_calls().next().unwrap().clone();
    context.messages.push(Message::Assistant(reply.into()));
    context.messages.push(tool_result(&call, "contents of a"));

    // 2. OpenAI Responses reasons and calls ls (twice, in parallel); one result goes missing.
    server.push(Script::new(vec![
        Item::thinking("Now list the directory."),
        Item::tool_call("ls", json!({"path": "."})),
        Item::tool_call("ls", json!({"path": "src"})),
    ]));
    let reply = run(&responses, &context).await;
    let calls: Vec<_> = reply.tool_calls().cloned().collect();
    assert_eq!(calls.len(), 2);
    context.messages.push(Message::Assistant(reply.into()));
    context.messages.push(tool_result(&calls[0], "a.txt b.txt"));
    // calls[1] never gets a result: the next providers must synthesize one.

    // 3. Google thinks, says something and calls read.
    server.push(Script::new(vec![
        Item::thinking("One more file."),
        Item::text("Reading b.txt."),
        Item::tool_call("read", json!({"path": "b.txt"})),
    ]));
    let reply = run(&google, &context).await;
    let call = reply.tool_calls().next().unwrap().clone();
    context.messages.push(Message::Assistant(reply.into()));
    context.messages.push(tool_result(&call, "contents of b"));

    // 4. A text-only OpenAI-compatible model finishes.
    server.push(Script::text("All done."));
    let reply = run(&completions, &context).await;
    assert_eq!(reply.text(), "All done.");

    let requests = server.requests();
    assert_eq!(requests.len(), 4);
    check_anthropic(&requests[0].body);
    check_responses(&requests[1].body);
    check_google(&requests[2].body);
    check_completions(&requests[3].body);

    // Anthropic's signed thinking does not reach the other providers at all (pi 1.3).
    let responses_body = requests[1].body.to_string();
    assert!(!responses_body.contains("I should read the file."));
    assert!(
        !requests[1].body["input"]
            .as_array()
            .unwrap()
            .iter()
            .any(|i| i["type"] == "reasoning"),
        "no foreign reasoning item"
    );
    // The text-only model gets no image, and a note instead.
    let last = requests[3].body.to_string();
    assert!(!last.contains("iVBORw0KGgo="));
    assert!(!last.contains("image_url"));
}
