//! The "What's New" block: release notes between two borders, as `/changelog` shows all of
//! them and startup shows the ones new since the last run (or one line when collapsed),
//! with the "Extension Updates" of updated packages below pi's own (pi 1.6).

use pi_tui::Component;
use pi_tui::components::markdown::Markdown;

use super::{markdown_theme, text_lines};
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// Which of pi's three layouts the block takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangelogLayout {
    /// `/changelog`: the notes padded by a blank line above and below.
    Command,
    /// Startup after an update: the notes, then a blank line.
    Startup,
    /// Startup with `collapseChangelog`: `Updated to vX. Use /changelog …`.
    Collapsed,
}

/// A package whose extension was updated: its name, new version and the notes since the
/// version last seen (headings prefixed with the name).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExtensionUpdate {
    pub name: String,
    pub version: String,
    pub markdown: String,
}

/// Release notes drawn between borders.
pub struct ChangelogView {
    layout: ChangelogLayout,
    /// pi's own notes; empty when only extensions were updated.
    markdown_text: String,
    theme: Theme,
    markdown: Markdown,
    extensions: Vec<ExtensionUpdate>,
    extensions_markdown: Markdown,
}

impl ChangelogView {
    pub fn new(markdown: &str, layout: ChangelogLayout, theme: &Theme) -> Self {
        Self::with_extension_updates(markdown, Vec::new(), layout, theme)
    }

    /// pi's notes (may be empty) and the extension updates below them.
    pub fn with_extension_updates(
        markdown: &str,
        extensions: Vec<ExtensionUpdate>,
        layout: ChangelogLayout,
        theme: &Theme,
    ) -> Self {
        let joined = Self::extensions_text(&extensions);
        ChangelogView {
            layout,
            markdown_text: markdown.to_owned(),
            theme: theme.clone(),
            markdown: Self::markdown(markdown, layout, theme),
            extensions_markdown: Self::markdown(&joined, layout, theme),
            extensions,
        }
    }

    fn extensions_text(extensions: &[ExtensionUpdate]) -> String {
        extensions
            .iter()
            .map(|u| u.markdown.as_str())
            .collect::<Vec<_>>()
            .join("\n\n")
    }

    fn markdown(text: &str, layout: ChangelogLayout, theme: &Theme) -> Markdown {
        let pad_y = usize::from(layout == ChangelogLayout::Command);
        Markdown::new(text.to_owned(), 1, pad_y, markdown_theme(theme))
    }

    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.markdown = Self::markdown(&self.markdown_text, self.layout, theme);
        let joined = Self::extensions_text(&self.extensions);
        self.extensions_markdown = Self::markdown(&joined, self.layout, theme);
    }

    /// The first version heading's `x.y.z` (the newest release shown).
    fn latest_version(&self) -> String {
        crate::changelog::parse(&self.markdown_text)
            .first()
            .map_or_else(|| crate::PI_VERSION.to_owned(), |e| e.version_text())
    }

    fn border(&self, width: usize) -> String {
        self.theme.fg(ThemeColor::Border).paint(&"─".repeat(width))
    }

    fn title(&self, text: &str, width: usize) -> Vec<String> {
        let title = self.theme.fg(ThemeColor::Accent).bold().paint(text);
        text_lines(&title, width, 1)
    }

    /// pi's own notes.
    fn render_pi(&mut self, width: usize, out: &mut Vec<String>) {
        if self.layout == ChangelogLayout::Collapsed {
            let command = pi_tui::style::Style::plain().bold().paint("/changelog");
            let text = format!(
                "Updated to v{}. Use {command} to view full changelog.",
                self.latest_version()
            );
            out.extend(text_lines(&text, width, 1));
            return;
        }
        out.extend(self.title("What's New", width));
        out.push(String::new());
        out.extend(self.markdown.render(width));
        if self.layout == ChangelogLayout::Startup {
            out.push(String::new());
        }
    }

    /// The updated packages' notes, or a line each when collapsed.
    fn render_extensions(&mut self, width: usize, out: &mut Vec<String>) {
        if self.layout == ChangelogLayout::Collapsed {
            for update in &self.extensions {
                let line = format!("Updated {} to v{}.", update.name, update.version);
                out.extend(text_lines(&line, width, 1));
            }
            return;
        }
        out.extend(self.title("Extension Updates", width));
        out.push(String::new());
        out.extend(self.extensions_markdown.render(width));
        out.push(String::new());
    }
}

impl Component for ChangelogView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut out = vec![String::new(), self.border(width)];
        let has_pi = !self.markdown_text.is_empty();
        if has_pi {
            self.render_pi(width, &mut out);
        }
        if !self.extensions.is_empty() {
            if has_pi {
                out.push(String::new());
            }
            self.render_extensions(width, &mut out);
        }
        out.push(self.border(width));
        out
    }
}
