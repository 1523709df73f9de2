//! Custom providers and models from `models.json`, in the TypeScript pi's format.
//!
//! Parsing and merging are pure: the caller reads the file and resolves `apiKey`/header
//! values (literal, environment variable name, or `!command`).

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::types::{
    ImageInputLimits, ImageResize, InputKind, InputLimits, Model, ModelCompat, ModelCost,
    ModelExtras, PromptCache, ThinkingLevel, ThinkingLevelMap,
};

/// A problem with `models.json`; built-in models stay usable when it occurs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CustomModelsError {
    #[error("Failed to parse models.json: {0}")]
    Parse(String),
    #[error("Invalid models.json schema:\n  - {path}: {message}")]
    Schema { path: String, message: String },
    #[error("{0}")]
    Invalid(String),
}

/// The whole file: `{"providers": {"<name>": {...}}}`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelsConfig {
    /// Providers in file order.
    pub providers: Vec<(String, ProviderConfig)>,
}

/// One provider entry: a new provider with models, or overrides for a built-in one.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderConfig {
    pub name: Option<String>,
    pub base_url: Option<String>,
    /// A literal key, the name of an environment variable, or `!shell command`.
    pub api_key: Option<String>,
    pub api: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<ModelCompat>,
    /// Send the key as `Authorization: Bearer <key>`.
    pub auth_header: Option<bool>,
    #[serde(default)]
    pub models: Vec<ModelDefinition>,
    #[serde(default)]
    pub model_overrides: BTreeMap<String, ModelOverride>,
}

/// A custom model; everything but `id` has a default suited to local servers.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelDefinition {
    pub id: String,
    pub name: Option<String>,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<ThinkingLevelMap>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<ModelCost>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<ModelCompat>,
    pub sampling_params: Option<Map<String, Value>>,
    pub sampling_params_by_thinking_level: Option<BTreeMap<ThinkingLevel, Map<String, Value>>>,
    /// Cache lifetimes in seconds (`short`, `long`), for cache warming.
    pub prompt_cache: Option<PromptCache>,
    /// Request and image limits (pi 0.87: `images.resize` decides how images are resized).
    pub input_limits: Option<InputLimits>,
}

/// Partial cost for overrides.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostOverride {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
    /// Replaces the model's price tiers.
    pub tiers: Option<Vec<crate::types::CostTier>>,
}

/// Per-model changes to a built-in model.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelOverride {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<ThinkingLevelMap>,
    pub input: Option<Vec<InputKind>>,
    pub cost: Option<CostOverride>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<BTreeMap<String, String>>,
    pub compat: Option<ModelCompat>,
    pub sampling_params: Option<Map<String, Value>>,
    pub sampling_params_by_thinking_level: Option<BTreeMap<ThinkingLevel, Map<String, Value>>>,
    pub prompt_cache: Option<PromptCache>,
    /// Merged over the model's limits; `images` and `images.resize` merge field by field.
    pub input_limits: Option<InputLimits>,
}

/// Unresolved request settings of a provider (values may name env vars or commands).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProviderRequestConfig {
    pub api_key: Option<String>,
    pub headers: Option<BTreeMap<String, String>>,
    pub auth_header: bool,
}

/// Built-in and custom models merged, with the request settings that go with them.
#[derive(Debug, Clone, Default)]
pub struct ResolvedModels {
    pub models: Vec<Model>,
    pub request_configs: BTreeMap<String, ProviderRequestConfig>,
    /// Unresolved per-model headers, keyed by `(provider, model id)`.
    pub model_headers: BTreeMap<(String, String), BTreeMap<String, String>>,
}

impl ModelsConfig {
    /// Parses `models.json` text (`//` comments and trailing commas allowed).
    pub fn parse(text: &str) -> Result<Self, CustomModelsError> {
        let root: Value = serde_json::from_str(&strip_json_comments(text))
            .map_err(|e| CustomModelsError::Parse(e.to_string()))?;
        let Some(providers) = root.get("providers").and_then(Value::as_object) else {
            return Err(CustomModelsError::Schema {
                path: "providers".into(),
                message: "must be an object of providers".into(),
            });
        };
        let providers = providers
            .iter()
            .map(|(name, value)| {
                let config =
                    ProviderConfig::deserialize(value).map_err(|e| CustomModelsError::Schema {
                        path: format!("providers.{name}"),
                        message: e.to_string(),
                    })?;
                Ok((name.clone(), config))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { providers })
    }

    /// Checks the rules the TypeScript pi enforces beyond the schema.
    pub fn validate(&self, builtin_providers: &[String]) -> Result<(), CustomModelsError> {
        for (name, provider) in &self.providers {
            let is_builtin = builtin_providers.iter().any(|p| p == name);
            if provider.models.is_empty() {
                if provider.base_url.is_none()
                    && provider.headers.is_none()
                    && provider.compat.is_none()
                    && provider.model_overrides.is_empty()
                {
                    return Err(CustomModelsError::Invalid(format!(
                        "Provider {name}: must specify \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\", or \"models\"."
                    )));
                }
            } else if !is_builtin {
                // pi 1.5 no longer asks for an `apiKey`: the key may come from auth.json
                // (`pi auth login`) or the environment.
                if provider.base_url.is_none() {
                    return Err(CustomModelsError::Invalid(format!(
                        "Provider {name}: \"baseUrl\" is required when defining custom models."
                    )));
                }
            }
            for model in &provider.models {
                if model.id.is_empty() {
                    return Err(CustomModelsError::Invalid(format!(
                        "Provider {name}: model missing \"id\""
                    )));
                }
                if provider.api.is_none() && model.api.is_none() && !is_builtin {
                    return Err(CustomModelsError::Invalid(format!(
                        "Provider {name}, model {}: no \"api\" specified. Set at provider or model level.",
                        model.id
                    )));
                }
                if model.context_window == Some(0) {
                    return Err(CustomModelsError::Invalid(format!(
                        "Provider {name}, model {}: invalid contextWindow",
                        model.id
                    )));
                }
                if model.max_tokens == Some(0) {
                    return Err(CustomModelsError::Invalid(format!(
                        "Provider {name}, model {}: invalid maxTokens",
                        model.id
                    )));
                }
            }
        }
        Ok(())
    }

    /// Applies provider and model overrides to `builtin`, then adds the custom models
    /// (a custom model replaces a built-in one with the same provider and id).
    pub fn resolve(&self, builtin: Vec<Model>) -> Result<ResolvedModels, CustomModelsError> {
        let builtin_providers: Vec<String> = {
            let mut seen: Vec<String> = Vec::new();
            for m in &builtin {
                if !seen.contains(&m.provider) {
                    seen.push(m.provider.clone());
                }
            }
            seen
        };
        self.validate(&builtin_providers)?;
        let mut resolved = ResolvedModels::default();
        let mut models: Vec<Model> = builtin
            .into_iter()
            .map(|mut model| {
                if let Some((_, provider)) =
                    self.providers.iter().find(|(n, _)| *n == model.provider)
                {
                    if let Some(base_url) = &provider.base_url {
                        model.base_url = base_url.clone();
                    }
                    model.compat = merge_compat(model.compat.take(), provider.compat.as_ref());
                    if let Some(o) = provider.model_overrides.get(&model.id) {
                        apply_override(&mut model, o);
                    }
                }
                model
            })
            .collect();

        for (name, provider) in &self.providers {
            if provider.api_key.is_some()
                || provider.headers.is_some()
                || provider.auth_header == Some(true)
            {
                resolved.request_configs.insert(
                    name.clone(),
                    ProviderRequestConfig {
                        api_key: provider.api_key.clone(),
                        headers: provider.headers.clone(),
                        auth_header: provider.auth_header == Some(true),
                    },
                );
            }
            for (id, o) in &provider.model_overrides {
                if let Some(h) = o.headers.as_ref().filter(|h| !h.is_empty()) {
                    resolved
                        .model_headers
                        .insert((name.clone(), id.clone()), h.clone());
                }
            }
            let defaults = builtin_providers
                .iter()
                .any(|p| p == name)
                .then(|| {
                    models
                        .iter()
                        .find(|m| m.provider == *name)
                        .map(|m| (m.api.clone(), m.base_url.clone()))
                })
                .flatten();
            for def in &provider.models {
                let Some(api) = def
                    .api
                    .clone()
                    .or_else(|| provider.api.clone())
                    .or_else(|| defaults.as_ref().map(|d| d.0.clone()))
                else {
                    continue;
                };
                let Some(base_url) = def
                    .base_url
                    .clone()
                    .or_else(|| provider.base_url.clone())
                    .or_else(|| defaults.as_ref().map(|d| d.1.clone()))
                else {
                    continue;
                };
                if let Some(h) = def.headers.as_ref().filter(|h| !h.is_empty()) {
                    resolved
                        .model_headers
                        .insert((name.clone(), def.id.clone()), h.clone());
                }
                let model = Model {
                    id: def.id.clone(),
                    name: def.name.clone().unwrap_or_else(|| def.id.clone()),
                    api,
                    provider: name.clone(),
                    base_url,
                    reasoning: def.reasoning.unwrap_or(false),
                    thinking_level_map: def.thinking_level_map.clone(),
                    input: def.input.clone().unwrap_or_else(|| vec![InputKind::Text]),
                    cost: def.cost.clone().unwrap_or_default(),
                    context_window: def.context_window.unwrap_or(128_000),
                    max_tokens: def.max_tokens.unwrap_or(16_384),
                    headers: None,
                    compat: merge_compat(provider.compat.clone(), def.compat.as_ref()),
                    extras: ModelExtras {
                        sampling_params: def.sampling_params.clone(),
                        sampling_params_by_thinking_level: def
                            .sampling_params_by_thinking_level
                            .clone(),
                        prompt_cache: def.prompt_cache,
                        input_limits: def.input_limits.clone(),
                        ..ModelExtras::default()
                    },
                };
                match models
                    .iter_mut()
                    .find(|m| m.provider == model.provider && m.id == model.id)
                {
                    Some(existing) => *existing = model,
                    None => models.push(model),
                }
            }
        }
        resolved.models = models;
        Ok(resolved)
    }
}

impl ModelOverride {
    /// Applies this override to `model` (as `models.json` does to the provider's models).
    pub fn apply(&self, model: &mut Model) {
        apply_override(model, self);
    }
}

fn apply_override(model: &mut Model, o: &ModelOverride) {
    if let Some(name) = &o.name {
        model.name = name.clone();
    }
    if let Some(reasoning) = o.reasoning {
        model.reasoning = reasoning;
    }
    if let Some(map) = &o.thinking_level_map {
        let merged = model
            .thinking_level_map
            .get_or_insert_with(Default::default);
        merged.extend(map.iter().map(|(k, v)| (*k, v.clone())));
    }
    if let Some(input) = &o.input {
        model.input = input.clone();
    }
    if let Some(window) = o.context_window {
        model.context_window = window;
    }
    if let Some(max) = o.max_tokens {
        model.max_tokens = max;
    }
    if let Some(cost) = &o.cost {
        model.cost = ModelCost {
            input: cost.input.unwrap_or(model.cost.input),
            output: cost.output.unwrap_or(model.cost.output),
            cache_read: cost.cache_read.unwrap_or(model.cost.cache_read),
            cache_write: cost.cache_write.unwrap_or(model.cost.cache_write),
            tiers: cost.tiers.clone().or_else(|| model.cost.tiers.take()),
        };
    }
    model.compat = merge_compat(model.compat.take(), o.compat.as_ref());
    if let Some(cache) = o.prompt_cache {
        model.extras.prompt_cache = Some(cache);
    }
    if let Some(limits) = &o.input_limits {
        model.extras.input_limits =
            Some(merge_input_limits(model.extras.input_limits.take(), limits));
    }
    // Sampling fields merge per key, and per level per key (pi 1.0.2).
    if let Some(params) = &o.sampling_params {
        let merged = model.extras.sampling_params.get_or_insert_with(Map::new);
        merged.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    if let Some(levels) = &o.sampling_params_by_thinking_level {
        let merged = model
            .extras
            .sampling_params_by_thinking_level
            .get_or_insert_with(BTreeMap::new);
        for (level, params) in levels {
            let entry = merged.entry(*level).or_default();
            entry.extend(params.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }
}

/// pi 1.6's `mergeInputLimits`: the override's fields win; `images` merges field by field,
/// and so does `images.resize`.
fn merge_input_limits(base: Option<InputLimits>, over: &InputLimits) -> InputLimits {
    let base = base.unwrap_or_default();
    let images = match (&over.images, base.images) {
        (None, images) => images,
        (Some(over), base) => {
            let base = base.unwrap_or_default();
            let resize = match (over.resize, base.resize) {
                (None, resize) => resize,
                (Some(over), base) => {
                    let base = base.unwrap_or_default();
                    Some(ImageResize {
                        max_width: over.max_width.or(base.max_width),
                        max_height: over.max_height.or(base.max_height),
                        max_bytes: over.max_bytes.or(base.max_bytes),
                        jpeg_quality: over.jpeg_quality.or(base.jpeg_quality),
                    })
                }
            };
            Some(ImageInputLimits {
                resize,
                max_per_message: over.max_per_message.or(base.max_per_message),
                max_per_request: over.max_per_request.or(base.max_per_request),
            })
        }
    };
    InputLimits {
        max_request_bytes: over.max_request_bytes.or(base.max_request_bytes),
        images,
    }
}

/// Field-wise merge; the routing objects merge one level deeper, as in the TypeScript pi.
fn merge_compat(base: Option<ModelCompat>, over: Option<&ModelCompat>) -> Option<ModelCompat> {
    let Some(over) = over else { return base };
    let to_map = |c: &ModelCompat| match serde_json::to_value(c) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let mut merged = base.as_ref().map(to_map).unwrap_or_default();
    for (key, value) in to_map(over) {
        match (merged.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(extra))
                if key == "openRouterRouting" || key == "vercelGatewayRouting" =>
            {
                existing.extend(extra);
            }
            (_, value) => {
                merged.insert(key, value);
            }
        }
    }
    serde_json::from_value(Value::Object(merged)).ok().or(base)
}

/// Removes `//` line comments and trailing commas outside string literals.
fn strip_json_comments(input: &str) -> String {
    let mut out = String::with_capacity(input.len());
    let mut chars = input.char_indices().peekable();
    let mut in_string = false;
    while let Some((at, c)) = chars.next() {
        if in_string {
            out.push(c);
            if c == '\\' {
                if let Some((_, next)) = chars.next() {
                    out.push(next);
                }
            } else if c == '"' {
                in_string = false;
            }
            continue;
        }
        match c {
            '"' => {
                in_string = true;
                out.push(c);
            }
            '/' if chars.peek().is_some_and(|(_, next)| *next == '/') => {
                for (_, skipped) in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ',' => {
                // Drop the comma if only whitespace (or comments) stand before `}` or `]`;
                // looked at in place (a copy of the rest per comma made big files quadratic).
                let trimmed = strip_leading_ws_and_comments(&input[at + 1..]);
                if !(trimmed.starts_with('}') || trimmed.starts_with(']')) {
                    out.push(c);
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn strip_leading_ws_and_comments(mut s: &str) -> &str {
    loop {
        s = s.trim_start();
        if let Some(rest) = s.strip_prefix("//") {
            s = rest.find('\n').map_or("", |i| &rest[i..]);
        } else {
            return s;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::builtin_models;

    const ANCHOR: &str = r#"{"providers":{"mock":{"baseUrl":"http://127.0.0.1:18080/v1","api":"openai-completions",
 "apiKey":"mock-key","models":[{"id":"mock-model","name":"Mock Model","contextWindow":128000,"maxTokens":16384}]}}}"#;

    #[test]
    fn anchor_config_adds_a_model_with_defaults() {
        let config = ModelsConfig::parse(ANCHOR).unwrap();
        let resolved = config.resolve(builtin_models().unwrap()).unwrap();
        let m = resolved
            .models
            .iter()
            .find(|m| m.provider == "mock")
            .unwrap();
        assert_eq!(m.id, "mock-model");
        assert_eq!(m.name, "Mock Model");
        assert_eq!(m.api, "openai-completions");
        assert_eq!(m.base_url, "http://127.0.0.1:18080/v1");
        assert_eq!(m.input, vec![InputKind::Text]);
        assert_eq!(m.cost, ModelCost::default());
        assert!(!m.reasoning);
        assert_eq!(
            resolved.request_configs["mock"].api_key.as_deref(),
            Some("mock-key")
        );
    }

    #[test]
    fn comments_and_trailing_commas_are_accepted() {
        let text = r#"{
  // local server
  "providers": {
    "local": {"baseUrl": "http://x//y", "api": "openai-completions", "apiKey": "k",
      "models": [{"id": "m",},],},
  },
}"#;
        let config = ModelsConfig::parse(text).unwrap();
        assert_eq!(
            config.providers[0].1.base_url.as_deref(),
            Some("http://x//y")
        );
        let m = &config.resolve(Vec::new()).unwrap().models[0];
        assert_eq!((m.context_window, m.max_tokens), (128_000, 16_384));
    }

    /// Found by the models_json fuzz target (its executions slowed as inputs with many
    /// commas grew): each comma copied the rest of the file to look past it, so a file with
    /// n commas cost n copies of it (20,000 headers took 150 s in a test build; now 50 ms). The
    /// file must still parse whole; speed is not asserted in tests.
    #[test]
    fn many_commas_and_comments_parse_whole() {
        let headers: Vec<String> = (0..20_000).map(|i| format!("\"h{i}\": \"v\"")).collect();
        let text = format!(
            r#"{{"providers": {{"openai": {{"headers": {{{}, }}, }}, }}, }}"#,
            headers.join(",\n  // a comment\n  ")
        );
        let config = ModelsConfig::parse(&text).unwrap();
        assert_eq!(
            config.providers[0].1.headers.as_ref().unwrap().len(),
            20_000
        );
    }

    #[test]
    fn custom_provider_needs_base_url_and_api_but_no_key() {
        let no_key = r#"{"providers":{"x":{"baseUrl":"http://h","api":"openai-completions","models":[{"id":"m"}]}}}"#;
        let resolved = ModelsConfig::parse(no_key)
            .unwrap()
            .resolve(Vec::new())
            .unwrap();
        assert_eq!(resolved.models.len(), 1);
        let no_api =
            r#"{"providers":{"x":{"baseUrl":"http://h","apiKey":"k","models":[{"id":"m"}]}}}"#;
        let err = ModelsConfig::parse(no_api)
            .unwrap()
            .resolve(Vec::new())
            .unwrap_err();
        assert!(err.to_string().contains("no \"api\" specified"));
    }

    #[test]
    fn overrides_change_builtin_models() {
        let text = r#"{"providers":{"anthropic":{"baseUrl":"http://proxy",
          "modelOverrides":{"claude-haiku-4-5":{"name":"Haiku","cost":{"input":1,
            "tiers":[{"inputTokensAbove":200000,"input":2,"output":10}]},
            "promptCache":{"short":300}}}}}}"#;
        let resolved = ModelsConfig::parse(text)
            .unwrap()
            .resolve(builtin_models().unwrap())
            .unwrap();
        let m = resolved
            .models
            .iter()
            .find(|m| m.id == "claude-haiku-4-5")
            .unwrap();
        assert_eq!(m.name, "Haiku");
        assert_eq!(m.base_url, "http://proxy");
        assert_eq!(m.cost.input, 1.0);
        assert_eq!(m.cost.output, 5.0);
        let tiers = m.cost.tiers.as_ref().unwrap();
        assert_eq!(
            (tiers[0].input_tokens_above, tiers[0].input),
            (200_000.0, 2.0)
        );
        assert_eq!(m.extras.prompt_cache.unwrap().short, Some(300));
        assert!(
            resolved
                .models
                .iter()
                .filter(|m| m.provider == "anthropic")
                .all(|m| m.base_url == "http://proxy")
        );
    }

    #[test]
    fn bad_json_and_bad_shapes_are_clear_errors() {
        assert!(matches!(
            ModelsConfig::parse("{"),
            Err(CustomModelsError::Parse(_))
        ));
        let err = ModelsConfig::parse(r#"{"providers":{"x":{"models":"nope"}}}"#).unwrap_err();
        assert!(err.to_string().contains("providers.x"), "{err}");
    }
}
