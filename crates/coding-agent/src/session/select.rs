//! Which session a command-line run uses: `--no-session`, `--session`, `--session-id`,
//! `--fork`, `-c`, or a new one, in the session dir `--session-dir` > `PI_CODING_AGENT_SESSION_DIR` >
//! `<agent dir>/sessions/--<cwd>--`.

use std::path::{Path, PathBuf};

use super::discover::{find_exact_id, session_files};
use super::manager::{SessionError, SessionManager, default_session_dir};

/// The flags that choose a session.
#[derive(Debug, Clone, Default)]
pub struct SessionChoice<'a> {
    pub no_session: bool,
    pub continue_recent: bool,
    pub session: Option<&'a str>,
    pub fork: Option<&'a str>,
    /// `--session-id`: the cwd's session with this exact id, created when missing.
    pub session_id: Option<&'a str>,
    pub session_dir: Option<&'a str>,
    /// `sessionDir` from settings.
    pub settings_dir: Option<&'a str>,
}

/// The directory sessions of `cwd` live in.
pub fn session_dir(choice: &SessionChoice<'_>, agent_dir: &Path, cwd: &Path) -> PathBuf {
    if let Some(dir) = choice.session_dir {
        return crate::config::paths::expand_tilde(dir);
    }
    match std::env::var("PI_CODING_AGENT_SESSION_DIR") {
        Ok(dir) if !dir.is_empty() => crate::config::paths::expand_tilde(&dir),
        _ => match choice.settings_dir {
            Some(dir) => crate::config::paths::expand_tilde(dir),
            None => default_session_dir(agent_dir, cwd),
        },
    }
}

fn looks_like_path(arg: &str) -> bool {
    arg.contains('/') || arg.contains('\\') || arg.ends_with(".jsonl")
}

/// The newest session file of `folder` (`<timestamp>_<id>.jsonl`) whose id passes `wanted`.
fn newest_with_id(folder: &Path, wanted: impl Fn(&str) -> bool) -> Option<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_suffix(".jsonl"))
                .and_then(|n| n.split_once('_'))
                .is_some_and(|(_, id)| wanted(id))
        })
        .collect();
    found.sort();
    found.pop()
}

/// Finds a session file by id prefix: first in `dir`, then in every project's folder.
pub fn find_by_id(prefix: &str, dir: &Path, agent_dir: &Path) -> Option<PathBuf> {
    let matches_in = |folder: &Path| newest_with_id(folder, |id| id.starts_with(prefix));
    matches_in(dir).or_else(|| {
        let all = std::fs::read_dir(agent_dir.join("sessions")).ok()?;
        all.filter_map(Result::ok)
            .find_map(|e| matches_in(&e.path()))
    })
}

/// Opens or creates the session the flags ask for.
pub fn choose(
    choice: &SessionChoice<'_>,
    agent_dir: &Path,
    cwd: &Path,
) -> Result<SessionManager, String> {
    let dir = session_dir(choice, agent_dir, cwd);
    let error = |e: SessionError| e.to_string();
    if let Some(id) = choice.session_id {
        check_session_id(id)?;
    }
    if choice.no_session {
        let session = SessionManager::in_memory(cwd);
        return Ok(match choice.session_id {
            Some(id) => session.with_id(id),
            None => session,
        });
    }
    let scope = cwd_scope(&dir, agent_dir, cwd);
    if let Some(source) = choice.fork {
        let path = resolve(source, &dir, agent_dir, scope)
            .ok_or_else(|| format!("Session not found: {source}"))?;
        return SessionManager::fork_from_as(&path, cwd, &dir, choice.session_id).map_err(error);
    }
    if let Some(id) = choice.session_id {
        if let Some(path) = find_exact_id(id, &dir, scope) {
            return SessionManager::open(&path, cwd).map_err(error);
        }
        eprintln!(
            "Warning: No project session found with id '{id}'; creating a new session with that id."
        );
        return Ok(SessionManager::create(cwd, &dir).with_id(id));
    }
    if let Some(arg) = choice.session {
        let path = resolve(arg, &dir, agent_dir, scope)
            .ok_or_else(|| format!("Session not found: {arg}"))?;
        return SessionManager::open(&path, cwd).map_err(error);
    }
    if choice.continue_recent {
        return SessionManager::continue_recent_in(cwd, &dir, scope.is_some()).map_err(error);
    }
    Ok(SessionManager::create(cwd, &dir))
}

/// pi 1.5's rule for `--session-id`: `[A-Za-z0-9._-]`, alphanumeric at both ends.
fn check_session_id(id: &str) -> Result<(), String> {
    let valid = !id.is_empty()
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && id.starts_with(|c: char| c.is_ascii_alphanumeric())
        && id.ends_with(|c: char| c.is_ascii_alphanumeric());
    if valid {
        Ok(())
    } else {
        Err("Session id must be non-empty, contain only alphanumeric characters, '-', '_', and '.', and start and end with an alphanumeric character".into())
    }
}

/// The cwd that lookups in `dir` are limited to: `cwd` when `dir` is a custom session dir
/// (other folders' sessions may be there too), none for the cwd's own default dir.
fn cwd_scope<'a>(dir: &Path, agent_dir: &Path, cwd: &'a Path) -> Option<&'a Path> {
    (dir != default_session_dir(agent_dir, cwd)).then_some(cwd)
}

/// A session argument: a path, an exact id (read from the headers, pi 0.86), or an id
/// prefix (from the file names, here and then in every project's folder).
fn resolve(arg: &str, dir: &Path, agent_dir: &Path, scope: Option<&Path>) -> Option<PathBuf> {
    if looks_like_path(arg) {
        return Some(crate::config::paths::expand_tilde(arg));
    }
    find_exact_id(arg, dir, scope).or_else(|| find_by_id(arg, dir, agent_dir))
}

/// One line per session of `dir`, newest first: file, id, name or first prompt.
pub fn list(dir: &Path) -> Vec<String> {
    let mut files = session_files(dir);
    files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    files
        .into_iter()
        .filter_map(|(_, path)| {
            let session = SessionManager::open(&path, dir).ok()?;
            let title = session.name().map(str::to_owned).or_else(|| {
                session.entries().iter().find_map(|e| {
                    let message = e.message()?;
                    let value = serde_json::to_value(message).ok()?;
                    if message.role() != "user" {
                        return None;
                    }
                    let text = match &value["content"] {
                        serde_json::Value::String(s) => s.clone(),
                        serde_json::Value::Array(blocks) => blocks
                            .iter()
                            .filter_map(|b| b["text"].as_str())
                            .collect::<Vec<_>>()
                            .join(" "),
                        _ => String::new(),
                    };
                    Some(text.chars().take(60).collect())
                })
            });
            Some(format!(
                "{}  {}  {}",
                session.session_id(),
                path.display(),
                title.unwrap_or_default()
            ))
        })
        .collect()
}
