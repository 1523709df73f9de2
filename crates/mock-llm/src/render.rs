//! A scripted response rendered to the exact bytes a provider would send, without a
//! server: recorded-shape bodies for benchmarks and replay tests.

use std::sync::atomic::AtomicU64;

use serde_json::Value;

use crate::script::Script;
use crate::wire::{self, RenderCtx, WireFormat};

/// The wire formats by name.
pub const WIRE_FORMATS: [&str; 8] = [
    "openai-completions",
    "anthropic-messages",
    "openai-responses",
    "google-generative-ai",
    "google-gemini-cli",
    "bedrock-converse-stream",
    "mistral-conversations",
    "openai-codex-responses",
];

fn wire_for(name: &str) -> Option<&'static dyn WireFormat> {
    Some(match name {
        "openai-completions" => &wire::openai_chat::OpenAiChat,
        "anthropic-messages" => &wire::anthropic::Anthropic,
        "openai-responses" | "azure-openai-responses" | "openai-codex-responses" => {
            &wire::openai_responses::OpenAiResponses
        }
        "google-generative-ai" | "google-vertex" => &wire::google::Google,
        "google-gemini-cli" => &wire::google::GeminiCli,
        "bedrock-converse-stream" => &wire::bedrock::Bedrock,
        "mistral-conversations" => &wire::mistral::Mistral,
        _ => return None,
    })
}

/// The whole successful response body for `script` in the wire format of `api` (an API id
/// of pi-ai); `None` for an unknown API. Faults other than none are ignored.
pub fn render_body(api: &str, script: &Script) -> Option<Vec<u8>> {
    let wire = wire_for(api)?;
    let tool_seq = AtomicU64::new(0);
    let request = Value::Null;
    let ctx = RenderCtx {
        request: &request,
        request_len: 0,
        response_seq: 1,
        tool_seq: &tool_seq,
        created: 1_700_000_000,
    };
    let line_ending = script.line_ending.unwrap_or_default();
    let mut body = Vec::new();
    for frame in wire.render(script, &ctx) {
        body.extend_from_slice(&wire.encode(&frame, line_ending));
    }
    Some(body)
}
