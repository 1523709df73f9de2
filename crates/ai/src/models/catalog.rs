//! The built-in catalog (`catalog.json`, refreshed by `scripts/refresh-models.sh`).

use std::sync::LazyLock;

use crate::types::Model;

const CATALOG_JSON: &str = include_str!("catalog.json");

/// The catalog data file failed to parse (a build defect, reported rather than panicking).
#[derive(Debug, Clone, thiserror::Error)]
#[error("the built-in model catalog is invalid: {0}")]
pub struct CatalogError(String);

/// Providers in catalog order, each with its models.
type Providers = Vec<(String, Vec<Model>)>;

static CATALOG: LazyLock<Result<Providers, CatalogError>> = LazyLock::new(|| {
    let map: serde_json::Map<String, serde_json::Value> =
        serde_json::from_str(CATALOG_JSON).map_err(|e| CatalogError(e.to_string()))?;
    map.into_iter()
        .map(|(provider, models)| {
            let models: Vec<Model> = serde_json::from_value(models)
                .map_err(|e| CatalogError(format!("provider {provider}: {e}")))?;
            Ok((provider, models))
        })
        .collect()
});

fn catalog() -> &'static [(String, Vec<Model>)] {
    match CATALOG.as_ref() {
        Ok(providers) => providers,
        Err(_) => &[],
    }
}

/// Every built-in model, provider by provider; an error only if the data file is broken.
pub fn builtin_models() -> Result<Vec<Model>, CatalogError> {
    let providers = CATALOG.as_ref().map_err(Clone::clone)?;
    Ok(providers
        .iter()
        .flat_map(|(_, models)| models.iter().cloned())
        .collect())
}

/// The built-in providers, in catalog order.
pub fn get_providers() -> Vec<String> {
    catalog().iter().map(|(p, _)| p.clone()).collect()
}

/// The built-in models of a provider.
pub fn get_models(provider: &str) -> Vec<Model> {
    catalog()
        .iter()
        .find(|(p, _)| p == provider)
        .map(|(_, models)| models.clone())
        .unwrap_or_default()
}

/// A built-in model by provider and id.
pub fn get_model(provider: &str, id: &str) -> Option<Model> {
    catalog()
        .iter()
        .find(|(p, _)| p == provider)
        .and_then(|(_, models)| models.iter().find(|m| m.id == id).cloned())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::api;

    #[test]
    fn catalog_parses_and_has_the_main_providers() {
        let all = builtin_models().unwrap();
        assert!(all.len() > 500, "catalog has {} models", all.len());
        let providers = get_providers();
        for p in [
            "anthropic",
            "openai",
            "groq",
            "cerebras",
            "xai",
            "openrouter",
            "deepseek",
            "mistral",
        ] {
            assert!(providers.iter().any(|x| x == p), "missing provider {p}");
        }
    }

    #[test]
    fn anthropic_models_have_costs_and_limits() {
        let models = get_models("anthropic");
        assert!(!models.is_empty());
        for m in &models {
            assert_eq!(m.api, api::ANTHROPIC_MESSAGES);
            assert!(m.context_window > 0 && m.max_tokens > 0, "{}", m.id);
            assert!(m.cost.input > 0.0 && m.cost.output > 0.0, "{}", m.id);
        }
        let haiku = get_model("anthropic", "claude-3-5-haiku-20241022").unwrap();
        assert_eq!(haiku.cost.input, 0.8);
        assert_eq!(haiku.context_window, 200_000);
    }

    #[test]
    fn openai_compatible_providers_use_completions_api() {
        for p in ["groq", "cerebras", "xai", "deepseek", "openrouter"] {
            let models = get_models(p);
            assert!(
                models.iter().any(|m| m.api == api::OPENAI_COMPLETIONS),
                "{p}"
            );
        }
    }
}
