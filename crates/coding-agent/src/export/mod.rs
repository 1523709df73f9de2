//! Exports a session to one self-contained HTML file (`/export`, `pi --export`, the RPC
//! `export_html` command).
//!
//! Without an output path the file is `pi-session-<session file name without .jsonl>.html`
//! in the working directory, as the TypeScript pi names it.

pub mod html;
pub mod jsonl;

use std::path::{Path, PathBuf};

pub use html::render_session_html;

use crate::modes::interactive::theme::Theme;
use crate::session::{SessionError, SessionManager};

/// Why a session could not be exported.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The session has no file (`--no-session`).
    #[error("Cannot export in-memory session to HTML")]
    InMemory,
    /// The session's file has not been written yet (no assistant reply so far).
    #[error("Nothing to export yet - start a conversation first")]
    NothingToExport,
    /// The session file to export does not exist.
    #[error("File not found: {}", .0.display())]
    NotFound(PathBuf),
    /// The file exists but is not a session file.
    #[error("Not a valid session file: {}: {reason}", .path.display())]
    Invalid { path: PathBuf, reason: String },
    /// The session file could not be read.
    #[error(transparent)]
    Open(#[from] SessionError),
    /// The HTML file could not be written.
    #[error("Could not write {}: {source}", .path.display())]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

/// Writes `session` as HTML to `output` (relative paths resolve against `cwd`), or to
/// `pi-session-<basename>.html` in `cwd`; returns the path written.
pub fn export_session_html(
    session: &SessionManager,
    output: Option<&Path>,
    cwd: &Path,
) -> Result<PathBuf, ExportError> {
    export_session_html_themed(session, output, cwd, None)
}

/// [`export_session_html`] in `theme`'s colours (the active theme), as `/export` does.
pub fn export_session_html_themed(
    session: &SessionManager,
    output: Option<&Path>,
    cwd: &Path,
    theme: Option<&Theme>,
) -> Result<PathBuf, ExportError> {
    let Some(file) = session.session_file() else {
        return Err(ExportError::InMemory);
    };
    if !file.exists() {
        return Err(ExportError::NothingToExport);
    }
    let path = output_path(file, output, cwd);
    write_html(&path, &html::render_session_html_themed(session, theme))?;
    Ok(path)
}

/// `pi --export <session> [out]`: exports and prints where the file went (relative to the
/// cwd when it is inside it, as pi 1.5 prints it); the exit code.
pub fn export_command(session_file: &Path, output: Option<&Path>, cwd: &Path) -> i32 {
    match export_file_html(session_file, output, cwd) {
        Ok(path) => {
            println!(
                "Exported to: {}",
                path.strip_prefix(cwd).unwrap_or(&path).display()
            );
            0
        }
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

/// Opens the session file `session_file` (relative to `cwd`) and exports it like
/// [`export_session_html`]; the session's own working directory need not exist.
pub fn export_file_html(
    session_file: &Path,
    output: Option<&Path>,
    cwd: &Path,
) -> Result<PathBuf, ExportError> {
    let input = cwd.join(session_file);
    if !input.exists() {
        return Err(ExportError::NotFound(session_file.to_path_buf()));
    }
    if !input.is_file() {
        return Err(ExportError::Invalid {
            path: session_file.to_path_buf(),
            reason: "not a file".into(),
        });
    }
    let invalid = |reason: &str| ExportError::Invalid {
        path: session_file.to_path_buf(),
        reason: reason.to_owned(),
    };
    // `open` refuses a file without a valid header and starts an empty one afresh.
    let session = match SessionManager::open(&input, cwd) {
        Ok(session) => session,
        Err(SessionError::NotASession(_)) => return Err(invalid("no valid session header")),
        Err(e) => return Err(e.into()),
    };
    if std::fs::metadata(&input).is_ok_and(|m| m.len() == 0) {
        return Err(invalid("empty file"));
    }
    if session.session_file() != Some(input.as_path()) {
        let reason = session
            .warnings()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join("; ");
        return Err(ExportError::Invalid {
            path: session_file.to_path_buf(),
            reason,
        });
    }
    let path = output_path(&input, output, cwd);
    write_html(&path, &render_session_html(&session))?;
    Ok(path)
}

/// `output` resolved against `cwd`, or `<cwd>/pi-session-<basename>.html`.
fn output_path(session_file: &Path, output: Option<&Path>, cwd: &Path) -> PathBuf {
    match output {
        Some(output) => cwd.join(output),
        None => cwd.join(default_file_name(session_file)),
    }
}

/// `pi-session-<file name without a trailing .jsonl>.html`.
fn default_file_name(session_file: &Path) -> String {
    let name = session_file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let base = name.strip_suffix(".jsonl").unwrap_or(&name);
    format!("pi-session-{base}.html")
}

fn write_html(path: &Path, html: &str) -> Result<(), ExportError> {
    let error = |source| ExportError::Write {
        path: path.to_path_buf(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(error)?;
    }
    std::fs::write(path, html).map_err(error)
}

#[cfg(test)]
mod tests {
    use super::*;

    use pi_ai::{AssistantBlock, AssistantMessage, TextContent, UserMessage};

    fn reply(text: &str) -> AssistantMessage {
        AssistantMessage {
            content: vec![AssistantBlock::Text(TextContent::new(text))].into(),
            ..AssistantMessage::empty("openai-completions", "mock", "mock-model")
        }
    }

    #[test]
    fn default_name_strips_only_the_jsonl_suffix() {
        assert_eq!(
            default_file_name(Path::new("/s/2026_abc.jsonl")),
            "pi-session-2026_abc.html"
        );
        assert_eq!(
            default_file_name(Path::new("/s/notes.txt")),
            "pi-session-notes.txt.html"
        );
    }

    #[test]
    fn in_memory_and_unwritten_sessions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let memory = SessionManager::in_memory(dir.path());
        assert!(matches!(
            export_session_html(&memory, None, dir.path()),
            Err(ExportError::InMemory)
        ));
        let fresh = SessionManager::create(dir.path(), &dir.path().join("sessions"));
        let err = export_session_html(&fresh, None, dir.path()).unwrap_err();
        assert_eq!(
            err.to_string(),
            "Nothing to export yet - start a conversation first"
        );
    }

    #[test]
    fn exports_to_default_and_explicit_paths() {
        let dir = tempfile::tempdir().unwrap();
        let mut session = SessionManager::create(dir.path(), &dir.path().join("sessions"));
        session
            .append_message(UserMessage::text("hello there").into())
            .unwrap();
        session
            .append_message(reply("general kenobi").into())
            .unwrap();
        let file = session.session_file().unwrap().to_path_buf();
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();

        let written = export_session_html(&session, None, dir.path()).unwrap();
        assert_eq!(written, dir.path().join(format!("pi-session-{stem}.html")));
        let html = std::fs::read_to_string(&written).unwrap();
        assert!(html.contains("general kenobi"));

        let nested = Path::new("out/deeper/page.html");
        let written = export_session_html(&session, Some(nested), dir.path()).unwrap();
        assert_eq!(written, dir.path().join(nested));
        assert!(written.is_file());

        let from_file = export_file_html(&file, None, dir.path()).unwrap();
        assert_eq!(
            from_file,
            dir.path().join(format!("pi-session-{stem}.html"))
        );
    }

    #[test]
    fn missing_and_invalid_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let err = export_file_html(Path::new("nope.jsonl"), None, dir.path()).unwrap_err();
        assert_eq!(err.to_string(), "File not found: nope.jsonl");

        std::fs::write(dir.path().join("junk.jsonl"), "not json\n{\"a\":1}\n").unwrap();
        let err = export_file_html(Path::new("junk.jsonl"), None, dir.path()).unwrap_err();
        assert!(matches!(err, ExportError::Invalid { .. }), "{err}");
        assert!(err.to_string().contains("junk.jsonl"), "{err}");
        assert!(!dir.path().join("pi-session-junk.html").exists());

        let err = export_file_html(dir.path(), None, dir.path()).unwrap_err();
        assert!(matches!(err, ExportError::Invalid { .. }), "{err}");
    }
}
