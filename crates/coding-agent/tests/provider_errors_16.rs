//! Provider HTTP errors worded as pi 1.6.0 words them, compared whole: the same status
//! errors from the mock model through our `pi --mode rpc` and through 1.6.0 (`PI_TS16`)
//! give the same assistant `errorMessage`, for the Chat Completions API (`429: {…}`) and
//! the Responses API, which names its provider (`<provider> API error (429): {…}`).
//! Without `PI_TS16` only our side runs, against the texts written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

/// The error text of one failed prompt through `program` on `api`.
async fn error_text(program: Command, api: &str, provider: &str, status: u16) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::http_error(status));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let models = json!({"providers": {
        provider: {"baseUrl": server.openai_base_url(), "api": api, "apiKey": "mock-key",
                   "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]}
    }});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let settings = json!({"defaultProvider": provider, "defaultModel": "mock-model", "retry": {"enabled": false}});
    std::fs::write(env.agent.join("settings.json"), settings.to_string()).unwrap();
    let mut rpc = Rpc::start_program(&env, program, &[]);
    rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    rpc.event("agent_settled");
    let ended: Vec<Value> = rpc
        .seen
        .iter()
        .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
        .map(|l| l["message"]["errorMessage"].clone())
        .collect();
    assert_eq!(ended.len(), 1, "{:#?}", rpc.seen);
    ended[0].clone()
}

/// Our text for each case, checked against 1.6.0's when it is installed.
async fn compare(api: &str, provider: &str, status: u16) -> Value {
    let our = error_text(ours(), api, provider, status).await;
    if let Some(wrapper) = ts16() {
        let their = error_text(ts16_pi(&wrapper), api, provider, status).await;
        assert_eq!(
            our, their,
            "{api} {status}: ours (left) and pi 1.6.0 (right) differ"
        );
    }
    our
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_completions_status_errors_read_as_in_16() {
    for status in [400u16, 401, 404, 429, 500] {
        compare("openai-completions", "mock", status).await;
    }
    assert_eq!(
        compare("openai-completions", "mock", 401).await,
        r#"401: {"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}"#
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn responses_status_errors_name_their_provider_as_in_16() {
    for status in [400u16, 404, 429, 500] {
        compare("openai-responses", "mock", status).await;
    }
    assert_eq!(
        compare("openai-responses", "mock", 429).await,
        r#"mock API error (429): {"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}"#
    );
}
