//! A one-line text input drawn like pi-tui's `Input`: `> ` then the text with an inverse
//! cursor, scrolled horizontally to keep the cursor in view.

use pi_tui::width::{Segment, segments, visible_width};
use pi_tui::{CURSOR_MARKER, Input, KeyCode, KeyModifiers};

const PROMPT: &str = "> ";

/// The text of an input dialog and its cursor (a byte offset on a grapheme boundary).
#[derive(Debug, Clone)]
pub struct LineInput {
    value: String,
    cursor: usize,
    focused: bool,
    prompt: &'static str,
    /// Shown faint while the text is empty.
    placeholder: Option<&'static str>,
}

impl Default for LineInput {
    fn default() -> Self {
        LineInput {
            value: String::new(),
            cursor: 0,
            focused: false,
            prompt: PROMPT,
            placeholder: None,
        }
    }
}

/// `(byte offset, grapheme, width)` of each grapheme of `text`.
fn graphemes(text: &str) -> Vec<(usize, &str, usize)> {
    let mut offset = 0;
    let mut out = Vec::new();
    for segment in segments(text) {
        let (g, w) = match segment {
            Segment::Grapheme(g, w) => (g, w),
            Segment::Escape(e) => (e, 0),
        };
        out.push((offset, g, w));
        offset += g.len();
    }
    out
}

impl LineInput {
    pub fn new() -> Self {
        Self::default()
    }

    /// An input holding `text`, the cursor at its end.
    pub fn with_value(text: &str) -> Self {
        Self {
            value: text.to_owned(),
            cursor: text.len(),
            ..Self::default()
        }
    }

    /// An empty input with its own prompt and a faint placeholder (pi-tui's `Input`
    /// options), as the transcript search box has.
    pub fn with_prompt(prompt: &'static str, placeholder: &'static str) -> Self {
        Self {
            prompt,
            placeholder: Some(placeholder),
            ..Self::default()
        }
    }

    /// The text typed so far.
    pub fn value(&self) -> &str {
        &self.value
    }

    /// Whether the hardware cursor marker is drawn (for IME placement).
    pub fn set_focused(&mut self, focused: bool) {
        self.focused = focused;
    }

    fn prev_boundary(&self) -> usize {
        graphemes(&self.value[..self.cursor])
            .last()
            .map_or(0, |(i, ..)| *i)
    }

    fn next_boundary(&self) -> usize {
        graphemes(&self.value[self.cursor..])
            .first()
            .map_or(self.cursor, |(_, g, _)| self.cursor + g.len())
    }

    fn word_start(&self) -> usize {
        let before = &self.value[..self.cursor];
        let trimmed = before.trim_end();
        trimmed.rfind(char::is_whitespace).map_or(0, |i| {
            i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
        })
    }

    fn insert(&mut self, text: &str) {
        let clean: String = text.chars().filter(|c| !c.is_control()).collect();
        self.value.insert_str(self.cursor, &clean);
        self.cursor += clean.len();
    }

    /// Edits the text; true when the key was an editing key.
    pub fn handle(&mut self, input: &Input) -> bool {
        let key = match input {
            Input::Paste(text) => {
                self.insert(&text.replace(['\r', '\n'], ""));
                return true;
            }
            Input::Key(key) => key,
        };
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('a') if ctrl => self.cursor = 0,
            KeyCode::Char('e') if ctrl => self.cursor = self.value.len(),
            KeyCode::Char('b') if ctrl => self.cursor = self.prev_boundary(),
            KeyCode::Char('f') if ctrl => self.cursor = self.next_boundary(),
            KeyCode::Char('u') if ctrl => {
                self.value.drain(..self.cursor);
                self.cursor = 0;
            }
            KeyCode::Char('k') if ctrl => self.value.truncate(self.cursor),
            KeyCode::Char('w') if ctrl => self.delete_word_back(),
            KeyCode::Backspace if alt || ctrl => self.delete_word_back(),
            KeyCode::Char(c) if !ctrl && !alt => self.insert(&c.to_string()),
            KeyCode::Backspace => {
                let start = self.prev_boundary();
                self.value.drain(start..self.cursor);
                self.cursor = start;
            }
            KeyCode::Delete => {
                let end = self.next_boundary();
                self.value.drain(self.cursor..end);
            }
            KeyCode::Left => self.cursor = self.prev_boundary(),
            KeyCode::Right => self.cursor = self.next_boundary(),
            KeyCode::Home => self.cursor = 0,
            KeyCode::End => self.cursor = self.value.len(),
            _ => return false,
        }
        true
    }

    fn delete_word_back(&mut self) {
        let start = self.word_start();
        self.value.drain(start..self.cursor);
        self.cursor = start;
    }

    /// The input line at `width` columns.
    pub fn render(&self, width: usize) -> Vec<String> {
        let prompt = self.prompt;
        let available = width.saturating_sub(visible_width(prompt));
        if available == 0 {
            return vec![pi_tui::truncate_to_width(prompt, width, "", false)];
        }
        let marker = if self.focused { CURSOR_MARKER } else { "" };
        if let Some(placeholder) = self.placeholder.filter(|_| self.value.is_empty()) {
            // The cursor sits on the placeholder's first character.
            let shown = pi_tui::truncate_to_width(placeholder, available, "", false);
            let first = graphemes(&shown)
                .first()
                .map_or(" ", |(_, g, _)| *g)
                .to_owned();
            let rest = &shown[first.len().min(shown.len())..];
            let text =
                format!("{marker}\x1b[7m\x1b[2m{first}\x1b[22m\x1b[27m\x1b[2m{rest}\x1b[22m");
            let pad = available.saturating_sub(visible_width(&text));
            return vec![format!("{prompt}{text}{}", " ".repeat(pad))];
        }
        let graphemes = graphemes(&self.value);
        let cursor_index = graphemes
            .iter()
            .position(|(i, ..)| *i >= self.cursor)
            .unwrap_or(graphemes.len());
        // Scroll so the cursor stays visible (a column is kept for a cursor at the end).
        let cursor_col: usize = graphemes[..cursor_index].iter().map(|(.., w)| w).sum();
        let total = visible_width(&self.value);
        let room = if cursor_index == graphemes.len() {
            available - 1
        } else {
            available
        };
        let start_col = if total < available || room == 0 || cursor_col < room / 2 {
            0
        } else if cursor_col > total.saturating_sub(room / 2) {
            total.saturating_sub(room)
        } else {
            cursor_col - room / 2
        };
        let mut before = String::new();
        let mut at = String::from(" ");
        let mut after = String::new();
        let mut col = 0;
        for (index, (_, g, w)) in graphemes.iter().enumerate() {
            let w = *w;
            if col >= start_col && col + w <= start_col + available.max(room) {
                match index.cmp(&cursor_index) {
                    std::cmp::Ordering::Less => before.push_str(g),
                    std::cmp::Ordering::Equal => at = (*g).to_owned(),
                    std::cmp::Ordering::Greater => after.push_str(g),
                }
            }
            col += w;
        }
        let text = format!("{before}{marker}\x1b[7m{at}\x1b[27m{after}");
        let mut line = format!("{prompt}{text}");
        let used = visible_width(&text);
        if used < available {
            line.push_str(&" ".repeat(available - used));
        }
        vec![pi_tui::truncate_to_width(&line, width, "", false)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::components::strip_ansi;

    fn typed(text: &str) -> LineInput {
        let mut input = LineInput::new();
        for c in text.chars() {
            input.handle(&Input::key(KeyCode::Char(c)));
        }
        input
    }

    #[test]
    fn edits_and_draws_with_a_cursor() {
        let mut input = typed("hello wor");
        assert_eq!(input.value(), "hello wor");
        input.handle(&Input::key_with(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(input.value(), "hello ");
        input.handle(&Input::key(KeyCode::Home));
        input.handle(&Input::key(KeyCode::Delete));
        assert_eq!(input.value(), "ello ");
        input.handle(&Input::Paste("a\nb".into()));
        assert_eq!(input.value(), "abello ");
        let line = strip_ansi(&input.render(12)[0]);
        assert_eq!(line, "> abello    ");
    }

    #[test]
    fn long_text_scrolls_to_the_cursor() {
        let input = typed("abcdefghijklmnopqrstuvwxyz");
        let line = strip_ansi(&input.render(10)[0]);
        assert_eq!(line, "> tuvwxyz ");
    }
}
