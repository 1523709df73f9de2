//! Every provider of the catalog is reachable by name: it has models with prices, a
//! registered provider for each of its APIs, and a way to find its key.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_ai::{get_api_provider, get_models, get_providers};

/// Providers whose credentials come from the environment in other ways (AWS chain, OAuth
/// tokens saved by a login) rather than one API-key variable.
const AMBIENT: [&str; 2] = ["amazon-bedrock", "openai-codex"];

/// pi 1.6's providers with no chat model (TypeSafe serves classifiers only).
const NO_CHAT_MODELS: [&str; 1] = ["typesafe"];

/// APIs of pi 1.6's catalog ours has no client for yet: Radius's own `pi-messages`.
const NOT_YET: [&str; 1] = ["pi-messages"];

#[test]
fn every_catalog_provider_has_models_an_api_and_a_key_source() {
    let providers = get_providers();
    assert_eq!(providers.len(), 43);
    for provider in &providers {
        let models = get_models(provider);
        assert_eq!(
            models.is_empty(),
            NO_CHAT_MODELS.contains(&provider.as_str()),
            "{provider}"
        );
        for model in models.iter().filter(|m| !NOT_YET.contains(&m.api.as_str())) {
            assert!(
                get_api_provider(&model.api).is_some(),
                "{provider}/{}: no provider for {}",
                model.id,
                model.api
            );
        }
        for model in &models {
            let cost = &model.cost;
            assert!(
                [cost.input, cost.output, cost.cache_read, cost.cache_write]
                    .iter()
                    .all(|c| c.is_finite()),
                "{provider}/{}",
                model.id
            );
        }
        assert!(
            !pi_ai::env_keys::api_key_env_vars(provider).is_empty()
                || AMBIENT.contains(&provider.as_str()),
            "{provider}: no key variable"
        );
    }
    for api in [
        "openai-completions",
        "openai-responses",
        "azure-openai-responses",
        "openai-codex-responses",
        "anthropic-messages",
        "bedrock-converse-stream",
        "google-generative-ai",
        "google-gemini-cli",
        "google-vertex",
        "mistral-conversations",
    ] {
        assert!(get_api_provider(api).is_some(), "{api}");
    }
}
