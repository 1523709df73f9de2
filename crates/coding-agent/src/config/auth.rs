//! `auth.json`: stored credentials per provider.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use serde::Deserialize;

use super::values::resolve_config_value_with;

/// One stored credential.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Credential {
    /// A key (literal, `$NAME` / `${NAME}` template, or `!command`); `env` values beat the
    /// process environment for its variables (pi 1.5).
    ApiKey {
        key: String,
        #[serde(default)]
        env: Option<HashMap<String, String>>,
    },
    /// OAuth credentials; the access token is used as the key.
    Oauth {
        #[serde(default)]
        access: Option<String>,
    },
}

/// The parsed file; missing or unreadable files are empty (the TypeScript pi creates `{}`).
#[derive(Debug, Clone, Default)]
pub struct AuthStorage {
    credentials: BTreeMap<String, Credential>,
}

/// Creates `auth.json` as `{}` with mode 0600 when it does not exist (as the TypeScript pi
/// does at startup), creating the agent dir too.
pub fn ensure_auth_file(path: &Path) -> std::io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    if path.exists() {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
    {
        Ok(mut file) => file.write_all(b"{}"),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

impl AuthStorage {
    /// Reads `auth.json`; entries that do not parse are skipped.
    pub fn load(path: &Path) -> Self {
        let Ok(text) = std::fs::read_to_string(path) else {
            return Self::default();
        };
        let Ok(map) = serde_json::from_str::<BTreeMap<String, serde_json::Value>>(&text) else {
            return Self::default();
        };
        let credentials = map
            .into_iter()
            .filter_map(|(provider, value)| {
                Credential::deserialize(value).ok().map(|c| (provider, c))
            })
            .collect();
        Self { credentials }
    }

    /// The stored key for a provider, resolved.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        match self.credentials.get(provider)? {
            Credential::ApiKey { key, env } => resolve_config_value_with(key, env.as_ref()),
            Credential::Oauth { access } => access.clone(),
        }
    }
}
