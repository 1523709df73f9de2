//! The JSON the llama.cpp router speaks: its model list (`GET /models`) and its properties
//! (`GET /props`). Fields pi does not read are ignored; missing ones are `None`.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One entry of `GET /models` `data[]`: a model the router knows, loaded or not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RouterModel {
    pub id: String,
    pub status: ModelStatus,
    /// Runtime facts of a loaded model (`n_ctx`) and of its file (`n_ctx_train`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ModelMeta>,
    /// What the model takes and gives (llama.cpp 0.6.0 and later).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub architecture: Option<Architecture>,
    /// Where the router found it: `preset` for `--models-preset` entries, else a cache or dir.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// `status` of a router model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelStatus {
    /// `loaded`, `sleeping`, `unloaded`, `loading` or `downloading` (kept as text: a newer
    /// router may report more, and pi shows them as they are).
    pub value: String,
    /// The command line the model runs (or would run) with, e.g. `["--ctx-size", "8192"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub args: Option<Vec<String>>,
    /// The last load failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<bool>,
    /// The exit code of a model process that died.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Download progress while `downloading`: per-file `{done, total}` byte counts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<Value>,
}

/// `meta` of a router model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelMeta {
    /// The context the loaded model runs with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_ctx: Option<u64>,
    /// The context the model was trained for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub n_ctx_train: Option<u64>,
}

/// `architecture` of a router model.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Architecture {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_modalities: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_modalities: Option<Vec<String>>,
}

/// The fields of `GET /props` pi reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RouterProps {
    /// The router loads an unloaded model on its first request (no `--no-models-autoload`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub models_autoload: Option<bool>,
    /// The chat template of the model asked about (`?model=…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chat_template: Option<String>,
}

impl RouterModel {
    /// Loaded or idle-slept: it answers requests (a sleeping one wakes on its own).
    pub fn is_loaded(&self) -> bool {
        matches!(self.status.value.as_str(), "loaded" | "sleeping")
    }

    /// Whether the router reports this status.
    pub fn has_status(&self, value: &str) -> bool {
        self.status.value == value
    }

    /// The last load of this model failed.
    pub fn failed(&self) -> bool {
        self.status.failed == Some(true)
    }

    fn has_modality(list: Option<&Vec<String>>, what: &str) -> bool {
        list.is_some_and(|l| l.iter().any(|m| m == what))
    }

    /// A native decision model (llama.cpp 0.6.0+ lists `decisions` among its outputs).
    pub fn is_decision_model(&self) -> bool {
        let outputs = self
            .architecture
            .as_ref()
            .and_then(|a| a.output_modalities.as_ref());
        Self::has_modality(outputs, "decisions")
    }

    /// Whether it generates text: decision-only models are classifiers, not chat models.
    pub fn is_chat_model(&self) -> bool {
        let outputs = self
            .architecture
            .as_ref()
            .and_then(|a| a.output_modalities.as_ref());
        !self.is_decision_model() || Self::has_modality(outputs, "text")
    }

    /// Whether it takes images.
    pub fn takes_images(&self) -> bool {
        let inputs = self
            .architecture
            .as_ref()
            .and_then(|a| a.input_modalities.as_ref());
        Self::has_modality(inputs, "image")
    }
}

/// Reads the `data` list of a `GET /models` answer: `None` when it is not a list; `Err` when
/// an entry lacks an `id` or a `status.value` (a server that is not a router).
pub fn parse_catalog(payload: &Value) -> Option<Result<Vec<RouterModel>, ()>> {
    let data = payload.get("data")?.as_array()?;
    let models: Result<Vec<RouterModel>, ()> = data
        .iter()
        .map(|entry| {
            let looks_right = entry.get("id").is_some_and(Value::is_string)
                && entry
                    .get("status")
                    .and_then(|s| s.get("value"))
                    .is_some_and(Value::is_string);
            if !looks_right {
                return Err(());
            }
            serde_json::from_value(entry.clone()).map_err(|_| ())
        })
        .collect();
    Some(models)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_a_router_catalog() {
        let payload = json!({"object": "list", "data": [
            {"id": "a", "status": {"value": "loaded", "args": ["--ctx-size", "8192"]},
             "meta": {"n_ctx": 4096}, "architecture": {"input_modalities": ["text", "image"]},
             "in_cache": true},
            {"id": "b", "status": {"value": "unloaded", "failed": true, "exit_code": 1}, "source": "preset"}
        ]});
        let models = parse_catalog(&payload).unwrap().unwrap();
        assert_eq!(models.len(), 2);
        assert!(models[0].is_loaded() && models[0].takes_images());
        assert_eq!(models[0].meta.as_ref().unwrap().n_ctx, Some(4096));
        assert!(models[1].failed());
        assert_eq!(models[1].source.as_deref(), Some("preset"));
    }

    #[test]
    fn a_single_model_server_is_not_a_router() {
        // llama-server without router mode answers /models in OpenAI form: no status.
        let payload = json!({"object": "list", "data": [{"id": "m", "object": "model"}]});
        assert_eq!(parse_catalog(&payload), Some(Err(())));
        assert_eq!(parse_catalog(&json!({"models": []})), None);
    }

    #[test]
    fn decision_models_are_not_chat_models() {
        let mut model: RouterModel =
            serde_json::from_value(json!({"id": "j", "status": {"value": "loaded"}})).unwrap();
        assert!(model.is_chat_model());
        model.architecture = Some(Architecture {
            input_modalities: None,
            output_modalities: Some(vec!["decisions".into()]),
        });
        assert!(model.is_decision_model() && !model.is_chat_model());
        model.architecture = Some(Architecture {
            input_modalities: None,
            output_modalities: Some(vec!["decisions".into(), "text".into()]),
        });
        assert!(model.is_chat_model());
    }
}
