//! Project trust, as pi 1.5 keeps it: code from a project folder (`.pi/extensions`, the
//! project settings' extensions) runs only once the user trusted the folder. Decisions
//! live in `<agentDir>/trust.json` as `{"/canonical/dir": true|false}`; the nearest saved
//! folder (the project or a parent) decides.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// How a run decides when nothing was saved (`defaultProjectTrust`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultTrust {
    /// Ask in the interactive UI; other modes skip the project's code.
    #[default]
    Ask,
    Always,
    Never,
}

impl DefaultTrust {
    pub fn parse(value: Option<&str>) -> Self {
        match value {
            Some("always") => Self::Always,
            Some("never") => Self::Never,
            _ => Self::Ask,
        }
    }
}

/// Why the trust store could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TrustError {
    #[error("Failed to read trust store {path}: {message}")]
    Read { path: String, message: String },
    #[error("Invalid trust store {path}: {message}")]
    Invalid { path: String, message: String },
    #[error("Failed to write trust store {path}: {message}")]
    Write { path: String, message: String },
}

/// The saved decisions of `<agentDir>/trust.json`.
pub struct TrustStore {
    path: PathBuf,
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

impl TrustStore {
    pub fn new(agent_dir: &Path) -> Self {
        Self {
            path: agent_dir.join("trust.json"),
        }
    }

    fn read(&self) -> Result<BTreeMap<String, Option<bool>>, TrustError> {
        let shown = self.path.display().to_string();
        let text = match crate::text_file::read_text(&self.path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(e) => {
                return Err(TrustError::Read {
                    path: shown,
                    message: e.to_string(),
                });
            }
        };
        let value: serde_json::Value = serde_json::from_str(text.trim_start_matches('\u{feff}'))
            .map_err(|e| TrustError::Read {
                path: shown.clone(),
                message: e.to_string(),
            })?;
        let serde_json::Value::Object(map) = value else {
            return Err(TrustError::Invalid {
                path: shown,
                message: "expected an object".into(),
            });
        };
        let mut data = BTreeMap::new();
        for (key, value) in map {
            let decision = match value {
                serde_json::Value::Bool(b) => Some(b),
                serde_json::Value::Null => None,
                _ => {
                    return Err(TrustError::Invalid {
                        path: shown,
                        message: format!("value for {key:?} must be true, false, or null"),
                    });
                }
            };
            data.insert(key, decision);
        }
        Ok(data)
    }

    /// The decision saved for `cwd` or its nearest parent.
    pub fn get(&self, cwd: &Path) -> Result<Option<bool>, TrustError> {
        let data = self.read()?;
        let mut dir = canonical(cwd);
        loop {
            if let Some(Some(decision)) = data.get(&dir.display().to_string()) {
                return Ok(Some(*decision));
            }
            if !dir.pop() {
                return Ok(None);
            }
        }
    }

    /// Saves a decision for `cwd` (`None` forgets it); keys sorted, 2-space indent.
    pub fn set(&self, cwd: &Path, decision: Option<bool>) -> Result<(), TrustError> {
        let mut data = self.read()?;
        let key = canonical(cwd).display().to_string();
        match decision {
            Some(decision) => data.insert(key, Some(decision)),
            None => data.remove(&key),
        };
        let object: serde_json::Map<String, serde_json::Value> = data
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k, serde_json::Value::Bool(v))))
            .collect();
        let text = serde_json::to_string_pretty(&serde_json::Value::Object(object))
            .unwrap_or_else(|_| "{}".into());
        let fail = |e: std::io::Error| TrustError::Write {
            path: self.path.display().to_string(),
            message: e.to_string(),
        };
        if let Some(parent) = self.path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        std::fs::write(&self.path, format!("{text}\n")).map_err(fail)
    }
}

/// The decision for a run without asking: `--approve`/`--no-approve`, then a saved
/// decision, then `defaultProjectTrust` (`None`: ask, where a UI can).
pub fn decide(
    cli: Option<bool>,
    store: &TrustStore,
    cwd: &Path,
    default: DefaultTrust,
) -> Result<Option<bool>, TrustError> {
    if let Some(cli) = cli {
        return Ok(Some(cli));
    }
    if let Some(saved) = store.get(cwd)? {
        return Ok(Some(saved));
    }
    Ok(match default {
        DefaultTrust::Always => Some(true),
        DefaultTrust::Never => Some(false),
        DefaultTrust::Ask => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_saved_decision_wins_and_cli_overrides() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("agent");
        let project = dir.path().join("p");
        let nested = project.join("sub");
        std::fs::create_dir_all(&nested).unwrap();
        let store = TrustStore::new(&agent);
        assert_eq!(store.get(&nested).unwrap(), None);
        store.set(&project, Some(true)).unwrap();
        assert_eq!(store.get(&nested).unwrap(), Some(true));
        store.set(&nested, Some(false)).unwrap();
        assert_eq!(store.get(&nested).unwrap(), Some(false));
        assert_eq!(
            decide(Some(true), &store, &nested, DefaultTrust::Never).unwrap(),
            Some(true)
        );
        store.set(&nested, None).unwrap();
        let text = std::fs::read_to_string(agent.join("trust.json")).unwrap();
        assert!(text.ends_with("true\n}\n"));
        assert_eq!(
            decide(
                None,
                &TrustStore::new(&dir.path().join("x")),
                &nested,
                DefaultTrust::Ask
            )
            .unwrap(),
            None
        );
        std::fs::write(agent.join("trust.json"), r#"{"/a": 3}"#).unwrap();
        assert!(store.get(&nested).is_err());
    }
}
