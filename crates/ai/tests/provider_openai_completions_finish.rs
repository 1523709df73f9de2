//! OpenAI-compatible streams without `finish_reason` (pi 1.5's `compat.supportsFinishReason`):
//! a server that says it sends none gets its stop reason from the reply's content, however
//! the stream ended; one that should have sent it fails as pi-ai 1.6 fails it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{chunked, mock_model};
use pi_ai::{InputKind, Model, ModelCompat, ModelCost, StopReason, api};
use tokio_util::sync::CancellationToken;

fn model(supports_finish_reason: Option<bool>) -> Model {
    Model {
        reasoning: false,
        input: vec![InputKind::Text],
        cost: ModelCost::default(),
        context_window: 1000,
        max_tokens: 100,
        compat: supports_finish_reason.map(|flag| ModelCompat {
            supports_finish_reason: Some(flag),
            ..ModelCompat::default()
        }),
        ..mock_model(
            api::OPENAI_COMPLETIONS,
            "p",
            "m",
            "http://127.0.0.1:1".into(),
        )
    }
}

const TEXT: &str =
    "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi.\"}}]}\n\n";
const TOOL_CALL: &str = "data: {\"id\":\"c1\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\":\\\"a\\\"}\"}}]}}]}\n\n";
const DONE: &str = "data: [DONE]\n\n";

async fn decode(model: &Model, body: String) -> pi_ai::AssistantMessage {
    let input = chunked(body.as_bytes(), 7);
    pi_ai::providers::openai_completions::decode_sse_bytes(model, input, CancellationToken::new())
        .result()
        .await
}

#[tokio::test]
async fn without_the_flag_the_content_decides_the_stop_reason() {
    let quiet = model(Some(false));
    for (body, stop) in [
        (format!("{TEXT}{DONE}"), StopReason::Stop),
        (format!("{TEXT}{TOOL_CALL}{DONE}"), StopReason::ToolUse),
        // A bare end of stream too: the server never says why it stopped.
        (TEXT.to_owned(), StopReason::Stop),
        (TOOL_CALL.to_owned(), StopReason::ToolUse),
    ] {
        let message = decode(&quiet, body.clone()).await;
        assert_eq!(
            message.stop_reason, stop,
            "{body}: {:?}",
            message.error_message
        );
    }
}

#[tokio::test]
async fn a_server_expected_to_send_finish_reason_fails_without_it() {
    for flag in [None, Some(true)] {
        let message = decode(&model(flag), format!("{TEXT}{TOOL_CALL}{DONE}")).await;
        assert_eq!(message.stop_reason, StopReason::Error);
        assert_eq!(
            message.error_message.as_deref(),
            Some("Stream ended without finish_reason")
        );
        // A stream cut before [DONE] is a dropped connection (retried as one).
        let cut = decode(&model(flag), TEXT.to_owned()).await;
        assert_eq!(cut.stop_reason, StopReason::Error);
        assert!(
            cut.error_message
                .as_deref()
                .is_some_and(|m| m.starts_with("Connection error")),
            "{:?}",
            cut.error_message
        );
    }
}
