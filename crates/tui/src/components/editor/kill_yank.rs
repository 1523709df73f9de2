//! Emacs-style kills (to line start/end, by word) into the kill ring, and yank /
//! yank-pop back out of it.

use super::{Editor, LastAction};

impl Editor {
    fn kill(&mut self, text: &str, prepend: bool, accumulate: bool) {
        self.kill_ring.push(text, prepend, accumulate);
        self.last_action = Some(LastAction::Kill);
    }

    pub(super) fn delete_to_line_start(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col > 0 {
            self.push_undo();
            let deleted = self.before_cursor().to_string();
            self.kill(&deleted, true, accumulate);
            self.current_line_mut().replace_range(..col, "");
            self.set_cursor_col(0);
        } else if self.state.cursor_line > 0 {
            self.push_undo();
            self.kill("\n", true, accumulate);
            self.merge_with_previous_line();
        }
    }

    pub(super) fn delete_to_line_end(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col < self.current_line().len() {
            self.push_undo();
            let deleted = self.current_line()[col..].to_string();
            self.kill(&deleted, false, accumulate);
            self.current_line_mut().truncate(col);
        } else if self.state.cursor_line + 1 < self.state.lines.len() {
            self.push_undo();
            self.kill("\n", false, accumulate);
            self.merge_with_next_line();
        }
    }

    pub(super) fn delete_word_backward(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col == 0 {
            if self.state.cursor_line > 0 {
                self.push_undo();
                self.kill("\n", true, accumulate);
                self.merge_with_previous_line();
            }
            return;
        }
        self.push_undo();
        self.move_word_backward();
        let from = self.state.cursor_col;
        let deleted = self.current_line()[from..col].to_string();
        self.kill(&deleted, true, accumulate);
        self.current_line_mut().replace_range(from..col, "");
        self.set_cursor_col(from);
    }

    pub(super) fn delete_word_forward(&mut self) {
        self.history_index = None;
        let accumulate = self.last_action == Some(LastAction::Kill);
        let col = self.state.cursor_col;
        if col >= self.current_line().len() {
            if self.state.cursor_line + 1 < self.state.lines.len() {
                self.push_undo();
                self.kill("\n", false, accumulate);
                self.merge_with_next_line();
            }
            return;
        }
        self.push_undo();
        self.move_word_forward();
        let to = self.state.cursor_col;
        self.set_cursor_col(col);
        let deleted = self.current_line()[col..to].to_string();
        self.kill(&deleted, false, accumulate);
        self.current_line_mut().replace_range(col..to, "");
    }

    pub(super) fn yank(&mut self) {
        let Some(text) = self.kill_ring.peek().map(str::to_string) else {
            return;
        };
        self.push_undo();
        self.insert_yanked_text(&text);
        self.last_action = Some(LastAction::Yank);
    }

    pub(super) fn yank_pop(&mut self) {
        if self.last_action != Some(LastAction::Yank) || self.kill_ring.len() <= 1 {
            return;
        }
        self.push_undo();
        self.delete_yanked_text();
        self.kill_ring.rotate();
        if let Some(text) = self.kill_ring.peek().map(str::to_string) {
            self.insert_yanked_text(&text);
        }
        self.last_action = Some(LastAction::Yank);
    }

    fn insert_yanked_text(&mut self, text: &str) {
        self.history_index = None;
        let parts: Vec<&str> = text.split('\n').collect();
        let line = self.current_line().to_string();
        let col = self.state.cursor_col.min(line.len());
        let (before, after) = line.split_at(col);
        if parts.len() == 1 {
            *self.current_line_mut() = format!("{before}{text}{after}");
            self.set_cursor_col(col + text.len());
            return;
        }
        let last = parts.last().copied().unwrap_or("");
        let mut new_lines = vec![format!("{before}{}", parts[0])];
        new_lines.extend(parts[1..parts.len() - 1].iter().map(|s| s.to_string()));
        new_lines.push(format!("{last}{after}"));
        let at = self.state.cursor_line;
        self.state.lines.splice(at..=at, new_lines);
        self.state.cursor_line += parts.len() - 1;
        self.set_cursor_col(last.len());
    }

    fn delete_yanked_text(&mut self) {
        let Some(yanked) = self.kill_ring.peek().map(str::to_string) else {
            return;
        };
        let parts: Vec<&str> = yanked.split('\n').collect();
        let col = self.state.cursor_col;
        if parts.len() == 1 {
            let start = col.saturating_sub(yanked.len());
            self.current_line_mut().replace_range(start..col, "");
            self.set_cursor_col(start);
            return;
        }
        let Some(start_line) = self.state.cursor_line.checked_sub(parts.len() - 1) else {
            return;
        };
        let first_len = self.state.lines[start_line].len();
        let start_col = first_len.saturating_sub(parts[0].len());
        let after = self.current_line()[col..].to_string();
        let merged = format!("{}{after}", &self.state.lines[start_line][..start_col]);
        self.state
            .lines
            .splice(start_line..=self.state.cursor_line, [merged]);
        self.state.cursor_line = start_line;
        self.set_cursor_col(start_col);
    }
}
