//! pi 1.6's `BorderedLoader`: a spinner and message between two borders, with the cancel
//! key's hint, shown in the editor's place while `/share` or `/bug` works.

use pi_tui::Component;
use pi_tui::components::loader::Loader;
use pi_tui::keybindings::Keybindings;

use super::text_lines;
use crate::modes::interactive::theme::{Theme, ThemeColor};

pub struct BorderedLoader {
    loader: Loader,
    border: pi_tui::Style,
    hint: String,
}

impl BorderedLoader {
    pub fn new(message: &str, theme: &Theme, keys: &Keybindings) -> Self {
        let cancel = keys.keys("tui.select.cancel").join("/");
        let hint = format!(
            "{}{}",
            theme.fg(ThemeColor::Dim).paint(&cancel),
            theme.fg(ThemeColor::Muted).paint(" cancel")
        );
        BorderedLoader {
            loader: Loader::new(
                message,
                theme.fg(ThemeColor::Accent),
                theme.fg(ThemeColor::Muted),
            ),
            border: theme.fg(ThemeColor::Border),
            hint,
        }
    }

    pub fn tick(&mut self) {
        self.loader.tick();
    }

    pub fn render(&mut self, width: usize) -> Vec<String> {
        let border = self.border.paint(&"─".repeat(width.max(1)));
        let mut lines = vec![border.clone()];
        lines.extend(self.loader.render(width));
        lines.push(String::new());
        lines.extend(text_lines(&self.hint, width, 1));
        lines.push(String::new());
        lines.push(border);
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::components::strip_ansi;

    #[test]
    fn draws_like_pi_16() {
        let theme = Theme::dark(pi_tui::ColorMode::TrueColor);
        let keys = crate::modes::interactive::keymap::load(std::path::Path::new("/nonexistent"));
        let mut loader = BorderedLoader::new("Creating gist...", &theme, &keys);
        let lines: Vec<String> = loader
            .render(30)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_owned())
            .collect();
        assert_eq!(
            lines,
            [
                "─".repeat(30).as_str(),
                "",
                " ⠋ Creating gist...",
                "",
                " escape/ctrl+c cancel",
                "",
                "─".repeat(30).as_str(),
            ]
        );
    }
}
