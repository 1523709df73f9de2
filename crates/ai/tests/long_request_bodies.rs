//! Each provider writes a body carrying a long transcript while it is sent, never holding it
//! whole, and what it writes is the body it builds whole for a payload hook.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use common::{Wire, context, model, options, read_call, server, tool_result, tool_use_turn};
use pi_ai::http::HttpRequest;
use pi_ai::providers::{anthropic_messages, google, mistral, openai_completions, openai_responses};
use pi_ai::request_body::{RequestBody, STREAM_MIN_BYTES};
use pi_ai::{Context, InputBlock, Message, Model, StreamOptions, UserMessage};
use serde_json::Value;

/// A conversation whose one tool result is longer than [`STREAM_MIN_BYTES`].
fn long_conversation() -> (Context, String) {
    let mut output = "a line of output, é 🙂 and a \"quote\"\n".repeat(240_000);
    output.push_str("\\ \t the end");
    assert!(output.len() as u64 > STREAM_MIN_BYTES);
    let mut ctx = context("read big.txt");
    ctx.messages.push(tool_use_turn(
        "openai-completions",
        "mock",
        "mock-model",
        vec![read_call("call_1", "big.txt")],
    ));
    ctx.messages.push(tool_result(
        "call_1",
        "read",
        vec![InputBlock::text(output.clone())],
    ));
    ctx.messages
        .push(Message::User(UserMessage::text("and now summarize it")));
    (ctx, output)
}

fn with_api(mut model: Model, api: &str) -> Model {
    model.api = api.into();
    model
}

fn hooked(options: &StreamOptions) -> StreamOptions {
    let mut hooked = options.clone();
    hooked.on_payload = Some(Arc::new(|_: &Model, _: &mut Value| {}));
    hooked
}

/// Builds the request without and with a payload hook; returns the written body parsed.
fn written_and_whole(build: impl Fn(&StreamOptions) -> HttpRequest) -> Value {
    let plain = build(&options());
    let RequestBody::Written { len, write } = &plain.body else {
        panic!("a long body is written while it is sent, not held whole");
    };
    let mut bytes = Vec::new();
    write(&mut bytes).unwrap();
    assert_eq!(
        bytes.len() as u64,
        *len,
        "the measured length is what is written"
    );
    let written: Value = serde_json::from_slice(&bytes).unwrap();

    let whole = build(&hooked(&options()));
    let whole: Value = serde_json::from_slice(whole.body.bytes().expect("held whole")).unwrap();
    assert_eq!(written, whole);
    written
}

fn contains_text(body: &Value, text: &str) -> bool {
    match body {
        Value::String(s) => s == text,
        Value::Array(items) => items.iter().any(|v| contains_text(v, text)),
        Value::Object(map) => map.values().any(|v| contains_text(v, text)),
        _ => false,
    }
}

#[tokio::test]
async fn every_provider_writes_a_long_transcript_while_sending_it() {
    let server = server().await;
    let (ctx, output) = long_conversation();
    let openai = model(&server, Wire::OpenAi);
    let anthropic = model(&server, Wire::Anthropic);

    let body =
        written_and_whole(|o| openai_completions::build_request(&openai, &ctx, o, "k").unwrap());
    assert!(contains_text(&body, &output));

    let body =
        written_and_whole(|o| anthropic_messages::build_request(&anthropic, &ctx, o, "k").unwrap());
    assert!(contains_text(
        &body["messages"][2]["content"][0]["content"],
        &output
    ));
    let last = &body["messages"][3];
    assert_eq!(last["content"][0]["text"], "and now summarize it");
    assert_eq!(last["content"][0]["cache_control"]["type"], "ephemeral");

    let responses = with_api(openai.clone(), "openai-responses");
    let body =
        written_and_whole(|o| openai_responses::build_request(&responses, &ctx, o, "k").unwrap());
    assert!(contains_text(&body["input"], &output));

    let env = |_: &str| Some("https://example.openai.azure.com".to_owned());
    let azure = with_api(openai.clone(), "azure-openai-responses");
    let body = written_and_whole(|o| {
        openai_responses::azure::build_request(&azure, &ctx, o, "k", &env).unwrap()
    });
    assert!(contains_text(&body["input"], &output));

    let mistral_model = with_api(openai.clone(), "mistral-conversations");
    let body = written_and_whole(|o| mistral::build_request(&mistral_model, &ctx, o, "k").unwrap());
    assert!(contains_text(&body["messages"], output.trim()));

    let gemini = with_api(openai, "google-generative-ai");
    let body =
        written_and_whole(|o| google::build_gemini_request(&gemini, &ctx, o, None, "k").unwrap());
    assert!(contains_text(&body["contents"], &output));
}
