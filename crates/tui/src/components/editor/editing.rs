//! Buffer edits: typing, inserting text, new lines, deleting characters, undo and
//! submitting.

use super::autocomplete::in_symbol_context;
use super::layout::is_whitespace;
use super::{Editor, LastAction, State};

impl Editor {
    pub(super) fn undo(&mut self) {
        self.history_index = None;
        if let Some(snapshot) = self.undo_stack.pop() {
            self.state = snapshot;
            self.last_action = None;
            self.preferred_visual_col = None;
            self.snapped_from_cursor_col = None;
        }
    }

    pub(super) fn set_text_internal(&mut self, text: &str) {
        self.state.lines = text.split('\n').map(str::to_string).collect();
        self.state.cursor_line = self.state.lines.len() - 1;
        let end = self.current_line().len();
        self.set_cursor_col(end);
        self.scroll_offset = 0;
    }

    pub(super) fn insert_text_internal(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        let normalized = normalize_text(text);
        let inserted: Vec<&str> = normalized.split('\n').collect();
        let line = self.current_line().to_string();
        let col = self.state.cursor_col.min(line.len());
        let (before, after) = line.split_at(col);
        if inserted.len() == 1 {
            *self.current_line_mut() = format!("{before}{normalized}{after}");
            self.set_cursor_col(col + normalized.len());
            return;
        }
        let last = inserted.last().copied().unwrap_or("");
        let mut new_lines: Vec<String> = Vec::with_capacity(inserted.len());
        new_lines.push(format!("{before}{}", inserted[0]));
        new_lines.extend(
            inserted[1..inserted.len() - 1]
                .iter()
                .map(|s| s.to_string()),
        );
        new_lines.push(format!("{last}{after}"));
        let at = self.state.cursor_line;
        self.state.lines.splice(at..=at, new_lines);
        self.state.cursor_line += inserted.len() - 1;
        self.set_cursor_col(last.len());
    }

    pub(super) fn insert_character(&mut self, ch: &str) {
        self.history_index = None;
        // Fish-style coalescing: a run of word characters is one undo step; each
        // whitespace starts a new one.
        if is_whitespace(ch) || self.last_action != Some(LastAction::TypeWord) {
            self.push_undo();
        }
        self.last_action = Some(LastAction::TypeWord);
        let col = self.state.cursor_col;
        self.current_line_mut().insert_str(col, ch);
        self.set_cursor_col(col + ch.len());

        if self.autocomplete.is_some() {
            self.update_autocomplete();
            return;
        }
        let before = self.before_cursor().to_string();
        if ch == "/" && self.is_at_start_of_message() {
            self.try_trigger_autocomplete();
        } else if ch.chars().count() == 1
            && ch.chars().all(|c| self.trigger_characters.contains(&c))
        {
            let mut chars = before.chars().rev();
            chars.next();
            match chars.next() {
                None | Some(' ') | Some('\t') => self.try_trigger_autocomplete(),
                _ => {}
            }
        } else if ch
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_'))
            && (self.is_in_slash_command_context(&before)
                || in_symbol_context(&before, &self.trigger_characters))
        {
            self.try_trigger_autocomplete();
        }
    }

    pub(super) fn add_new_line(&mut self) {
        self.cancel_autocomplete();
        self.history_index = None;
        self.last_action = None;
        self.push_undo();
        let col = self.state.cursor_col;
        let rest = self.current_line_mut().split_off(col);
        self.state.lines.insert(self.state.cursor_line + 1, rest);
        self.state.cursor_line += 1;
        self.set_cursor_col(0);
    }

    pub(super) fn submit_value(&mut self) {
        self.cancel_autocomplete();
        let result = self.expanded_text().trim().to_string();
        self.state = State {
            lines: vec![String::new()],
            cursor_line: 0,
            cursor_col: 0,
        };
        self.pastes.clear();
        self.paste_counter = 0;
        self.history_index = None;
        self.scroll_offset = 0;
        self.undo_stack.clear();
        self.last_action = None;
        self.preferred_visual_col = None;
        self.snapped_from_cursor_col = None;
        self.just_submitted = Some(result);
    }

    pub(super) fn handle_backspace(&mut self) {
        self.history_index = None;
        self.last_action = None;
        let col = self.state.cursor_col;
        if col > 0 {
            self.push_undo();
            let len = {
                let before = self.before_cursor();
                self.segments(before).last().map_or(1, |s| s.text.len())
            };
            self.current_line_mut().replace_range(col - len..col, "");
            self.set_cursor_col(col - len);
        } else if self.state.cursor_line > 0 {
            self.push_undo();
            self.merge_with_previous_line();
        }
        self.retrigger_autocomplete();
    }

    pub(super) fn handle_forward_delete(&mut self) {
        self.history_index = None;
        self.last_action = None;
        let col = self.state.cursor_col;
        let line_len = self.current_line().len();
        if col < line_len {
            self.push_undo();
            let len = {
                let after = &self.current_line()[col..];
                self.segments(after).first().map_or(1, |s| s.text.len())
            };
            self.current_line_mut().replace_range(col..col + len, "");
        } else if self.state.cursor_line + 1 < self.state.lines.len() {
            self.push_undo();
            self.merge_with_next_line();
        }
        self.retrigger_autocomplete();
    }

    pub(super) fn merge_with_previous_line(&mut self) {
        let current = self.state.lines.remove(self.state.cursor_line);
        self.state.cursor_line -= 1;
        let prev = self.current_line_mut();
        let prev_len = prev.len();
        prev.push_str(&current);
        self.set_cursor_col(prev_len);
    }

    pub(super) fn merge_with_next_line(&mut self) {
        let next = self.state.lines.remove(self.state.cursor_line + 1);
        self.current_line_mut().push_str(&next);
    }
}

/// Line endings to `\n`, tabs to four spaces.
pub(super) fn normalize_text(text: &str) -> String {
    text.replace("\r\n", "\n")
        .replace('\r', "\n")
        .replace('\t', "    ")
}
