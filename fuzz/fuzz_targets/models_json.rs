//! `models.json`: arbitrary text through the parser (comments, trailing commas, the schema)
//! and the merge with built-in models. Properties: nothing panics, and text that is valid
//! JSON never fails as a parse error (comment stripping must not break valid JSON).
#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use pi_ai::Model;
use pi_ai::models::{CustomModelsError, ModelsConfig, builtin_models};

/// A few built-in models of each provider: enough for overrides to find, cheap to clone.
static BUILTIN: LazyLock<Vec<Model>> = LazyLock::new(|| {
    let mut kept: Vec<Model> = Vec::new();
    for model in builtin_models().unwrap_or_default() {
        if kept.iter().filter(|m| m.provider == model.provider).count() < 2 {
            kept.push(model);
        }
    }
    kept
});

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let parsed = ModelsConfig::parse(text);
    if serde_json::from_str::<serde_json::Value>(text).is_ok() {
        assert!(
            !matches!(parsed, Err(CustomModelsError::Parse(_))),
            "valid JSON failed to parse: {parsed:?}"
        );
    }
    let Ok(config) = parsed else {
        return;
    };
    if let Ok(resolved) = config.resolve(BUILTIN.clone()) {
        for model in &resolved.models {
            assert!(serde_json::to_string(model).is_ok());
        }
    }
});
