//! `/settings` submenus as pi 1.6 draws them: a titled pick list (`SelectSubmenu`), with
//! an optional fuzzy search.

use pi_tui::Input;
use pi_tui::components::select_list::{SelectAction, SelectItem, SelectList};
use pi_tui::keybindings::Keybindings;

use crate::modes::interactive::chat::select_theme;
use crate::modes::interactive::extension_ui::line_input::LineInput;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// Column bounds of a submenu's label column (pi 1.6: 12 to 32).
pub const SUBMENU_COLUMNS: (usize, usize) = (12, 32);

/// What a key did to a pick list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickEvent {
    None,
    /// The selection moved onto this value.
    Moved(String),
    Selected(String),
    Cancel,
}

/// A title, a description, an optional search line, the list and a hint.
pub struct SelectSubmenu {
    title: String,
    description: String,
    all: Vec<SelectItem>,
    list: SelectList,
    columns: (usize, usize),
    search: Option<LineInput>,
}

impl SelectSubmenu {
    pub fn new(
        title: impl Into<String>,
        description: impl Into<String>,
        items: Vec<SelectItem>,
        preselect: &str,
        searchable: bool,
        columns: (usize, usize),
        theme: &Theme,
    ) -> Self {
        let list = build_list(items.clone(), preselect, columns, theme);
        Self {
            title: title.into(),
            description: description.into(),
            all: items,
            list,
            columns,
            search: searchable.then(|| {
                let mut input = LineInput::new();
                input.set_focused(true);
                input
            }),
        }
    }

    /// The value under the cursor.
    pub fn selected(&self) -> Option<&str> {
        self.list.selected_item().map(|i| i.value.as_str())
    }

    pub fn handle(&mut self, input: &Input, keys: &Keybindings, theme: &Theme) -> PickEvent {
        let navigation = [
            "tui.select.up",
            "tui.select.down",
            "tui.select.pageUp",
            "tui.select.pageDown",
            "tui.select.confirm",
            "tui.select.cancel",
        ];
        if navigation.iter().any(|id| keys.matches(input, id)) {
            return match self.list.handle_key(input, keys) {
                SelectAction::Confirm(value) => PickEvent::Selected(value),
                SelectAction::Cancel => PickEvent::Cancel,
                SelectAction::Changed => self
                    .selected()
                    .map_or(PickEvent::None, |v| PickEvent::Moved(v.to_owned())),
                SelectAction::None => PickEvent::None,
            };
        }
        let Some(search) = self.search.as_mut() else {
            return PickEvent::None;
        };
        let before = search.value().to_owned();
        search.handle(input);
        let query = search.value().to_owned();
        if query != before {
            let filtered = if query.is_empty() {
                self.all.clone()
            } else {
                let keys: Vec<String> = self
                    .all
                    .iter()
                    .map(|item| {
                        format!(
                            "{} {}",
                            item.label,
                            item.description.as_deref().unwrap_or("")
                        )
                    })
                    .collect();
                let keyed: Vec<(usize, &str)> =
                    keys.iter().map(String::as_str).enumerate().collect();
                pi_tui::fuzzy::fuzzy_filter(keyed, &query, |(_, key)| key)
                    .into_iter()
                    .map(|(i, _)| self.all[i].clone())
                    .collect()
            };
            self.list = build_list(filtered, "", self.columns, theme);
        }
        PickEvent::None
    }

    pub fn render(&mut self, theme: &Theme, width: usize) -> Vec<String> {
        use pi_tui::Component;
        let mut lines = vec![theme.fg(ThemeColor::Accent).bold().paint(&self.title)];
        if !self.description.is_empty() {
            lines.push(String::new());
            lines.push(theme.fg(ThemeColor::Muted).paint(&self.description));
        }
        if let Some(search) = &self.search {
            lines.push(String::new());
            lines.extend(search.render(width));
        }
        lines.push(String::new());
        lines.extend(self.list.render(width));
        lines.push(String::new());
        let hint = if self.search.is_some() {
            "  Type to filter · Enter to select · Esc to go back"
        } else {
            "  Enter to select · Esc to go back"
        };
        lines.push(theme.fg(ThemeColor::Dim).paint(hint));
        lines
    }
}

fn build_list(
    items: Vec<SelectItem>,
    preselect: &str,
    columns: (usize, usize),
    theme: &Theme,
) -> SelectList {
    let index = items.iter().position(|i| i.value == preselect);
    let visible = items.len().clamp(1, 10);
    let mut list = SelectList::new(items, visible, select_theme(theme))
        .with_column_width(columns.0, columns.1);
    if let Some(index) = index {
        list.set_selected_index(index);
    }
    list
}
