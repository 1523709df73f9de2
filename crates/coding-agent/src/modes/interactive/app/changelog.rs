//! `/changelog` and the release notes shown once at startup after an update, with
//! `lastChangelogVersion` kept in the global settings as pi keeps it.

use serde_json::Value;

use super::App;
use crate::changelog::{self, CHANGELOG};
use crate::modes::interactive::components::ChangelogLayout;

impl App {
    /// `/changelog`: every release's notes, oldest first.
    pub(super) fn show_changelog(&mut self) {
        let entries = changelog::parse(CHANGELOG);
        let markdown = changelog::full_markdown(&entries);
        self.chat.add_changelog(&markdown, ChangelogLayout::Command);
    }

    /// The notes new since the saved `lastChangelogVersion` (none for a resumed session
    /// or a first start, which records this version instead).
    pub(super) fn show_startup_changelog(&mut self) {
        if self.session.message_count() > 0 {
            return;
        }
        let settings = self.session.settings();
        let last = settings
            .value(&["lastChangelogVersion"])
            .and_then(|v| v.as_str().map(str::to_owned));
        let collapse = settings
            .value(&["collapseChangelog"])
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let notes = changelog::startup_notes(&changelog::parse(CHANGELOG), last.as_deref());
        if notes.record_version {
            settings.set(
                "lastChangelogVersion",
                Value::String(crate::PI_VERSION.to_owned()),
            );
        }
        if let Some(markdown) = notes.markdown {
            let layout = if collapse {
                ChangelogLayout::Collapsed
            } else {
                ChangelogLayout::Startup
            };
            self.chat.add_changelog(&markdown, layout);
        }
    }
}
