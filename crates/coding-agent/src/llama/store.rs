//! The persisted model catalog: `<agentDir>/models-store.json`, shared with pi 1.6.0, holds
//! per provider `{"models": [...], "checkedAt": <ms>}`, so llama.cpp models stay listed
//! across restarts and in modes that do not ask the router (print mode, `--list-models`).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::PROVIDER_ID;
use super::catalog::is_stored_chat_model;
use super::error::LlamaError;

/// Where the catalogs are kept.
pub fn store_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("models-store.json")
}

/// The llama.cpp entries of the file (chat models and classifiers); none when it is
/// missing or unreadable.
pub fn read_entries(agent_dir: &Path) -> Vec<Value> {
    let Ok(text) = crate::text_file::read_text(store_path(agent_dir)) else {
        return Vec::new();
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get(PROVIDER_ID)?.get("models")?.as_array().cloned())
        .unwrap_or_default()
}

/// The persisted chat models that parse as models.
pub fn read_chat_models(agent_dir: &Path) -> Vec<pi_ai::Model> {
    read_entries(agent_dir)
        .into_iter()
        .filter(is_stored_chat_model)
        .filter_map(|entry| serde_json::from_value(entry).ok())
        .collect()
}

/// The persisted classifier entries (`"type": "classifier"`), as saved.
pub fn read_classifiers(agent_dir: &Path) -> Vec<Value> {
    read_entries(agent_dir)
        .into_iter()
        .filter(|entry| entry["type"] == "classifier")
        .collect()
}

/// Replaces the llama.cpp catalog, under the file's lock; other providers' stay.
pub fn write_entries(agent_dir: &Path, models: Vec<Value>) -> Result<(), LlamaError> {
    let checked_at = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default();
    crate::config::auth::update_auth_file(&store_path(agent_dir), |map| {
        map.insert(
            PROVIDER_ID.to_owned(),
            json!({ "models": models, "checkedAt": checked_at }),
        );
    })
    .map_err(|e| LlamaError::Store(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_keeps_other_providers() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            store_path(dir.path()),
            r#"{"other": {"models": [], "checkedAt": 1}}"#,
        )
        .unwrap();
        let chat = json!({"id": "m", "name": "m", "api": "openai-completions", "provider": "llama.cpp",
            "baseUrl": "http://h/v1", "reasoning": false, "input": ["text"],
            "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
            "contextWindow": 4096, "maxTokens": 4096});
        let classifier = json!({"type": "classifier", "id": "m", "api": "llama-cpp-classify", "provider": "llama.cpp"});
        write_entries(dir.path(), vec![chat, classifier]).unwrap();
        assert_eq!(read_entries(dir.path()).len(), 2);
        let models = read_chat_models(dir.path());
        assert_eq!(models.len(), 1);
        assert_eq!(models[0].context_window, 4096);
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(store_path(dir.path())).unwrap())
                .unwrap();
        assert_eq!(file["other"]["checkedAt"], 1);
        assert!(file["llama.cpp"]["checkedAt"].as_u64().unwrap() > 0);
    }
}
