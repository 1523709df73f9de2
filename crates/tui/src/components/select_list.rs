//! A filterable, scrolling list to pick one item.

use crate::component::Component;
use crate::input::{Input, KeyCode, KeyModifiers};
use crate::keybindings::Keybindings;
use crate::style::Style;
use crate::width::{truncate_to_width, visible_width};

const DEFAULT_COLUMN_WIDTH: usize = 32;
const COLUMN_GAP: usize = 2;
const MIN_DESCRIPTION_WIDTH: usize = 10;

/// One choice: the value returned on confirm, the label shown, an optional description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SelectItem {
    pub value: String,
    pub label: String,
    pub description: Option<String>,
}

impl SelectItem {
    /// An item without description.
    pub fn new(value: impl Into<String>, label: impl Into<String>) -> Self {
        SelectItem {
            value: value.into(),
            label: label.into(),
            description: None,
        }
    }

    /// Add a description (shown in a second column when there is room).
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    fn display(&self) -> &str {
        if self.label.is_empty() {
            &self.value
        } else {
            &self.label
        }
    }
}

/// Styles of the list's parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SelectListTheme {
    pub selected: Style,
    pub normal: Style,
    pub description: Style,
    pub scroll_info: Style,
    pub no_match: Style,
}

/// What a key did to the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectAction {
    /// Nothing (key not handled).
    None,
    /// Selection or filter changed.
    Changed,
    /// The user picked the item with this value.
    Confirm(String),
    /// The user backed out.
    Cancel,
}

/// A list of items with a selection, filtered by typed text, scrolling past `max_visible`.
#[derive(Debug, Clone)]
pub struct SelectList {
    items: Vec<SelectItem>,
    /// Indices into `items` that pass the filter.
    filtered: Vec<usize>,
    filter: String,
    selected: usize,
    max_visible: usize,
    column_width: (usize, usize),
    theme: SelectListTheme,
    keybindings: Keybindings,
    last_action: SelectAction,
}

impl SelectList {
    /// A list showing at most `max_visible` items at once.
    pub fn new(items: Vec<SelectItem>, max_visible: usize, theme: SelectListTheme) -> Self {
        let filtered = (0..items.len()).collect();
        SelectList {
            items,
            filtered,
            filter: String::new(),
            selected: 0,
            max_visible: max_visible.max(1),
            column_width: (DEFAULT_COLUMN_WIDTH, DEFAULT_COLUMN_WIDTH),
            theme,
            keybindings: Keybindings::default(),
            last_action: SelectAction::None,
        }
    }

    /// Keybindings used by [`Component::handle_input`].
    pub fn with_keybindings(mut self, keybindings: Keybindings) -> Self {
        self.keybindings = keybindings;
        self
    }

    /// Bounds for the label column (it fits the widest label within them).
    pub fn with_column_width(mut self, min: usize, max: usize) -> Self {
        self.column_width = (min.min(max).max(1), max.max(min).max(1));
        self
    }

    /// Show only items whose label or value contains `filter` (case-insensitive).
    pub fn set_filter(&mut self, filter: &str) {
        self.filter = filter.to_string();
        let needle = filter.to_lowercase();
        self.filtered = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, it)| {
                it.label.to_lowercase().contains(&needle)
                    || it.value.to_lowercase().contains(&needle)
            })
            .map(|(i, _)| i)
            .collect();
        self.selected = 0;
    }

    /// The current filter text.
    pub fn filter(&self) -> &str {
        &self.filter
    }

    /// Select the `index`-th visible (filtered) item, clamped.
    pub fn set_selected_index(&mut self, index: usize) {
        self.selected = index.min(self.filtered.len().saturating_sub(1));
    }

    /// Index of the selection among the filtered items.
    pub fn selected_index(&self) -> usize {
        self.selected
    }

    /// The selected item, if any item passes the filter.
    pub fn selected_item(&self) -> Option<&SelectItem> {
        self.filtered.get(self.selected).map(|&i| &self.items[i])
    }

    /// The action of the last [`Component::handle_input`] call, leaving `None`.
    pub fn take_action(&mut self) -> SelectAction {
        std::mem::replace(&mut self.last_action, SelectAction::None)
    }

    /// Apply a key: move (wrapping around), confirm, cancel, or edit the filter.
    pub fn handle_key(&mut self, input: &Input, kb: &Keybindings) -> SelectAction {
        let n = self.filtered.len();
        let last = n.saturating_sub(1);
        let page = self.max_visible;
        let moved = |sel: usize| {
            if sel == self.selected {
                SelectAction::None
            } else {
                SelectAction::Changed
            }
        };
        if kb.matches(input, "tui.select.up") {
            let sel = if self.selected == 0 {
                last
            } else {
                self.selected - 1
            };
            let action = moved(sel);
            self.selected = sel;
            return action;
        }
        if kb.matches(input, "tui.select.down") {
            let sel = if self.selected >= last {
                0
            } else {
                self.selected + 1
            };
            let action = moved(sel);
            self.selected = sel;
            return action;
        }
        if kb.matches(input, "tui.select.pageUp") {
            let sel = if self.selected == 0 {
                last
            } else {
                self.selected.saturating_sub(page)
            };
            let action = moved(sel);
            self.selected = sel;
            return action;
        }
        if kb.matches(input, "tui.select.pageDown") {
            let sel = if self.selected >= last {
                0
            } else {
                (self.selected + page).min(last)
            };
            let action = moved(sel);
            self.selected = sel;
            return action;
        }
        if kb.matches(input, "tui.select.confirm") {
            return match self.selected_item() {
                Some(item) => SelectAction::Confirm(item.value.clone()),
                None => SelectAction::None,
            };
        }
        if kb.matches(input, "tui.select.cancel") {
            return SelectAction::Cancel;
        }
        self.edit_filter(input)
    }

    fn edit_filter(&mut self, input: &Input) -> SelectAction {
        let mut filter = self.filter.clone();
        match input {
            Input::Paste(text) if !text.contains(['\n', '\r']) => filter.push_str(text),
            Input::Key(key) => {
                let typing = !key
                    .modifiers
                    .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT);
                match key.code {
                    KeyCode::Char(c) if typing => filter.push(c),
                    KeyCode::Backspace if typing && filter.pop().is_some() => {}
                    _ => return SelectAction::None,
                }
            }
            Input::Paste(_) => return SelectAction::None,
        }
        self.set_filter(&filter);
        SelectAction::Changed
    }

    fn primary_width(&self) -> usize {
        let widest = self
            .filtered
            .iter()
            .map(|&i| visible_width(self.items[i].display()) + COLUMN_GAP)
            .max()
            .unwrap_or(0);
        widest.clamp(self.column_width.0, self.column_width.1)
    }

    fn render_item(
        &self,
        item: &SelectItem,
        selected: bool,
        width: usize,
        column: usize,
    ) -> String {
        let prefix = if selected { "→ " } else { "  " };
        let prefix_w = 2;
        let description = item
            .description
            .as_deref()
            .map(|d| {
                d.split(['\r', '\n'])
                    .filter(|p| !p.is_empty())
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .map(|d| d.trim().to_string())
            .filter(|d| !d.is_empty());
        if let Some(desc) = description.filter(|_| width > 40) {
            let column = column.min(width - prefix_w - 4).max(1);
            let label = truncate_to_width(
                item.display(),
                column.saturating_sub(COLUMN_GAP).max(1),
                "",
                false,
            );
            let label_w = visible_width(&label);
            let spacing = " ".repeat(column.saturating_sub(label_w).max(1));
            let start = prefix_w + label_w + spacing.len();
            let remaining = width.saturating_sub(start + 2);
            if remaining > MIN_DESCRIPTION_WIDTH {
                let desc = truncate_to_width(&desc, remaining, "", false);
                if selected {
                    return self
                        .theme
                        .selected
                        .paint(&format!("{prefix}{label}{spacing}{desc}"));
                }
                let rest = self.theme.description.paint(&format!("{spacing}{desc}"));
                return format!("{prefix}{}{rest}", self.theme.normal.paint(&label));
            }
        }
        let label = truncate_to_width(
            item.display(),
            width.saturating_sub(prefix_w + 2),
            "",
            false,
        );
        if selected {
            self.theme.selected.paint(&format!("{prefix}{label}"))
        } else {
            format!("{prefix}{}", self.theme.normal.paint(&label))
        }
    }
}

impl Component for SelectList {
    fn render(&mut self, width: usize) -> Vec<String> {
        let n = self.filtered.len();
        if n == 0 {
            let text = truncate_to_width("  No matching items", width, "", false);
            return vec![self.theme.no_match.paint(&text)];
        }
        let column = self.primary_width();
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(n.saturating_sub(self.max_visible));
        let end = (start + self.max_visible).min(n);
        let mut lines: Vec<String> = (start..end)
            .map(|i| {
                self.render_item(
                    &self.items[self.filtered[i]],
                    i == self.selected,
                    width,
                    column,
                )
            })
            .collect();
        if start > 0 || end < n {
            let info = format!("  ({}/{})", self.selected + 1, n);
            let info = truncate_to_width(&info, width.saturating_sub(2), "", false);
            lines.push(self.theme.scroll_info.paint(&info));
        }
        lines
    }

    fn handle_input(&mut self, input: &Input) -> bool {
        let kb = self.keybindings.clone();
        let action = self.handle_key(input, &kb);
        let handled = action != SelectAction::None;
        self.last_action = action;
        handled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::Color;

    fn list(n: usize, max_visible: usize) -> SelectList {
        let items = (0..n)
            .map(|i| SelectItem::new(format!("v{i}"), format!("item {i}")))
            .collect();
        SelectList::new(items, max_visible, SelectListTheme::default())
    }

    #[test]
    fn moves_with_wrap_around_and_confirms() {
        let kb = Keybindings::default();
        let mut l = list(3, 5);
        assert_eq!(
            l.handle_key(&Input::key(KeyCode::Up), &kb),
            SelectAction::Changed
        );
        assert_eq!(l.selected_index(), 2);
        l.handle_key(&Input::key(KeyCode::Down), &kb);
        assert_eq!(l.selected_index(), 0);
        l.handle_key(&Input::key(KeyCode::PageDown), &kb);
        assert_eq!(l.selected_index(), 2);
        l.handle_key(&Input::key(KeyCode::PageDown), &kb);
        assert_eq!(l.selected_index(), 0);
        assert_eq!(
            l.handle_key(&Input::key(KeyCode::Enter), &kb),
            SelectAction::Confirm("v0".into())
        );
        assert_eq!(
            l.handle_key(&Input::key(KeyCode::Esc), &kb),
            SelectAction::Cancel
        );
        assert_eq!(
            l.handle_key(&Input::key(KeyCode::F(5)), &kb),
            SelectAction::None
        );
    }

    #[test]
    fn typing_filters_case_insensitively() {
        let kb = Keybindings::default();
        let mut l = list(12, 5);
        for c in ['M', ' ', '1'] {
            l.handle_key(&Input::key(KeyCode::Char(c)), &kb);
        }
        assert_eq!(l.filter(), "M 1");
        assert_eq!(l.render(30), vec!["→ item 1", "  item 10", "  item 11"]);
        l.handle_key(&Input::key(KeyCode::Char('x')), &kb);
        assert_eq!(l.render(30), vec!["  No matching items"]);
        assert_eq!(
            l.handle_key(&Input::key(KeyCode::Enter), &kb),
            SelectAction::None
        );
        l.handle_key(&Input::key(KeyCode::Backspace), &kb);
        assert_eq!(l.selected_item().map(|i| i.value.as_str()), Some("v1"));
        assert!(l.handle_input(&Input::key(KeyCode::Down)));
        assert_eq!(l.take_action(), SelectAction::Changed);
        assert_eq!(l.take_action(), SelectAction::None);
    }

    #[test]
    fn scrolls_and_shows_position() {
        let mut l = list(10, 3);
        l.set_selected_index(5);
        assert_eq!(
            l.render(30),
            vec!["  item 4", "→ item 5", "  item 6", "  (6/10)"]
        );
        l.set_selected_index(9);
        assert_eq!(
            l.render(30),
            vec!["  item 7", "  item 8", "→ item 9", "  (10/10)"]
        );
    }

    #[test]
    fn aligns_descriptions_in_a_second_column() {
        let items = vec![
            SelectItem::new("a", "alpha").with_description("first\nletter"),
            SelectItem::new("b", "beta").with_description("second"),
        ];
        let theme = SelectListTheme {
            selected: Style::fg(Color::Ansi256(6)),
            ..SelectListTheme::default()
        };
        let mut l = SelectList::new(items, 5, theme).with_column_width(8, 8);
        let lines = l.render(60);
        assert_eq!(lines[0], "\x1b[38;5;6m→ alpha   first letter\x1b[39m");
        assert_eq!(lines[1], "  beta    second");
        // Too narrow for descriptions: labels only.
        assert_eq!(l.render(30)[1], "  beta");
    }
}
