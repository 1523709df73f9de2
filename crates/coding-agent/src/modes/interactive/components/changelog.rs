//! The "What's New" block: release notes between two borders, as `/changelog` shows all of
//! them and startup shows the ones new since the last run (or one line when collapsed).

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

/// Release notes drawn between borders.
pub struct ChangelogView {
    layout: ChangelogLayout,
    markdown_text: String,
    theme: Theme,
    markdown: Markdown,
}

impl ChangelogView {
    pub fn new(markdown: &str, layout: ChangelogLayout, theme: &Theme) -> Self {
        ChangelogView {
            layout,
            markdown_text: markdown.to_owned(),
            theme: theme.clone(),
            markdown: Self::markdown(markdown, layout, theme),
        }
    }

    fn markdown(text: &str, layout: ChangelogLayout, theme: &Theme) -> Markdown {
        let pad_y = usize::from(layout == ChangelogLayout::Command);
        Markdown::new(text.to_owned(), 1, pad_y, markdown_theme(theme))
    }

    pub fn set_theme(&mut self, theme: &Theme) {
        self.theme = theme.clone();
        self.markdown = Self::markdown(&self.markdown_text, self.layout, theme);
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
}

impl Component for ChangelogView {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut out = vec![String::new(), self.border(width)];
        if self.layout == ChangelogLayout::Collapsed {
            let command = pi_tui::style::Style::plain().bold().paint("/changelog");
            let text = format!(
                "Updated to v{}. Use {command} to view full changelog.",
                self.latest_version()
            );
            out.extend(text_lines(&text, width, 1));
        } else {
            let title = self.theme.fg(ThemeColor::Accent).bold().paint("What's New");
            out.extend(text_lines(&title, width, 1));
            out.push(String::new());
            out.extend(self.markdown.render(width));
            if self.layout == ChangelogLayout::Startup {
                out.push(String::new());
            }
        }
        out.push(self.border(width));
        out
    }
}
