//! The chat view: messages, tool executions, the footer. Chat components start with one
//! blank line (the TypeScript spacing) and cache their lines per width.

pub mod assistant_message;
pub mod bash_execution;
pub mod bordered_loader;
pub mod changelog;
mod codemode_render;
pub mod diff;
pub mod footer;
pub mod markdown_theme;
pub mod notice;
pub mod startup_header;
pub mod summary_message;
pub mod tool_execution;
mod tool_render;
pub mod user_message;

pub use assistant_message::AssistantMessage;
pub use bash_execution::BashExecution;
pub use changelog::{ChangelogLayout, ChangelogView, ExtensionUpdate};
pub use diff::render_diff;
pub use footer::{Footer, FooterData, format_tokens};
pub use markdown_theme::{markdown_theme, syntax_theme};
pub use notice::{Notice, NoticeKind};
pub use summary_message::SummaryMessage;
pub use tool_execution::{ImageDisplay, ToolExecution};
pub use user_message::UserMessage;

use pi_tui::Component;
use pi_tui::components::text::Text;
use pi_tui::style::Style;
use pi_tui::width::{Segment, segments, truncate_to_width, visible_width};

/// The key named in "to expand" hints (the default `app.tools.expand` binding).
pub const EXPAND_KEY: &str = "ctrl+o";

/// OSC 133 prompt-zone markers (shell integration) around user and assistant messages.
pub(crate) const OSC133_ZONE_START: &str = "\x1b]133;A\x07";
pub(crate) const OSC133_ZONE_END: &str = "\x1b]133;B\x07";
pub(crate) const OSC133_ZONE_FINAL: &str = "\x1b]133;C\x07";

/// Rendered lines remembered for one width (and an extra key, e.g. an elapsed-time label).
#[derive(Debug, Clone, Default)]
pub(crate) struct LineCache {
    entry: Option<(usize, String, Vec<String>)>,
}

impl LineCache {
    pub(crate) fn get(&self, width: usize, key: &str) -> Option<Vec<String>> {
        match &self.entry {
            Some((w, k, lines)) if *w == width && k == key => Some(lines.clone()),
            _ => None,
        }
    }

    pub(crate) fn store(&mut self, width: usize, key: &str, lines: &[String]) {
        self.entry = Some((width, key.to_string(), lines.to_vec()));
    }

    pub(crate) fn clear(&mut self) {
        self.entry = None;
    }
}

/// `text` painted with `style`, re-opening the style after inner resets of the same
/// attributes (as chalk nests styles), so a colored span inside keeps the outer color.
pub(crate) fn paint(style: Style, text: &str) -> String {
    let prefix = style.prefix();
    if prefix.is_empty() {
        return text.to_string();
    }
    let mut reopen: Vec<(&str, String)> = vec![("\x1b[0m", prefix.clone())];
    if let Some(fg) = style.fg {
        reopen.push(("\x1b[39m", Style::fg(fg).with_mode(style.mode).prefix()));
    }
    if let Some(bg) = style.bg {
        reopen.push(("\x1b[49m", Style::bg(bg).with_mode(style.mode).prefix()));
    }
    if style.bold || style.dim {
        let mut s = Style::plain();
        s.bold = style.bold;
        s.dim = style.dim;
        reopen.push(("\x1b[22m", s.prefix()));
    }
    if style.italic {
        reopen.push(("\x1b[23m", "\x1b[3m".to_string()));
    }
    let mut body = text.to_string();
    for (close, open) in &reopen {
        if open.is_empty() || !body.contains(close) {
            continue;
        }
        body = body.replace(close, &format!("{close}{open}"));
        // A re-open right before the final close is useless.
        if body.ends_with(&format!("{close}{open}")) {
            body.truncate(body.len() - open.len());
        }
    }
    format!("{prefix}{body}{}", style.suffix())
}

/// One line cut or padded to exactly `width` columns, filled with `bg` when given.
pub(crate) fn fill_line(line: &str, width: usize, bg: Option<Style>) -> String {
    let mut line = if visible_width(line) > width {
        truncate_to_width(line, width, "", false)
    } else {
        line.to_string()
    };
    let used = visible_width(&line);
    line.push_str(&" ".repeat(width.saturating_sub(used)));
    match bg {
        Some(bg) => paint(bg, &line),
        None => line,
    }
}

/// Lines rendered at `width - 2 * pad_x` framed like pi-tui's `Box`: side padding,
/// `pad_y` blank lines above and below, every line filled with `bg`.
pub(crate) fn boxed(
    inner: Vec<String>,
    width: usize,
    pad_x: usize,
    pad_y: usize,
    bg: Option<Style>,
) -> Vec<String> {
    if inner.is_empty() {
        return inner;
    }
    let margin = " ".repeat(pad_x);
    let blank = fill_line("", width, bg);
    let mut out = vec![blank.clone(); pad_y];
    for line in inner {
        out.push(fill_line(&format!("{margin}{line}"), width, bg));
    }
    out.extend(std::iter::repeat_n(blank, pad_y));
    out
}

/// The width children of a box with `pad_x` get.
pub(crate) fn inner_width(width: usize, pad_x: usize) -> usize {
    width.saturating_sub(2 * pad_x).max(1)
}

/// Wrapped text lines (pi-tui `Text` with horizontal padding, no background).
pub(crate) fn text_lines(text: &str, width: usize, pad_x: usize) -> Vec<String> {
    Text::new(text).with_padding(pad_x, 0).render(width)
}

/// `text` without ANSI escape sequences.
pub fn strip_ansi(text: &str) -> String {
    segments(text)
        .into_iter()
        .filter_map(|seg| match seg {
            Segment::Grapheme(g, _) => Some(g),
            Segment::Escape(_) => None,
        })
        .collect()
}

/// Tabs as three spaces, the way the TypeScript pi shows them.
pub(crate) fn replace_tabs(text: &str) -> String {
    text.replace('\t', "   ")
}

/// `path` with the home directory shown as `~`.
pub(crate) fn shorten_path(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && home != "/" => shorten_with_home(path, &home),
        _ => path.to_string(),
    }
}

/// `path` with `home` replaced by `~` when it starts with it.
pub(crate) fn shorten_with_home(path: &str, home: &str) -> String {
    let home = home.trim_end_matches('/');
    if home.is_empty() {
        return path.to_string();
    }
    match path.strip_prefix(home) {
        Some(rest) if rest.is_empty() || rest.starts_with('/') => format!("~{rest}"),
        _ => path.to_string(),
    }
}

/// Wraps `lines` with OSC 133 zone markers (first line opens, last line closes).
pub(crate) fn mark_zone(lines: &mut [String]) {
    if let Some(first) = lines.first_mut() {
        first.insert_str(0, OSC133_ZONE_START);
    }
    if let Some(last) = lines.last_mut() {
        last.insert_str(0, OSC133_ZONE_FINAL);
        last.insert_str(0, OSC133_ZONE_END);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::style::Color;

    #[test]
    fn paint_reopens_outer_color_after_inner_reset() {
        let outer = Style::fg(Color::Ansi256(1));
        let inner = Style::fg(Color::Ansi256(2)).paint("b");
        let s = paint(outer, &format!("a{inner}c"));
        assert_eq!(s, "\x1b[38;5;1ma\x1b[38;5;2mb\x1b[39m\x1b[38;5;1mc\x1b[39m");
    }

    #[test]
    fn boxed_fills_every_line() {
        let bg = Style::bg(Color::Ansi256(236));
        let lines = boxed(vec!["ab".into()], 6, 1, 1, Some(bg));
        assert_eq!(lines.len(), 3);
        assert!(lines.iter().all(|l| visible_width(l) == 6));
        assert_eq!(strip_ansi(&lines[1]), " ab   ");
        assert!(boxed(Vec::new(), 6, 1, 1, Some(bg)).is_empty());
    }

    #[test]
    fn shortens_home() {
        assert_eq!(shorten_with_home("/home/u/x", "/home/u"), "~/x");
        assert_eq!(shorten_with_home("/home/u", "/home/u/"), "~");
        assert_eq!(shorten_with_home("/home/user2", "/home/u"), "/home/user2");
    }
}
