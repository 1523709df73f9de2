//! `/fork`: pick the user message whose path is copied into a new session.

use pi_tui::Input;
use pi_tui::keybindings::Keybindings;

use super::{
    SelectorOutcome, border, fit, hint_line, one_line, picker_component, scroll_start, title,
    wrap_next, wrap_prev,
};
use crate::modes::interactive::theme::{Theme, ThemeColor};

const MAX_VISIBLE: usize = 10;

/// The fork-point picker over `(entry id, text)` pairs, oldest first; `Done(entry id)`.
pub struct UserMessageSelector {
    messages: Vec<(String, String)>,
    selected: usize,
    theme: Theme,
    outcome: Option<SelectorOutcome<String>>,
}

impl UserMessageSelector {
    /// A picker over `messages` (oldest first) with the newest selected.
    pub fn new(messages: Vec<(String, String)>, theme: &Theme) -> Self {
        let selected = messages.len().saturating_sub(1);
        Self {
            messages,
            selected,
            theme: theme.clone(),
            outcome: None,
        }
    }

    /// Preselect the message of entry `id` when present.
    pub fn select_id(&mut self, id: &str) {
        if let Some(i) = self.messages.iter().position(|(e, _)| e == id) {
            self.selected = i;
        }
    }

    /// The finished outcome when driven through `Component::handle_input`.
    pub fn take_outcome(&mut self) -> Option<SelectorOutcome<String>> {
        self.outcome.take()
    }

    /// The entry id under the cursor.
    pub fn selected(&self) -> Option<&str> {
        self.messages.get(self.selected).map(|(id, _)| id.as_str())
    }

    /// Handle one input with the app's keybindings.
    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> SelectorOutcome<String> {
        let len = self.messages.len();
        if keys.matches(input, "tui.select.up") {
            self.selected = wrap_prev(self.selected, len);
        } else if keys.matches(input, "tui.select.down") {
            self.selected = wrap_next(self.selected, len);
        } else if keys.matches(input, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if keys.matches(input, "tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(len.saturating_sub(1));
        } else if keys.matches(input, "tui.select.confirm") {
            if let Some(id) = self.selected() {
                return SelectorOutcome::Done(id.to_owned());
            }
        } else if keys.matches(input, "tui.select.cancel") {
            return SelectorOutcome::Cancelled;
        }
        SelectorOutcome::Pending
    }

    fn render_lines(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let mut lines = vec![border(t, width), title(t, "Fork from Message", width)];
        lines.push(fit(
            &format!(
                " {}",
                muted.paint(
                    "Select a user message to copy the active path up to that point into a new session"
                )
            ),
            width,
        ));
        lines.push(String::new());
        let len = self.messages.len();
        if len == 0 {
            lines.push(fit(&muted.paint("  No user messages found"), width));
        }
        let start = scroll_start(self.selected, len, MAX_VISIBLE);
        let end = (start + MAX_VISIBLE).min(len);
        for (i, (_, text)) in self.messages.iter().enumerate().take(end).skip(start) {
            let text = fit(&one_line(text), width.saturating_sub(2));
            let line = if i == self.selected {
                format!(
                    "{}{}",
                    t.fg(ThemeColor::Accent).paint("→ "),
                    t.fg(ThemeColor::Accent).bold().paint(&text)
                )
            } else {
                format!("  {text}")
            };
            lines.push(fit(&line, width));
            lines.push(fit(
                &muted.paint(&format!("  Message {} of {len}", i + 1)),
                width,
            ));
            lines.push(String::new());
        }
        if start > 0 || end < len {
            lines.push(fit(
                &muted.paint(&format!("  ({}/{len})", self.selected + 1)),
                width,
            ));
        }
        lines.push(hint_line(
            t,
            &[("↑↓", "navigate"), ("enter", "fork"), ("esc", "cancel")],
            width,
        ));
        lines.push(border(t, width));
        lines
    }
}

picker_component!(UserMessageSelector);

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use pi_tui::{Component, KeyCode};

    fn messages(n: usize) -> Vec<(String, String)> {
        (0..n)
            .map(|i| {
                (
                    format!("e{i}"),
                    format!("message number {i}\nsecond line with much more text in it"),
                )
            })
            .collect()
    }

    #[test]
    fn starts_on_newest_and_wraps() {
        let keys = keys();
        let mut s = UserMessageSelector::new(messages(3), &theme());
        assert_eq!(s.selected(), Some("e2"));
        s.handle(&key(KeyCode::Down), &keys);
        assert_eq!(s.selected(), Some("e0"));
        s.handle(&key(KeyCode::Up), &keys);
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Done("e2".into())
        );
        s.select_id("e1");
        assert_eq!(s.selected(), Some("e1"));
        assert_eq!(
            s.handle(&key(KeyCode::Esc), &keys),
            SelectorOutcome::Cancelled
        );
    }

    #[test]
    fn empty_list_cannot_confirm() {
        let keys = keys();
        let mut s = UserMessageSelector::new(Vec::new(), &theme());
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Pending
        );
        s.handle(&key(KeyCode::Up), &keys);
        let plain = plain(&s.render(40));
        assert!(plain.iter().any(|l| l.contains("No user messages found")));
    }

    #[test]
    fn renders_within_width() {
        let mut s = UserMessageSelector::new(messages(15), &theme());
        for width in [40, 100] {
            let lines = s.render(width);
            assert_fits(&lines, width);
            let plain = plain(&lines);
            assert!(plain.iter().any(|l| l.starts_with("→ message number 14")));
            assert!(plain.iter().any(|l| l.contains("Message 15 of 15")));
            assert!(plain.iter().any(|l| l.contains("(15/15)")));
            assert!(!plain.iter().any(|l| l.contains("number 4 ")));
        }
    }
}
