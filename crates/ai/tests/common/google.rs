//! What the Google provider tests share: the three APIs (`google-generative-ai`,
//! `google-vertex`, `google-gemini-cli`) with each one's model, key, URL and body wrapping.

use mock_llm::{MockServer, RecordedRequest, Script};
use pi_ai::{
    AssistantMessage, AssistantMessageEvent, Context, Model, ModelCost, SimpleStreamOptions,
    StopReason, StreamOptions, ThinkingLevel, Tool, api,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::events::{drain, run_script as run_on};
use super::fixtures::{self, chunked, context_with, mock_model, send_simple, server};

/// The three APIs under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    Gemini,
    Vertex,
    Cli,
}

pub const ALL: [Api; 3] = [Api::Gemini, Api::Vertex, Api::Cli];
pub const CLI_KEY: &str = r#"{"token":"ya29.test-token","projectId":"proj-1"}"#;
/// A valid (base64) thought signature.
pub const SIGNATURE: &str = "c2lnLTEyMy1hYmM=";

fn api_id(which: Api) -> &'static str {
    match which {
        Api::Gemini => api::GOOGLE_GENERATIVE_AI,
        Api::Vertex => api::GOOGLE_VERTEX,
        Api::Cli => api::GOOGLE_GEMINI_CLI,
    }
}

/// The base URL of `which` at `server` (Gemini's carries its version).
fn base_url(server: &MockServer, which: Api) -> String {
    match which {
        Api::Gemini => format!("{}/v1beta", server.url()),
        Api::Vertex | Api::Cli => server.url(),
    }
}

pub fn model_with_id(server: &MockServer, which: Api, id: &str) -> Model {
    let provider = match which {
        Api::Gemini => "google",
        Api::Vertex => "google-vertex",
        Api::Cli => "google-gemini-cli",
    };
    Model {
        context_window: 1_000_000,
        ..mock_model(api_id(which), provider, id, base_url(server, which))
    }
}

pub fn model(server: &MockServer, which: Api) -> Model {
    model_with_id(server, which, "gemini-2.5-flash")
}

/// A model of `which` for replaying recorded bodies (never contacted).
pub fn offline_model(which: Api, id: &str) -> Model {
    Model {
        cost: ModelCost::default(),
        context_window: 1_000_000,
        max_tokens: 65_536,
        ..mock_model(api_id(which), "google", id, "http://127.0.0.1:1".into())
    }
}

/// Each API's key (Cloud Code Assist's is a JSON token and project) and no retries.
pub fn options(which: Api) -> StreamOptions {
    StreamOptions {
        api_key: Some(
            match which {
                Api::Gemini => "gemini-key",
                Api::Vertex => "vertex-key",
                Api::Cli => CLI_KEY,
            }
            .into(),
        ),
        max_retries: Some(0),
        ..StreamOptions::default()
    }
}

pub fn simple(which: Api, level: Option<ThinkingLevel>) -> SimpleStreamOptions {
    fixtures::simple(options(which), level)
}

/// `read` as coding agents declare it: a JSON Schema with `$schema`, closed properties and a
/// nullable offset (what Gemini's OpenAPI subset must be cut down from).
pub fn read_tool() -> Tool {
    Tool {
        name: "read".into(),
        description: "Read a file".into(),
        parameters: json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "additionalProperties": false,
            "properties": {"path": {"type": "string"}, "offset": {"type": ["integer", "null"]}},
            "required": ["path"]
        }),
        constrained_sampling: None,
    }
}

/// A system prompt, one user message and [`read_tool`].
pub fn context(prompt: &str) -> Context {
    context_with(prompt, read_tool())
}

/// The Gemini request inside a body (Cloud Code Assist wraps it in `request`).
pub fn inner(which: Api, body: &Value) -> Value {
    match which {
        Api::Cli => body["request"].clone(),
        _ => body.clone(),
    }
}

/// Points `m` at `server` the way each API's base URL is written.
pub fn at(server: &MockServer, which: Api, m: &Model) -> Model {
    let mut m = m.clone();
    m.base_url = base_url(server, which);
    m
}

/// Runs one scripted request on a fresh server; returns the final message and the request.
pub async fn run_script(
    which: Api,
    m: &Model,
    ctx: &Context,
    script: Script,
    opts: StreamOptions,
) -> (AssistantMessage, RecordedRequest) {
    let server = server().await;
    let message = run_on(&server, &at(&server, which, m), ctx, script, opts).await;
    let request = server.requests().pop().expect("one request");
    (message, request)
}

/// Runs one scripted response of the default model on a fresh server; the final message.
pub async fn run_fault(which: Api, script: Script, opts: StreamOptions) -> AssistantMessage {
    let server = server().await;
    run_on(
        &server,
        &model(&server, which),
        &context("hi"),
        script,
        opts,
    )
    .await
}

/// The body the provider sends through `stream_simple`.
pub async fn simple_body(which: Api, m: &Model, ctx: &Context, opts: SimpleStreamOptions) -> Value {
    let server = server().await;
    let (reply, request) = send_simple(&server, &at(&server, which, m), ctx, opts).await;
    assert_eq!(reply.stop_reason, StopReason::Stop, "{reply:?}");
    request.body
}

pub fn expected_path(which: Api, id: &str) -> String {
    match which {
        Api::Gemini => format!("/v1beta/models/{id}:streamGenerateContent"),
        Api::Vertex => format!("/v1/publishers/google/models/{id}:streamGenerateContent"),
        Api::Cli => "/v1internal:streamGenerateContent".to_owned(),
    }
}

/// Decodes a recorded body in 37-byte pieces.
pub async fn replay(m: &Model, body: &str) -> Vec<AssistantMessageEvent> {
    drain(pi_ai::providers::google::decode_sse_bytes(
        m,
        chunked(body.as_bytes(), 37),
        CancellationToken::new(),
    ))
    .await
}
