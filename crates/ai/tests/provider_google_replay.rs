//! The Google providers' decoder on recorded real-format bodies (through `decode_sse_bytes`):
//! trailing signature parts, kept ids, finish reasons, and mock-rendered bodies of each API.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use mock_llm::{Item, Script};
use pi_ai::{AssistantBlock, StopReason, ToolCall};
use serde_json::json;

use common::google::{Api, offline_model, replay};
use common::{assert_contract, error_text, final_message};

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
    assert_eq!(error_text(message), "Provider stopped with: SAFETY");
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
