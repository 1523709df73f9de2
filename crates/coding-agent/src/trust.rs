//! Project trust, as pi 1.6.0 keeps it: a folder's own settings and resources (`.pi/…`,
//! project `.agents/skills`) load only once the user trusted the folder. Decisions live in
//! `<agentDir>/trust.json` as `{"/canonical/dir": true|false}`; the nearest saved folder
//! (the project or a parent) decides.

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
        value.map(Self::parse_str).unwrap_or_default()
    }

    /// `always`, `never`; anything else asks.
    pub fn parse_str(value: &str) -> Self {
        match value {
            "always" => Self::Always,
            "never" => Self::Never,
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
        Ok(self.get_entry(cwd)?.map(|(_, decision)| decision))
    }

    /// The saved entry that decides for `cwd`: the folder it was saved for, and the
    /// decision (`/trust` shows where an inherited decision comes from).
    pub fn get_entry(&self, cwd: &Path) -> Result<Option<(PathBuf, bool)>, TrustError> {
        let data = self.read()?;
        let mut dir = canonical(cwd);
        loop {
            if let Some(Some(decision)) = data.get(&dir.display().to_string()) {
                return Ok(Some((dir, *decision)));
            }
            if !dir.pop() {
                return Ok(None);
            }
        }
    }

    /// Saves a decision for `cwd` (`None` forgets it); keys sorted, 2-space indent.
    pub fn set(&self, cwd: &Path, decision: Option<bool>) -> Result<(), TrustError> {
        self.set_many(&[(cwd.to_path_buf(), decision)])
    }

    /// Saves several decisions in one write (the prompt's "Trust parent folder" saves the
    /// parent and forgets the folder itself).
    pub fn set_many(&self, decisions: &[(PathBuf, Option<bool>)]) -> Result<(), TrustError> {
        let mut data = self.read()?;
        for (dir, decision) in decisions {
            let key = canonical(dir).display().to_string();
            match decision {
                Some(decision) => data.insert(key, Some(*decision)),
                None => data.remove(&key),
            };
        }
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

/// What under `<cwd>/.pi` needs trust (pi 1.6.0's list); a bare `.pi` does not.
const TRUST_REQUIRING_CONFIG: [&str; 8] = [
    "settings.json",
    "mcp.json",
    "extensions",
    "skills",
    "prompts",
    "themes",
    "SYSTEM.md",
    "APPEND_SYSTEM.md",
];

/// Whether `cwd` has resources that load only in a trusted project: one of
/// [`TRUST_REQUIRING_CONFIG`] under `.pi`, or `.agents/skills` in `cwd` or an ancestor.
/// The user's own `~/.agents/skills` is not a project's, even when `cwd` is `$HOME`.
pub fn has_trust_requiring_resources(cwd: &Path) -> bool {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .map(|home| canonical(&home));
    let user_skills = home.map(|home| home.join(".agents").join("skills"));
    let dir = canonical(cwd);
    let config = dir.join(".pi");
    if TRUST_REQUIRING_CONFIG
        .iter()
        .any(|entry| config.join(entry).exists())
    {
        return true;
    }
    dir.ancestors().any(|dir| {
        let skills = dir.join(".agents").join("skills");
        Some(&skills) != user_skills.as_ref() && skills.exists()
    })
}

/// The trust of a project with nothing that needs it: a saved decision, else trusted.
pub fn without_protected_resources(store: &TrustStore, cwd: &Path) -> Result<bool, TrustError> {
    Ok(store.get(cwd)?.unwrap_or(true))
}

/// One answer of the trust prompt: its label, the decision for this run and what it saves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustOption {
    pub label: String,
    pub trusted: bool,
    /// Folders and their saved decision (`None` forgets one).
    pub updates: Vec<(PathBuf, Option<bool>)>,
}

/// The prompt's question (pi 1.6.0's words).
pub fn prompt_title(cwd: &Path) -> String {
    format!(
        "Trust project folder?\n{}\n\nThis allows pi to load .pi settings and resources, install missing project packages, and execute project extensions.",
        cwd.display()
    )
}

/// The prompt's answers in pi 1.6.0's order: trust the folder, its parent (which forgets the
/// folder's own entry), this session only, or not.
pub fn prompt_options(cwd: &Path) -> Vec<TrustOption> {
    let dir = canonical(cwd);
    let mut options = vec![TrustOption {
        label: "Trust".into(),
        trusted: true,
        updates: vec![(dir.clone(), Some(true))],
    }];
    if let Some(parent) = dir.parent() {
        options.push(TrustOption {
            label: format!("Trust parent folder ({})", parent.display()),
            trusted: true,
            updates: vec![(parent.to_path_buf(), Some(true)), (dir.clone(), None)],
        });
    }
    options.push(TrustOption {
        label: "Trust (this session only)".into(),
        trusted: true,
        updates: Vec::new(),
    });
    options.push(TrustOption {
        label: "Do not trust".into(),
        trusted: false,
        updates: vec![(dir, Some(false))],
    });
    options.push(TrustOption {
        label: "Do not trust (this session only)".into(),
        trusted: false,
        updates: Vec::new(),
    });
    options
}

/// The trust prompt on the terminal before the UI starts: the question and numbered
/// answers on stderr, the choice from a line of stdin (end of input: no answer).
pub fn ask_on_terminal(cwd: &Path) -> Option<TrustOption> {
    use std::io::Write as _;
    let options = prompt_options(cwd);
    eprintln!("{}", prompt_title(cwd));
    for (index, option) in options.iter().enumerate() {
        eprintln!("  {}. {}", index + 1, option.label);
    }
    eprint!("Choose 1-{} [1]: ", options.len());
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).ok()? == 0 {
        return None;
    }
    // Enter takes the first answer, which pi's selector also starts on.
    let index: usize = match answer.trim() {
        "" => 1,
        text => text.parse().ok()?,
    };
    options.into_iter().nth(index.checked_sub(1)?)
}

/// The trust of a one-shot command (`pi install`, `pi list`, `pi config`, …), as pi 1.6.0
/// decides it without extensions: the flag; for `pi update` only a saved trust; else as
/// at startup, asking only on a terminal. Returns the decision and warnings.
pub fn for_command(
    approve: Option<bool>,
    saved_only: bool,
    cwd: &Path,
    agent_dir: &Path,
) -> (bool, Vec<String>) {
    let store = TrustStore::new(agent_dir);
    let mut warnings = Vec::new();
    let mut saved = |store: &TrustStore| match store.get(cwd) {
        Ok(decision) => decision,
        Err(e) => {
            warnings.push(e.to_string());
            None
        }
    };
    let trusted = if let Some(decision) = approve {
        decision
    } else if saved_only {
        saved(&store) == Some(true)
    } else if !has_trust_requiring_resources(cwd) {
        saved(&store).unwrap_or(true)
    } else if let Some(decision) = saved(&store) {
        decision
    } else {
        let default = crate::config::settings::read_object(&agent_dir.join("settings.json"))
            .get("defaultProjectTrust")
            .and_then(serde_json::Value::as_str)
            .map(DefaultTrust::parse_str)
            .unwrap_or_default();
        match default {
            DefaultTrust::Always => true,
            DefaultTrust::Never => false,
            DefaultTrust::Ask => {
                use std::io::IsTerminal as _;
                let terminal = std::io::stdin().is_terminal() && std::io::stdout().is_terminal();
                let choice = terminal.then(|| ask_on_terminal(cwd)).flatten();
                match choice {
                    Some(choice) => {
                        if let Err(e) = store.set_many(&choice.updates) {
                            warnings.push(e.to_string());
                        }
                        choice.trusted
                    }
                    None => false,
                }
            }
        }
    };
    (trusted, warnings)
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
