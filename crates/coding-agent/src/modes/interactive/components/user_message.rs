//! A user prompt: markdown on the `userMessageBg` block.

use pi_tui::Component;
use pi_tui::components::markdown::Markdown;

use super::{LineCache, boxed, inner_width, mark_zone, markdown_theme};
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};

/// A user message: a blank line, then the text as markdown in a full-width block with
/// one column and one line of padding.
pub struct UserMessage {
    theme: Theme,
    markdown: Markdown,
    cache: LineCache,
}

impl UserMessage {
    /// A user message showing `text`.
    pub fn new(text: impl Into<String>, theme: &Theme) -> Self {
        UserMessage {
            markdown: Self::markdown(text.into(), theme),
            theme: theme.clone(),
            cache: LineCache::default(),
        }
    }

    fn markdown(text: String, theme: &Theme) -> Markdown {
        Markdown::new(text, 0, 0, markdown_theme(theme))
            .with_default_style(theme.fg(ThemeColor::UserMessageText))
    }

    /// The message text.
    pub fn text(&self) -> &str {
        self.markdown.text()
    }

    /// Redraw with another theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.markdown = Self::markdown(self.markdown.text().to_string(), theme);
        self.cache.clear();
    }
}

impl Component for UserMessage {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some(lines) = self.cache.get(width, "") {
            return lines;
        }
        let inner = self.markdown.render(inner_width(width, 1));
        let mut body = boxed(
            inner,
            width,
            1,
            1,
            Some(self.theme.bg(ThemeBg::UserMessageBg)),
        );
        mark_zone(&mut body);
        let mut lines = Vec::with_capacity(body.len() + 1);
        if !body.is_empty() {
            lines.push(String::new());
            lines.extend(body);
        }
        self.cache.store(width, "", &lines);
        lines
    }

    fn invalidate(&mut self) {
        self.markdown.invalidate();
        self.cache.clear();
    }
}
