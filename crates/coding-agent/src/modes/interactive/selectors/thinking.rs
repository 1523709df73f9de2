//! `/thinking`: pick a reasoning level from those the model supports.

use pi_tui::Input;
use pi_tui::keybindings::Keybindings;
use pi_tui::width::visible_width;

use super::{
    SelectorOutcome, border, fit, hint_line, picker_component, title, wrap_next, wrap_prev,
};
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// What a thinking level means, as the TypeScript pi describes it.
pub fn level_description(level: &str) -> &'static str {
    match level {
        "off" => "No reasoning",
        "minimal" => "Very brief reasoning (~1k tokens)",
        "low" => "Light reasoning (~2k tokens)",
        "medium" => "Moderate reasoning (~8k tokens)",
        "high" => "Deep reasoning (~16k tokens)",
        "xhigh" => "Maximum reasoning (~32k tokens)",
        _ => "",
    }
}

/// The thinking level picker; `Done(level)`.
pub struct ThinkingSelector {
    levels: Vec<String>,
    current: String,
    selected: usize,
    theme: Theme,
    outcome: Option<SelectorOutcome<String>>,
}

impl ThinkingSelector {
    /// A picker over `levels` with `current` preselected.
    pub fn new(levels: Vec<String>, current: &str, theme: &Theme) -> Self {
        let selected = levels.iter().position(|l| l == current).unwrap_or(0);
        Self {
            levels,
            current: current.to_owned(),
            selected,
            theme: theme.clone(),
            outcome: None,
        }
    }

    /// The finished outcome when driven through `Component::handle_input`.
    pub fn take_outcome(&mut self) -> Option<SelectorOutcome<String>> {
        self.outcome.take()
    }

    /// The level under the cursor.
    pub fn selected(&self) -> Option<&str> {
        self.levels.get(self.selected).map(String::as_str)
    }

    /// Handle one input with the app's keybindings.
    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> SelectorOutcome<String> {
        let len = self.levels.len();
        if keys.matches(input, "tui.select.up") {
            self.selected = wrap_prev(self.selected, len);
        } else if keys.matches(input, "tui.select.down") {
            self.selected = wrap_next(self.selected, len);
        } else if keys.matches(input, "tui.select.confirm") {
            if let Some(level) = self.selected() {
                return SelectorOutcome::Done(level.to_owned());
            }
        } else if keys.matches(input, "tui.select.cancel") {
            return SelectorOutcome::Cancelled;
        }
        SelectorOutcome::Pending
    }

    fn render_lines(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let accent = t.fg(ThemeColor::Accent);
        let muted = t.fg(ThemeColor::Muted);
        let mut lines = vec![border(t, width), title(t, "Thinking Level", width)];
        lines.push(String::new());
        let column = self
            .levels
            .iter()
            .map(|l| visible_width(l) + 2)
            .max()
            .unwrap_or(0)
            .clamp(12, 32);
        for (i, level) in self.levels.iter().enumerate() {
            let is_selected = i == self.selected;
            let mark = if *level == self.current {
                t.fg(ThemeColor::Success).paint(" ✓")
            } else {
                String::new()
            };
            let pad = " ".repeat(column.saturating_sub(visible_width(level)));
            let description = muted.paint(level_description(level));
            let line = if is_selected {
                format!(
                    "{}{}{pad}{description}{mark}",
                    accent.paint("→ "),
                    accent.paint(level)
                )
            } else {
                format!("  {level}{pad}{description}{mark}")
            };
            lines.push(fit(&line, width));
        }
        lines.push(String::new());
        lines.push(hint_line(
            t,
            &[("↑↓", "navigate"), ("enter", "select"), ("esc", "cancel")],
            width,
        ));
        lines.push(border(t, width));
        lines
    }
}

picker_component!(ThinkingSelector);

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use pi_tui::{Component, KeyCode};

    fn levels() -> Vec<String> {
        ["off", "minimal", "low", "medium", "high"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect()
    }

    #[test]
    fn preselects_current_and_wraps() {
        let keys = keys();
        let mut s = ThinkingSelector::new(levels(), "high", &theme());
        assert_eq!(s.selected(), Some("high"));
        s.handle(&key(KeyCode::Down), &keys);
        assert_eq!(s.selected(), Some("off"));
        s.handle(&key(KeyCode::Up), &keys);
        assert_eq!(s.selected(), Some("high"));
        s.handle(&key(KeyCode::Up), &keys);
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Done("medium".into())
        );
        assert_eq!(s.handle(&ctrl('c'), &keys), SelectorOutcome::Cancelled);
    }

    #[test]
    fn renders_descriptions_within_width() {
        let mut s = ThinkingSelector::new(levels(), "low", &theme());
        for width in [40, 100] {
            let lines = s.render(width);
            assert_fits(&lines, width);
            let plain = plain(&lines);
            assert!(plain.iter().any(|l| l.starts_with("→ low")), "{plain:?}");
            if width == 100 {
                assert!(
                    plain
                        .iter()
                        .any(|l| l.contains("Light reasoning (~2k tokens) ✓"))
                );
                assert!(
                    plain
                        .iter()
                        .any(|l| l.starts_with("  medium      Moderate"))
                );
            }
        }
    }
}
