//! `auth.json`: stored credentials per provider.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use pi_ai::oauth::{OAuthCredentials, OAuthProvider};

use pi_ai::oauth::FileLock as AuthLock;

use super::values::resolve_config_value_with;

const BEDROCK: &str = "amazon-bedrock";
const AWS_PROFILE: &str = "AWS_PROFILE";
const BEDROCK_BEARER: &str = "AWS_BEARER_TOKEN_BEDROCK";
const VERTEX: &str = "google-vertex";

fn ambient(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Whether Google Vertex is signed in by a stored `env` (the environment filling its gaps),
/// as pi-ai 1.6's Vertex resolver decides: credentials (an Application Default Credentials
/// file, or pi-rs's ready `GOOGLE_CLOUD_ACCESS_TOKEN`), a project and a location.
fn vertex_signed_in(env: &HashMap<String, String>) -> bool {
    let get = |name: &str| {
        env.get(name)
            .filter(|v| !v.is_empty())
            .cloned()
            .or_else(|| ambient(name))
    };
    let adc = match get("GOOGLE_APPLICATION_CREDENTIALS") {
        Some(path) => std::path::Path::new(&path).exists(),
        None => ambient("HOME").is_some_and(|home| {
            std::path::Path::new(&home)
                .join(".config/gcloud/application_default_credentials.json")
                .exists()
        }),
    };
    (adc || get("GOOGLE_CLOUD_ACCESS_TOKEN").is_some())
        && get("GOOGLE_CLOUD_PROJECT")
            .or_else(|| get("GCLOUD_PROJECT"))
            .is_some()
        && get("GOOGLE_CLOUD_LOCATION").is_some()
}

/// One stored credential.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Credential {
    /// A key (literal, `$NAME` / `${NAME}` template, or `!command`); `env` values beat the
    /// process environment for its variables (pi 1.5). A provider configured by its `env`
    /// alone (llama.cpp's server URL without a key) has no key.
    ApiKey {
        #[serde(default)]
        key: Option<String>,
        #[serde(default)]
        env: Option<HashMap<String, String>>,
    },
    /// A subscription login: access and refresh token, expiry and provider extras.
    Oauth(OAuthCredentials),
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
        let Ok(text) = crate::text_file::read_text(path) else {
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

    /// The stored credential of a provider.
    pub fn credential(&self, provider: &str) -> Option<&Credential> {
        self.credentials.get(provider)
    }

    /// The providers with stored credentials, sorted.
    pub fn providers(&self) -> Vec<&str> {
        self.credentials.keys().map(String::as_str).collect()
    }

    /// The stored key for a provider, resolved.
    pub fn api_key(&self, provider: &str) -> Option<String> {
        match self.credentials.get(provider)? {
            Credential::ApiKey { key, env } => key
                .as_deref()
                .and_then(|key| resolve_config_value_with(key, env.as_ref())),
            Credential::Oauth(credentials) => Some(oauth_key(provider, credentials)),
        }
    }

    /// The `env` values stored with a provider's API key credential.
    pub fn env(&self, provider: &str) -> Option<&HashMap<String, String>> {
        match self.credentials.get(provider)? {
            Credential::ApiKey { env, .. } => env.as_ref(),
            Credential::Oauth(_) => None,
        }
    }

    /// What a provider's stored `env` hands on to its requests, as pi-ai 1.6's auth resolvers
    /// do: all of it with the stored key it belongs to (`key_used`); for Amazon Bedrock
    /// without a key, when a profile (the stored or the ambient `AWS_PROFILE`) authenticates
    /// and no ambient `AWS_BEARER_TOKEN_BEDROCK` comes first. Never put into the process
    /// environment.
    pub fn scoped_env(
        &self,
        provider: &str,
        key_used: bool,
    ) -> Option<Arc<BTreeMap<String, String>>> {
        let env = self.env(provider)?;
        let applies = key_used
            || (provider == BEDROCK
                && ambient(BEDROCK_BEARER).is_none()
                && (env.get(AWS_PROFILE).is_some_and(|v| !v.is_empty())
                    || ambient(AWS_PROFILE).is_some()))
            || (provider == VERTEX && vertex_signed_in(env));
        applies.then(|| Arc::new(env.iter().map(|(k, v)| (k.clone(), v.clone())).collect()))
    }

    /// Whether a provider is signed in by its stored `env` alone: Amazon Bedrock by a
    /// profile (`/login` with an AWS profile stores `{"type": "api_key", "env":
    /// {"AWS_PROFILE": …}}`), Google Vertex by credentials, project and location.
    pub fn signed_in_by_env(&self, provider: &str) -> bool {
        let Some(env) = self.env(provider) else {
            return false;
        };
        match provider {
            BEDROCK => env.get(AWS_PROFILE).is_some_and(|v| !v.is_empty()),
            VERTEX => vertex_signed_in(env),
            _ => false,
        }
    }

    /// The stored OAuth credentials of a provider.
    pub fn oauth(&self, provider: &str) -> Option<&OAuthCredentials> {
        match self.credentials.get(provider)? {
            Credential::Oauth(credentials) => Some(credentials),
            Credential::ApiKey { .. } => None,
        }
    }
}

/// A login as auth.json holds it: `{"type":"oauth", "refresh", "access", "expires", …}`.
pub fn oauth_entry(credentials: &OAuthCredentials) -> Value {
    let mut entry = Map::new();
    entry.insert("type".into(), "oauth".into());
    if let Ok(Value::Object(fields)) = serde_json::to_value(credentials) {
        entry.extend(fields);
    }
    Value::Object(entry)
}

/// The request key of stored OAuth credentials: what the provider's login makes of them
/// (Google's `{token, projectId}`), else the access token.
pub fn oauth_key(provider: &str, credentials: &OAuthCredentials) -> String {
    match OAuthProvider::from_id(provider) {
        Some(login) => login.api_key(credentials),
        None => credentials.access.clone(),
    }
}

/// Changes `auth.json` under its lock (shared with the TypeScript pi): `change` gets the whole
/// object, entries it does not touch stay as they were. The file is replaced whole, with a
/// 2-space indent, as the TypeScript pi writes it: mode 0600 applies only when it is created,
/// so a mode an administrator set stays.
pub fn update_auth_file<R>(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> R,
) -> std::io::Result<R> {
    ensure_auth_file(path)?;
    let _lock = AuthLock::acquire(path)?;
    update_auth_file_locked(path, change)
}

/// [`update_auth_file`] for a caller that already holds the lock.
pub fn update_auth_file_locked<R>(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> R,
) -> std::io::Result<R> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let text = crate::text_file::read_text(path)?;
    let mut map = match serde_json::from_str::<Value>(&text) {
        Ok(Value::Object(map)) => map,
        _ if text.trim().is_empty() => Map::new(),
        _ => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{} is not a JSON object; not changing it", path.display()),
            ));
        }
    };
    let result = change(&mut map);
    let pretty = serde_json::to_string_pretty(&Value::Object(map))
        .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))?;
    // Written whole to a temporary file that then replaces the old one, so a pi killed
    // midway never leaves a cut or empty auth.json (credentials lost). The new file takes the
    // old one's mode, so a mode an administrator set stays (pi 0.84.3); 0600 when new.
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mode = std::fs::metadata(&real).ok().map(|m| m.permissions());
    let mut temp_name = real.clone().into_os_string();
    temp_name.push(format!(".tmp-{}", std::process::id()));
    let temp = std::path::PathBuf::from(temp_name);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)
        .and_then(|mut file| {
            file.write_all(pretty.as_bytes())?;
            if let Some(mode) = mode {
                file.set_permissions(mode)?;
            }
            file.sync_all()
        })
        .and_then(|()| std::fs::rename(&temp, &real));
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map(|()| result)
}
