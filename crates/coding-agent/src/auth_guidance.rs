//! What pi says when there is no model or no key to answer with (pi 1.6.0's
//! `core/auth-guidance.js`), and the placeholder model a session holds until one is chosen
//! (pi-agent-core's `DEFAULT_MODEL`), so every mode can start and tell the user to sign in.

use pi_ai::{Model, ModelCost};

/// The provider, id, name and API of the placeholder model.
const UNKNOWN: &str = "unknown";

/// Where pi's guides to providers and models are (1.6.0 names its installed `docs/`; this
/// build ships none, so it names the same files in pi's repository).
pub const DOCS_URL: &str =
    "https://github.com/earendil-works/pi/blob/main/packages/coding-agent/docs";

/// The model a session holds when none is available: every field empty, no key, no context.
pub fn unknown_model() -> Model {
    Model {
        id: UNKNOWN.into(),
        name: UNKNOWN.into(),
        api: UNKNOWN.into(),
        provider: UNKNOWN.into(),
        base_url: String::new(),
        reasoning: false,
        thinking_level_map: None,
        input: Vec::new(),
        cost: ModelCost::default(),
        context_window: 0,
        max_tokens: 0,
        headers: None,
        compat: None,
        extras: Default::default(),
    }
}

/// Whether `model` is the placeholder of [`unknown_model`].
pub fn is_unknown_model(model: &Model) -> bool {
    model.provider == UNKNOWN && model.id == UNKNOWN && model.api == UNKNOWN
}

/// How to get a model: sign in, and where the guides are.
pub fn provider_login_help() -> String {
    format!(
        "Use /login to log into a provider via OAuth or API key. See:\n  {DOCS_URL}/providers.md\n  {DOCS_URL}/models.md"
    )
}

/// The warning at startup when no model has a key.
pub fn no_models_available() -> String {
    format!("No models available. {}", provider_login_help())
}

/// A prompt's error when the model's provider has no key ("the selected model" for the
/// placeholder).
pub fn no_api_key_found(provider: &str) -> String {
    let provider = if provider == UNKNOWN {
        "the selected model"
    } else {
        provider
    };
    format!(
        "No API key found for {provider}.\n\n{}",
        provider_login_help()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_placeholder_serializes_as_pis_default_model() {
        assert_eq!(
            serde_json::to_value(unknown_model()).unwrap(),
            serde_json::json!({"id": "unknown", "name": "unknown", "api": "unknown",
                "provider": "unknown", "baseUrl": "", "reasoning": false, "input": [],
                "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": 0, "maxTokens": 0})
        );
        assert!(is_unknown_model(&unknown_model()));
    }

    #[test]
    fn texts_name_the_provider_or_the_selected_model() {
        assert!(no_api_key_found("unknown").starts_with(
            "No API key found for the selected model.\n\nUse /login to log into a provider"
        ));
        assert!(no_api_key_found("anthropic").starts_with("No API key found for anthropic.\n\n"));
        assert!(no_models_available().ends_with("/docs/models.md"));
    }
}
