//! The built-in catalog (`catalog.json`, refreshed by `scripts/refresh-models.sh` from
//! `@earendil-works/pi-ai`): pi 1.6's chat models, provider by provider, each with every field
//! as pi-ai writes it. Fields ours does not act on yet (`inputLimits`, `promptCache`, `type`,
//! Radius's `lab`/`enabled`/`providers`/`free`, most of 1.6's compat flags) are kept in
//! [`crate::types::ModelExtras`] and [`crate::types::ModelCompat`], so a model serializes back
//! to what the catalog holds.

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
    serde_json::from_str::<InOrder>(CATALOG_JSON)
        .map(|catalog| catalog.0)
        .map_err(|e| CatalogError(e.to_string()))
});

/// The catalog's providers read straight into models, in file order (no JSON tree between:
/// this parse is most of pi's start-up).
struct InOrder(Providers);

impl<'de> serde::Deserialize<'de> for InOrder {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = InOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of providers and their models")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<InOrder, A::Error> {
                let mut providers = Vec::new();
                while let Some((provider, models)) = map.next_entry::<String, Vec<Model>>()? {
                    providers.push((provider, models));
                }
                Ok(InOrder(providers))
            }
        }
        deserializer.deserialize_map(Visit)
    }
}

/// Parses the catalog now (on a thread of the caller's choosing), so that the first model
/// lookup does not wait for it.
pub fn warm_catalog() {
    LazyLock::force(&CATALOG);
}

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
        let haiku = get_model("anthropic", "claude-haiku-4-5").unwrap();
        assert_eq!(haiku.cost.input, 1.0);
        assert_eq!(haiku.context_window, 200_000);
    }

    #[test]
    fn openai_compatible_providers_use_completions_api() {
        // xAI moved to the Responses API in pi 1.6.
        for p in ["groq", "cerebras", "deepseek", "openrouter"] {
            let models = get_models(p);
            assert!(
                models.iter().any(|m| m.api == api::OPENAI_COMPLETIONS),
                "{p}"
            );
        }
    }

    #[test]
    fn the_catalog_is_pi_16s() {
        assert_eq!(get_providers().len(), 43);
        assert_eq!(builtin_models().unwrap().len(), 1698);
        // typesafe serves classifiers only: no chat model, but the provider is there.
        assert!(get_models("typesafe").is_empty());
        assert!(get_providers().iter().any(|p| p == "typesafe"));
        // The Azure provider is `azure` since pi 1.6.
        assert!(get_models("azure-openai-responses").is_empty());
        assert_eq!(
            get_model("azure", "gpt-6.2-sol").unwrap().api,
            api::AZURE_OPENAI_RESPONSES
        );
    }

    #[test]
    fn pi_16s_model_changes_are_in() {
        // GPT-6.2 Sol and Astra on OpenAI, Azure (1.05M context) and Codex (Sol 500K).
        for provider in ["openai", "azure", "openai-codex"] {
            for id in ["gpt-6.2-sol", "gpt-6.2-astra"] {
                assert!(get_model(provider, id).is_some(), "{provider}/{id}");
            }
        }
        assert_eq!(
            get_model("azure", "gpt-6.2-astra").unwrap().context_window,
            1_050_000
        );
        assert_eq!(
            get_model("openai-codex", "gpt-6.2-sol")
                .unwrap()
                .context_window,
            500_000
        );
        // Qwen Token Plan: the current gateways, the new models, the retired ones gone.
        for (provider, host) in [
            ("qwen-token-plan", "token-plan.maas.qwencloudapi.com"),
            ("qwen-token-plan-cn", "token-plan.maas.qianwenaiapi.com"),
            (
                "qwen-token-plan-individual",
                "token-plan.maas.qwencloudapi.com",
            ),
            (
                "qwen-token-plan-individual-cn",
                "token-plan.maas.qianwenaiapi.com",
            ),
        ] {
            assert!(
                get_models(provider)
                    .iter()
                    .all(|m| m.base_url.contains(host)),
                "{provider}"
            );
        }
        for provider in [
            "qwen-token-plan-individual",
            "qwen-token-plan-individual-cn",
        ] {
            for id in [
                "qwen4-max-preview",
                "deepseek-v4.1-flash",
                "deepseek-v4.1-flash-1017",
            ] {
                assert!(get_model(provider, id).is_some(), "{provider}/{id}");
            }
        }
        for provider in ["qwen-token-plan", "qwen-token-plan-cn"] {
            for id in ["deepseek-v3.2", "deepseek-v4-flash"] {
                assert!(get_model(provider, id).is_none(), "{provider}/{id}");
            }
        }
    }

    #[test]
    fn every_model_serializes_back_to_the_catalog_entry() {
        let raw: serde_json::Map<String, serde_json::Value> =
            serde_json::from_str(CATALOG_JSON).unwrap();
        for (provider, models) in raw {
            let parsed = get_models(&provider);
            let written = serde_json::to_value(&parsed).unwrap();
            assert_eq!(written, models, "{provider}");
        }
    }

    #[test]
    fn new_fields_of_pi_16_are_read() {
        use crate::types::ThinkingLevel;
        let sol = get_model("openai", "gpt-6.2-sol").unwrap();
        assert_eq!(sol.thinking_level_value(ThinkingLevel::Off), Some(None));
        assert_eq!(sol.thinking_level_value(ThinkingLevel::Minimal), Some(None));
        assert_eq!(
            sol.thinking_level_value(ThinkingLevel::Max),
            Some(Some("max"))
        );
        assert_eq!(sol.cost.tiers.as_ref().map(Vec::len), Some(1));
        assert_eq!(sol.extras.model_type.as_deref(), Some("chat"));
        let limits = sol.extras.input_limits.as_ref().unwrap();
        assert_eq!(limits.max_request_bytes, Some(536_870_912));
        let images = limits.images.as_ref().unwrap();
        assert_eq!(images.max_per_request, Some(1500));
        assert_eq!(images.resize.and_then(|r| r.jpeg_quality), Some(80));
        let compat = sol.compat.as_ref().unwrap();
        assert_eq!(compat.supports_openai_grammar_tools, Some(true));
        assert_eq!(compat.supports_tool_search, Some(true));

        let opus = get_model("anthropic", "claude-opus-5-5").unwrap();
        let compat = opus.compat.as_ref().unwrap();
        assert_eq!(compat.force_adaptive_thinking, Some(true));
        assert_eq!(compat.supports_temperature, Some(false));
        let cache = opus.extras.prompt_cache.unwrap();
        assert_eq!((cache.short, cache.long), (Some(300), Some(3600)));

        let balanced = get_model("radius", "balanced").unwrap();
        assert_eq!(balanced.api, "pi-messages");
        assert_eq!(balanced.extras.enabled, Some(true));
        assert!(balanced.extras.lab.is_some());
        assert!(
            balanced
                .extras
                .providers
                .as_ref()
                .is_some_and(|p| !p.is_empty())
        );

        let glm = get_model("baseten", "zai-org/GLM-5.3").unwrap();
        assert_eq!(
            glm.compat.as_ref().and_then(|c| c.thinking_format),
            Some(crate::types::ThinkingFormat::Openai)
        );
    }

    #[test]
    fn unknown_fields_are_kept() {
        let text = r#"{"id":"m","name":"M","api":"openai-completions","provider":"p",
            "baseUrl":"http://x","reasoning":false,"input":["text"],
            "cost":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0},
            "contextWindow":1000,"maxTokens":100,"futureField":{"a":1},
            "compat":{"supportsFinishReason":false,"futureFlag":2,"thinkingFormat":"string-thinking"}}"#;
        let model: Model = serde_json::from_str(text).unwrap();
        assert_eq!(
            model.extras.other["futureField"],
            serde_json::json!({"a": 1})
        );
        let compat = model.compat.as_ref().unwrap();
        assert_eq!(compat.supports_finish_reason, Some(false));
        assert_eq!(compat.other["futureFlag"], serde_json::json!(2));
        let back = serde_json::to_value(&model).unwrap();
        let original: serde_json::Value = serde_json::from_str(text).unwrap();
        assert_eq!(back, original);
    }
}
