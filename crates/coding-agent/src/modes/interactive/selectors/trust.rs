//! `/trust`: save a trust decision for the session's folder (pi 1.6's trust selector).
//! The running session keeps its trust; the decision applies from the next start.

use std::path::{Path, PathBuf};

use pi_tui::keybindings::Keybindings;
use pi_tui::{Input, KeyCode};

use super::{SelectorOutcome, border, fit};
use crate::modes::interactive::theme::{Theme, ThemeColor};
use crate::trust::{TrustOption, prompt_options};

/// The picker; `Done(option)` is the option to save.
pub struct TrustSelector {
    cwd: PathBuf,
    /// The entry deciding now: where it was saved, and the decision.
    saved: Option<(PathBuf, bool)>,
    session_trusted: bool,
    options: Vec<TrustOption>,
    selected: usize,
    theme: Theme,
    /// The keys that save and cancel, as the hint names them.
    confirm_keys: String,
    cancel_keys: String,
}

/// The options that save something (pi leaves out the session-only ones here).
fn saved_options(cwd: &Path) -> Vec<TrustOption> {
    prompt_options(cwd)
        .into_iter()
        .filter(|o| !o.updates.is_empty())
        .collect()
}

impl TrustSelector {
    pub fn new(
        cwd: &Path,
        saved: Option<(PathBuf, bool)>,
        session_trusted: bool,
        theme: &Theme,
        keys: &Keybindings,
    ) -> Self {
        let options = saved_options(cwd);
        let mut selector = Self {
            cwd: cwd.to_path_buf(),
            saved,
            session_trusted,
            options,
            selected: 0,
            theme: theme.clone(),
            confirm_keys: keys.keys("tui.select.confirm").join("/"),
            cancel_keys: keys.keys("tui.select.cancel").join("/"),
        };
        selector.selected = (0..selector.options.len())
            .find(|&i| selector.is_saved(i))
            .unwrap_or(0);
        selector
    }

    /// The folder an option saves its decision for.
    fn saved_path(option: &TrustOption) -> Option<&Path> {
        option
            .updates
            .iter()
            .find(|(_, d)| d.is_some())
            .map(|(p, _)| p.as_path())
    }

    /// Whether option `i` is the decision saved now.
    fn is_saved(&self, i: usize) -> bool {
        let Some((path, decision)) = &self.saved else {
            return false;
        };
        self.options
            .get(i)
            .is_some_and(|o| o.trusted == *decision && Self::saved_path(o) == Some(path.as_path()))
    }

    fn decision_text(&self) -> String {
        let Some((path, decision)) = &self.saved else {
            return "none".to_owned();
        };
        let label = if *decision { "trusted" } else { "untrusted" };
        let own = self.options.first().and_then(Self::saved_path);
        if own.is_some_and(|own| own != path) {
            format!("{label} (inherited from {})", path.display())
        } else {
            format!("{label} ({})", path.display())
        }
    }

    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> SelectorOutcome<TrustOption> {
        let typed = |c: char| matches!(input, Input::Key(k) if k.code == KeyCode::Char(c) && k.modifiers.is_empty());
        if keys.matches(input, "tui.select.up") || typed('k') {
            self.selected = self.selected.saturating_sub(1);
        } else if keys.matches(input, "tui.select.down") || typed('j') {
            self.selected = (self.selected + 1).min(self.options.len().saturating_sub(1));
        } else if keys.matches(input, "tui.select.confirm") {
            if let Some(option) = self.options.get(self.selected) {
                return SelectorOutcome::Done(option.clone());
            }
        } else if keys.matches(input, "tui.select.cancel") {
            return SelectorOutcome::Cancelled;
        }
        SelectorOutcome::Pending
    }

    pub fn render(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let accent = t.fg(ThemeColor::Accent);
        let muted = t.fg(ThemeColor::Muted);
        let dim = t.fg(ThemeColor::Dim);
        let text = t.fg(ThemeColor::Text);
        let pad = |line: String| fit(&format!(" {line}"), width);
        let mut lines = vec![
            border(t, width),
            String::new(),
            pad(accent.bold().paint("Project trust")),
            pad(muted.paint(&self.cwd.display().to_string())),
            String::new(),
            pad(muted.paint(&format!("Saved decision: {}", self.decision_text()))),
            pad(muted.paint(&format!(
                "Current session: {}",
                if self.session_trusted {
                    "trusted"
                } else {
                    "untrusted"
                }
            ))),
            String::new(),
        ];
        for (i, option) in self.options.iter().enumerate() {
            let selected = i == self.selected;
            let mark = if self.is_saved(i) {
                accent.paint("✓ ")
            } else {
                "  ".to_owned()
            };
            let prefix = if selected {
                accent.paint("→ ")
            } else {
                "  ".to_owned()
            };
            let label = if selected {
                accent.paint(&option.label)
            } else {
                text.paint(&option.label)
            };
            lines.push(pad(format!("{prefix}{mark}{label}")));
        }
        let hint = |key: String, what: &str| {
            format!("{}{}", dim.paint(&key), muted.paint(&format!(" {what}")))
        };
        lines.push(String::new());
        lines.push(pad(format!(
            "{}  {}  {}",
            hint("↑↓".to_owned(), "navigate"),
            hint(self.confirm_keys.clone(), "save"),
            hint(self.cancel_keys.clone(), "cancel")
        )));
        lines.push(String::new());
        lines.push(border(t, width));
        lines
    }
}
