//! The Responses decoder on hand-written and recorded SSE bodies (through `decode_sse_bytes`):
//! replayed streams, error events worded like each client, refusals and phases.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use mock_llm::{Item, Script};
use pi_ai::providers::openai_responses;
use pi_ai::{AssistantBlock, StopReason};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use common::responses::{ALL, Api, api_id, model, replay};
use common::{error_text, server};

#[tokio::test]
async fn recorded_bodies_replay_through_decode_sse_bytes() {
    let script = Script::new(vec![
        Item::thinking("plan"),
        Item::text("Grüße 🎉"),
        Item::tool_call("read", json!({"path": "ü.txt"})),
    ])
    .with_chunk_size(2);
    for which in ALL {
        let body = mock_llm::render_body(api_id(which), &script).expect("wire format");
        let server = server().await;
        let m = model(&server, which);
        let pieces: Vec<Result<bytes::Bytes, std::io::Error>> = body
            .chunks(7)
            .map(|c| Ok(bytes::Bytes::copy_from_slice(c)))
            .collect();
        let stream = openai_responses::decode_sse_bytes(
            &m,
            futures_util::stream::iter(pieces),
            CancellationToken::new(),
        );
        let message = stream.result().await;
        assert_eq!(
            message.stop_reason,
            StopReason::ToolUse,
            "{which:?}: {message:?}"
        );
        assert_eq!(message.text(), "Grüße 🎉");
        assert_eq!(
            message.tool_calls().next().unwrap().arguments["path"],
            "ü.txt"
        );
    }
}

#[tokio::test]
async fn error_events_are_worded_like_each_client() {
    let body = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_1\",\"status\":\"in_progress\"}}\n\n\
                event: error\ndata: {\"type\":\"error\",\"sequence_number\":1,\"code\":\"rate_limit_exceeded\",\"message\":\"Slow down\",\"param\":null}\n\n";
    let openai = replay(Api::OpenAi, body).await;
    assert_eq!(
        error_text(&openai),
        "Error Code rate_limit_exceeded: Slow down"
    );
    assert_eq!(openai.response_id.as_deref(), Some("resp_1"));
    let codex = replay(Api::Codex, body).await;
    assert_eq!(error_text(&codex), "Codex error: Slow down");

    // The OpenAI SDK fails on any event carrying `error`.
    let body = "data: {\"error\":{\"message\":\"Internal failure\",\"type\":\"server_error\"}}\n\n";
    assert_eq!(
        error_text(&replay(Api::Azure, body).await),
        "Internal failure"
    );

    // A stream that ends without a terminal event is an error, not a silent stop.
    let body = "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,\"response\":{\"id\":\"resp_2\"}}\n\n";
    for which in ALL {
        let message = replay(which, body).await;
        assert_eq!(
            error_text(&message),
            "OpenAI Responses stream ended before a terminal response event",
            "{which:?}"
        );
    }
}

#[tokio::test]
async fn refusals_and_phases_become_text_and_signature() {
    let body = concat!(
        "data: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"id\":\"msg_9\",\"type\":\"message\",\"content\":[],\"role\":\"assistant\"}}\n\n",
        "data: {\"type\":\"response.content_part.added\",\"output_index\":0,\"part\":{\"type\":\"refusal\",\"refusal\":\"\"}}\n\n",
        "data: {\"type\":\"response.refusal.delta\",\"output_index\":0,\"delta\":\"I can't\"}\n\n",
        "data: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"id\":\"msg_9\",\"type\":\"message\",\"phase\":\"final_answer\",\"content\":[{\"type\":\"refusal\",\"refusal\":\"I can't help.\"}],\"role\":\"assistant\"}}\n\n",
        "data: {\"type\":\"response.completed\",\"response\":{\"id\":\"resp_9\",\"status\":\"completed\",\"usage\":{\"input_tokens\":5,\"output_tokens\":3,\"total_tokens\":8}}}\n\n",
    );
    let message = replay(Api::OpenAi, body).await;
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.text(), "I can't help.");
    let AssistantBlock::Text(text) = &message.content[0] else {
        panic!()
    };
    assert_eq!(
        text.text_signature.as_deref(),
        Some(r#"{"v":1,"id":"msg_9","phase":"final_answer"}"#)
    );
    assert_eq!((message.usage.input, message.usage.total_tokens), (5, 8));
}
