//! The Google providers (`google-generative-ai`, `google-vertex`, `google-gemini-cli`) against
//! mock-llm: streaming, thinking and thought signatures, parallel tool calls, usage, images,
//! cancellation, every fault, and request bodies checked against the documented API shapes.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use mock_llm::{Fault, Item, Script, ScriptUsage};
use pi_ai::{
    AssistantBlock, AssistantMessage, AssistantMessageEvent, Context, ImageContent, InputBlock,
    InputKind, Message, SimpleStreamOptions, StopReason, TextContent, ThinkingContent,
    ThinkingLevel, Tool, ToolCall, ToolChoice, ToolResultMessage, UserMessage, api,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use common::google::{
    ALL, Api, SIGNATURE, context, expected_path, inner, model, model_with_id, offline_model,
    options, read_tool, replay, run_fault, run_script, simple, simple_body,
};
use common::{assert_contract, collect, error_text, final_message, keys, kinds, server};

// ---------------------------------------------------------------------------------------------
// Streaming
// ---------------------------------------------------------------------------------------------

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
    foreign.content = vec![AssistantBlock::Thinking(signed)].into();
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
    // Another model's thinking arrives as plain text, without any signature.
    assert_eq!(
        contents[3],
        json!({"role": "model", "parts": [{"text": "their thought"}]})
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

// ---------------------------------------------------------------------------------------------
// Recorded real-format bodies (replay through `decode_sse_bytes`)
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn real_vertex_stream_with_trailing_signature_part() {
    // As Vertex AI sends it: text chunks, then an empty text part carrying the signature.
    let body = concat!(
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\",\"parts\": [{\"text\": \"Hello!\"}]}}],\"usageMetadata\": {\"trafficType\": \"ON_DEMAND\"},\"modelVersion\": \"gemini-3.1-flash-lite-preview\",\"createTime\": \"2026-03-10T14:54:45.066123Z\",\"responseId\": \"tTCwacuEBMvnitYP06qsgQY\"}\r\n\r\n",
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\",\"parts\": [{\"text\": \" How can I help you today?\"}]}}],\"usageMetadata\": {\"trafficType\": \"ON_DEMAND\"},\"modelVersion\": \"gemini-3.1-flash-lite-preview\",\"createTime\": \"2026-03-10T14:54:45.066123Z\",\"responseId\": \"tTCwacuEBMvnitYP06qsgQY\"}\r\n\r\n",
        "data: {\"candidates\": [{\"content\": {\"role\": \"model\",\"parts\": [{\"text\": \"\",\"thoughtSignature\": \"AY89a18iOcFus5wr5bW5xN6zZ4aUiCyhgmg6HE2YjtYDV/dwZ5oZlZHeTmiUKv34qq0=\"}]},\"finishReason\": \"STOP\"}],\"usageMetadata\": {\"promptTokenCount\": 1,\"candidatesTokenCount\": 9,\"totalTokenCount\": 10,\"trafficType\": \"ON_DEMAND\",\"promptTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 1}],\"candidatesTokensDetails\": [{\"modality\": \"TEXT\",\"tokenCount\": 9}]},\"modelVersion\": \"gemini-3.1-flash-lite-preview\",\"createTime\": \"2026-03-10T14:54:45.066123Z\",\"responseId\": \"tTCwacuEBMvnitYP06qsgQY\"}\r\n\r\n",
    );
    let m = offline_model(Api::Vertex, "gemini-3.1-flash-lite-preview");
    let events = replay(&m, body).await;
    assert_contract(&events);
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.text(), "Hello! How can I help you today?");
    assert_eq!(message.content.len(), 1);
    let AssistantBlock::Text(text) = &message.content[0] else {
        panic!()
    };
    assert_eq!(
        text.text_signature.as_deref(),
        Some("AY89a18iOcFus5wr5bW5xN6zZ4aUiCyhgmg6HE2YjtYDV/dwZ5oZlZHeTmiUKv34qq0=")
    );
    assert_eq!(
        message.response_id.as_deref(),
        Some("tTCwacuEBMvnitYP06qsgQY")
    );
    assert_eq!(
        (
            message.usage.input,
            message.usage.output,
            message.usage.total_tokens
        ),
        (1, 9, 10)
    );
}

#[tokio::test]
async fn function_call_signature_and_provided_id_are_kept() {
    let body = concat!(
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"**Planning**\",\"thought\":true}],\"role\":\"model\"},\"index\":0}]}\n\n",
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"functionCall\":{\"id\":\"fc-1\",\"name\":\"read\",\"args\":{\"path\":\"a\"}},\"thoughtSignature\":\"c2lnbmF0dXJl\"},{\"functionCall\":{\"name\":\"read\",\"args\":{\"path\":\"b\"}}}],\"role\":\"model\"},\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":50,\"candidatesTokenCount\":20,\"thoughtsTokenCount\":30,\"totalTokenCount\":100}}\n\n",
    );
    let m = offline_model(Api::Gemini, "gemini-3-pro-preview");
    let events = replay(&m, body).await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(calls[0].id, "fc-1");
    assert_eq!(calls[0].thought_signature.as_deref(), Some("c2lnbmF0dXJl"));
    assert!(calls[1].id.starts_with("read_"));
    assert!(calls[1].thought_signature.is_none());
    assert_eq!(message.usage.output, 50);
    let AssistantBlock::Thinking(t) = &message.content[0] else {
        panic!()
    };
    assert_eq!(t.thinking, "**Planning**");
}

#[tokio::test]
async fn safety_and_unknown_finish_reasons_are_errors() {
    let chunk = |reason: &str| {
        format!(
            "data: {{\"candidates\":[{{\"content\":{{\"parts\":[{{\"text\":\"partial\"}}],\"role\":\"model\"}},\"finishReason\":\"{reason}\"}}]}}\n\n"
        )
    };
    let gemini = offline_model(Api::Gemini, "gemini-2.5-flash");
    let events = replay(&gemini, &chunk("SAFETY")).await;
    let message = final_message(&events);
    assert_eq!(error_text(message), "An unknown error occurred");
    assert_eq!(message.text(), "partial");
    let events = replay(&gemini, &chunk("BRAND_NEW_REASON")).await;
    assert_eq!(
        error_text(final_message(&events)),
        "Unhandled stop reason: BRAND_NEW_REASON"
    );
    // Cloud Code Assist maps raw strings: anything but STOP / MAX_TOKENS is an error.
    let cli = offline_model(Api::Cli, "gemini-2.5-flash");
    let wrapped = "data: {\"response\":{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"p\"}]},\"finishReason\":\"BRAND_NEW_REASON\"}]}}\n\n";
    let events = replay(&cli, wrapped).await;
    assert_eq!(
        error_text(final_message(&events)),
        "An unknown error occurred"
    );
}

#[tokio::test]
async fn a_stream_without_finish_reason_is_incomplete() {
    let body = "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"cut\"}],\"role\":\"model\"}}]}\n\n";
    let events = replay(&offline_model(Api::Gemini, "gemini-2.5-flash"), body).await;
    let message = final_message(&events);
    assert!(
        error_text(message).starts_with("Connection error"),
        "{message:?}"
    );
    assert_eq!(message.text(), "cut");
}

#[tokio::test]
async fn mock_rendered_bodies_replay_for_each_api() {
    let script = Script::new(vec![
        Item::thinking("hmm"),
        Item::text("a long answer"),
        Item::tool_call("read", json!({"path": "x"})),
    ]);
    for (which, name) in [
        (Api::Gemini, "google-generative-ai"),
        (Api::Vertex, "google-vertex"),
        (Api::Cli, "google-gemini-cli"),
    ] {
        let body = mock_llm::render_body(name, &script).unwrap();
        let events = replay(
            &offline_model(which, "m"),
            std::str::from_utf8(&body).unwrap(),
        )
        .await;
        assert_contract(&events);
        let message = final_message(&events);
        assert_eq!(message.text(), "a long answer", "{which:?}");
        assert_eq!(message.stop_reason, StopReason::ToolUse);
    }
}

// ---------------------------------------------------------------------------------------------
// Cancellation and faults
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn cancelling_mid_stream_ends_aborted_and_keeps_partial_text() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::filler(20_000)
                .with_chunk_size(20)
                .with_fault(Fault::stall(15, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options(which);
        opts.cancel = Some(cancel.clone());
        let mut stream = pi_ai::stream(&model(&server, which), &context("long"), opts);
        let mut events = Vec::new();
        let guarded = tokio::time::timeout(Duration::from_secs(10), async {
            while let Some(event) = stream.next().await {
                let deltas = events
                    .iter()
                    .filter(|e: &&AssistantMessageEvent| e.kind() == "text_delta")
                    .count();
                if event.kind() == "text_delta" && deltas == 5 {
                    cancel.cancel();
                }
                events.push(event);
            }
        })
        .await;
        assert!(
            guarded.is_ok(),
            "{which:?}: cancellation did not end the stream"
        );
        assert_contract(&events);
        let AssistantMessageEvent::Error { reason, error } = events.last().unwrap() else {
            panic!("{which:?}: {:?}", kinds(&events))
        };
        assert_eq!(*reason, StopReason::Aborted);
        assert_eq!(error.error_message.as_deref(), Some("Request was aborted"));
        assert!(error.text().len() >= 100, "{which:?}: partial text kept");
    }
}

#[tokio::test]
async fn cancelling_before_the_response_ends_aborted() {
    for which in ALL {
        let server = server().await;
        let cancel = CancellationToken::new();
        cancel.cancel();
        let mut opts = options(which);
        opts.cancel = Some(cancel);
        let events = collect(&model(&server, which), &context("x"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).stop_reason, StopReason::Aborted);
        assert!(server.requests().is_empty());
    }
}

const INTERNAL: &str = "An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting";

#[tokio::test]
async fn http_errors_read_as_the_sdks_report_them() {
    for which in ALL {
        for status in [400u16, 403, 429, 500, 503] {
            let message = run_fault(which, Script::http_error(status), options(which)).await;
            let text = error_text(&message);
            assert!(message.content.is_empty());
            match which {
                // The Gen AI SDK's ApiError: the error body as compact JSON.
                Api::Gemini | Api::Vertex => {
                    let body: Value = serde_json::from_str(text).expect(text);
                    assert_eq!(body["error"]["code"], status, "{text}");
                    assert!(body["error"]["status"].is_string());
                }
                Api::Cli => assert!(
                    text.starts_with(&format!("Cloud Code Assist API error ({status}): ")),
                    "{text}"
                ),
            }
        }
    }
    let gemini = run_fault(Api::Gemini, Script::http_error(500), options(Api::Gemini)).await;
    assert_eq!(
        error_text(&gemini),
        format!(r#"{{"error":{{"code":500,"message":"{INTERNAL}","status":"INTERNAL"}}}}"#)
    );
    let cli = run_fault(Api::Cli, Script::http_error(429), options(Api::Cli)).await;
    assert_eq!(
        error_text(&cli),
        "Cloud Code Assist API error (429): Resource has been exhausted (e.g. check quota)."
    );
    // Context overflow stays recognizable.
    let body = r#"{"error":{"code":400,"message":"The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).","status":"INVALID_ARGUMENT"}}"#;
    let overflow = run_fault(
        Api::Gemini,
        Script::default().with_fault(Fault::HttpError {
            status: 400,
            retry_after: None,
            retry_after_ms: None,
            body: Some(body.into()),
        }),
        options(Api::Gemini),
    )
    .await;
    assert_eq!(error_text(&overflow), body);
    assert!(pi_ai::is_context_overflow(&overflow, Some(1_048_576)));
}

#[tokio::test]
async fn retries_after_429_with_retry_after_then_succeeds() {
    for which in ALL {
        let server = server().await;
        server.push(Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("1".into()),
            retry_after_ms: None,
            body: None,
        }));
        server.push(Script::http_error(503));
        server.push(Script::text("finally"));
        let mut opts = options(which);
        opts.max_retries = Some(2);
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("hi"), opts).await;
        assert_contract(&events);
        assert_eq!(final_message(&events).text(), "finally", "{which:?}");
        assert_eq!(server.requests().len(), 3);
        assert!(started.elapsed() >= Duration::from_millis(950));
    }
}

#[tokio::test]
async fn retry_after_beyond_the_cap_fails_at_once_naming_the_delay() {
    for which in ALL {
        let script = Script::http_error(429).with_fault(Fault::HttpError {
            status: 429,
            retry_after: Some("120".into()),
            retry_after_ms: None,
            body: None,
        });
        let mut opts = options(which);
        opts.max_retries = Some(3);
        opts.max_retry_delay_ms = Some(5_000);
        let message = run_fault(which, script, opts).await;
        let text = error_text(&message);
        assert!(
            text.starts_with("Server requested 120s retry delay (max: 5s). "),
            "{text}"
        );
        match which {
            Api::Cli => assert!(
                text.ends_with("Resource has been exhausted (e.g. check quota)."),
                "{text}"
            ),
            _ => assert!(
                text.ends_with("\"status\":\"RESOURCE_EXHAUSTED\"}}"),
                "{text}"
            ),
        }
    }
}

#[tokio::test]
async fn connection_dropped_mid_stream() {
    for which in ALL {
        let script = Script::text("a fairly long answer that will be cut off")
            .with_chunk_size(3)
            .with_fault(Fault::drop_after(6));
        let message = run_fault(which, script, options(which)).await;
        let text = error_text(&message);
        assert!(text.starts_with("Connection error"), "{which:?}: {text}");
        assert!(!message.text().is_empty(), "partial text kept");
    }
}

#[tokio::test]
async fn malformed_chunk() {
    for which in ALL {
        let script = Script::text("hello there")
            .with_chunk_size(2)
            .with_fault(Fault::malformed_after(3));
        let message = run_fault(which, script, options(which)).await;
        let text = error_text(&message);
        assert!(text.contains("Could not parse"), "{which:?}: {text}");
        assert_eq!(message.text(), "hello ", "the chunks before it are kept");
    }
}

#[tokio::test]
async fn stall_longer_than_the_idle_timeout() {
    for which in ALL {
        let script = Script::text("slow")
            .with_chunk_size(1)
            .with_fault(Fault::stall(2, 10_000));
        let mut opts = options(which);
        opts.idle_timeout_ms = Some(300);
        let message = run_fault(which, script, opts).await;
        let text = error_text(&message);
        assert!(
            text.contains("timed out") && text.contains("0.3s"),
            "{which:?}: {text}"
        );
    }
}

#[tokio::test]
async fn stall_shorter_than_the_idle_timeout_is_tolerated() {
    for which in ALL {
        let script = Script::text("slow but fine").with_fault(Fault::stall(1, 300));
        let message = run_fault(which, script, options(which)).await;
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert_eq!(message.text(), "slow but fine");
    }
}

#[tokio::test]
async fn stall_then_cancel() {
    for which in ALL {
        let server = server().await;
        server.push(
            Script::text("one two three")
                .with_chunk_size(4)
                .with_fault(Fault::stall(1, 20_000)),
        );
        let cancel = CancellationToken::new();
        let mut opts = options(which);
        opts.cancel = Some(cancel.clone());
        let canceller = {
            let cancel = cancel.clone();
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_millis(300)).await;
                cancel.cancel();
            })
        };
        let started = Instant::now();
        let events = collect(&model(&server, which), &context("x"), opts).await;
        canceller.await.unwrap();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert_contract(&events);
        let message = final_message(&events);
        assert_eq!(message.stop_reason, StopReason::Aborted);
        assert_eq!(message.text(), "one ");
    }
}

#[tokio::test]
async fn in_stream_error_event() {
    for which in ALL {
        let script = Script::text("partial answer")
            .with_chunk_size(4)
            .with_fault(Fault::StreamError {
                after_events: 2,
                message: Some("upstream exploded".into()),
            });
        let message = run_fault(which, script, options(which)).await;
        let text = error_text(&message);
        match which {
            // The SDK's in-stream ApiError text.
            Api::Gemini | Api::Vertex => assert_eq!(
                text,
                r#"got status: INTERNAL. {"error":{"code":500,"message":"upstream exploded","status":"INTERNAL"}}"#
            ),
            Api::Cli => assert_eq!(text, "Cloud Code Assist API error (500): upstream exploded"),
        }
        assert_eq!(message.text(), "partial ");
    }
}

#[tokio::test]
async fn cloud_code_assist_retries_an_empty_stream() {
    let server = server().await;
    server.push(Script::new(Vec::new()));
    server.push(Script::new(Vec::new()));
    server.push(Script::text("finally"));
    let started = Instant::now();
    let events = collect(&model(&server, Api::Cli), &context("x"), options(Api::Cli)).await;
    assert_contract(&events);
    assert_eq!(final_message(&events).text(), "finally");
    assert_eq!(server.requests().len(), 3);
    // Backoff 0.5 s then 1 s; the empty attempts left no events behind.
    assert!(started.elapsed() >= Duration::from_millis(1400));
    assert_eq!(events.iter().filter(|e| e.kind() == "start").count(), 1);

    let server = self::server().await;
    server.push_all([
        Script::new(Vec::new()),
        Script::new(Vec::new()),
        Script::new(Vec::new()),
    ]);
    let events = collect(&model(&server, Api::Cli), &context("x"), options(Api::Cli)).await;
    assert_contract(&events);
    assert_eq!(
        error_text(final_message(&events)),
        "Cloud Code Assist API returned an empty response"
    );
    assert_eq!(server.requests().len(), 3);

    // The Gemini API reports an empty turn as it is.
    let server = self::server().await;
    server.push(Script::new(Vec::new()));
    let events = collect(
        &model(&server, Api::Gemini),
        &context("x"),
        options(Api::Gemini),
    )
    .await;
    let message = final_message(&events);
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert!(message.content.is_empty());
}

#[tokio::test]
async fn missing_or_invalid_credentials_fail_without_a_request() {
    let server = server().await;
    let mut m = model(&server, Api::Gemini);
    m.provider = "no-such-provider".into();
    let mut opts = options(Api::Gemini);
    opts.api_key = None;
    let events = collect(&m, &context("hi"), opts).await;
    assert_eq!(events.len(), 1);
    assert_eq!(
        error_text(final_message(&events)),
        "No API key for provider: no-such-provider"
    );
    let cli = model(&server, Api::Cli);
    for (key, expected) in [
        (
            None,
            "Google Cloud Code Assist requires OAuth authentication. Use /login to authenticate.",
        ),
        (
            Some("nope"),
            "Invalid Google Cloud Code Assist credentials. Use /login to re-authenticate.",
        ),
        (
            Some(r#"{"token":"t"}"#),
            "Missing token or projectId in Google Cloud credentials. Use /login to re-authenticate.",
        ),
    ] {
        let mut opts = options(Api::Cli);
        opts.api_key = key.map(str::to_owned);
        let events = collect(&cli, &context("hi"), opts.clone()).await;
        assert_eq!(error_text(final_message(&events)), expected);
        let simple = SimpleStreamOptions {
            stream: opts,
            ..Default::default()
        };
        let message = pi_ai::complete_simple(&cli, &context("hi"), simple).await;
        assert_eq!(error_text(&message), expected);
    }
    assert!(server.requests().is_empty());
}

// ---------------------------------------------------------------------------------------------
// Request bodies
// ---------------------------------------------------------------------------------------------

#[tokio::test]
async fn gemini_body_has_the_documented_shape() {
    let server = server().await;
    let m = model(&server, Api::Gemini);
    let mut opts = simple(Api::Gemini, None);
    opts.stream.temperature = Some(0.5);
    opts.stream.tool_choice = Some(ToolChoice::Required);
    let body = simple_body(Api::Gemini, &m, &context("hello"), opts).await;
    assert_eq!(
        keys(&body),
        [
            "contents",
            "systemInstruction",
            "tools",
            "toolConfig",
            "generationConfig"
        ]
    );
    assert_eq!(
        body["contents"],
        json!([{"role": "user", "parts": [{"text": "hello"}]}])
    );
    assert_eq!(
        body["systemInstruction"],
        json!({"role": "user", "parts": [{"text": "You are a test."}]})
    );
    // Full JSON Schema in `parametersJsonSchema`, without document keywords.
    assert_eq!(
        body["tools"],
        json!([{"functionDeclarations": [{
            "name": "read",
            "description": "Read a file",
            "parametersJsonSchema": {
                "type": "object",
                "additionalProperties": false,
                "properties": {"path": {"type": "string"}, "offset": {"type": ["integer", "null"]}},
                "required": ["path"]
            }
        }]}])
    );
    assert_eq!(
        body["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY"}})
    );
    // maxOutputTokens defaults to the model's (capped at 32 000); thinking off is explicit.
    assert_eq!(
        body["generationConfig"],
        json!({"temperature": 0.5, "maxOutputTokens": 16384, "thinkingConfig": {"thinkingBudget": 0}})
    );
}

#[tokio::test]
async fn thinking_levels_map_per_model() {
    struct Case {
        which: Api,
        id: &'static str,
        level: Option<ThinkingLevel>,
        expected: Value,
    }
    let cases = [
        Case {
            which: Api::Gemini,
            id: "gemini-2.5-flash",
            level: Some(ThinkingLevel::High),
            expected: json!({"includeThoughts": true, "thinkingBudget": 24576}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-2.5-pro",
            level: Some(ThinkingLevel::Xhigh),
            expected: json!({"includeThoughts": true, "thinkingBudget": 32768}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-2.5-flash-lite",
            level: Some(ThinkingLevel::Minimal),
            expected: json!({"includeThoughts": true, "thinkingBudget": 512}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-2.5-flash-lite",
            level: Some(ThinkingLevel::Minimal),
            expected: json!({"includeThoughts": true, "thinkingBudget": 128}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-3-pro-preview",
            level: Some(ThinkingLevel::Medium),
            expected: json!({"includeThoughts": true, "thinkingLevel": "HIGH"}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-3-flash-preview",
            level: Some(ThinkingLevel::Low),
            expected: json!({"includeThoughts": true, "thinkingLevel": "LOW"}),
        },
        Case {
            which: Api::Gemini,
            id: "gemma-4-31b-it",
            level: Some(ThinkingLevel::Low),
            expected: json!({"includeThoughts": true, "thinkingLevel": "MINIMAL"}),
        },
        Case {
            which: Api::Vertex,
            id: "gemma-4-31b-it",
            level: Some(ThinkingLevel::Low),
            expected: json!({"includeThoughts": true, "thinkingBudget": -1}),
        },
        Case {
            which: Api::Gemini,
            id: "gemini-3-pro-preview",
            level: None,
            expected: json!({"thinkingLevel": "LOW"}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-3.1-flash-lite-preview",
            level: None,
            expected: json!({"thinkingLevel": "MINIMAL"}),
        },
        Case {
            which: Api::Gemini,
            id: "gemma-4-31b-it",
            level: None,
            expected: json!({"thinkingLevel": "MINIMAL"}),
        },
        Case {
            which: Api::Vertex,
            id: "gemini-2.5-pro",
            level: None,
            expected: json!({"thinkingBudget": 0}),
        },
        Case {
            which: Api::Cli,
            id: "gemini-3-pro-preview",
            level: Some(ThinkingLevel::Minimal),
            expected: json!({"includeThoughts": true, "thinkingLevel": "LOW"}),
        },
    ];
    let server = server().await;
    for case in cases {
        let m = model_with_id(&server, case.which, case.id);
        let body = simple_body(
            case.which,
            &m,
            &context("q"),
            simple(case.which, case.level),
        )
        .await;
        let config = &inner(case.which, &body)["generationConfig"]["thinkingConfig"];
        assert_eq!(
            config, &case.expected,
            "{:?} {} {:?}",
            case.which, case.id, case.level
        );
    }
    // A non-reasoning model gets no thinking config at all; custom budgets win.
    let mut plain = model_with_id(&server, Api::Gemini, "gemini-2.0-flash");
    plain.reasoning = false;
    let body = simple_body(
        Api::Gemini,
        &plain,
        &context("q"),
        simple(Api::Gemini, Some(ThinkingLevel::High)),
    )
    .await;
    assert_eq!(body["generationConfig"], json!({"maxOutputTokens": 16384}));
    let mut custom = simple(Api::Gemini, Some(ThinkingLevel::Low));
    custom.thinking_budgets = Some(pi_ai::ThinkingBudgets {
        low: Some(3000),
        ..Default::default()
    });
    let m = model(&server, Api::Gemini);
    let body = simple_body(Api::Gemini, &m, &context("q"), custom).await;
    assert_eq!(
        body["generationConfig"]["thinkingConfig"]["thinkingBudget"],
        3000
    );
    // `stream` without a reasoning effort leaves thinking to the model.
    let (_, request) = run_script(
        Api::Gemini,
        &m,
        &context("q"),
        Script::text("ok"),
        options(Api::Gemini),
    )
    .await;
    assert!(
        request.body.get("generationConfig").is_none(),
        "{}",
        request.body
    );
    let mut effort = options(Api::Gemini);
    effort.reasoning_effort = Some(ThinkingLevel::Medium);
    let (_, request) = run_script(Api::Gemini, &m, &context("q"), Script::text("ok"), effort).await;
    assert_eq!(
        request.body["generationConfig"]["thinkingConfig"],
        json!({"includeThoughts": true, "thinkingBudget": 8192})
    );
}

#[tokio::test]
async fn cloud_code_assist_body_wraps_the_request() {
    let server = server().await;
    let m = model(&server, Api::Cli);
    let mut opts = simple(Api::Cli, Some(ThinkingLevel::High));
    opts.stream.session_id = Some("session-9".into());
    opts.stream.tool_choice = Some(ToolChoice::Tool("read".into()));
    let body = simple_body(Api::Cli, &m, &context("hello"), opts).await;
    assert_eq!(
        keys(&body),
        ["project", "model", "request", "userAgent", "requestId"]
    );
    assert_eq!(body["project"], "proj-1");
    assert_eq!(body["model"], "gemini-2.5-flash");
    assert_eq!(body["userAgent"], "pi-coding-agent");
    assert!(body["requestId"].as_str().unwrap().starts_with("pi-"));
    let request = &body["request"];
    assert_eq!(
        keys(request),
        [
            "contents",
            "sessionId",
            "systemInstruction",
            "generationConfig",
            "tools",
            "toolConfig"
        ]
    );
    assert_eq!(request["sessionId"], "session-9");
    // The system instruction is an object with parts (no role).
    assert_eq!(
        request["systemInstruction"],
        json!({"parts": [{"text": "You are a test."}]})
    );
    // Budget thinking on top of maxTokens, capped at the model's limit, leaving 1024 to answer.
    assert_eq!(
        request["generationConfig"],
        json!({"maxOutputTokens": 16384, "thinkingConfig": {"includeThoughts": true, "thinkingBudget": 15360}})
    );
    assert_eq!(
        request["toolConfig"],
        json!({"functionCallingConfig": {"mode": "ANY", "allowedFunctionNames": ["read"]}})
    );
    assert!(
        request["tools"][0]["functionDeclarations"][0]
            .get("parametersJsonSchema")
            .is_some()
    );
    // Thinking off: no thinking config at all (as the TypeScript pi sends it).
    let body = simple_body(Api::Cli, &m, &context("q"), simple(Api::Cli, None)).await;
    assert_eq!(
        body["request"]["generationConfig"],
        json!({"maxOutputTokens": 16384})
    );
}

#[tokio::test]
async fn claude_behind_cloud_code_assist_gets_openapi_parameters_and_ids() {
    let server = server().await;
    let m = model_with_id(&server, Api::Cli, "claude-sonnet-4-5");
    let mut ctx = context("read it");
    ctx.tools.push(Tool {
        name: "pick".into(),
        description: "Pick".into(),
        parameters: json!({
            "type": "object",
            "$defs": {"Mode": {"type": "string", "enum": ["a", "b"]}},
            "properties": {"mode": {"$ref": "#/$defs/Mode"}, "n": {"type": "integer", "exclusiveMinimum": 0}},
            "additionalProperties": false
        }),
    });
    let mut foreign = AssistantMessage::empty(api::OPENAI_RESPONSES, "openai", "gpt-5");
    foreign.content = vec![AssistantBlock::ToolCall(ToolCall::new(
        "call_abc|fc_xyz+1",
        "read",
        serde_json::Map::new(),
    ))]
    .into();
    foreign.stop_reason = StopReason::ToolUse;
    ctx.messages.push(Message::Assistant(foreign.into()));
    ctx.messages.push(Message::ToolResult(
        ToolResultMessage {
            tool_call_id: "call_abc|fc_xyz+1".into(),
            tool_name: "read".into(),
            content: vec![InputBlock::text("contents")].into(),
            ..Default::default()
        }
        .into(),
    ));
    let (_, request) = run_script(Api::Cli, &m, &ctx, Script::text("ok"), options(Api::Cli)).await;
    let inner = &request.body["request"];
    let declarations = &inner["tools"][0]["functionDeclarations"];
    for declaration in declarations.as_array().unwrap() {
        assert!(declaration.get("parametersJsonSchema").is_none());
        let text = declaration["parameters"].to_string();
        assert!(
            !text.contains("$schema") && !text.contains("$defs") && !text.contains("$ref"),
            "{text}"
        );
        assert!(!text.contains("additionalProperties"), "{text}");
    }
    assert_eq!(
        declarations[1]["parameters"]["properties"]["mode"],
        json!({"type": "string", "enum": ["a", "b"]})
    );
    assert_eq!(
        declarations[0]["parameters"]["properties"]["offset"]["nullable"],
        true
    );
    // Claude needs ids, normalized to [a-zA-Z0-9_-].
    let contents = inner["contents"].as_array().unwrap();
    assert_eq!(
        contents[1]["parts"][0]["functionCall"]["id"],
        "call_abc_fc_xyz_1"
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["id"],
        "call_abc_fc_xyz_1"
    );
}

#[tokio::test]
async fn images_in_user_turns_and_tool_results() {
    let image = ImageContent::new("iVBORw0KGgo=", "image/png");
    let tool_round = |with_text: bool| {
        let mut ctx = Context {
            system_prompt: None,
            messages: vec![Message::User(UserMessage::blocks(vec![
                InputBlock::Text(TextContent::new("look")),
                InputBlock::Image(image.clone()),
            ]))],
            tools: vec![read_tool()],
        };
        let mut assistant = AssistantMessage::empty(api::GOOGLE_GENERATIVE_AI, "google", "x");
        assistant.content = vec![AssistantBlock::ToolCall(ToolCall::new(
            "c1",
            "read",
            serde_json::Map::new(),
        ))]
        .into();
        assistant.stop_reason = StopReason::ToolUse;
        ctx.messages.push(Message::Assistant(assistant.into()));
        let mut content = vec![InputBlock::Image(image.clone())];
        if with_text {
            content.insert(0, InputBlock::text("a screenshot"));
        }
        ctx.messages.push(Message::ToolResult(
            ToolResultMessage {
                tool_call_id: "c1".into(),
                tool_name: "read".into(),
                content: content.into(),
                ..Default::default()
            }
            .into(),
        ));
        ctx
    };
    let inline = json!({"inlineData": {"mimeType": "image/png", "data": "iVBORw0KGgo="}});
    let server = server().await;
    for which in ALL {
        // Gemini 2.x: the image follows in a separate user turn.
        let m = model_with_id(&server, which, "gemini-2.5-pro");
        let (_, request) = run_script(
            which,
            &m,
            &tool_round(false),
            Script::text("ok"),
            options(which),
        )
        .await;
        let contents = inner(which, &request.body)["contents"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(
            contents[0],
            json!({"role": "user", "parts": [{"text": "look"}, inline.clone()]})
        );
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [{"functionResponse": {"name": "read",
                "response": {"output": "(see attached image)"}}}]})
        );
        assert_eq!(
            contents[3],
            json!({"role": "user", "parts": [{"text": "Tool result image:"}, inline.clone()]})
        );
        // Gemini 3: the image is nested in the function response.
        let m = model_with_id(&server, which, "gemini-3-pro-preview");
        let (_, request) = run_script(
            which,
            &m,
            &tool_round(true),
            Script::text("ok"),
            options(which),
        )
        .await;
        let contents = inner(which, &request.body)["contents"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(contents.len(), 3, "{which:?}");
        assert_eq!(
            contents[2],
            json!({"role": "user", "parts": [{"functionResponse": {"name": "read",
                "response": {"output": "a screenshot"}, "parts": [inline.clone()]}}]})
        );
    }
    // A text-only model gets placeholders instead of image data.
    let mut text_only = model_with_id(&server, Api::Gemini, "gemini-2.5-pro");
    text_only.input = vec![InputKind::Text];
    let (_, request) = run_script(
        Api::Gemini,
        &text_only,
        &tool_round(false),
        Script::text("ok"),
        options(Api::Gemini),
    )
    .await;
    let text = request.body.to_string();
    assert!(!text.contains("iVBORw0KGgo="), "{text}");
    assert!(text.contains("(image omitted: model does not support images)"));
    assert!(text.contains("(tool image omitted: model does not support images)"));
}

#[tokio::test]
async fn payload_hook_and_headers_apply_to_every_api() {
    for which in ALL {
        let server = server().await;
        let mut m = model(&server, which);
        m.headers = Some(BTreeMap::from([("x-model".to_owned(), "1".to_owned())]));
        let mut opts = options(which);
        opts.headers.insert("x-extra".into(), "2".into());
        opts.on_payload = Some(std::sync::Arc::new(|_model, body| {
            body["hooked"] = json!(true);
        }));
        server.push(Script::text("ok"));
        let events = collect(&m, &context("q"), opts).await;
        assert_eq!(events.last().unwrap().kind(), "done");
        let request = &server.requests()[0];
        assert_eq!(request.body["hooked"], true);
        assert_eq!(request.headers["x-model"], "1");
        assert_eq!(request.headers["x-extra"], "2");
    }
}

#[tokio::test]
async fn request_debug_output_hides_credentials() {
    let server = server().await;
    let m = model(&server, Api::Gemini);
    let request = pi_ai::providers::google::build_gemini_request(
        &m,
        &context("q"),
        &options(Api::Gemini),
        None,
        "AIza-secret-key",
    )
    .unwrap();
    assert!(
        request
            .url
            .ends_with("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse")
    );
    let shown = format!("{request:?}");
    assert!(!shown.contains("secret"), "{shown}");
}
