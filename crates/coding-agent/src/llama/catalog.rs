//! Which router models pi offers for chat and how it describes them: the selectable rule,
//! the context-window rule, and the model entry (as pi 1.6.0 builds and persists it).

use std::collections::HashMap;

use serde_json::{Value, json};

use super::PROVIDER_ID;
use super::wire::{RouterModel, RouterProps};

/// The context window when the router says nothing about it.
const FALLBACK_CONTEXT_WINDOW: u64 = 128_000;

/// Whether a model can be chosen for chat now: loaded, sleeping (a request wakes it), or an
/// unloaded preset that router autoload would load on first use.
pub fn is_selectable(model: &RouterModel, router_autoload: bool) -> bool {
    match model.status.value.as_str() {
        "loaded" | "sleeping" => true,
        "unloaded" => {
            router_autoload && !model.failed() && model.source.as_deref() == Some("preset")
        }
        _ => false,
    }
}

/// Whether any model is an unloaded preset (only then does autoload matter).
pub fn has_unloaded_preset(catalog: &[RouterModel]) -> bool {
    catalog
        .iter()
        .any(|m| m.has_status("unloaded") && m.source.as_deref() == Some("preset"))
}

/// A positive whole number as JavaScript's `Number()` reads a command-line value.
fn js_positive_integer(text: &str) -> Option<u64> {
    let value: f64 = text.trim().parse().ok()?;
    const MAX_SAFE: f64 = 9_007_199_254_740_991.0;
    (value.is_finite() && value.fract() == 0.0 && value > 0.0 && value <= MAX_SAFE)
        .then_some(value as u64)
}

/// The context size the model's command line sets (`--ctx-size`, `-c` or `-ctx`).
pub fn configured_context_window(model: &RouterModel) -> Option<u64> {
    let args = model.status.args.as_deref().unwrap_or_default();
    args.windows(2)
        .filter(|pair| matches!(pair[0].as_str(), "--ctx-size" | "-c" | "-ctx"))
        .find_map(|pair| js_positive_integer(&pair[1]))
}

/// The context window: the running one, else the command line's, else what an earlier
/// refresh found, else the training context, else 128000.
pub fn context_window_of(model: &RouterModel, cached: Option<u64>) -> u64 {
    let meta = model.meta.clone().unwrap_or_default();
    if let Some(n_ctx) = meta.n_ctx.filter(|n| *n > 0) {
        return n_ctx;
    }
    if let Some(configured) = configured_context_window(model) {
        return configured;
    }
    if let Some(cached) = cached.filter(|n| *n > 0) {
        return cached;
    }
    meta.n_ctx_train
        .filter(|n| *n > 0)
        .unwrap_or(FALLBACK_CONTEXT_WINDOW)
}

/// Whether a model thinks: its chat template reads `enable_thinking`.
pub fn reasons(props: Option<&RouterProps>) -> bool {
    props
        .and_then(|p| p.chat_template.as_deref())
        .is_some_and(|t| t.contains("enable_thinking"))
}

/// The chat model entry for a router model, keys in pi 1.6.0's order (so the persisted
/// catalog reads the same whichever pi wrote it).
pub fn chat_model_entry(
    model: &RouterModel,
    inference_url: &str,
    props: Option<&RouterProps>,
    cached_context: Option<u64>,
) -> Value {
    let context_window = context_window_of(model, cached_context);
    let reasoning = reasons(props);
    let mut entry = serde_json::Map::new();
    entry.insert("id".into(), json!(model.id));
    entry.insert("name".into(), json!(model.id));
    entry.insert("api".into(), json!("openai-completions"));
    entry.insert("provider".into(), json!(PROVIDER_ID));
    entry.insert("baseUrl".into(), json!(inference_url));
    entry.insert("reasoning".into(), json!(reasoning));
    if reasoning {
        // llama.cpp's templates switch thinking on or off; there are no levels between.
        entry.insert(
            "thinkingLevelMap".into(),
            json!({"off": "off", "minimal": null, "low": null, "medium": "medium", "high": null, "xhigh": null}),
        );
    }
    let input = if model.takes_images() {
        json!(["text", "image"])
    } else {
        json!(["text"])
    };
    entry.insert("input".into(), input);
    entry.insert(
        "cost".into(),
        json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}),
    );
    entry.insert("contextWindow".into(), json!(context_window));
    entry.insert("maxTokens".into(), json!(context_window));
    let mut compat = serde_json::Map::new();
    compat.insert("supportsStore".into(), json!(false));
    compat.insert("supportsReasoningEffort".into(), json!(false));
    compat.insert("supportsUsageInStreaming".into(), json!(true));
    compat.insert("supportsStrictMode".into(), json!(false));
    compat.insert("maxTokensField".into(), json!("max_tokens"));
    if reasoning {
        compat.insert("thinkingFormat".into(), json!("qwen-chat-template"));
    }
    entry.insert("compat".into(), Value::Object(compat));
    Value::Object(entry)
}

/// The classifier entry pi 1.6.0 persists beside each selectable model: every model can
/// classify through next-token label probabilities, a decision model through the System
/// One API (`/v1/systemone`).
pub fn classifier_entry(
    model: &RouterModel,
    server_url: &str,
    inference_url: &str,
    cached_context: Option<u64>,
) -> Value {
    let decision = model.is_decision_model();
    let image = decision && model.takes_images();
    let mut entry = serde_json::Map::new();
    entry.insert("type".into(), json!("classifier"));
    entry.insert("id".into(), json!(model.id));
    entry.insert("name".into(), json!(model.id));
    let api = if decision {
        "typesafe-system-one"
    } else {
        "llama-cpp-classify"
    };
    entry.insert("api".into(), json!(api));
    entry.insert("provider".into(), json!(PROVIDER_ID));
    let base = if decision { inference_url } else { server_url };
    entry.insert("baseUrl".into(), json!(base));
    let input = if image {
        json!(["text", "image"])
    } else {
        json!(["text"])
    };
    entry.insert("input".into(), input);
    entry.insert(
        "cost".into(),
        json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0}),
    );
    entry.insert(
        "contextWindow".into(),
        json!(context_window_of(model, cached_context)),
    );
    if image {
        entry.insert(
            "compat".into(),
            json!({"imageInput": "images", "sendImageOptInHeader": false}),
        );
    }
    Value::Object(entry)
}

/// Whether a persisted entry is one of this provider's chat models.
pub fn is_stored_chat_model(entry: &Value) -> bool {
    let kind = entry.get("type").and_then(Value::as_str);
    matches!(kind, None | Some("chat"))
        && entry.get("provider").and_then(Value::as_str) == Some(PROVIDER_ID)
        && entry.get("api").and_then(Value::as_str) == Some("openai-completions")
}

/// The context windows an earlier refresh found, by model id (chat and classifier entries).
pub fn cached_context_windows(stored: &[Value]) -> HashMap<String, u64> {
    stored
        .iter()
        .filter(|e| e.get("provider").and_then(Value::as_str) == Some(PROVIDER_ID))
        .filter_map(|e| {
            let id = e.get("id")?.as_str()?.to_owned();
            let window = e.get("contextWindow")?.as_u64()?;
            Some((id, window))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn model(value: serde_json::Value) -> RouterModel {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn selectable_models() {
        let m = |status: &str, source: Option<&str>, failed: bool| {
            model(
                json!({"id": "x", "status": {"value": status, "failed": failed}, "source": source}),
            )
        };
        assert!(is_selectable(&m("loaded", None, false), false));
        assert!(is_selectable(&m("sleeping", None, false), false));
        assert!(!is_selectable(&m("unloaded", None, false), true));
        assert!(!is_selectable(&m("unloaded", Some("preset"), false), false));
        assert!(is_selectable(&m("unloaded", Some("preset"), false), true));
        assert!(!is_selectable(&m("unloaded", Some("preset"), true), true));
        assert!(!is_selectable(&m("loading", Some("preset"), false), true));
        assert!(!is_selectable(&m("downloading", None, false), true));
        assert!(has_unloaded_preset(&[m("unloaded", Some("preset"), false)]));
        assert!(!has_unloaded_preset(&[m("loaded", Some("preset"), false)]));
    }

    #[test]
    fn context_window_rules() {
        let with = |meta: Value, args: Value| {
            model(json!({"id": "x", "status": {"value": "loaded", "args": args}, "meta": meta}))
        };
        // The running context wins.
        let m = with(
            json!({"n_ctx": 4096, "n_ctx_train": 32768}),
            json!(["-c", "8192"]),
        );
        assert_eq!(context_window_of(&m, Some(1000)), 4096);
        // Then the command line, in any of its spellings.
        for flag in ["--ctx-size", "-c", "-ctx"] {
            let m = with(json!({"n_ctx_train": 32768}), json!(["x", flag, "8192"]));
            assert_eq!(context_window_of(&m, Some(1000)), 8192, "{flag}");
        }
        // A value that is no positive whole number is skipped.
        let m = with(
            json!({"n_ctx": 0, "n_ctx_train": 32768}),
            json!(["-c", "0", "--ctx-size", "abc", "-ctx", "1.5"]),
        );
        assert_eq!(context_window_of(&m, Some(2048)), 2048, "then the cache");
        assert_eq!(
            context_window_of(&m, None),
            32768,
            "then the training context"
        );
        assert_eq!(
            context_window_of(&with(json!({}), json!(["-c"])), None),
            128_000
        );
        assert_eq!(
            configured_context_window(&with(json!({}), json!(["-c", " 1e3 "]))),
            Some(1000)
        );
    }

    #[test]
    fn chat_entries_as_pi_builds_them() {
        let m = model(
            json!({"id": "qwen", "status": {"value": "loaded"}, "meta": {"n_ctx": 4096},
            "architecture": {"input_modalities": ["text", "image"]}}),
        );
        let props = RouterProps {
            models_autoload: None,
            chat_template: Some("{% if enable_thinking %}".into()),
        };
        let entry = chat_model_entry(&m, "http://h/v1", Some(&props), None);
        assert_eq!(
            entry,
            json!({"id": "qwen", "name": "qwen", "api": "openai-completions", "provider": "llama.cpp",
                "baseUrl": "http://h/v1", "reasoning": true,
                "thinkingLevelMap": {"off": "off", "minimal": null, "low": null, "medium": "medium", "high": null, "xhigh": null},
                "input": ["text", "image"], "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
                "contextWindow": 4096, "maxTokens": 4096,
                "compat": {"supportsStore": false, "supportsReasoningEffort": false, "supportsUsageInStreaming": true,
                    "supportsStrictMode": false, "maxTokensField": "max_tokens", "thinkingFormat": "qwen-chat-template"}})
        );
        // The entry is a model this build can use as it is.
        let parsed: pi_ai::Model = serde_json::from_value(entry).unwrap();
        assert_eq!(parsed.context_window, 4096);
        let plain = chat_model_entry(&m, "http://h/v1", None, None);
        assert_eq!(plain["reasoning"], false);
        assert!(plain.get("thinkingLevelMap").is_none());
        assert!(plain["compat"].get("thinkingFormat").is_none());
        assert!(is_stored_chat_model(&plain));
        let classifier = classifier_entry(&m, "http://h", "http://h/v1", None);
        assert!(!is_stored_chat_model(&classifier));
        assert_eq!(classifier["api"], "llama-cpp-classify");
        assert_eq!(classifier["baseUrl"], "http://h");
    }
}
