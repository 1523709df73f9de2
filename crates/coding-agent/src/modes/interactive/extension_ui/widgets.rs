//! Extension widgets above and below the editor (`ctx.ui.setWidget`) and the extension
//! status line of the footer (`ctx.ui.setStatus`), as the TypeScript pi draws them.

use std::collections::BTreeMap;

use pi_tui::width::truncate_to_width;

use super::remote::RemoteView;
use crate::modes::interactive::components::text_lines;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// Lines of a string widget shown at most (the rest becomes a "truncated" note).
pub const MAX_WIDGET_LINES: usize = 10;

/// What a widget shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WidgetContent {
    /// Text lines, each wrapped with one column of padding.
    Lines(Vec<String>),
    /// A host component drawn at the full width.
    Component(u64),
}

/// The widgets, in the order they were (last) set.
#[derive(Debug, Clone, Default)]
pub struct Widgets {
    above: Vec<(String, WidgetContent)>,
    below: Vec<(String, WidgetContent)>,
}

impl Widgets {
    /// Sets (or with `None`, removes) widget `key`; returns the component it replaced.
    pub fn set(
        &mut self,
        key: &str,
        content: Option<WidgetContent>,
        below: bool,
    ) -> Option<WidgetContent> {
        let mut replaced = None;
        for list in [&mut self.above, &mut self.below] {
            if let Some(at) = list.iter().position(|(k, _)| k == key) {
                replaced = Some(list.remove(at).1);
            }
        }
        if let Some(content) = content {
            let list = if below {
                &mut self.below
            } else {
                &mut self.above
            };
            list.push((key.to_owned(), content));
        }
        replaced
    }

    pub fn has_above(&self) -> bool {
        !self.above.is_empty()
    }

    /// Lines of the widgets above the editor.
    pub fn render_above(&self, width: usize, remote: &RemoteView, theme: &Theme) -> Vec<String> {
        render_list(&self.above, width, remote, theme)
    }

    /// Lines of the widgets below the editor.
    pub fn render_below(&self, width: usize, remote: &RemoteView, theme: &Theme) -> Vec<String> {
        render_list(&self.below, width, remote, theme)
    }
}

fn render_list(
    list: &[(String, WidgetContent)],
    width: usize,
    remote: &RemoteView,
    theme: &Theme,
) -> Vec<String> {
    let mut lines = Vec::new();
    for (_, content) in list {
        match content {
            WidgetContent::Lines(text) => {
                for line in text.iter().take(MAX_WIDGET_LINES) {
                    lines.extend(text_lines(line, width, 1));
                }
                if text.len() > MAX_WIDGET_LINES {
                    let note = theme.fg(ThemeColor::Muted).paint("... (widget truncated)");
                    lines.extend(text_lines(&note, width, 1));
                }
            }
            WidgetContent::Component(id) => lines.extend(remote.lines(*id, width)),
        }
    }
    lines
}

/// A status text on one line: line breaks and tabs become spaces, runs of spaces one.
fn sanitize(text: &str) -> String {
    let spaced = text.replace(['\r', '\n', '\t'], " ");
    let mut out = String::with_capacity(spaced.len());
    let mut last_space = false;
    for c in spaced.chars() {
        if c == ' ' && last_space {
            continue;
        }
        last_space = c == ' ';
        out.push(c);
    }
    out.trim().to_owned()
}

/// The footer's extension status line: every status sorted by key, joined by spaces and
/// cut to the width with a dim ellipsis; `None` without statuses.
pub fn status_line(
    statuses: &BTreeMap<String, String>,
    width: usize,
    theme: &Theme,
) -> Option<String> {
    if statuses.is_empty() {
        return None;
    }
    let line = statuses
        .values()
        .map(|text| sanitize(text))
        .collect::<Vec<_>>()
        .join(" ");
    let ellipsis = theme.fg(ThemeColor::Dim).paint("...");
    Some(truncate_to_width(&line, width, &ellipsis, false))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::modes::interactive::components::strip_ansi;
    use pi_tui::ColorMode;

    #[test]
    fn widgets_move_to_the_end_when_set_again() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let remote = RemoteView::detached();
        let mut widgets = Widgets::default();
        widgets.set("a", Some(WidgetContent::Lines(vec!["first".into()])), false);
        widgets.set(
            "b",
            Some(WidgetContent::Lines(vec!["second".into()])),
            false,
        );
        widgets.set("a", Some(WidgetContent::Lines(vec!["again".into()])), false);
        let lines: Vec<String> = widgets
            .render_above(20, &remote, &theme)
            .iter()
            .map(|l| strip_ansi(l).trim_end().to_owned())
            .collect();
        assert_eq!(lines, [" second", " again"]);
        assert!(widgets.set("a", None, false).is_some());
        assert!(widgets.render_below(20, &remote, &theme).is_empty());
    }

    #[test]
    fn long_widgets_are_truncated() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let mut widgets = Widgets::default();
        let many: Vec<String> = (0..12).map(|i| format!("l{i}")).collect();
        widgets.set("w", Some(WidgetContent::Lines(many)), true);
        let lines = widgets.render_below(40, &RemoteView::detached(), &theme);
        assert_eq!(lines.len(), MAX_WIDGET_LINES + 1);
        assert!(strip_ansi(&lines[10]).contains("... (widget truncated)"));
    }

    #[test]
    fn statuses_sort_by_key_on_one_line() {
        let theme = Theme::dark(ColorMode::TrueColor);
        let mut statuses = BTreeMap::new();
        statuses.insert("b".to_owned(), "two\nlines".to_owned());
        statuses.insert("a".to_owned(), "  one  ".to_owned());
        assert_eq!(status_line(&statuses, 40, &theme).unwrap(), "one two lines");
        assert!(status_line(&BTreeMap::new(), 40, &theme).is_none());
    }
}
