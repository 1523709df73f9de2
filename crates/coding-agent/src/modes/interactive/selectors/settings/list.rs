//! The settings list of pi-tui (`SettingsList`): a label column, each row's value, an
//! optional fuzzy search, the selected row's description and a key hint.

use pi_tui::Input;
use pi_tui::keybindings::Keybindings;
use pi_tui::width::{truncate_to_width, visible_width, wrap_text_with_ansi};

use crate::modes::interactive::extension_ui::line_input::LineInput;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// One row: a value cycled in place, or a submenu (`values` empty).
#[derive(Debug, Clone)]
pub struct SettingItem {
    pub id: &'static str,
    pub label: String,
    pub description: String,
    pub current: String,
    pub values: Vec<String>,
}

impl SettingItem {
    /// A row whose value cycles through `values`.
    pub fn cycle(
        id: &'static str,
        label: &str,
        description: &str,
        current: impl Into<String>,
        values: &[&str],
    ) -> Self {
        Self {
            id,
            label: label.to_owned(),
            description: description.to_owned(),
            current: current.into(),
            values: values.iter().map(|v| (*v).to_owned()).collect(),
        }
    }

    /// A row that opens a submenu.
    pub fn submenu(
        id: &'static str,
        label: &str,
        description: &str,
        current: impl Into<String>,
    ) -> Self {
        Self {
            id,
            label: label.to_owned(),
            description: description.to_owned(),
            current: current.into(),
            values: Vec::new(),
        }
    }
}

/// What a key did to the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListEvent {
    None,
    /// A row's value moved on to `value` (already shown).
    Changed(&'static str, String),
    /// A submenu row was activated.
    Open(&'static str),
    Cancel,
}

/// The list; `search` is `None` for lists without one.
pub struct SettingsList {
    items: Vec<SettingItem>,
    /// Indices into `items` passing the search.
    shown: Vec<usize>,
    selected: usize,
    max_visible: usize,
    search: Option<LineInput>,
}

impl SettingsList {
    pub fn new(items: Vec<SettingItem>, max_visible: usize, searchable: bool) -> Self {
        let shown = (0..items.len()).collect();
        Self {
            items,
            shown,
            selected: 0,
            max_visible: max_visible.max(1),
            search: searchable.then(|| {
                let mut input = LineInput::new();
                input.set_focused(true);
                input
            }),
        }
    }

    /// Shows `value` on row `id` (a submenu's result, or a change that was refused).
    pub fn set_value(&mut self, id: &str, value: impl Into<String>) {
        if let Some(item) = self.items.iter_mut().find(|i| i.id == id) {
            item.current = value.into();
        }
    }

    /// Selects row `id` among the shown rows.
    pub fn select(&mut self, id: &str) {
        if let Some(pos) = self.shown.iter().position(|&i| self.items[i].id == id) {
            self.selected = pos;
        }
    }

    /// The selected row.
    pub fn selected(&self) -> Option<&SettingItem> {
        self.shown.get(self.selected).map(|&i| &self.items[i])
    }

    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> ListEvent {
        let len = self.shown.len();
        if keys.matches(input, "tui.select.up") {
            if len > 0 {
                self.selected = if self.selected == 0 {
                    len - 1
                } else {
                    self.selected - 1
                };
            }
        } else if keys.matches(input, "tui.select.down") {
            if len > 0 {
                self.selected = if self.selected + 1 >= len {
                    0
                } else {
                    self.selected + 1
                };
            }
        } else if keys.matches(input, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(self.max_visible);
        } else if keys.matches(input, "tui.select.pageDown") {
            if len > 0 {
                self.selected = (self.selected + self.max_visible).min(len - 1);
            }
        } else if keys.matches(input, "tui.select.confirm") || self.space_activates(input) {
            return self.activate();
        } else if keys.matches(input, "tui.select.cancel") {
            return ListEvent::Cancel;
        } else if let Some(search) = self.search.as_mut() {
            let before = search.value().to_owned();
            search.handle(input);
            if search.value() != before {
                let query = search.value().to_owned();
                self.filter(&query);
            }
        }
        ListEvent::None
    }

    /// A wheel notch moves the selection one row, stopping at the ends (pi 1.6's mouse in
    /// a settings list); true when it moved.
    pub fn wheel(&mut self, direction: i8) -> bool {
        let before = self.selected;
        self.selected = if direction < 0 {
            self.selected.saturating_sub(1)
        } else {
            (self.selected + 1).min(self.shown.len().saturating_sub(1))
        };
        self.selected != before
    }

    /// A click on line `row` of the list as drawn: the setting there is selected and
    /// activated, as Enter would.
    pub fn click(&mut self, row: usize) -> ListEvent {
        let offset = if self.search.is_some() { 2 } else { 0 };
        let (start, end) = self.visible_range();
        let Some(pos) = row.checked_sub(offset).map(|r| start + r) else {
            return ListEvent::None;
        };
        if pos >= end {
            return ListEvent::None;
        }
        self.selected = pos;
        self.activate()
    }

    /// Space activates a row unless it is typed into a search.
    fn space_activates(&self, input: &Input) -> bool {
        let is_space = matches!(input, Input::Key(k) if k.code == pi_tui::KeyCode::Char(' ') && k.modifiers.is_empty());
        is_space && self.search.as_ref().is_none_or(|s| s.value().is_empty())
    }

    fn activate(&mut self) -> ListEvent {
        let Some(&index) = self.shown.get(self.selected) else {
            return ListEvent::None;
        };
        let item = &mut self.items[index];
        if item.values.is_empty() {
            return ListEvent::Open(item.id);
        }
        let next = item
            .values
            .iter()
            .position(|v| *v == item.current)
            .map_or(0, |i| (i + 1) % item.values.len());
        item.current = item.values[next].clone();
        ListEvent::Changed(item.id, item.current.clone())
    }

    fn filter(&mut self, query: &str) {
        let keyed: Vec<(usize, &str)> = self
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| (i, item.label.as_str()))
            .collect();
        self.shown = pi_tui::fuzzy::fuzzy_filter(keyed, query, |(_, label)| label)
            .into_iter()
            .map(|(i, _)| i)
            .collect();
        self.selected = 0;
    }

    fn visible_range(&self) -> (usize, usize) {
        let len = self.shown.len();
        let start = self
            .selected
            .saturating_sub(self.max_visible / 2)
            .min(len.saturating_sub(self.max_visible));
        (start, (start + self.max_visible).min(len))
    }

    pub fn render(&self, theme: &Theme, width: usize) -> Vec<String> {
        let dim = theme.fg(ThemeColor::Dim);
        let accent = theme.fg(ThemeColor::Accent);
        let muted = theme.fg(ThemeColor::Muted);
        let mut lines = Vec::new();
        if let Some(search) = &self.search {
            lines.extend(search.render(width));
            lines.push(String::new());
        }
        if self.items.is_empty() {
            lines.push(dim.paint("  No settings available"));
            if self.search.is_some() {
                self.hint(&mut lines, theme, width);
            }
            return lines;
        }
        if self.shown.is_empty() {
            lines.push(truncate_to_width(
                &dim.paint("  No matching settings"),
                width,
                "…",
                false,
            ));
            self.hint(&mut lines, theme, width);
            return lines;
        }
        let (start, end) = self.visible_range();
        let label_width = self
            .items
            .iter()
            .map(|i| visible_width(&i.label))
            .max()
            .unwrap_or(0)
            .min(36);
        for pos in start..end {
            let item = &self.items[self.shown[pos]];
            let selected = pos == self.selected;
            let prefix = if selected {
                accent.paint("→ ")
            } else {
                "  ".to_owned()
            };
            let padded = format!(
                "{}{}",
                item.label,
                " ".repeat(label_width.saturating_sub(visible_width(&item.label)))
            );
            let label = if selected {
                accent.paint(&padded)
            } else {
                padded
            };
            let value_width = width.saturating_sub(2 + label_width + 2 + 2);
            let value = truncate_to_width(&item.current, value_width, "", false);
            let value = if selected {
                accent.paint(&value)
            } else {
                muted.paint(&value)
            };
            lines.push(truncate_to_width(
                &format!("{prefix}{label}  {value}"),
                width,
                "…",
                false,
            ));
        }
        if start > 0 || end < self.shown.len() {
            let counter = format!("  ({}/{})", self.selected + 1, self.shown.len());
            lines.push(dim.paint(&truncate_to_width(
                &counter,
                width.saturating_sub(2),
                "",
                false,
            )));
        }
        if let Some(item) = self.selected().filter(|i| !i.description.is_empty()) {
            lines.push(String::new());
            for line in wrap_text_with_ansi(&item.description, width.saturating_sub(4).max(1)) {
                lines.push(dim.paint(&format!("  {line}")));
            }
        }
        self.hint(&mut lines, theme, width);
        lines
    }

    fn hint(&self, lines: &mut Vec<String>, theme: &Theme, width: usize) {
        let text = if self.search.is_some() {
            "  Type to search · Enter/Space to change · Esc to cancel"
        } else {
            "  Enter/Space to change · Esc to cancel"
        };
        lines.push(String::new());
        lines.push(truncate_to_width(
            &theme.fg(ThemeColor::Dim).paint(text),
            width,
            "…",
            false,
        ));
    }
}
