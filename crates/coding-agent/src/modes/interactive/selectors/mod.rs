//! Pickers that replace the editor: models, sessions, the session tree, hotkeys.
//!
//! Each picker is a plain struct drawn with the theme; `handle(input, keys)` moves the
//! selection, edits the search and reports a [`SelectorOutcome`].

pub mod fork;
pub mod hotkeys;
pub mod llama;
pub mod model;
pub mod scoped_models;
pub mod session;
pub mod settings;
pub mod thinking;
pub mod tree;
pub mod trust;

use pi_tui::keybindings::Keybindings;
use pi_tui::width::truncate_to_width;
use pi_tui::{Input, KeyCode, KeyModifiers};

use super::theme::{Theme, ThemeColor};

/// What a key press did to a picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SelectorOutcome<T> {
    /// Still open (the selection or search may have changed).
    Pending,
    /// Closed without a choice.
    Cancelled,
    /// Closed with this choice.
    Done(T),
}

impl<T> SelectorOutcome<T> {
    /// True while the picker stays open.
    pub fn is_pending(&self) -> bool {
        matches!(self, SelectorOutcome::Pending)
    }
}

/// The keybindings pickers use when driven through `Component::handle_input`.
pub(crate) fn default_keys() -> Keybindings {
    Keybindings::new(super::keymap::definitions(), &serde_json::Map::new())
}

/// Implements `pi_tui::Component` for a picker with `render_lines` and `handle`; a
/// finished outcome is kept for `take_outcome`.
macro_rules! picker_component {
    ($ty:ty) => {
        impl pi_tui::Component for $ty {
            fn render(&mut self, width: usize) -> Vec<String> {
                self.render_lines(width)
            }

            fn handle_input(&mut self, input: &pi_tui::Input) -> bool {
                let outcome = self.handle(
                    input,
                    &$crate::modes::interactive::selectors::default_keys(),
                );
                if !outcome.is_pending() {
                    self.outcome = Some(outcome);
                }
                true
            }
        }
    };
}
pub(crate) use picker_component;

/// `line` cut to `width` columns with an ellipsis.
pub(crate) fn fit(line: &str, width: usize) -> String {
    truncate_to_width(line, width, "…", false)
}

/// A full-width border line.
pub(crate) fn border(theme: &Theme, width: usize) -> String {
    theme.fg(ThemeColor::Border).paint(&"─".repeat(width))
}

/// A bold title line, indented by one column.
pub(crate) fn title(theme: &Theme, text: &str, width: usize) -> String {
    fit(
        &format!(" {}", theme.fg(ThemeColor::Accent).bold().paint(text)),
        width,
    )
}

/// `key desc • key desc …`, keys dim, descriptions muted, cut to `width`.
pub(crate) fn hint_line(theme: &Theme, hints: &[(&str, &str)], width: usize) -> String {
    let dim = theme.fg(ThemeColor::Dim);
    let muted = theme.fg(ThemeColor::Muted);
    let parts: Vec<String> = hints
        .iter()
        .map(|(key, desc)| format!("{} {}", dim.paint(key), muted.paint(desc)))
        .collect();
    fit(&format!(" {}", parts.join(&muted.paint(" • "))), width)
}

/// The first visible row of a `max_visible` window keeping `selected` centred.
pub(crate) fn scroll_start(selected: usize, len: usize, max_visible: usize) -> usize {
    let half = max_visible / 2;
    selected
        .saturating_sub(half)
        .min(len.saturating_sub(max_visible))
}

/// The previous index, wrapping from the first to the last.
pub(crate) fn wrap_prev(index: usize, len: usize) -> usize {
    if len == 0 {
        0
    } else if index == 0 || index >= len {
        len - 1
    } else {
        index - 1
    }
}

/// The next index, wrapping from the last to the first.
pub(crate) fn wrap_next(index: usize, len: usize) -> usize {
    if len == 0 || index + 1 >= len {
        0
    } else {
        index + 1
    }
}

/// Whether `input` triggers action `id`; when the keybindings do not define `id`, its
/// default keys (`defaults`) are used.
pub(crate) fn action(keys: &Keybindings, input: &Input, id: &str, defaults: &[&str]) -> bool {
    if keys.keys(id).is_empty() {
        input.id().is_some_and(|k| defaults.contains(&k.as_str()))
    } else {
        keys.matches(input, id)
    }
}

/// Single-line search text typed into a picker.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SearchBox {
    query: String,
}

impl SearchBox {
    pub(crate) fn new(initial: &str) -> Self {
        Self {
            query: initial.to_owned(),
        }
    }

    pub(crate) fn query(&self) -> &str {
        &self.query
    }

    pub(crate) fn clear(&mut self) {
        self.query.clear();
    }

    /// Applies typed characters, paste and backspace; true when the text changed.
    pub(crate) fn edit(&mut self, input: &Input, keys: &Keybindings) -> bool {
        match input {
            Input::Paste(text) => {
                let clean: String = text
                    .chars()
                    .map(|c| if c.is_control() { ' ' } else { c })
                    .collect();
                self.query.push_str(&clean);
                !clean.is_empty()
            }
            Input::Key(key) => {
                if action(keys, input, "tui.editor.deleteCharBackward", &["backspace"])
                    || (key.code == KeyCode::Backspace && key.modifiers.is_empty())
                {
                    return self.query.pop().is_some();
                }
                if action(keys, input, "tui.editor.deleteWordBackward", &["ctrl+w"]) {
                    let trimmed = self.query.trim_end().len();
                    let cut = self.query[..trimmed]
                        .rfind(char::is_whitespace)
                        .map_or(0, |i| i + 1);
                    let changed = cut < self.query.len();
                    self.query.truncate(cut);
                    return changed;
                }
                match key.code {
                    KeyCode::Char(c)
                        if (key.modifiers - KeyModifiers::SHIFT).is_empty() && !c.is_control() =>
                    {
                        self.query.push(c);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    /// `  label query▌` with a block cursor.
    pub(crate) fn render(&self, theme: &Theme, label: &str, width: usize) -> String {
        let cursor = theme.fg(ThemeColor::Accent).paint("▏");
        fit(
            &format!(
                " {} {}{cursor}",
                theme.fg(ThemeColor::Muted).paint(label),
                self.query
            ),
            width,
        )
    }
}

/// Text flattened to one line: control characters become spaces, ends trimmed.
pub(crate) fn one_line(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        out.push(if c.is_control() { ' ' } else { c });
    }
    out.trim().to_owned()
}

#[cfg(test)]
pub(crate) mod test_support {
    use pi_tui::keybindings::Keybindings;
    use pi_tui::width::visible_width;
    use pi_tui::{Input, KeyCode, KeyModifiers};

    use crate::modes::interactive::theme::Theme;

    pub(crate) fn keys() -> Keybindings {
        super::default_keys()
    }

    pub(crate) fn theme() -> Theme {
        Theme::dark(pi_tui::ColorMode::TrueColor)
    }

    pub(crate) fn key(code: KeyCode) -> Input {
        Input::key(code)
    }

    pub(crate) fn ctrl(c: char) -> Input {
        Input::key_with(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    pub(crate) fn typed(c: char) -> Input {
        Input::key(KeyCode::Char(c))
    }

    /// Every line fits `width` columns.
    pub(crate) fn assert_fits(lines: &[String], width: usize) {
        for line in lines {
            assert!(
                visible_width(line) <= width,
                "line wider than {width}: {:?} ({})",
                line,
                visible_width(line)
            );
        }
    }

    /// The lines without ANSI escapes.
    pub(crate) fn plain(lines: &[String]) -> Vec<String> {
        lines.iter().map(|l| strip(l)).collect()
    }

    pub(crate) fn strip(line: &str) -> String {
        let mut out = String::new();
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for d in chars.by_ref() {
                        if d.is_ascii_alphabetic() {
                            break;
                        }
                    }
                } else {
                    for d in chars.by_ref() {
                        if d == '\x07' {
                            break;
                        }
                    }
                }
                continue;
            }
            out.push(c);
        }
        out
    }
}
