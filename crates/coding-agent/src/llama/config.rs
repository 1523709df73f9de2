//! Where the router is and which key it takes: the credential `/login llama.cpp` stored
//! (`{"type": "api_key", "key"?, "env": {"LLAMA_BASE_URL"}}`), else `LLAMA_BASE_URL` and
//! `LLAMA_API_KEY` from the environment.

use crate::config::auth::AuthStorage;

use super::PROVIDER_ID;
use super::url::normalize_server_url;

/// The variable holding the router URL (in the stored credential's `env` or the process's).
pub const BASE_URL_VAR: &str = "LLAMA_BASE_URL";
/// The variable holding the router's API key.
pub const API_KEY_VAR: &str = "LLAMA_API_KEY";
/// The key sent when none is configured (llama.cpp ignores it without `--api-key`).
const NO_KEY: &str = "local";

/// A configured router.
#[derive(Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The normalized router URL.
    pub server_url: String,
    /// The key for requests: the stored one, else `LLAMA_API_KEY`, else `local`.
    pub api_key: String,
    /// Configured by `/login` (a stored credential), not by the environment.
    pub stored: bool,
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServerConfig")
            .field("server_url", &self.server_url)
            .field("stored", &self.stored)
            .finish_non_exhaustive()
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name)
        .ok()
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

/// The router pi talks to, if one is configured (a URL that does not parse counts as none).
pub fn resolve(auth: &AuthStorage) -> Option<ServerConfig> {
    let stored = auth.credential(PROVIDER_ID).is_some();
    let stored_url = auth
        .env(PROVIDER_ID)
        .and_then(|env| env.get(BASE_URL_VAR))
        .map(|url| url.trim().to_owned())
        .filter(|url| !url.is_empty());
    let url = stored_url.or_else(|| env_var(BASE_URL_VAR))?;
    let server_url = normalize_server_url(&url).ok()?;
    let api_key = auth
        .api_key(PROVIDER_ID)
        .or_else(|| env_var(API_KEY_VAR))
        .unwrap_or_else(|| NO_KEY.to_owned());
    Some(ServerConfig {
        server_url,
        api_key,
        stored,
    })
}

/// The credential `/login llama.cpp` stores: the key only when one was entered.
pub fn credential_entry(server_url: &str, api_key: Option<&str>) -> serde_json::Value {
    let mut entry = serde_json::Map::new();
    entry.insert("type".into(), "api_key".into());
    if let Some(key) = api_key.filter(|k| !k.is_empty()) {
        entry.insert("key".into(), key.into());
    }
    entry.insert(
        "env".into(),
        serde_json::json!({ BASE_URL_VAR: server_url }),
    );
    serde_json::Value::Object(entry)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn storage(json: &str) -> AuthStorage {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("auth.json");
        std::fs::write(&path, json).unwrap();
        AuthStorage::load(&path)
    }

    #[test]
    fn a_stored_login_without_key() {
        let auth = storage(
            r#"{"llama.cpp": {"type": "api_key", "env": {"LLAMA_BASE_URL": "http://h:1/v1/"}}}"#,
        );
        let config = resolve(&auth).unwrap();
        assert_eq!(config.server_url, "http://h:1");
        assert!(config.stored);
        // With no stored key, LLAMA_API_KEY or `local` (not asserted: the environment is
        // shared by the tests of this process).
        assert!(!config.api_key.is_empty());
    }

    #[test]
    fn a_stored_key_is_used() {
        let auth = storage(
            r#"{"llama.cpp": {"type": "api_key", "key": "s3", "env": {"LLAMA_BASE_URL": "http://h:1"}}}"#,
        );
        assert_eq!(resolve(&auth).unwrap().api_key, "s3");
        assert!(!format!("{:?}", resolve(&auth).unwrap()).contains("s3"));
    }

    #[test]
    fn the_stored_entry_shape() {
        assert_eq!(
            credential_entry("http://h:1", None),
            serde_json::json!({"type": "api_key", "env": {"LLAMA_BASE_URL": "http://h:1"}})
        );
        assert_eq!(
            credential_entry("http://h:1", Some("k")).to_string(),
            r#"{"type":"api_key","key":"k","env":{"LLAMA_BASE_URL":"http://h:1"}}"#
        );
    }
}
