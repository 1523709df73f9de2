//! The Google providers (`google-generative-ai`, `google-vertex`, `google-gemini-cli`)
//! streaming from mock-llm: text with each API's URL and auth, thinking and thought signatures,
//! parallel tool calls and their ids, usage and cost, and UTF-8 split across chunks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use mock_llm::{Item, Script, ScriptUsage};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, InputBlock, Message, StopReason,
    TextContent, ThinkingContent, ToolCall, ToolResultMessage, UserMessage, api,
};
use serde_json::json;

use common::google::{
    ALL, Api, SIGNATURE, context, expected_path, inner, model, options, run_script,
};
use common::{assert_contract, collect, final_message, kinds, server};

#[tokio::test]
async fn text_streams_in_order_with_each_apis_url_and_auth() {
    for which in ALL {
        let server = server().await;
        server.push(Script::text("Hello, streaming world!").with_chunk_size(4));
        let events = collect(&model(&server, which), &context("hi"), options(which)).await;
        assert_contract(&events);
        let k = kinds(&events);
        assert_eq!(&k[..2], ["start", "text_start"], "{which:?}");
        assert_eq!(&k[k.len() - 2..], ["text_end", "done"], "{which:?}");
        assert_eq!(k.iter().filter(|k| **k == "text_delta").count(), 6);
        let message = final_message(&events);
        assert_eq!(message.text(), "Hello, streaming world!");
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert!(
            message
                .response_id
                .as_deref()
                .is_some_and(|id| id.starts_with("mockResp")),
            "{which:?}: {:?}",
            message.response_id
        );
        assert_eq!(message.api, model(&server, which).api);
        let request = &server.requests()[0];
        assert_eq!(request.path, expected_path(which, "gemini-2.5-flash"));
        assert_eq!(request.headers["content-type"], "application/json");
        match which {
            Api::Gemini => assert_eq!(request.headers["x-goog-api-key"], "gemini-key"),
            Api::Vertex => assert_eq!(request.headers["x-goog-api-key"], "vertex-key"),
            Api::Cli => {
                assert_eq!(request.headers["authorization"], "Bearer ya29.test-token");
                assert_eq!(request.headers["accept"], "text/event-stream");
                assert_eq!(
                    request.headers["user-agent"],
                    "google-cloud-sdk vscode_cloudshelleditor/0.1"
                );
                assert!(request.headers["client-metadata"].contains("\"pluginType\":\"GEMINI\""));
                assert!(!request.headers.contains_key("x-goog-api-key"));
            }
        }
        // Each delta's partial holds the text so far.
        let mut seen = String::new();
        for event in &events {
            if let AssistantMessageEvent::TextDelta {
                delta,
                partial,
                content_index,
            } = event
            {
                seen.push_str(delta);
                assert_eq!(
                    partial.content[*content_index].as_text(),
                    Some(seen.as_str())
                );
            }
        }
    }
}

#[tokio::test]
async fn thinking_with_signature_is_decoded_and_replayed_next_turn() {
    for which in ALL {
        let server = server().await;
        let m = model(&server, which);
        server.push(
            Script::new(vec![
                Item::Thinking {
                    text: "Let me think about it.".into(),
                    signature: Some(SIGNATURE.into()),
                },
                Item::text("The answer is 42."),
            ])
            .with_chunk_size(5),
        );
        let mut ctx = context("question");
        let events = collect(&m, &ctx, options(which)).await;
        assert_contract(&events);
        let k = kinds(&events);
        let thinking_end = k.iter().position(|k| *k == "thinking_end").unwrap();
        let text_start = k.iter().position(|k| *k == "text_start").unwrap();
        assert_eq!(k[1], "thinking_start");
        assert!(thinking_end < text_start, "{which:?}: {k:?}");
        let reply = final_message(&events).clone();
        let AssistantBlock::Thinking(thinking) = &reply.content[0] else {
            panic!("{reply:?}")
        };
        assert_eq!(thinking.thinking, "Let me think about it.");
        assert_eq!(thinking.thinking_signature.as_deref(), Some(SIGNATURE));
        assert_eq!(reply.content[1].as_text(), Some("The answer is 42."));

        // Next turn: the thought goes back as a thought part with its signature.
        ctx.messages.push(Message::Assistant(reply.into()));
        ctx.messages
            .push(Message::User(UserMessage::text("and now?")));
        server.push(Script::text("ok"));
        let events = collect(&m, &ctx, options(which)).await;
        assert_eq!(final_message(&events).text(), "ok");
        let body = inner(which, &server.requests()[1].body);
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 3, "{which:?}: {body}");
        assert_eq!(
            contents[1],
            json!({"role": "model", "parts": [
                {"text": "Let me think about it.", "thought": true, "thoughtSignature": SIGNATURE},
                {"text": "The answer is 42."}
            ]})
        );
    }
}

#[tokio::test]
async fn foreign_or_invalid_signatures_are_not_replayed() {
    let server = server().await;
    let m = model(&server, Api::Gemini);
    let mut ctx = context("q");
    let mut own = AssistantMessage::empty(api::GOOGLE_GENERATIVE_AI, "google", "gemini-2.5-flash");
    let mut bad = ThinkingContent::new("own thought");
    bad.thinking_signature = Some("not base64!".into());
    let mut call = ToolCall::new("c1", "read", serde_json::Map::new());
    call.thought_signature = Some(SIGNATURE.into());
    let mut text = TextContent::new("own text");
    text.text_signature = Some(SIGNATURE.into());
    own.content = vec![
        AssistantBlock::Thinking(bad),
        AssistantBlock::Text(text),
        AssistantBlock::ToolCall(call),
    ]
    .into();
    own.stop_reason = StopReason::ToolUse;
    ctx.messages.push(Message::Assistant(own.into()));
    ctx.messages.push(Message::ToolResult(
        ToolResultMessage {
            tool_call_id: "c1".into(),
            tool_name: "read".into(),
            content: vec![InputBlock::text("file")].into(),
            ..Default::default()
        }
        .into(),
    ));
    let mut foreign = AssistantMessage::empty(api::ANTHROPIC_MESSAGES, "anthropic", "claude");
    let mut signed = ThinkingContent::new("their thought");
    signed.thinking_signature = Some(SIGNATURE.into());
    let mut their_text = TextContent::new("their answer");
    their_text.text_signature = Some(SIGNATURE.into());
    foreign.content = vec![
        AssistantBlock::Thinking(signed),
        AssistantBlock::Text(their_text),
    ]
    .into();
    ctx.messages.push(Message::Assistant(foreign.into()));
    ctx.messages.push(Message::User(UserMessage::text("go on")));
    let (_, request) = run_script(
        Api::Gemini,
        &m,
        &ctx,
        Script::text("ok"),
        options(Api::Gemini),
    )
    .await;
    let contents = request.body["contents"].as_array().unwrap().clone();
    // Own turn: the invalid thinking signature is dropped, the valid ones stay on their parts.
    assert_eq!(
        contents[1]["parts"],
        json!([
            {"text": "own thought", "thought": true},
            {"text": "own text", "thoughtSignature": SIGNATURE},
            {"functionCall": {"name": "read", "args": {}}, "thoughtSignature": SIGNATURE}
        ])
    );
    // Another model's thinking is left out (pi 1.3), its text goes without a signature.
    assert_eq!(
        contents[3],
        json!({"role": "model", "parts": [{"text": "their answer"}]})
    );
}

#[tokio::test]
async fn parallel_tool_calls_get_ids_and_results_go_back_in_one_user_turn() {
    for which in ALL {
        let server = server().await;
        let m = model(&server, which);
        server.push(
            Script::new(vec![
                Item::text("Reading three files."),
                Item::tool_call("read", json!({"path": "a.txt"})),
                Item::tool_call("read", json!({"path": "b.txt", "offset": 2})),
                Item::tool_call("write", json!({"path": "c.txt", "content": "x\ny ✓"})),
            ])
            .with_chunk_size(6),
        );
        let mut ctx = context("go");
        let events = collect(&m, &ctx, options(which)).await;
        assert_contract(&events);
        let reply = final_message(&events).clone();
        assert_eq!(reply.stop_reason, StopReason::ToolUse);
        let calls: Vec<ToolCall> = reply.tool_calls().cloned().collect();
        assert_eq!(calls.len(), 3, "{which:?}");
        assert_eq!(calls[0].arguments["path"], "a.txt");
        assert_eq!(calls[1].arguments["offset"], 2);
        assert_eq!(calls[2].name, "write");
        assert_eq!(calls[2].arguments["content"], "x\ny ✓");
        // Gemini sends no ids: each call gets a distinct `<name>_<ms>_<n>` id.
        let ids: std::collections::HashSet<_> = calls.iter().map(|c| c.id.clone()).collect();
        assert_eq!(ids.len(), 3);
        assert!(
            calls
                .iter()
                .all(|c| c.id.starts_with(&format!("{}_", c.name)))
        );
        // Each call: start, one delta with the whole arguments JSON, end.
        let per_call: Vec<&str> = kinds(&events)
            .into_iter()
            .filter(|k| k.starts_with("toolcall"))
            .collect();
        assert_eq!(
            per_call,
            ["toolcall_start", "toolcall_delta", "toolcall_end"].repeat(3)
        );
        let first_delta = events.iter().find_map(|e| match e {
            AssistantMessageEvent::ToolcallDelta { delta, .. } => Some(delta.clone()),
            _ => None,
        });
        assert_eq!(first_delta.as_deref(), Some(r#"{"path":"a.txt"}"#));

        // The results: one user turn of functionResponse parts after the model turn.
        ctx.messages.push(Message::Assistant(reply.into()));
        for (i, call) in calls.iter().enumerate() {
            ctx.messages.push(Message::ToolResult(
                ToolResultMessage {
                    tool_call_id: call.id.clone(),
                    tool_name: call.name.clone(),
                    content: vec![InputBlock::text(format!("result {i}"))].into(),
                    is_error: i == 2,
                    ..Default::default()
                }
                .into(),
            ));
        }
        server.push(Script::text("done"));
        let events = collect(&m, &ctx, options(which)).await;
        assert_eq!(final_message(&events).text(), "done");
        let body = inner(which, &server.requests()[1].body);
        let contents = body["contents"].as_array().unwrap();
        assert_eq!(contents.len(), 3, "{which:?}: {body}");
        assert_eq!(contents[1]["role"], "model");
        assert_eq!(
            contents[1]["parts"][0],
            json!({"text": "Reading three files."})
        );
        assert_eq!(
            contents[1]["parts"][1],
            json!({"functionCall": {"name": "read", "args": {"path": "a.txt"}}})
        );
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [
                {"functionResponse": {"name": "read", "response": {"output": "result 0"}}},
                {"functionResponse": {"name": "read", "response": {"output": "result 1"}}},
                {"functionResponse": {"name": "write", "response": {"error": "result 2"}}}
            ]})
        );
    }
}

#[tokio::test]
async fn provided_ids_are_kept_and_duplicates_replaced() {
    let server = server().await;
    server.push(Script::new(vec![
        Item::ToolCall {
            id: Some("call_1".into()),
            name: "read".into(),
            arguments: json!({"path": "a"}),
        },
        Item::ToolCall {
            id: Some("call_1".into()),
            name: "read".into(),
            arguments: json!({"path": "b"}),
        },
    ]));
    let events = collect(
        &model(&server, Api::Gemini),
        &context("x"),
        options(Api::Gemini),
    )
    .await;
    let ids: Vec<String> = final_message(&events)
        .tool_calls()
        .map(|c| c.id.clone())
        .collect();
    assert_eq!(ids[0], "call_1");
    assert!(ids[1].starts_with("read_"), "{ids:?}");
}

#[tokio::test]
async fn usage_and_cost_follow_the_typescript_formula() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::new(vec![Item::thinking("reasoning here"), Item::text("ok")]).with_full_usage(
                ScriptUsage {
                    input: 1000,
                    output: 200,
                    cache_read: 500,
                    cache_write: 0,
                    reasoning: 0,
                },
            ),
        );
        let events = collect(&model(&server, which), &context("hi"), options(which)).await;
        let usage = final_message(&events).usage;
        // input = promptTokenCount - cachedContentTokenCount; output = candidates + thoughts.
        assert_eq!(
            (
                usage.input,
                usage.output,
                usage.cache_read,
                usage.cache_write
            ),
            (1000, 200, 500, 0),
            "{which:?}"
        );
        assert_eq!(usage.total_tokens, 1700);
        assert!((usage.cost.input - 0.003).abs() < 1e-12);
        assert!((usage.cost.output - 0.003).abs() < 1e-12);
        assert!((usage.cost.cache_read - 0.00015).abs() < 1e-12);
        assert!((usage.cost.total - 0.00615).abs() < 1e-12);
    }
}

#[tokio::test]
async fn max_tokens_finish_is_length() {
    for which in ALL {
        let server = server().await;
        server.push(Script::text("cut").with_stop_reason(mock_llm::StopReason::Length));
        let events = collect(&model(&server, which), &context("hi"), options(which)).await;
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Length, "{which:?}");
        assert_eq!(events.last().unwrap().kind(), "done");
    }
}

#[tokio::test]
async fn default_echo_reply_round_trip() {
    for which in ALL {
        let server = server().await;
        let m = model(&server, which);
        let message = pi_ai::complete(&m, &context("hi"), options(which)).await;
        assert_eq!(message.text(), "ok: hi", "{which:?}");
        let message = pi_ai::complete(&m, &context("read notes.md"), options(which)).await;
        let call = message.tool_calls().next().expect("a read call").clone();
        assert_eq!(call.arguments["path"], "notes.md");
        let mut ctx = context("read notes.md");
        ctx.messages.push(Message::Assistant(message.into()));
        ctx.messages.push(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: call.id,
                tool_name: call.name,
                content: vec![InputBlock::text("the notes say hello there")].into(),
                ..Default::default()
            }
            .into(),
        ));
        let message = pi_ai::complete(&m, &ctx, options(which)).await;
        assert_eq!(message.text(), "done: the notes say hello ", "{which:?}");
    }
}

#[tokio::test]
async fn utf8_split_across_network_chunks_decodes_intact() {
    let text = "Grüße, 世界! 🎉 naïve café — “quotes” ✓";
    for which in ALL {
        for bytes in [1, 3, 7] {
            let server = server().await;
            server.push(
                Script::new(vec![
                    Item::thinking("思考中…"),
                    Item::text(text),
                    Item::tool_call("read", json!({"path": "ü.txt"})),
                ])
                .with_chunk_size(2)
                .with_line_ending(mock_llm::LineEnding::Crlf)
                .with_write_chunk_bytes(bytes),
            );
            let events = collect(&model(&server, which), &context("x"), options(which)).await;
            assert_contract(&events);
            let message = final_message(&events);
            assert_eq!(message.text(), text, "{which:?} split {bytes}");
            assert_eq!(
                message.tool_calls().next().unwrap().arguments["path"],
                "ü.txt"
            );
        }
    }
}
