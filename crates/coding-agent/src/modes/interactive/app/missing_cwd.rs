//! A session to resume or import whose working directory is gone: pi 1.6 asks whether to
//! continue it in the current folder (the file keeps its own folder, so it asks again next
//! time) or to fork it into the current folder (a new session id; the original is kept).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::import::ConfirmPurpose;
use super::overlay::Overlay;
use super::{App, Completion};
use crate::extensions::UiDialog;
use crate::modes::interactive::AppEvent;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::extension_ui::dialogs::DialogView;

/// What was being done when the question came up.
pub(crate) enum MissingCwdAction {
    /// `/resume` of this file.
    Resume(PathBuf),
    /// `/import`: the path as typed, the file named, the copy made in the session folder
    /// and whether that copy is the file itself.
    Import {
        typed: String,
        source: PathBuf,
        destination: PathBuf,
        stored: bool,
    },
}

impl MissingCwdAction {
    /// The session file the question is about.
    fn file(&self) -> &Path {
        match self {
            MissingCwdAction::Resume(path) => path,
            MissingCwdAction::Import { destination, .. } => destination,
        }
    }

    /// The status shown when the user cancels.
    fn cancelled(&self) -> &'static str {
        match self {
            MissingCwdAction::Resume(_) => "Resume cancelled",
            MissingCwdAction::Import { .. } => "Import cancelled",
        }
    }
}

/// The stored working directory of the session file at `path`, when it no longer exists.
pub(super) fn missing_session_cwd(path: &Path) -> Option<PathBuf> {
    let header = crate::session::discover::read_header(path)?;
    let cwd = header.get("cwd")?.as_str().filter(|c| !c.is_empty())?;
    let cwd = PathBuf::from(cwd);
    (!cwd.exists()).then_some(cwd)
}

/// pi 1.6's three answers, naming the folder the session would run in.
fn options(here: &Path) -> [String; 3] {
    let here = here.display();
    [
        format!("Continue in {here} (asks again next time)"),
        format!("Fork into {here} (new session ID, original kept)"),
        "Cancel".to_owned(),
    ]
}

impl App {
    /// Asks what to do with a session whose folder `session_cwd` is gone.
    pub(super) fn ask_missing_cwd(&mut self, session_cwd: &Path, action: MissingCwdAction) {
        let dialog = UiDialog::Select {
            title: format!("Session cwd does not exist: {}", session_cwd.display()),
            options: options(self.session.cwd()).to_vec(),
            timeout: None,
        };
        if let Some(view) = DialogView::new(&dialog, &self.theme, &self.keys) {
            self.overlay = Some(Overlay::Confirm(
                Box::new(view),
                ConfirmPurpose::MissingCwd(action),
            ));
        }
    }

    /// Acts on the answer: continue here, fork into here, or cancel.
    pub(super) fn on_missing_cwd_answer(&mut self, answer: &Value, action: MissingCwdAction) {
        let here = self.session.cwd().to_path_buf();
        let [continue_label, fork_label, _] = options(&here);
        let answer = answer.as_str().unwrap_or_default();
        if answer == continue_label {
            return self.continue_here(action);
        }
        if answer == fork_label {
            return self.fork_here(action);
        }
        if let MissingCwdAction::Import {
            destination,
            stored: false,
            ..
        } = &action
        {
            let _ = std::fs::remove_file(destination);
        }
        self.notice(NoticeKind::Info, action.cancelled());
    }

    /// Switches to the session as it is; it runs in this folder.
    fn continue_here(&mut self, action: MissingCwdAction) {
        let here = self.session.cwd().display().to_string();
        let path = action.file().to_path_buf();
        self.switch_and_report(&path, true, move |outcome| match outcome {
            Ok(false) => Ok(match &action {
                MissingCwdAction::Resume(_) => format!("Resumed session in {here}"),
                MissingCwdAction::Import { typed, .. } => format!("Session imported from: {typed}"),
            }),
            Ok(true) => {
                remove_unstored_copy(&action);
                Err(action.cancelled().to_owned())
            }
            Err(e) => {
                remove_unstored_copy(&action);
                Err(match &action {
                    MissingCwdAction::Resume(_) => e,
                    MissingCwdAction::Import { .. } => format!("Failed to import session: {e}"),
                })
            }
        });
    }

    /// Forks the session into this folder and switches to the fork (an import forks the
    /// file named, and keeps no copy).
    fn fork_here(&mut self, action: MissingCwdAction) {
        let source = match &action {
            MissingCwdAction::Resume(path) => path.clone(),
            MissingCwdAction::Import { source, .. } => source.clone(),
        };
        remove_unstored_copy(&action);
        let Some(dir) = self
            .session
            .with_session(|s| s.session_dir().map(Path::to_path_buf))
        else {
            self.notice(NoticeKind::Error, "This session is not saved to disk");
            return;
        };
        let here = self.session.cwd().to_path_buf();
        let fork = match crate::session::SessionManager::fork_from(&source, &here, &dir) {
            Ok(fork) => fork,
            Err(e) => {
                self.notice(NoticeKind::Error, &format!("Failed to fork session: {e}"));
                return;
            }
        };
        let (Some(fork_path), fork_id) = (
            fork.session_file().map(Path::to_path_buf),
            fork.session_id().to_owned(),
        ) else {
            return;
        };
        let cancelled = action.cancelled();
        let forked = fork_path.clone();
        self.switch_and_report(&forked, false, move |outcome| match outcome {
            Ok(false) => Ok(format!(
                "Forked into new session {fork_id} in {}",
                here.display()
            )),
            Ok(true) => {
                // An extension vetoed the switch: no fork is left behind.
                let _ = std::fs::remove_file(&fork_path);
                Err(cancelled.to_owned())
            }
            Err(e) => Err(e),
        });
    }

    /// Switches to the session file at `path` (a run is aborted first) and reports what
    /// `finish` makes of the outcome: the switch's `Ok(cancelled)` or its error.
    pub(super) fn switch_and_report<F>(&mut self, path: &Path, missing_cwd_ok: bool, finish: F)
    where
        F: FnOnce(Result<bool, String>) -> Result<String, String> + Send + 'static,
    {
        let session = self.session.clone();
        let tx = self.tx.clone();
        let path = path.display().to_string();
        tokio::spawn(async move {
            if session.is_streaming() {
                session.abort().await;
            }
            let outcome = session
                .switch_session_with_extensions_into(&path, missing_cwd_ok)
                .await;
            let _ = tx.send(AppEvent::Done(Completion::Switched(finish(outcome))));
        });
    }
}

/// Removes an import's copy in the session folder (unless it is the imported file).
fn remove_unstored_copy(action: &MissingCwdAction) {
    if let MissingCwdAction::Import {
        destination,
        stored: false,
        ..
    } = action
    {
        let _ = std::fs::remove_file(destination);
    }
}
