//! The `models` global of codemode scripts (pi 1.6): the session's model catalog by type,
//! and the checks before a classifier or image model would run.

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::CodemodeHost;
use crate::classifiers;

/// What a `models.*` request asks for: a value now, or a model call to run.
pub(super) enum ModelsRequest {
    Value(Value),
    Call(ModelCall),
}

/// A classifier or image model call that passed its checks: what it is recorded as and
/// the call itself, which never fails (a problem is an error result).
pub(super) struct ModelCall {
    pub name: &'static str,
    pub reference: String,
    pub run: BoxFuture<'static, Value>,
}

/// `models.*` (pi 1.6): the lists and lookups from the session's catalog, and classifier
/// calls to the models this build runs (llama.cpp's); an image model, or a classifier of a
/// provider without that API here, answers with an error result.
pub(super) fn request(
    host: &dyn CodemodeHost,
    args: &Value,
    cancel: CancellationToken,
) -> Result<ModelsRequest, String> {
    match args["op"].as_str().unwrap_or_default() {
        op @ ("classify" | "generateImages") => {
            run_model(host, op, &args["model"], &args["context"], cancel).map(ModelsRequest::Call)
        }
        _ => answer(host, args).map(ModelsRequest::Value),
    }
}

fn answer(host: &dyn CodemodeHost, args: &Value) -> Result<Value, String> {
    let op = args["op"].as_str().unwrap_or_default();
    let kind = args["type"].as_str().unwrap_or_default();
    if op.ends_with("OfType") && !matches!(kind, "chat" | "image" | "classifier") {
        return Err(format!(
            "Unknown model type \"{kind}\". Use \"chat\", \"image\", or \"classifier\"."
        ));
    }
    let provider = args["provider"].as_str();
    Ok(match op {
        "getModelsOfType" => Value::Array(host.models_of_type(kind, provider, false)),
        "getAvailableOfType" => Value::Array(host.models_of_type(kind, provider, true)),
        "getModelOfType" => {
            let id = args["id"].as_str();
            let (Some(provider), Some(id)) = (provider, id) else {
                let argc = args["argc"].as_u64().unwrap_or(3) as usize;
                let given = ["type", "provider", "id"]
                    .iter()
                    .take(argc)
                    .map(|k| describe_value(&args[*k]))
                    .collect::<Vec<_>>()
                    .join(", ");
                return Err(format!(
                    "models.getModelOfType(type, provider, id) expects three strings, got ({given}). The provider and the id are separate arguments, for example models.getModelOfType(\"classifier\", \"typesafe\", \"jev-latest\")."
                ));
            };
            host.models_of_type(kind, Some(provider), false)
                .into_iter()
                .find(|m| m["id"] == id)
                .unwrap_or(Value::Null)
        }
        op => return Err(format!("Unknown request models.{op}")),
    })
}

/// `models.classify()` / `models.generateImages()`: the model and the context are checked
/// as pi 1.6.0 checks them, then the call is made.
fn run_model(
    host: &dyn CodemodeHost,
    op: &str,
    model: &Value,
    context: &Value,
    cancel: CancellationToken,
) -> Result<ModelCall, String> {
    let (name, kind) = if op == "classify" {
        ("models.classify", "classifier")
    } else {
        ("models.generateImages", "image")
    };
    let article = |word: &str| {
        let vowel = word.starts_with(['a', 'e', 'i', 'o', 'u']);
        format!("{} {word}", if vowel { "an" } else { "a" })
    };
    let hint =
        format!("List the {kind} models you can use with models.getAvailableOfType(\"{kind}\").");
    let (Some(provider), Some(id)) = (model["provider"].as_str(), model["id"].as_str()) else {
        let unknown = if model.is_null() {
            " models.getModelOfType() returns undefined for an unknown provider or id."
        } else {
            ""
        };
        return Err(format!(
            "{name}() expects {} model as its first argument, got {}.{unknown} {hint}",
            article(kind),
            describe_value(model)
        ));
    };
    let of = |kind: &str| {
        host.models_of_type(kind, Some(provider), false)
            .into_iter()
            .any(|m| m["id"] == id)
    };
    let reference = format!("{provider}/{id}");
    if !of(kind) {
        let actual = ["chat", "image", "classifier"]
            .into_iter()
            .find(|other| *other != kind && of(other));
        return Err(match actual {
            Some(actual) => format!(
                "\"{reference}\" is {} model, not {} model. {hint}",
                article(actual),
                article(kind)
            ),
            None => format!("Unknown {kind} model \"{reference}\". {hint}"),
        });
    }
    if kind == "classifier" {
        super::model_checks::classifier_context(context)?;
    } else {
        super::model_checks::images_context(context)?;
    }
    let entry = host
        .models_of_type(kind, Some(provider), false)
        .into_iter()
        .find(|m| m["id"] == id)
        .unwrap_or_default();
    let api = entry["api"].as_str().unwrap_or_default().to_owned();
    let run: BoxFuture<'static, Value> = if kind == "classifier" && classifiers::supports(&api) {
        let target = classifiers::Target::from_entry(&entry, host.classifier_key(provider));
        let context = context.clone();
        Box::pin(async move { classifiers::classify(&target, &context, &cancel).await })
    } else {
        let result = unsupported(&entry, kind);
        Box::pin(async move { result })
    };
    Ok(ModelCall {
        name,
        reference,
        run,
    })
}

/// The error result of a model whose provider has no classifier or image API here.
fn unsupported(entry: &Value, kind: &str) -> Value {
    let provider = entry["provider"].as_str().unwrap_or_default();
    let what = if kind == "classifier" {
        "classification"
    } else {
        "image generation"
    };
    let timestamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    let mut result = serde_json::json!({
        "api": entry["api"],
        "provider": provider,
        "model": entry["id"],
        "stopReason": "error",
        "errorMessage": format!("Provider {provider} does not support {what}"),
        "timestamp": timestamp,
    });
    let empty = if kind == "classifier" {
        ("answers", serde_json::json!({}))
    } else {
        ("output", serde_json::json!([]))
    };
    result[empty.0] = empty.1;
    result
}

/// A value as pi 1.6.0's codemode errors describe it (`describeValue`).
pub(super) fn describe_value(value: &Value) -> String {
    match value {
        // Arguments reach the host as JSON, where `undefined` became `null` (as in pi 1.6.0).
        Value::Null => "null".to_owned(),
        Value::Array(items) if items.is_empty() => "an empty array".to_owned(),
        Value::Array(_) => "an array".to_owned(),
        Value::Object(map) if map.is_empty() => "{}".to_owned(),
        Value::Object(map) => {
            let keys: Vec<&str> = map.keys().take(6).map(String::as_str).collect();
            let more = if map.len() > 6 { ", ..." } else { "" };
            format!("{{ {}{more} }}", keys.join(", "))
        }
        Value::String(_) => "a string".to_owned(),
        Value::Bool(_) => "a boolean".to_owned(),
        Value::Number(_) => "a number".to_owned(),
    }
}
