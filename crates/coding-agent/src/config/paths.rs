//! Where configuration lives.

use std::path::{Path, PathBuf};

/// The environment variable that overrides the agent dir.
pub const AGENT_DIR_ENV: &str = "PI_CODING_AGENT_DIR";

/// Expands `~` and `~/…` to the home directory.
pub fn expand_tilde(path: &str) -> PathBuf {
    let home = || std::env::var_os("HOME").map(PathBuf::from);
    if path == "~" {
        if let Some(home) = home() {
            return home;
        }
    } else if let Some(rest) = path.strip_prefix("~/")
        && let Some(home) = home()
    {
        return home.join(rest);
    }
    PathBuf::from(path)
}

/// The folder pi was started in; `None`, after saying so on stderr, when that folder was
/// deleted (pi 1.5.0 asks to change to an existing one instead of failing on it).
pub fn startup_cwd() -> std::io::Result<Option<PathBuf>> {
    match std::env::current_dir() {
        Ok(cwd) => Ok(Some(cwd)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            eprintln!(
                "Error: The current working directory no longer exists. Change to an existing directory and try again."
            );
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// The agent dir: `$PI_CODING_AGENT_DIR`, else `~/.pi/agent`.
pub fn agent_dir() -> PathBuf {
    match std::env::var(AGENT_DIR_ENV) {
        Ok(dir) if !dir.is_empty() => expand_tilde(&dir),
        _ => expand_tilde("~/.pi/agent"),
    }
}

/// `<agent dir>/models.json`.
pub fn models_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("models.json")
}

/// `<agent dir>/auth.json`.
pub fn auth_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("auth.json")
}

/// `<agent dir>/settings.json`.
pub fn settings_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("settings.json")
}

/// `<cwd>/.pi/settings.json`.
pub fn project_settings_path(cwd: &Path) -> PathBuf {
    cwd.join(".pi").join("settings.json")
}
