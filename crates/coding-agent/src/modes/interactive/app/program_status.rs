//! Writing OSC 7501 program status reports: session events, the dialog waiting for the
//! user, a session switch and the exit each update what the terminal is told.

use super::App;
use super::overlay::Overlay;
use crate::modes::interactive::program_status::Reporter;
use crate::session_event::AgentSessionEvent;

impl App {
    /// Starts reporting (when the terminal takes reports): `idle`.
    pub(crate) fn start_program_status(&mut self, enabled: bool) {
        self.program_status = Reporter::new(enabled);
        let name = self.session.session_name();
        let report = self.program_status.report(name.as_deref());
        self.write_program_status(report);
    }

    pub(super) fn report_program_status(&mut self, event: &AgentSessionEvent) {
        if !self.program_status.supported() {
            return;
        }
        let name = self.session.session_name();
        let report = self.program_status.handle(event, name.as_deref());
        self.write_program_status(report);
    }

    pub(super) fn reset_program_status(&mut self) {
        let name = self.session.session_name();
        let report = self.program_status.reset(name.as_deref());
        self.write_program_status(report);
    }

    /// `blocked` while an extension dialog, a confirmation or a login waits for the user.
    pub(super) fn sync_blocked_status(&mut self) {
        if !self.program_status.supported() {
            return;
        }
        let dialog = self
            .ext
            .dialog_mut()
            .map(|d| d.blocked_status())
            .map(|(kind, title)| (kind, title.to_owned()));
        let own = match &self.overlay {
            Some(Overlay::Confirm(view, _)) => {
                let (kind, title) = view.blocked_status();
                Some((kind, title.to_owned()))
            }
            _ => self
                .signing_in
                .as_ref()
                .map(|name| ("auth", format!("Log in to {name}"))),
        };
        let name = self.session.session_name();
        let blocked = dialog.or(own);
        let report = self.program_status.set_blocked(
            "dialog",
            blocked.as_ref().map(|(k, t)| (*k, t.as_str())),
            name.as_deref(),
        );
        self.write_program_status(report);
    }

    /// `clear` on exit, if anything was reported.
    pub(super) fn clear_program_status(&mut self) {
        let report = self.program_status.clear();
        self.write_program_status(report);
    }

    fn write_program_status(&mut self, report: Option<String>) {
        if let Some(sequence) = report {
            let terminal = self.renderer.terminal_mut();
            let _ = pi_tui::terminal::Terminal::write(terminal, &sequence);
            let _ = pi_tui::terminal::Terminal::flush(terminal);
        }
    }
}
