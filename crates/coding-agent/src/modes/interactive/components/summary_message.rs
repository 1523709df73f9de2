//! Compaction and branch summaries: a labelled block on `customMessageBg`, collapsed to
//! one line until expanded.

use pi_agent_core::CustomMessage;
use pi_tui::Component;
use pi_tui::components::markdown::Markdown;

use super::{EXPAND_KEY, LineCache, boxed, inner_width, markdown_theme, text_lines};
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};

#[derive(Debug, Clone, PartialEq, Eq)]
enum Kind {
    Compaction { tokens_before: u64 },
    Branch,
}

/// A compaction or branch summary message.
pub struct SummaryMessage {
    theme: Theme,
    kind: Kind,
    summary: String,
    expanded: bool,
    markdown: Option<Markdown>,
    cache: LineCache,
}

/// `12345` as `12,345` (what `toLocaleString()` shows in English locales).
pub fn format_thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl SummaryMessage {
    /// A compaction summary of a context that held `tokens_before` tokens.
    pub fn compaction(summary: impl Into<String>, tokens_before: u64, theme: &Theme) -> Self {
        Self::with_kind(Kind::Compaction { tokens_before }, summary.into(), theme)
    }

    /// A summary of an abandoned branch.
    pub fn branch(summary: impl Into<String>, theme: &Theme) -> Self {
        Self::with_kind(Kind::Branch, summary.into(), theme)
    }

    /// The view of a `compactionSummary` or `branchSummary` custom message.
    pub fn from_custom(message: &CustomMessage, theme: &Theme) -> Option<Self> {
        let summary = message
            .get("summary")
            .and_then(|v| v.as_str())
            .unwrap_or("")
            .to_string();
        match message.role.as_str() {
            "compactionSummary" => {
                let tokens = message
                    .get("tokensBefore")
                    .and_then(|v| v.as_u64().or_else(|| v.as_f64().map(|f| f as u64)))
                    .unwrap_or(0);
                Some(Self::compaction(summary, tokens, theme))
            }
            "branchSummary" => Some(Self::branch(summary, theme)),
            _ => None,
        }
    }

    fn with_kind(kind: Kind, summary: String, theme: &Theme) -> Self {
        SummaryMessage {
            theme: theme.clone(),
            kind,
            summary,
            expanded: false,
            markdown: None,
            cache: LineCache::default(),
        }
    }

    /// Show the whole summary (true) or the one-line form.
    pub fn set_expanded(&mut self, expanded: bool) {
        if self.expanded != expanded {
            self.expanded = expanded;
            self.cache.clear();
        }
    }

    /// Whether the summary is shown in full.
    pub fn is_expanded(&self) -> bool {
        self.expanded
    }

    /// The summary text.
    pub fn summary(&self) -> &str {
        &self.summary
    }

    /// Redraw with another theme.
    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.markdown = None;
        self.cache.clear();
    }

    fn inner(&mut self, width: usize) -> Vec<String> {
        let theme = &self.theme;
        let text_style = theme.fg(ThemeColor::CustomMessageText);
        let (label, header, collapsed) = match &self.kind {
            Kind::Compaction { tokens_before } => {
                let tokens = format_thousands(*tokens_before);
                (
                    "[compaction]",
                    format!("**Compacted from {tokens} tokens**\n\n"),
                    format!("Compacted from {tokens} tokens ("),
                )
            }
            Kind::Branch => (
                "[branch]",
                "**Branch Summary**\n\n".to_string(),
                "Branch summary (".to_string(),
            ),
        };
        let mut lines = text_lines(
            &theme.fg(ThemeColor::CustomMessageLabel).bold().paint(label),
            width,
            0,
        );
        lines.push(String::new());
        if self.expanded {
            let source = format!("{header}{}", self.summary);
            let md = self.markdown.get_or_insert_with(|| {
                Markdown::new(source.clone(), 0, 0, markdown_theme(theme))
                    .with_default_style(text_style)
            });
            md.set_text(source);
            lines.extend(md.render(width));
        } else {
            let text = format!(
                "{}{}{}",
                text_style.paint(&collapsed),
                theme.fg(ThemeColor::Dim).paint(EXPAND_KEY),
                text_style.paint(" to expand)")
            );
            lines.extend(text_lines(&text, width, 0));
        }
        lines
    }
}

impl Component for SummaryMessage {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some(lines) = self.cache.get(width, "") {
            return lines;
        }
        let inner = self.inner(inner_width(width, 1));
        let mut lines = vec![String::new()];
        lines.extend(boxed(
            inner,
            width,
            1,
            1,
            Some(self.theme.bg(ThemeBg::CustomMessageBg)),
        ));
        self.cache.store(width, "", &lines);
        lines
    }

    fn invalidate(&mut self) {
        if let Some(md) = &mut self.markdown {
            md.invalidate();
        }
        self.cache.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_thousands() {
        assert_eq!(format_thousands(0), "0");
        assert_eq!(format_thousands(999), "999");
        assert_eq!(format_thousands(1000), "1,000");
        assert_eq!(format_thousands(1234567), "1,234,567");
    }
}
