//! `mcp-auth.json`: OAuth state per server, as pi 1.5 keeps it, keyed by
//! `mcp__<server>|<url>` (servers sharing a URL keep separate accounts) or, as older
//! versions wrote it, by the URL alone. Every change is made under the lock the TypeScript
//! pi takes on the same file, and written whole to a private file renamed into place.

use std::io;
use std::path::{Path, PathBuf};

use pi_ai::oauth::FileLock;
use serde_json::{Map, Value};

use super::state::AuthState;
use crate::naming::namespace;

/// The keys of a server's state: its own, and the legacy one by URL.
pub fn keys(server: &str, url: &str) -> (String, String) {
    let legacy = normalize_url(url);
    (format!("{}|{legacy}", namespace(server)), legacy)
}

/// A URL as pi writes it (`String(new URL(url))`): `https://x.test` becomes `https://x.test/`.
pub fn normalize_url(url: &str) -> String {
    url::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.to_string())
}

/// The credentials file.
#[derive(Debug, Clone)]
pub struct AuthStore {
    path: PathBuf,
}

impl AuthStore {
    /// `mcp-auth.json` in the agent directory.
    pub fn in_agent_dir(agent_dir: &Path) -> Self {
        Self {
            path: agent_dir.join("mcp-auth.json"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A server's state; state stored under the legacy key moves to the server's own key.
    /// State written for another URL counts as none.
    pub fn load(&self, server: &str, url: &str) -> io::Result<AuthState> {
        let (key, legacy) = keys(server, url);
        let url = normalize_url(url);
        let found = self.change(|states| {
            if states.contains_key(&key) || !states.contains_key(&legacy) {
                return (states.get(&key).cloned(), false);
            }
            let moved = states.shift_remove(&legacy);
            if let Some(value) = &moved {
                states.insert(key.clone(), value.clone());
            }
            (moved, true)
        })?;
        Ok(found
            .and_then(|value| serde_json::from_value::<AuthState>(value).ok())
            .filter(|state| state.server_url == url)
            .unwrap_or_else(|| AuthState::for_server(&url)))
    }

    /// Writes a server's state.
    pub fn save(&self, server: &str, url: &str, state: &AuthState) -> io::Result<()> {
        let (key, _) = keys(server, url);
        let value = serde_json::to_value(state)?;
        self.change(|states| {
            states.insert(key.clone(), value.clone());
            ((), true)
        })
    }

    /// Changes a server's state in one locked read-modify-write.
    pub fn update(
        &self,
        server: &str,
        url: &str,
        change: impl FnOnce(&mut AuthState),
    ) -> io::Result<AuthState> {
        let (key, legacy) = keys(server, url);
        let url = normalize_url(url);
        self.change(|states| {
            let stored = states
                .shift_remove(&key)
                .or_else(|| states.shift_remove(&legacy));
            let mut state = stored
                .and_then(|value| serde_json::from_value::<AuthState>(value).ok())
                .filter(|state| state.server_url == url)
                .unwrap_or_else(|| AuthState::for_server(&url));
            change(&mut state);
            if let Ok(value) = serde_json::to_value(&state) {
                states.insert(key.clone(), value);
            }
            (state, true)
        })
    }

    /// Removes a server's stored credentials; false when there were none.
    pub fn remove(&self, server: &str, url: &str) -> io::Result<bool> {
        if !self.path.exists() {
            return Ok(false);
        }
        let (key, legacy) = keys(server, url);
        self.change(|states| {
            let removed =
                states.shift_remove(&key).is_some() || states.shift_remove(&legacy).is_some();
            (removed, removed)
        })
    }

    /// Runs `change` on the whole file under the lock; it returns whether to write.
    fn change<T>(
        &self,
        change: impl FnOnce(&mut Map<String, Value>) -> (T, bool),
    ) -> io::Result<T> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let _lock = FileLock::acquire(&self.path)?;
        let mut states = read_states(&self.path)?;
        let (result, write) = change(&mut states);
        if write {
            write_private(&self.path, &states)?;
        }
        Ok(result)
    }
}

fn read_states(path: &Path) -> io::Result<Map<String, Value>> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Map::new()),
        Err(e) => return Err(e),
    };
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    match serde_json::from_str(&text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Ok(Map::new()),
        Err(e) => Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("{} is not valid JSON: {e}", path.display()),
        )),
    }
}

/// Writes the file readable by its owner only, replacing the old one in one step.
fn write_private(path: &Path, states: &Map<String, Value>) -> io::Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let mut text = serde_json::to_string_pretty(states)?;
    text.push('\n');
    let mut temp = path.as_os_str().to_owned();
    temp.push(format!(".{}.tmp", std::process::id()));
    let temp = PathBuf::from(temp);
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(&temp)?;
    file.write_all(text.as_bytes())?;
    file.sync_all()?;
    std::fs::rename(&temp, path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_by_name_and_url_then_by_url() {
        let dir = tempfile::tempdir().unwrap();
        let store = AuthStore::in_agent_dir(dir.path());
        std::fs::write(
            store.path(),
            r#"{"mcp__my_srv|https://x.test/mcp":{"tokens":{}},"https://y.test/":{"tokens":{}},"other":1}"#,
        )
        .unwrap();
        assert!(store.remove("my-srv", "https://x.test/mcp").unwrap());
        assert!(!store.remove("my-srv", "https://x.test/mcp").unwrap());
        assert!(store.remove("y", "https://y.test").unwrap());
        let left: Value =
            serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
        assert_eq!(left, serde_json::json!({"other": 1}));
    }

    #[test]
    fn legacy_state_moves_to_the_servers_key_and_other_urls_count_as_none() {
        let dir = tempfile::tempdir().unwrap();
        let store = AuthStore::in_agent_dir(dir.path());
        std::fs::write(
            store.path(),
            r#"{"https://x.test/mcp":{"serverUrl":"https://x.test/mcp","tokens":{"access_token":"a","token_type":"Bearer"}}}"#,
        )
        .unwrap();
        let state = store.load("srv", "https://x.test/mcp").unwrap();
        assert_eq!(state.access_token(), Some("a"));
        let file: Value =
            serde_json::from_str(&std::fs::read_to_string(store.path()).unwrap()).unwrap();
        assert!(file.get("mcp__srv|https://x.test/mcp").is_some());
        assert!(file.get("https://x.test/mcp").is_none());

        store
            .update("srv", "https://x.test/mcp", |s| {
                s.oauth_state = Some("st".into())
            })
            .unwrap();
        assert_eq!(
            store
                .load("srv", "https://x.test/mcp")
                .unwrap()
                .oauth_state
                .as_deref(),
            Some("st")
        );
        // The same name at another URL starts empty.
        assert_eq!(
            store
                .load("srv", "https://x.test/other")
                .unwrap()
                .access_token(),
            None
        );
        let mode = std::fs::metadata(store.path()).unwrap().permissions();
        assert_eq!(
            std::os::unix::fs::PermissionsExt::mode(&mode) & 0o777,
            0o600
        );
    }
}
