//! What the `bedrock-converse-stream` tests share: a Bedrock model at the mock, SigV4
//! credentials, streaming through `stream_bedrock`, and hand-made event-stream frames.

use mock_llm::{MockServer, Script};
use pi_ai::providers::bedrock::{
    self, AwsCredentials, BedrockOptions, eventstream, stream_bedrock,
};
use pi_ai::{AssistantMessage, AssistantMessageEvent, Context, Model, StreamOptions, api};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::events::{assert_contract, drain, final_message};
use super::fixtures::{chunked, context, mock_model, server};

pub const CLAUDE: &str = "anthropic.claude-sonnet-4-20250514-v1:0";
pub const NOVA: &str = "amazon.nova-pro-v1:0";
pub const TOKEN: &str = "FwoGZXIvYXdzEXAMPLESESSIONTOKEN";

/// A Bedrock model served by the mock (a custom base URL is used as the endpoint).
pub fn model(server: &MockServer, id: &str) -> Model {
    Model {
        context_window: 200_000,
        max_tokens: 64_000,
        ..mock_model(
            api::BEDROCK_CONVERSE_STREAM,
            "amazon-bedrock",
            id,
            server.url(),
        )
    }
}

pub fn credentials() -> AwsCredentials {
    AwsCredentials {
        access_key_id: "AKIDEXAMPLE".into(),
        secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
        session_token: Some(TOKEN.into()),
    }
}

pub fn bedrock_options() -> BedrockOptions {
    BedrockOptions {
        region: Some("us-west-2".into()),
        credentials: Some(credentials()),
        ..BedrockOptions::default()
    }
}

/// No client-side retries (Bedrock needs no API key: it signs).
pub fn options() -> StreamOptions {
    StreamOptions {
        max_retries: Some(0),
        ..StreamOptions::default()
    }
}

/// Streams through `stream_bedrock` to the end, checking the contract.
pub async fn collect(
    model: &Model,
    context: &Context,
    options: StreamOptions,
    bedrock: BedrockOptions,
) -> Vec<AssistantMessageEvent> {
    let events = drain(stream_bedrock(model, context, options, bedrock)).await;
    assert_contract(&events);
    events
}

/// Runs one scripted response with Claude; the final message and the server.
pub async fn run_fault(script: Script, opts: StreamOptions) -> (AssistantMessage, MockServer) {
    let server = server().await;
    server.push(script);
    let events = collect(
        &model(&server, CLAUDE),
        &context("hi"),
        opts,
        bedrock_options(),
    )
    .await;
    (final_message(&events).clone(), server)
}

/// Two costs equal up to rounding.
pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

/// One encoded event message of the stream.
pub fn event(kind: &str, payload: Value) -> Vec<u8> {
    eventstream::Message::new(
        &[
            (":event-type", kind),
            (":content-type", "application/json"),
            (":message-type", "event"),
        ],
        serde_json::to_vec(&payload).unwrap(),
    )
    .encode()
}

/// One encoded exception message of the stream.
pub fn exception(kind: &str, payload: &str) -> Vec<u8> {
    eventstream::Message::new(
        &[
            (":exception-type", kind),
            (":content-type", "application/json"),
            (":message-type", "exception"),
        ],
        payload.as_bytes().to_vec(),
    )
    .encode()
}

/// Decodes a recorded body cut into `chunk`-byte pieces, checking the contract.
pub async fn replay(model: &Model, body: Vec<u8>, chunk: usize) -> Vec<AssistantMessageEvent> {
    let events = drain(bedrock::decode_bytes(
        model,
        chunked(&body, chunk),
        CancellationToken::new(),
    ))
    .await;
    assert_contract(&events);
    events
}
