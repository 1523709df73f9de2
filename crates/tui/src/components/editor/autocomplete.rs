//! The suggestion list: when it opens (slash commands, `@`/`#` symbols, Tab), how it
//! follows typing, and applying the chosen completion.

use super::Editor;
use crate::autocomplete::{Suggestion, Suggestions};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum AutocompleteMode {
    Regular,
    Force,
}

pub(super) struct AutocompleteList {
    pub(super) mode: AutocompleteMode,
    pub(super) prefix: String,
    pub(super) items: Vec<Suggestion>,
    pub(super) selected: usize,
}

impl Editor {
    pub(super) fn is_at_start_of_message(&self) -> bool {
        if self.state.cursor_line != 0 {
            return false;
        }
        let before = self.before_cursor().trim();
        before.is_empty() || before == "/"
    }

    pub(super) fn is_in_slash_command_context(&self, before: &str) -> bool {
        self.state.cursor_line == 0 && before.trim_start().starts_with('/')
    }

    pub(super) fn retrigger_autocomplete(&mut self) {
        if self.autocomplete.is_some() {
            self.update_autocomplete();
            return;
        }
        let before = self.before_cursor().to_string();
        if self.is_in_slash_command_context(&before)
            || in_symbol_context(&before, &self.trigger_characters)
        {
            self.try_trigger_autocomplete();
        }
    }

    pub(super) fn try_trigger_autocomplete(&mut self) {
        self.request_autocomplete(false, false);
    }

    pub(super) fn update_autocomplete(&mut self) {
        if let Some(list) = &self.autocomplete {
            let force = list.mode == AutocompleteMode::Force;
            self.request_autocomplete(force, false);
        }
    }

    pub(super) fn handle_tab_completion(&mut self) {
        if self.provider.is_none() {
            return;
        }
        let before = self.before_cursor().to_string();
        if self.is_in_slash_command_context(&before) && !before.trim_start().contains(' ') {
            self.request_autocomplete(false, true);
        } else {
            self.request_autocomplete(true, true);
        }
    }

    fn request_autocomplete(&mut self, force: bool, explicit_tab: bool) {
        let Some(provider) = self.provider.as_ref() else {
            return;
        };
        let (lines, line, col) = (
            &self.state.lines,
            self.state.cursor_line,
            self.state.cursor_col,
        );
        if force && !provider.should_trigger_file_completion(lines, line, col) {
            return;
        }
        let suggestions = provider
            .suggestions(lines, line, col, force)
            .filter(|s| !s.items.is_empty());
        let Some(Suggestions { items, prefix }) = suggestions else {
            self.cancel_autocomplete();
            return;
        };
        if force && explicit_tab && items.len() == 1 {
            self.push_undo();
            self.last_action = None;
            self.apply_completion(&items[0], &prefix);
            return;
        }
        let selected = best_match_index(&items, &prefix).unwrap_or(0);
        self.autocomplete = Some(AutocompleteList {
            mode: if force {
                AutocompleteMode::Force
            } else {
                AutocompleteMode::Regular
            },
            prefix,
            items,
            selected,
        });
    }

    fn apply_completion(&mut self, item: &Suggestion, prefix: &str) {
        let Some(provider) = self.provider.as_ref() else {
            return;
        };
        let (lines, line, col) = provider.apply(
            &self.state.lines,
            self.state.cursor_line,
            self.state.cursor_col,
            item,
            prefix,
        );
        self.state.lines = if lines.is_empty() {
            vec![String::new()]
        } else {
            lines
        };
        self.state.cursor_line = line.min(self.state.lines.len() - 1);
        let text = self.current_line();
        let mut col = col.min(text.len());
        while !text.is_char_boundary(col) {
            col -= 1;
        }
        self.set_cursor_col(col);
    }

    pub(super) fn apply_selected_completion(&mut self) {
        let Some(list) = self.autocomplete.take() else {
            return;
        };
        if let Some(item) = list.items.get(list.selected) {
            self.push_undo();
            self.last_action = None;
            self.apply_completion(item, &list.prefix);
        }
        self.cancel_autocomplete();
    }

    pub(super) fn cancel_autocomplete(&mut self) {
        self.autocomplete = None;
    }
}

/// Exact value match first, else the first value starting with `prefix`.
fn best_match_index(items: &[Suggestion], prefix: &str) -> Option<usize> {
    if prefix.is_empty() {
        return None;
    }
    items
        .iter()
        .position(|i| i.value == prefix)
        .or_else(|| items.iter().position(|i| i.value.starts_with(prefix)))
}

/// After whitespace (or at the start): a trigger character (`@`, `#`, …) and the token
/// up to the cursor.
pub(super) fn in_symbol_context(before: &str, triggers: &[char]) -> bool {
    let token = before.rsplit(char::is_whitespace).next().unwrap_or("");
    token.starts_with(triggers)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbol_context_needs_a_token_start() {
        let triggers = ['@', '#'];
        assert!(in_symbol_context("see @src", &triggers));
        assert!(in_symbol_context("@", &triggers));
        assert!(!in_symbol_context("mail a@b", &triggers));
        assert!(!in_symbol_context("cost $5", &triggers));
        assert!(in_symbol_context("cost $5", &['@', '#', '$']));
    }
}
