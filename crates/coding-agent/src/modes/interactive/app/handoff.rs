//! Handing the terminal to someone else and taking it back: the external editor
//! (Ctrl+G) and suspending pi to the shell (Ctrl+Z).

use std::io::Write as _;
use std::sync::atomic::Ordering;

use super::App;
use crate::modes::interactive::chat::NoticeKind;

impl App {
    /// Leaves raw mode and stops reading keys; the screen below the cursor is free.
    pub(super) fn release_terminal(&mut self) {
        self.input_paused.store(true, Ordering::SeqCst);
        let _ = self.renderer.stop();
        let _ = self.renderer.terminal_mut().stop();
    }

    /// Takes the terminal back and redraws everything.
    pub(super) fn reclaim_terminal(&mut self) {
        let _ = self.renderer.terminal_mut().start();
        let _ = self.renderer.resume();
        self.input_paused.store(false, Ordering::SeqCst);
        self.renderer.request_full_redraw();
    }

    /// Ctrl+G: edits the editor's text in the external editor.
    pub(super) fn open_external_editor(&mut self) {
        let text = self.current_editor_text();
        if let Some(edited) = self.edit_externally(&text) {
            self.set_editor_text(&edited);
        }
    }

    /// Edits `text` in the external editor; the edited text, or `None` (with a notice)
    /// when there is no editor or it failed.
    pub(super) fn edit_externally(&mut self, text: &str) -> Option<String> {
        // The `externalEditor` setting, then `$VISUAL`, `$EDITOR`, then nano (pi 1.6).
        let configured = self
            .session
            .settings()
            .value(&["externalEditor"])
            .and_then(|v| v.as_str().map(str::to_owned))
            .filter(|e| !e.trim().is_empty());
        let editor = configured
            .or_else(|| std::env::var("VISUAL").ok().filter(|e| !e.is_empty()))
            .or_else(|| std::env::var("EDITOR").ok().filter(|e| !e.is_empty()))
            .unwrap_or_else(|| "nano".to_owned());
        let file = crate::temp_files::path("editor", ".pi.md");
        let written = std::fs::File::create(&file).and_then(|mut f| f.write_all(text.as_bytes()));
        if let Err(e) = written {
            self.notice(
                NoticeKind::Error,
                &format!("Cannot open the external editor: {e}"),
            );
            return None;
        }
        self.release_terminal();
        // `$EDITOR` may carry arguments ("code --wait"); the shell splits them.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{editor} \"$1\""))
            .arg("sh")
            .arg(&file)
            .status();
        self.reclaim_terminal();
        let edited = match status {
            Ok(status) if status.success() => match crate::text_file::read_text(&file) {
                Ok(text) => Some(text.trim_end_matches('\n').to_owned()),
                Err(e) => {
                    self.notice(
                        NoticeKind::Error,
                        &format!("Cannot read the edited text: {e}"),
                    );
                    None
                }
            },
            Ok(status) => {
                self.notice(
                    NoticeKind::Warning,
                    &format!("The editor exited with {status}; the text is unchanged"),
                );
                None
            }
            Err(e) => {
                self.notice(NoticeKind::Error, &format!("Cannot run {editor}: {e}"));
                None
            }
        };
        let _ = std::fs::remove_file(&file);
        edited
    }

    /// Ctrl+Z or `kill -TSTP`: the terminal restored, pi's process group stops like any
    /// job; `fg` brings it back with the screen redrawn. SIGSTOP, since pi catches SIGTSTP.
    pub(super) fn suspend(&mut self) {
        use nix::sys::signal::{Signal, kill};
        self.release_terminal();
        let _ = kill(nix::unistd::Pid::from_raw(0), Signal::SIGSTOP);
        self.reclaim_terminal();
    }
}
