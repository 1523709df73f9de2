//! Classifier models (pi 1.6's `models.classify()`): typed questions about JSON state,
//! answered by the built-in llama.cpp provider's models, any chat model through next-token
//! label probabilities (`llama-cpp-classify`) or a decision model through the System One
//! API (`typesafe-system-one`). Calls never fail: a problem becomes an error result.

pub mod answer;
pub mod context;
mod http;
pub mod llama_cpp;
pub mod prompt;
pub mod system_one;

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

pub use context::ClassifierContext;

/// The classifier a call goes to: its catalog entry's fields and the provider's key.
#[derive(Clone)]
pub struct Target {
    pub provider: String,
    pub id: String,
    pub api: String,
    pub base_url: String,
    pub input: Vec<String>,
    pub api_key: Option<String>,
}

impl std::fmt::Debug for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // The key stays out of every log line.
        f.debug_struct("Target")
            .field("provider", &self.provider)
            .field("id", &self.id)
            .field("api", &self.api)
            .finish_non_exhaustive()
    }
}

impl Target {
    /// The target of a catalog entry (`provider`, `id`, `api`, `baseUrl`, `input`).
    pub fn from_entry(entry: &Value, api_key: Option<String>) -> Self {
        let text = |key: &str| entry[key].as_str().unwrap_or_default().to_owned();
        Target {
            provider: text("provider"),
            id: text("id"),
            api: text("api"),
            base_url: text("baseUrl"),
            input: entry["input"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
            api_key,
        }
    }
}

/// The APIs this build runs classifiers with.
pub fn supports(api: &str) -> bool {
    matches!(api, "llama-cpp-classify" | "typesafe-system-one")
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// Runs a classifier: `{api, provider, model, answers, stopReason, timestamp}` with
/// `usage` when the server counted tokens, or `stopReason` `error`/`aborted` and
/// `errorMessage` (pi 1.6.0's `ClassifierResult`). `context` was checked by the caller.
pub async fn classify(target: &Target, context: &Value, cancel: &CancellationToken) -> Value {
    let mut output = json!({
        "api": target.api, "provider": target.provider, "model": target.id,
        "answers": {}, "stopReason": "stop", "timestamp": now_ms(),
    });
    match run(target, context, cancel).await {
        Ok((answers, usage)) => {
            output["answers"] = Value::Object(answers);
            if let Some((input, out)) = usage {
                output["usage"] = json!({
                    "input": input, "output": out, "cacheRead": 0, "cacheWrite": 0,
                    "totalTokens": input + out,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0},
                });
            }
        }
        Err(message) => {
            let aborted = cancel.is_cancelled();
            output["stopReason"] = json!(if aborted { "aborted" } else { "error" });
            output["errorMessage"] = json!(message);
        }
    }
    output
}

type Answers = (Map<String, Value>, Option<(u64, u64)>);

async fn run(
    target: &Target,
    context: &Value,
    cancel: &CancellationToken,
) -> Result<Answers, String> {
    let parsed: ClassifierContext =
        serde_json::from_value(context.clone()).map_err(|e| e.to_string())?;
    if !parsed.images.is_empty() && !target.input.iter().any(|i| i == "image") {
        return Err(format!(
            "Model {}/{} does not accept image input",
            target.provider, target.id
        ));
    }
    match target.api.as_str() {
        "llama-cpp-classify" => llama_cpp::classify(target, &parsed, cancel)
            .await
            .map(|answers| (answers, None)),
        "typesafe-system-one" => {
            system_one::classify(target, &context["questions"], &parsed, cancel)
                .await
                .map(|answered| (answered.answers, answered.usage))
        }
        api => Err(format!("Unsupported classifier API: {api}")),
    }
}
