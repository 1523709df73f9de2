//! `compat.supportsMaxOutputTokens: false` (pi 1.5.x, for Codex-protocol gateways that
//! reject the field): OpenAI Responses requests leave `max_output_tokens` out, and models
//! without the flag keep sending it. The same models.json through ours and pi 1.6.0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// The `max_output_tokens` of the request `model` sent.
async fn max_output_tokens(wrapper: &Option<std::path::PathBuf>, model: &str) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({}));
    let models = json!({"providers": {"gateway": {
        "baseUrl": server.openai_base_url(), "api": "openai-responses", "apiKey": "gw-key",
        "models": [
            {"id": "strict-gateway", "contextWindow": 128_000, "maxTokens": 16_384,
             "compat": {"supportsMaxOutputTokens": false}},
            {"id": "plain", "contextWindow": 128_000, "maxTokens": 16_384}
        ]
    }}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let model = format!("gateway/{model}");
    let output = tokio::task::block_in_place(|| {
        run(&env, program(wrapper), &["--model", &model, "-p", "Hi."])
    });
    assert!(output.status.success(), "{output:?}");
    let requests = server.requests();
    assert_eq!(requests[0].path, "/v1/responses");
    requests[0].body["max_output_tokens"].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_output_tokens_follows_the_compat_flag_as_pi_16() {
    for (name, wrapper) in pis() {
        assert_eq!(
            max_output_tokens(&wrapper, "strict-gateway").await,
            Value::Null,
            "{name}"
        );
        assert_eq!(
            max_output_tokens(&wrapper, "plain").await,
            json!(16_384),
            "{name}"
        );
    }
}
