//! Cursor motions within the logical lines: line start/end, word left/right (paste
//! markers count as one word) and jump-to-character.

use super::layout::{is_punctuation, is_whitespace};
use super::{Editor, Jump};

impl Editor {
    pub(super) fn jump_to_char(&mut self, c: char, direction: Jump) {
        self.last_action = None;
        let cur_line = self.state.cursor_line;
        let cur_col = self.state.cursor_col;
        let found = match direction {
            Jump::Forward => (cur_line..self.state.lines.len()).find_map(|i| {
                let line = &self.state.lines[i];
                let from = if i == cur_line {
                    line[cur_col..]
                        .chars()
                        .next()
                        .map_or(line.len(), |ch| cur_col + ch.len_utf8())
                } else {
                    0
                };
                line.get(from..)
                    .and_then(|rest| rest.find(c))
                    .map(|pos| (i, from + pos))
            }),
            Jump::Backward => (0..=cur_line).rev().find_map(|i| {
                let line = &self.state.lines[i];
                let hay = if i == cur_line {
                    &line[..cur_col]
                } else {
                    line.as_str()
                };
                hay.rfind(c).map(|pos| (i, pos))
            }),
        };
        if let Some((line, col)) = found {
            self.state.cursor_line = line;
            self.set_cursor_col(col);
        }
    }

    pub(super) fn move_to_line_start(&mut self) {
        self.last_action = None;
        self.set_cursor_col(0);
    }

    pub(super) fn move_to_line_end(&mut self) {
        self.last_action = None;
        let end = self.current_line().len();
        self.set_cursor_col(end);
    }

    pub(super) fn move_word_backward(&mut self) {
        self.last_action = None;
        let col = self.state.cursor_col;
        if col == 0 {
            if self.state.cursor_line > 0 {
                self.state.cursor_line -= 1;
                let end = self.current_line().len();
                self.set_cursor_col(end);
            }
            return;
        }
        let new_col = {
            let before = self.before_cursor();
            let mut segs = self.segments(before);
            let mut new_col = col;
            while let Some(s) = segs.last().filter(|s| !s.marker && is_whitespace(s.text)) {
                new_col -= s.text.len();
                segs.pop();
            }
            if let Some(last) = segs.last().copied() {
                if last.marker {
                    new_col -= last.text.len();
                } else if is_punctuation(last.text) {
                    while let Some(s) = segs.last().filter(|s| !s.marker && is_punctuation(s.text))
                    {
                        new_col -= s.text.len();
                        segs.pop();
                    }
                } else {
                    while let Some(s) = segs
                        .last()
                        .filter(|s| !s.marker && !is_whitespace(s.text) && !is_punctuation(s.text))
                    {
                        new_col -= s.text.len();
                        segs.pop();
                    }
                }
            }
            new_col
        };
        self.set_cursor_col(new_col);
    }

    pub(super) fn move_word_forward(&mut self) {
        self.last_action = None;
        let col = self.state.cursor_col;
        if col >= self.current_line().len() {
            if self.state.cursor_line + 1 < self.state.lines.len() {
                self.state.cursor_line += 1;
                self.set_cursor_col(0);
            }
            return;
        }
        let new_col = {
            let after = &self.current_line()[col..];
            let segs = self.segments(after);
            let mut it = segs.iter().peekable();
            let mut new_col = col;
            while let Some(s) = it.next_if(|s| !s.marker && is_whitespace(s.text)) {
                new_col += s.text.len();
            }
            if let Some(first) = it.peek().copied() {
                if first.marker {
                    new_col += first.text.len();
                } else if is_punctuation(first.text) {
                    while let Some(s) = it.next_if(|s| !s.marker && is_punctuation(s.text)) {
                        new_col += s.text.len();
                    }
                } else {
                    while let Some(s) = it
                        .next_if(|s| !s.marker && !is_whitespace(s.text) && !is_punctuation(s.text))
                    {
                        new_col += s.text.len();
                    }
                }
            }
            new_col
        };
        self.set_cursor_col(new_col);
    }
}
