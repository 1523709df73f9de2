//! A session whose working directory is gone (pi 1.5.2): print, JSON and RPC modes stop
//! with pi's message; the terminal UI asks (pi 1.6's startup selector, given by the caller)
//! whether to continue in the current folder (the file keeps its folder, so it asks again
//! next time) or to fork the session into it.

use std::path::{Path, PathBuf};

use super::manager::SessionManager;

/// Asks a question with options on the terminal: the chosen index, or `None` (cancelled).
pub type Ask<'a> = dyn FnOnce(&str, &[String]) -> Option<usize> + 'a;

/// What to run when the session's folder is gone: the session and the folder to run in, or
/// the exit code to end with.
pub fn resolve(
    session: SessionManager,
    cwd: &Path,
    interactive: bool,
    session_dir: impl FnOnce() -> PathBuf,
    ask: Box<Ask<'_>>,
) -> Result<(SessionManager, PathBuf), i32> {
    let session_cwd = PathBuf::from(session.cwd());
    let Some(file) = session.session_file().map(Path::to_path_buf) else {
        return Ok((session, session_cwd));
    };
    if session_cwd.is_dir() {
        return Ok((session, session_cwd));
    }
    if !interactive {
        eprintln!(
            "Stored session working directory does not exist: {}\nSession file: {}\nCurrent working directory: {}",
            session_cwd.display(),
            file.display(),
            cwd.display()
        );
        return Err(1);
    }
    let here = cwd.display();
    let title = format!("Session cwd does not exist: {}", session_cwd.display());
    let options = [
        format!("Continue in {here} (asks again next time)"),
        format!("Fork into {here} (new session ID, original kept)"),
        "Cancel".to_owned(),
    ];
    match ask(&title, &options) {
        Some(0) => Ok((session, cwd.to_path_buf())),
        Some(1) => match SessionManager::fork_from(&file, cwd, &session_dir()) {
            Ok(forked) => Ok((forked, cwd.to_path_buf())),
            Err(e) => {
                eprintln!("Error: {e}");
                Err(1)
            }
        },
        _ => Err(0),
    }
}
