//! What pi 1.6's catalog models send: the thinking formats new in 1.6 (Together, Ant Ling,
//! Baseten's chat-template arguments), adaptive thinking and no temperature decided by the
//! catalog's compat flags, and Cloudflare's account placeholders and gateway header on every
//! API. Each model is the catalog's, pointed at the mock server.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{context, options, send_simple, server, simple};
use pi_ai::{Model, ThinkingLevel};
use serde_json::{Value, json};

/// The catalog's `provider/id`, sent to `base_url`.
fn catalog_model(provider: &str, id: &str, base_url: String) -> Model {
    let mut model = pi_ai::get_model(provider, id).unwrap();
    model.base_url = base_url;
    model
}

/// The body `model` sends at `level`, its `MOCK` base-URL host made the mock server's.
async fn body_of(model: &Model, level: Option<ThinkingLevel>) -> Value {
    let server = server().await;
    let mut model = model.clone();
    model.base_url = model.base_url.replace("MOCK", &server.url());
    let (_, request) = send_simple(&server, &model, &context("q"), simple(options(), level)).await;
    request.body
}

#[tokio::test]
async fn together_sends_reasoning_enabled_and_an_effort() {
    let model = catalog_model(
        "together",
        "deepseek-ai/DeepSeek-V4-Pro-0813",
        "MOCK/v1".into(),
    );
    let body = body_of(&model, Some(ThinkingLevel::High)).await;
    assert_eq!(body["reasoning"], json!({"enabled": true}));
    assert_eq!(body["reasoning_effort"], "high");
    assert!(body.get("max_tokens").is_some(), "{body}");
    let body = body_of(&model, None).await;
    assert_eq!(body["reasoning"], json!({"enabled": false}));
    assert!(body.get("reasoning_effort").is_none(), "{body}");
}

#[tokio::test]
async fn ant_ling_sends_its_mapped_effort_only_when_thinking() {
    let model = catalog_model("ant-ling", "Ring-2.6-1T", "MOCK/v1".into());
    let body = body_of(&model, Some(ThinkingLevel::High)).await;
    assert_eq!(body["reasoning"], json!({"effort": "high"}));
    assert!(body.get("reasoning_effort").is_none(), "{body}");
    // off is not offered (mapped to null): it clamps up to the lowest mapped level.
    assert_eq!(
        pi_ai::models::clamp_thinking_level(&model, ThinkingLevel::Off),
        ThinkingLevel::High
    );
}

#[tokio::test]
async fn baseten_fills_its_chat_template_arguments() {
    let model = catalog_model("baseten", "zai-org/GLM-5.2", "MOCK/v1".into());
    let body = body_of(&model, Some(ThinkingLevel::High)).await;
    assert_eq!(body["chat_template_args"], json!({"enable_thinking": true}));
    assert_eq!(body["reasoning_effort"], "high");
    let body = body_of(&model, None).await;
    assert_eq!(
        body["chat_template_args"],
        json!({"enable_thinking": false})
    );
    // The model maps off to "none".
    assert_eq!(body["reasoning_effort"], "none");
}

#[tokio::test]
async fn claude_opus_5_5_thinks_adaptively_by_its_compat_flag() {
    let model = catalog_model("anthropic", "claude-opus-5-5", "MOCK".into());
    let body = body_of(&model, Some(ThinkingLevel::Max)).await;
    assert_eq!(body["thinking"]["type"], "adaptive");
    // Its compat has mid-conversation effort (pi 0.85): the level travels as an
    // effort-only system message at the end, the request's own effort is the lowest.
    assert_eq!(body["output_config"], json!({"effort": "low"}));
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "system", "content": [], "output_config": {"effort": "max"}})
    );
}

#[tokio::test]
async fn temperature_goes_only_to_models_that_take_it() {
    let server = server().await;
    let mut options = options();
    options.temperature = Some(0.5);
    // pi 0.78.1: Claude Opus 4.7 and later reject a temperature (`supportsTemperature`).
    for (id, sent) in [
        ("claude-opus-4-7", false),
        ("claude-opus-4-8", false),
        ("claude-opus-5-5", false),
        ("claude-opus-4-6", true),
        ("claude-haiku-4-5", true),
    ] {
        let model = catalog_model("anthropic", id, server.url());
        let (_, request) = send_simple(
            &server,
            &model,
            &context("q"),
            simple(options.clone(), None),
        )
        .await;
        assert_eq!(request.body.get("temperature").is_some(), sent, "{id}");
    }
}

#[tokio::test]
async fn cloudflare_gateway_authenticates_with_its_header_on_every_api() {
    let server = server().await;
    for (id, base_url) in [
        (
            "workers-ai/@cf/google/gemma-4-26b-a4b-it",
            server.openai_base_url(),
        ),
        ("claude-haiku-4-5", server.url()),
    ] {
        let model = catalog_model("cloudflare-ai-gateway", id, base_url);
        let (_, request) =
            send_simple(&server, &model, &context("q"), simple(options(), None)).await;
        assert_eq!(
            request.headers["cf-aig-authorization"], "Bearer test-key",
            "{id}"
        );
        assert!(!request.headers.contains_key("authorization"), "{id}");
        assert!(!request.headers.contains_key("x-api-key"), "{id}");
    }
}

#[tokio::test]
async fn cloudflare_account_placeholders_need_their_variable_on_completions() {
    // The test environment has no CLOUDFLARE_ACCOUNT_ID: the request is not sent, and the
    // error names the variable.
    assert!(std::env::var_os("CLOUDFLARE_ACCOUNT_ID").is_none());
    let model = pi_ai::get_model("cloudflare-workers-ai", "@cf/moonshotai/kimi-k2.7-code").unwrap();
    let reply = pi_ai::stream_simple(&model, &context("q"), simple(options(), None))
        .result()
        .await;
    assert_eq!(
        reply.error_message.as_deref(),
        Some(
            "CLOUDFLARE_ACCOUNT_ID is required for provider cloudflare-workers-ai but is not set."
        )
    );
}

#[tokio::test]
async fn azure_foundry_chat_completions_go_to_the_azure_endpoint_as_the_deployment() {
    let server = server().await;
    let model = pi_ai::get_model("azure", "deepseek-v4-pro").unwrap();
    assert_eq!(model.api, "openai-completions");
    assert!(model.base_url.is_empty(), "the endpoint is the user's");
    let mut options = options();
    options.openai_responses = Some(pi_ai::OpenAiResponsesOptions {
        azure_base_url: Some(server.openai_base_url()),
        azure_deployment_name: Some("my-deepseek".into()),
        ..Default::default()
    });
    let (_, request) = send_simple(&server, &model, &context("q"), simple(options, None)).await;
    assert_eq!(request.path, "/v1/chat/completions");
    assert_eq!(request.body["model"], "my-deepseek");
    assert_eq!(request.headers["authorization"], "Bearer test-key");
}
