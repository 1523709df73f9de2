//! `/trust`: save a trust decision for the session's folder, for the next start.

use super::App;
use super::overlay::Overlay;
use crate::modes::interactive::chat::NoticeKind;
use crate::modes::interactive::selectors::trust::TrustSelector;
use crate::trust::{TrustOption, TrustStore};

impl App {
    pub(super) fn open_trust(&mut self) {
        let store = TrustStore::new(&self.agent_dir);
        let cwd = self.session.cwd().to_path_buf();
        let saved = match store.get_entry(&cwd) {
            Ok(saved) => saved,
            Err(e) => {
                self.notice(NoticeKind::Error, &e.to_string());
                return;
            }
        };
        self.overlay = Some(Overlay::Trust(Box::new(TrustSelector::new(
            &cwd,
            saved,
            self.project_trusted,
            &self.theme,
            &self.keys,
        ))));
    }

    pub(super) fn save_trust(&mut self, option: &TrustOption) {
        let store = TrustStore::new(&self.agent_dir);
        match store.set_many(&option.updates) {
            Ok(()) => {
                let decision = if option.trusted {
                    "trusted"
                } else {
                    "untrusted"
                };
                self.notice(
                    NoticeKind::Info,
                    &format!(
                        "Saved trust decision: {decision}. Restart pi for this to take effect."
                    ),
                );
            }
            Err(e) => self.notice(NoticeKind::Error, &e.to_string()),
        }
    }
}
