//! What the OpenAI Responses tests share: the three APIs (`openai-responses`,
//! `azure-openai-responses`, `openai-codex-responses`), each one's model, key and URL, running
//! one script and reading the request sent.

use std::collections::BTreeMap;

use mock_llm::{MockServer, RecordedRequest, Script};
use pi_ai::providers::openai_responses;
use pi_ai::{
    AssistantMessage, Context, InputBlock, Message, Model, SimpleStreamOptions, StopReason,
    StreamOptions, ThinkingLevel, api,
};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::events::run_script;
use super::fixtures::{self, chunked, mock_model, send_simple, server, tool_result as result_of};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Api {
    OpenAi,
    Azure,
    Codex,
}

pub const ALL: [Api; 3] = [Api::OpenAi, Api::Azure, Api::Codex];
pub const ACCOUNT_ID: &str = "acc-mock-123";

pub fn base64url(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |acc, (i, b)| acc | (u32::from(*b) << (16 - 8 * i)));
        for i in 0..=chunk.len() {
            out.push(char::from(ALPHABET[((n >> (18 - 6 * i)) & 63) as usize]));
        }
    }
    out
}

/// A ChatGPT OAuth access token (unsigned) naming the account.
pub fn codex_token() -> String {
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": ACCOUNT_ID}});
    format!(
        "{}.{}.signature",
        base64url(br#"{"alg":"RS256","typ":"JWT"}"#),
        base64url(payload.to_string().as_bytes())
    )
}

pub fn api_id(which: Api) -> &'static str {
    match which {
        Api::OpenAi => api::OPENAI_RESPONSES,
        Api::Azure => api::AZURE_OPENAI_RESPONSES,
        Api::Codex => api::OPENAI_CODEX_RESPONSES,
    }
}

pub fn provider_id(which: Api) -> &'static str {
    match which {
        Api::OpenAi => "openai",
        Api::Azure => "azure-openai-responses",
        Api::Codex => "openai-codex",
    }
}

pub fn model(server: &MockServer, which: Api) -> Model {
    let base_url = match which {
        Api::OpenAi => server.openai_base_url(),
        Api::Azure => format!("{}/openai/v1", server.url()),
        Api::Codex => format!("{}/backend-api", server.url()),
    };
    Model {
        name: "GPT Mock".into(),
        context_window: 200_000,
        ..mock_model(api_id(which), provider_id(which), "gpt-mock", base_url)
    }
}

/// Codex takes a ChatGPT token; the others a plain key.
pub fn key(which: Api) -> String {
    match which {
        Api::Codex => codex_token(),
        Api::OpenAi | Api::Azure => "test-key".into(),
    }
}

pub fn options(which: Api) -> StreamOptions {
    StreamOptions {
        api_key: Some(key(which)),
        max_retries: Some(0),
        ..StreamOptions::default()
    }
}

pub fn simple(which: Api, level: Option<ThinkingLevel>) -> SimpleStreamOptions {
    fixtures::simple(options(which), level)
}

/// Runs one script on a fresh server; returns the final message and the request sent.
pub async fn run(
    which: Api,
    script: Script,
    ctx: &Context,
    opts: StreamOptions,
) -> (AssistantMessage, RecordedRequest) {
    let server = server().await;
    let message = run_script(&server, &model(&server, which), ctx, script, opts).await;
    let request = server.requests().pop().expect("one request");
    (message, request)
}

/// The request body and headers of a `stream_simple` call.
pub async fn sent(
    which: Api,
    m: impl FnOnce(&mut Model),
    ctx: &Context,
    opts: SimpleStreamOptions,
) -> (Value, BTreeMap<String, String>) {
    let server = server().await;
    let mut model = model(&server, which);
    m(&mut model);
    let (message, request) = send_simple(&server, &model, ctx, opts).await;
    assert_eq!(message.stop_reason, StopReason::Stop, "{message:?}");
    (request.body, request.headers)
}

/// The `input` items of a body.
pub fn input(body: &Value) -> &Vec<Value> {
    body["input"].as_array().expect("input array")
}

/// The result of a `read` call.
pub fn tool_result(call_id: &str, content: Vec<InputBlock>) -> Message {
    result_of(call_id, "read", content)
}

/// Decodes a hand-written SSE body.
pub async fn replay(which: Api, body: &str) -> AssistantMessage {
    let server = server().await;
    let m = model(&server, which);
    openai_responses::decode_sse_bytes(
        &m,
        chunked(body.as_bytes(), body.len().max(1)),
        CancellationToken::new(),
    )
    .result()
    .await
}
