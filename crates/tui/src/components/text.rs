//! Wrapped text with padding and an optional background.

use crate::component::Component;
use crate::style::Style;
use crate::width::{truncate_to_width, visible_width, wrap_text_with_ansi};

/// Word-wrapped text with horizontal/vertical padding; every line is padded to the full
/// width so a background fills it.
#[derive(Debug, Clone)]
pub struct Text {
    text: String,
    padding_x: usize,
    padding_y: usize,
    background: Option<Style>,
    cache: Option<(usize, Vec<String>)>,
}

impl Text {
    /// Text with pi's default padding (one column each side, one line above and below).
    pub fn new(text: impl Into<String>) -> Self {
        Text {
            text: text.into(),
            padding_x: 1,
            padding_y: 1,
            background: None,
            cache: None,
        }
    }

    /// Set the horizontal (columns per side) and vertical (lines) padding.
    pub fn with_padding(mut self, x: usize, y: usize) -> Self {
        self.padding_x = x;
        self.padding_y = y;
        self.cache = None;
        self
    }

    /// Fill every line, padding included, with this style's background.
    pub fn with_background(mut self, style: Style) -> Self {
        self.set_background(Some(style));
        self
    }

    /// Replace the text.
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache = None;
    }

    /// The current text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// Replace or remove the background style.
    pub fn set_background(&mut self, style: Option<Style>) {
        self.background = style;
        self.cache = None;
    }

    fn finish_line(&self, line: &str, width: usize) -> String {
        let mut line = if visible_width(line) > width {
            truncate_to_width(line, width, "", false)
        } else {
            line.to_string()
        };
        let w = visible_width(&line);
        line.push_str(&" ".repeat(width.saturating_sub(w)));
        match &self.background {
            Some(bg) => {
                // Resets inside the text would end the background early: re-open it.
                let prefix = bg.prefix();
                let line = line
                    .replace("\x1b[0m", &format!("\x1b[0m{prefix}"))
                    .replace("\x1b[49m", &format!("\x1b[49m{prefix}"));
                bg.paint(&line)
            }
            None => line,
        }
    }
}

impl Component for Text {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let lines = if self.text.trim().is_empty() {
            Vec::new()
        } else {
            let text = self.text.replace('\t', "   ");
            let content_width = width.saturating_sub(self.padding_x * 2).max(1);
            let margin = " ".repeat(self.padding_x);
            let blank = self.finish_line("", width);
            let mut out = vec![blank.clone(); self.padding_y];
            for line in wrap_text_with_ansi(&text, content_width) {
                out.push(self.finish_line(&format!("{margin}{line}{margin}"), width));
            }
            out.extend(std::iter::repeat_n(blank, self.padding_y));
            out
        };
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::style::Color;

    #[test]
    fn wraps_pads_and_fills() {
        let mut t = Text::new("hello world").with_padding(1, 1);
        assert_eq!(
            t.render(8),
            vec!["        ", " hello  ", " world  ", "        "]
        );
        let mut t = Text::new("hi").with_padding(0, 0);
        assert_eq!(t.render(4), vec!["hi  "]);
        assert!(Text::new("  ").render(10).is_empty());
    }

    #[test]
    fn background_covers_the_whole_line() {
        let bg = Style::bg(Color::Ansi256(236));
        let mut t = Text::new("a\x1b[0mb")
            .with_padding(1, 0)
            .with_background(bg);
        let lines = t.render(5);
        assert_eq!(
            lines,
            vec!["\x1b[48;5;236m a\x1b[0m\x1b[48;5;236mb  \x1b[49m".to_string()]
        );
        assert_eq!(visible_width(&lines[0]), 5);
    }

    #[test]
    fn caches_until_text_or_width_changes() {
        let mut t = Text::new("one two three").with_padding(0, 0);
        assert_eq!(t.render(7), vec!["one two", "three  "]);
        assert_eq!(t.render(20).len(), 1);
        t.set_text("x");
        assert_eq!(t.render(3), vec!["x  "]);
    }
}
