//! `/import <path>`: replace the session with a JSONL session file, after asking. The
//! file is copied into this folder's session directory (a `-N` suffix when its name is
//! taken), keeps its id and working directory, and is resumed (pi 1.6.0's
//! `importFromJsonl`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::App;
use super::overlay::Overlay;
use crate::extensions::UiDialog;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::extension_ui::dialogs::{DialogOutcome, DialogView};

/// What a question of the app itself decides.
pub(crate) enum ConfirmPurpose {
    /// `/import` of this path (as typed).
    Import(String),
    /// What to do with a session whose folder is gone.
    MissingCwd(super::missing_cwd::MissingCwdAction),
}

/// The first free `<name>[-N].<ext>` in `dir`.
fn free_name(dir: &Path, file_name: &std::ffi::OsStr) -> PathBuf {
    let first = dir.join(file_name);
    if !first.exists() {
        return first;
    }
    let path = Path::new(file_name);
    let stem = path
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let ext = path
        .extension()
        .map(|e| format!(".{}", e.to_string_lossy()))
        .unwrap_or_default();
    (1..)
        .map(|n| dir.join(format!("{stem}-{n}{ext}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

impl App {
    pub(super) fn import_command(&mut self, path: Option<String>) {
        let Some(path) = path else {
            self.notice(NoticeKind::Error, "Usage: /import <path.jsonl>");
            return;
        };
        let dialog = UiDialog::Confirm {
            title: "Import session".to_owned(),
            message: format!("Replace current session with {path}?"),
            timeout: None,
        };
        if let Some(view) = DialogView::new(&dialog, &self.theme, &self.keys) {
            self.overlay = Some(Overlay::Confirm(
                Box::new(view),
                ConfirmPurpose::Import(path),
            ));
        }
    }

    pub(super) fn on_confirm_input(&mut self, input: &pi_tui::Input) {
        let Some(Overlay::Confirm(view, _)) = self.overlay.as_mut() else {
            return;
        };
        let DialogOutcome::Answer(answer) = view.handle(input) else {
            return;
        };
        let Some(Overlay::Confirm(_, purpose)) = self.overlay.take() else {
            return;
        };
        match purpose {
            ConfirmPurpose::Import(path) if answer == Value::Bool(true) => {
                self.import_session(path)
            }
            ConfirmPurpose::Import(_) => self.notice(NoticeKind::Info, "Import cancelled"),
            ConfirmPurpose::MissingCwd(action) => self.on_missing_cwd_answer(&answer, action),
        }
    }

    fn import_session(&mut self, typed: String) {
        let base = std::env::current_dir().unwrap_or_default();
        let source = base.join(crate::config::paths::expand_tilde(&typed));
        if !source.is_file() {
            self.notice(
                NoticeKind::Error,
                &format!(
                    "Failed to import session: File not found: {}",
                    source.display()
                ),
            );
            return;
        }
        let Some(dir) = self
            .session
            .with_session(|s| s.session_dir().map(Path::to_path_buf))
        else {
            self.notice(
                NoticeKind::Error,
                "Failed to import session: this session is not saved to disk",
            );
            return;
        };
        let stored = std::fs::canonicalize(&source)
            .ok()
            .zip(
                source
                    .file_name()
                    .and_then(|n| std::fs::canonicalize(dir.join(n)).ok()),
            )
            .is_some_and(|(a, b)| a == b);
        let destination = match source.file_name() {
            Some(_) if stored => source.clone(),
            Some(name) => free_name(&dir, name),
            None => {
                self.notice(NoticeKind::Error, "Usage: /import <path.jsonl>");
                return;
            }
        };
        if !stored {
            let copied = std::fs::create_dir_all(&dir).and_then(|()| {
                std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&destination)
                    .and_then(|mut out| {
                        std::io::copy(&mut std::fs::File::open(&source)?, &mut out).map(|_| ())
                    })
            });
            if let Err(e) = copied {
                self.notice(NoticeKind::Error, &format!("Failed to import session: {e}"));
                return;
            }
        }
        // A session whose folder is gone: pi 1.6 asks where to go on.
        let cwd = crate::session::SessionManager::open(&destination, &base)
            .map(|s| PathBuf::from(s.cwd()));
        match cwd {
            Ok(cwd) if cwd.is_dir() => {}
            Ok(cwd) => {
                let action = super::missing_cwd::MissingCwdAction::Import {
                    typed,
                    source,
                    destination,
                    stored,
                };
                self.ask_missing_cwd(&cwd, action);
                return;
            }
            Err(e) => {
                if !stored {
                    let _ = std::fs::remove_file(&destination);
                }
                self.notice(NoticeKind::Error, &format!("Failed to import session: {e}"));
                return;
            }
        }
        let path = destination.clone();
        self.switch_and_report(&path, false, move |outcome| match outcome {
            Ok(false) => Ok(format!("Session imported from: {typed}")),
            Ok(true) => {
                if !stored {
                    let _ = std::fs::remove_file(&destination);
                }
                Err("Import cancelled".to_owned())
            }
            Err(e) => Err(format!("Failed to import session: {e}")),
        });
    }
}
