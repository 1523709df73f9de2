//! A session whose working directory is gone (pi 1.5.2): print, JSON and RPC modes stop
//! with pi's message; the terminal UI asks whether to continue in the current folder (the
//! file keeps its folder, so it asks again next time) or to fork the session into it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use super::manager::SessionManager;

/// What to run when the session's folder is gone: the session and the folder to run in, or
/// the exit code to end with.
pub fn resolve(
    session: SessionManager,
    cwd: &Path,
    interactive: bool,
    session_dir: impl FnOnce() -> PathBuf,
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
    match ask_on_terminal(&session_cwd, cwd) {
        Some(Choice::Continue) => Ok((session, cwd.to_path_buf())),
        Some(Choice::Fork) => match SessionManager::fork_from(&file, cwd, &session_dir()) {
            Ok(forked) => Ok((forked, cwd.to_path_buf())),
            Err(e) => {
                eprintln!("Error: {e}");
                Err(1)
            }
        },
        None => Err(0),
    }
}

/// The answers pi 1.6.0 offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Choice {
    Continue,
    Fork,
}

/// The question and pi's three answers on stderr, the choice from a line of stdin; Enter
/// takes the first, as pi's selector starts there. `None`: cancelled.
fn ask_on_terminal(session_cwd: &Path, cwd: &Path) -> Option<Choice> {
    let here = cwd.display();
    eprintln!("Session cwd does not exist: {}", session_cwd.display());
    eprintln!("  1. Continue in {here} (asks again next time)");
    eprintln!("  2. Fork into {here} (new session ID, original kept)");
    eprintln!("  3. Cancel");
    eprint!("Choose 1-3 [1]: ");
    let _ = std::io::stderr().flush();
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).ok()? == 0 {
        return None;
    }
    match answer.trim() {
        "" | "1" => Some(Choice::Continue),
        "2" => Some(Choice::Fork),
        _ => None,
    }
}
