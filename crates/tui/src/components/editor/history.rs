//! Prompt history: submitted prompts browsed with up/down on the first or last line.

use super::Editor;

/// Most prompts kept in history.
const HISTORY_LIMIT: usize = 100;

impl Editor {
    /// Remember a submitted prompt for up/down history (trimmed, no consecutive
    /// duplicates, newest first, at most 100).
    pub fn add_to_history(&mut self, text: &str) {
        let trimmed = text.trim();
        if trimmed.is_empty() || self.history.first().is_some_and(|h| h == trimmed) {
            return;
        }
        self.history.insert(0, trimmed.to_string());
        self.history.truncate(HISTORY_LIMIT);
    }

    pub(super) fn navigate_history(&mut self, direction: isize) {
        self.last_action = None;
        if self.history.is_empty() {
            return;
        }
        let index = self.history_index.map_or(-1, |i| i as isize);
        let new_index = index - direction;
        if new_index < -1 || new_index >= self.history.len() as isize {
            return;
        }
        if self.history_index.is_none() && new_index >= 0 {
            self.push_undo();
        }
        if new_index < 0 {
            self.history_index = None;
            self.set_text_internal("");
        } else {
            let i = new_index as usize;
            self.history_index = Some(i);
            let text = self.history[i].clone();
            self.set_text_internal(&text);
        }
    }
}
