//! One-off status lines in the chat: info (dim), `Warning: …` and `Error: …`.

use pi_tui::Component;

use super::{LineCache, text_lines};
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// How a notice is styled.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// A status message in the dim color.
    Info,
    /// `Warning: text` in the warning color.
    Warning,
    /// `Error: text` in the error color.
    Error,
}

/// A blank line, then the wrapped notice text with one column of padding.
pub struct Notice {
    theme: Theme,
    kind: NoticeKind,
    text: String,
    cache: LineCache,
}

impl Notice {
    /// A notice of `kind` showing `text`.
    pub fn new(kind: NoticeKind, text: impl Into<String>, theme: &Theme) -> Self {
        Notice {
            theme: theme.clone(),
            kind,
            text: text.into(),
            cache: LineCache::default(),
        }
    }

    /// An info notice.
    pub fn info(text: impl Into<String>, theme: &Theme) -> Self {
        Self::new(NoticeKind::Info, text, theme)
    }

    /// A warning notice.
    pub fn warning(text: impl Into<String>, theme: &Theme) -> Self {
        Self::new(NoticeKind::Warning, text, theme)
    }

    /// An error notice.
    pub fn error(text: impl Into<String>, theme: &Theme) -> Self {
        Self::new(NoticeKind::Error, text, theme)
    }

    /// Replace the text (repeated status messages update one line).
    pub fn set_text(&mut self, text: impl Into<String>) {
        self.text = text.into();
        self.cache.clear();
    }

    /// The text without its prefix.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The notice kind.
    pub fn kind(&self) -> NoticeKind {
        self.kind
    }

    /// Redraw with another theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.cache.clear();
    }
}

impl Component for Notice {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some(lines) = self.cache.get(width, "") {
            return lines;
        }
        let styled = match self.kind {
            NoticeKind::Info => self.theme.fg(ThemeColor::Dim).paint(&self.text),
            NoticeKind::Warning => self
                .theme
                .fg(ThemeColor::Warning)
                .paint(&format!("Warning: {}", self.text)),
            NoticeKind::Error => self
                .theme
                .fg(ThemeColor::Error)
                .paint(&format!("Error: {}", self.text)),
        };
        let body = text_lines(&styled, width, 1);
        let mut lines = Vec::with_capacity(body.len() + 1);
        if !body.is_empty() {
            lines.push(String::new());
            lines.extend(body);
        }
        self.cache.store(width, "", &lines);
        lines
    }

    fn invalidate(&mut self) {
        self.cache.clear();
    }
}
