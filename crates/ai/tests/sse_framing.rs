//! SSE decoding, deterministic: the same body cut into every chunk size from 1 byte up
//! decodes to the same message — UTF-8 characters and CRLF pairs split across chunks.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{chunked, mock_model};
use pi_ai::{AssistantBlock, InputKind, Model, ModelCost, StopReason, api};
use tokio_util::sync::CancellationToken;

/// A model of `api` that is never contacted.
fn model(api: &str) -> Model {
    Model {
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 1000,
        max_tokens: 100,
        ..mock_model(api, "p", "m", "http://127.0.0.1:1".into())
    }
}

const OPENAI: &str = "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\r\n\r\n\
: keep-alive comment\r\n\r\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Grüße 世界 🎉\"}}]}\r\n\r\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\" — “ok”\"}}]}\r\n\r\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"ü\"}}]}}]}\r\n\r\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\".txt\\\"}\"}}]}}]}\r\n\r\n\
data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\r\n\r\n\
data: [DONE]\r\n\r\n";

const ANTHROPIC: &str = "event: message_start\r\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\r\n\r\n\
event: ping\r\ndata: {\"type\": \"ping\"}\r\n\r\n\
event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Grüße 世界 🎉\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\" — “ok”\"}}\r\n\r\n\
event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":0}\r\n\r\n\
event: content_block_start\r\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\",\"input\":{}}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\":\\\"ü\"}}\r\n\r\n\
event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\".txt\\\"}\"}}\r\n\r\n\
event: content_block_stop\r\ndata: {\"type\":\"content_block_stop\",\"index\":1}\r\n\r\n\
event: message_delta\r\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":9}}\r\n\r\n\
event: message_stop\r\ndata: {\"type\":\"message_stop\"}\r\n\r\n";

async fn decode(api: &str, body: &str, chunk: usize) -> pi_ai::AssistantMessage {
    let input = chunked(body.as_bytes(), chunk);
    let m = model(api);
    let stream = if api == api::OPENAI_COMPLETIONS {
        pi_ai::providers::openai_completions::decode_sse_bytes(&m, input, CancellationToken::new())
    } else {
        pi_ai::providers::anthropic_messages::decode_sse_bytes(&m, input, CancellationToken::new())
    };
    stream.result().await
}

#[tokio::test]
async fn every_chunk_size_decodes_the_same_message() {
    for (api, body) in [
        (api::OPENAI_COMPLETIONS, OPENAI),
        (api::ANTHROPIC_MESSAGES, ANTHROPIC),
    ] {
        for chunk in 1..=body.len().min(64) {
            let message = decode(api, body, chunk).await;
            assert_eq!(
                message.stop_reason,
                StopReason::ToolUse,
                "{api} chunk {chunk}: {:?}",
                message.error_message
            );
            assert_eq!(
                message.text(),
                "Grüße 世界 🎉 — “ok”",
                "{api} chunk {chunk}"
            );
            let AssistantBlock::ToolCall(call) = &message.content[1] else {
                panic!("{api}")
            };
            assert_eq!(call.arguments["path"], "ü.txt", "{api} chunk {chunk}");
        }
    }
}

#[tokio::test]
async fn lone_carriage_returns_end_lines_too() {
    let body = OPENAI.replace("\r\n", "\r");
    let message = decode(api::OPENAI_COMPLETIONS, &body, 3).await;
    assert_eq!(message.text(), "Grüße 世界 🎉 — “ok”");
}

#[tokio::test]
async fn a_body_that_ends_early_is_an_error_not_a_silent_success() {
    let cut = &OPENAI[..OPENAI.find("finish_reason").unwrap() - 60];
    let message = decode(api::OPENAI_COMPLETIONS, cut, 7).await;
    assert_eq!(message.stop_reason, StopReason::Error);
    assert!(message.error_message.unwrap().contains("ended before"));
    let cut = &ANTHROPIC[..ANTHROPIC.find("message_stop").unwrap()];
    let message = decode(api::ANTHROPIC_MESSAGES, cut, 7).await;
    assert_eq!(
        message.error_message.as_deref(),
        Some("Anthropic stream ended before message_stop")
    );
}
