//! `/model` (and Ctrl+L): pick a model from the available ones, with fuzzy search.

use pi_tui::Input;
use pi_tui::fuzzy::fuzzy_filter;
use pi_tui::keybindings::Keybindings;

use super::{
    SearchBox, SelectorOutcome, border, fit, hint_line, picker_component, scroll_start, title,
    wrap_next, wrap_prev,
};
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// One model the picker offers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelItem {
    pub provider: String,
    pub id: String,
    /// Display name shown under the list for the selected model.
    pub name: Option<String>,
    /// The session's model (marked ✓, selected first).
    pub is_current: bool,
}

const MAX_VISIBLE: usize = 10;

/// The model picker; `Done((provider, id))`.
pub struct ModelSelector {
    items: Vec<ModelItem>,
    /// What fuzzy search matches against, one per item.
    search_keys: Vec<String>,
    /// Indices into `items` matching the search, best first.
    filtered: Vec<usize>,
    selected: usize,
    search: SearchBox,
    theme: Theme,
    outcome: Option<SelectorOutcome<(String, String)>>,
}

impl ModelSelector {
    /// A picker over `items` (current model first, then by provider), filtered by `search`.
    pub fn new(items: Vec<ModelItem>, search: &str, theme: &Theme) -> Self {
        let mut items = items;
        items.sort_by(|a, b| {
            b.is_current
                .cmp(&a.is_current)
                .then_with(|| a.provider.cmp(&b.provider))
        });
        let search_keys = items
            .iter()
            .map(|m| {
                let (id, p) = (&m.id, &m.provider);
                format!("{id} {p} {p}/{id} {p} {id}")
            })
            .collect();
        let mut selector = Self {
            items,
            search_keys,
            filtered: Vec::new(),
            selected: 0,
            search: SearchBox::new(search.trim()),
            theme: theme.clone(),
            outcome: None,
        };
        selector.refilter();
        selector
    }

    /// The finished outcome when driven through `Component::handle_input`.
    pub fn take_outcome(&mut self) -> Option<SelectorOutcome<(String, String)>> {
        self.outcome.take()
    }

    /// The model under the cursor.
    pub fn selected(&self) -> Option<&ModelItem> {
        self.filtered
            .get(self.selected)
            .and_then(|i| self.items.get(*i))
    }

    /// The current search text.
    pub fn query(&self) -> &str {
        self.search.query()
    }

    fn refilter(&mut self) {
        let all: Vec<usize> = (0..self.items.len()).collect();
        let query = self.search.query();
        if query.trim().is_empty() {
            self.filtered = all;
            self.selected = self
                .filtered
                .iter()
                .position(|i| self.items[*i].is_current)
                .unwrap_or(0);
        } else {
            let keyed: Vec<(usize, &str)> = self
                .search_keys
                .iter()
                .map(String::as_str)
                .enumerate()
                .collect();
            self.filtered = fuzzy_filter(keyed, query, |(_, key)| key)
                .into_iter()
                .map(|(i, _)| i)
                .collect();
            self.selected = 0;
        }
    }

    /// Handle one input with the app's keybindings.
    pub fn handle(
        &mut self,
        input: &Input,
        keys: &Keybindings,
    ) -> SelectorOutcome<(String, String)> {
        let len = self.filtered.len();
        if keys.matches(input, "tui.select.up") {
            self.selected = wrap_prev(self.selected, len);
        } else if keys.matches(input, "tui.select.down") {
            self.selected = wrap_next(self.selected, len);
        } else if keys.matches(input, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if keys.matches(input, "tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(len.saturating_sub(1));
        } else if keys.matches(input, "tui.select.confirm") {
            if let Some(item) = self.selected() {
                return SelectorOutcome::Done((item.provider.clone(), item.id.clone()));
            }
        } else if keys.matches(input, "tui.select.cancel") {
            return SelectorOutcome::Cancelled;
        } else if self.search.edit(input, keys) {
            self.refilter();
        }
        SelectorOutcome::Pending
    }

    fn render_lines(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let accent = t.fg(ThemeColor::Accent);
        let mut lines = vec![border(t, width), title(t, "Select Model", width)];
        lines.push(self.search.render(t, "Search:", width));
        lines.push(String::new());
        let len = self.filtered.len();
        let start = scroll_start(self.selected, len, MAX_VISIBLE);
        let end = (start + MAX_VISIBLE).min(len);
        for (row, index) in self.filtered[start..end].iter().enumerate() {
            let item = &self.items[*index];
            let is_selected = start + row == self.selected;
            let check = if item.is_current {
                t.fg(ThemeColor::Success).paint(" ✓")
            } else {
                String::new()
            };
            let badge = muted.paint(&format!("[{}]", item.provider));
            let line = if is_selected {
                format!(
                    "{}{} {badge}{check}",
                    accent.paint("→ "),
                    accent.paint(&item.id)
                )
            } else {
                format!("  {} {badge}{check}", item.id)
            };
            lines.push(fit(&line, width));
        }
        if start > 0 || end < len {
            lines.push(fit(
                &muted.paint(&format!("  ({}/{len})", self.selected + 1)),
                width,
            ));
        }
        if len == 0 {
            lines.push(fit(&muted.paint("  No matching models"), width));
        } else if let Some(item) = self.selected() {
            lines.push(String::new());
            let name = item.name.as_deref().unwrap_or(&item.id);
            lines.push(fit(&muted.paint(&format!("  Model Name: {name}")), width));
        }
        lines.push(String::new());
        lines.push(hint_line(
            t,
            &[
                ("↑↓", "navigate"),
                ("enter", "select"),
                ("esc", "cancel"),
                ("type", "search"),
            ],
            width,
        ));
        lines.push(border(t, width));
        lines
    }
}

picker_component!(ModelSelector);

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use pi_tui::{Component, KeyCode};

    fn item(provider: &str, id: &str, current: bool) -> ModelItem {
        ModelItem {
            provider: provider.into(),
            id: id.into(),
            name: Some(format!("Name of {id}")),
            is_current: current,
        }
    }

    fn items() -> Vec<ModelItem> {
        vec![
            item("openai", "gpt-4o", false),
            item("anthropic", "claude-sonnet-4", false),
            item("anthropic", "claude-opus-4", true),
            item("google", "gemini-2.5-pro", false),
        ]
    }

    fn ids(s: &ModelSelector) -> Vec<String> {
        s.filtered.iter().map(|i| s.items[*i].id.clone()).collect()
    }

    #[test]
    fn current_first_and_selected() {
        let s = ModelSelector::new(items(), "", &theme());
        assert_eq!(
            ids(&s),
            [
                "claude-opus-4",
                "claude-sonnet-4",
                "gemini-2.5-pro",
                "gpt-4o"
            ]
        );
        assert_eq!(s.selected().map(|m| m.id.as_str()), Some("claude-opus-4"));
    }

    #[test]
    fn typing_filters_and_backspace_widens() {
        let keys = keys();
        let mut s = ModelSelector::new(items(), "", &theme());
        for c in "gpt".chars() {
            assert_eq!(s.handle(&typed(c), &keys), SelectorOutcome::Pending);
        }
        assert_eq!(ids(&s), ["gpt-4o"]);
        s.handle(&key(KeyCode::Backspace), &keys);
        s.handle(&key(KeyCode::Backspace), &keys);
        assert_eq!(s.query(), "g");
        assert!(ids(&s).len() > 1);
        s.handle(&Input::Paste("zzzz".into()), &keys);
        assert!(ids(&s).is_empty());
        let plain = plain(&s.render(60));
        assert!(plain.iter().any(|l| l.contains("No matching models")));
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Pending
        );
    }

    #[test]
    fn initial_search_and_done() {
        let keys = keys();
        let mut s = ModelSelector::new(items(), "sonnet", &theme());
        assert_eq!(ids(&s), ["claude-sonnet-4"]);
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Done(("anthropic".into(), "claude-sonnet-4".into()))
        );
        let mut s = ModelSelector::new(items(), "anthropic/opus", &theme());
        assert_eq!(ids(&s).first().map(String::as_str), Some("claude-opus-4"));
        assert_eq!(
            s.handle(&key(KeyCode::Esc), &keys),
            SelectorOutcome::Cancelled
        );
    }

    #[test]
    fn navigation_wraps() {
        let keys = keys();
        let mut s = ModelSelector::new(items(), "", &theme());
        s.handle(&key(KeyCode::Up), &keys);
        assert_eq!(s.selected().map(|m| m.id.as_str()), Some("gpt-4o"));
        s.handle(&key(KeyCode::Down), &keys);
        assert_eq!(s.selected().map(|m| m.id.as_str()), Some("claude-opus-4"));
        s.handle(&key(KeyCode::Down), &keys);
        assert_eq!(s.selected().map(|m| m.id.as_str()), Some("claude-sonnet-4"));
    }

    #[test]
    fn renders_within_width() {
        let mut many = items();
        for i in 0..30 {
            many.push(item(
                "provider-with-a-long-name",
                &format!("model-{i}-with-a-very-long-identifier"),
                false,
            ));
        }
        let mut s = ModelSelector::new(many, "", &theme());
        for width in [40, 100] {
            let lines = s.render(width);
            assert_fits(&lines, width);
            let plain = plain(&lines);
            assert!(
                plain
                    .iter()
                    .any(|l| l.starts_with("→ claude-opus-4 [anthropic] ✓"))
            );
            assert!(plain.iter().any(|l| l.contains("(1/34)")));
            assert!(
                plain
                    .iter()
                    .any(|l| l.contains("Model Name: Name of claude-opus-4"))
            );
        }
    }

    #[test]
    fn component_input_keeps_the_outcome() {
        let mut s = ModelSelector::new(items(), "", &theme());
        assert!(s.handle_input(&Input::key(KeyCode::Down)));
        assert!(s.take_outcome().is_none());
        s.handle_input(&Input::key(KeyCode::Enter));
        assert_eq!(
            s.take_outcome(),
            Some(SelectorOutcome::Done((
                "anthropic".into(),
                "claude-sonnet-4".into()
            )))
        );
    }
}
