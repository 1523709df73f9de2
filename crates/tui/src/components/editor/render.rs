//! Drawing: the text wrapped between border lines (with scroll indicators and the
//! cursor), and the suggestion list under it.

use super::Editor;
use super::autocomplete::AutocompleteList;
use super::layout::word_wrap_line;
use crate::autocomplete::Suggestion;
use crate::component::CURSOR_MARKER;
use crate::width::{truncate_to_width, visible_width};

struct LayoutLine {
    text: String,
    cursor: Option<usize>,
}

impl Editor {
    fn layout_text(&self, width: usize) -> Vec<LayoutLine> {
        if self.is_empty() {
            return vec![LayoutLine {
                text: String::new(),
                cursor: Some(0),
            }];
        }
        let mut out = Vec::new();
        for (i, line) in self.state.lines.iter().enumerate() {
            let is_current = i == self.state.cursor_line;
            let col = self.state.cursor_col;
            if visible_width(line) <= width {
                out.push(LayoutLine {
                    text: line.clone(),
                    cursor: is_current.then_some(col),
                });
                continue;
            }
            let segs = self.segments(line);
            let chunks = word_wrap_line(line, width, &segs);
            let count = chunks.len();
            for (ci, chunk) in chunks.into_iter().enumerate() {
                let text = &line[chunk.start..chunk.end];
                let cursor = if !is_current {
                    None
                } else if ci + 1 == count {
                    (col >= chunk.start).then(|| col - chunk.start)
                } else if col >= chunk.start && col < chunk.end {
                    Some((col - chunk.start).min(text.len()))
                } else {
                    None
                };
                out.push(LayoutLine {
                    text: text.to_string(),
                    cursor,
                });
            }
        }
        out
    }

    fn border_with_indicator(&self, indicator: &str, width: usize) -> String {
        let used = visible_width(indicator);
        if used <= width {
            self.border
                .paint(&format!("{indicator}{}", "─".repeat(width - used)))
        } else {
            self.border
                .paint(&truncate_to_width(indicator, width, "", false))
        }
    }

    /// The top border carrying a status (pi 1.6's `renderTopBorder` with an embedded
    /// working indicator): `── <status> ───`, the ` ↑ N more ` label centred when the
    /// editor scrolls and both fit, else the spinner alone.
    fn border_with_status(&self, status: &(String, String), hidden: usize, width: usize) -> String {
        let line = |n: usize| "─".repeat(n);
        let mut text = truncate_to_width(&status.0, width.saturating_sub(5).max(1), "", false);
        let mut text_width = visible_width(&text);
        if text_width == 0 {
            return self.border.paint(&line(width));
        }
        let label = (hidden > 0).then(|| format!(" ↑ {hidden} more "));
        let label_width = label.as_deref().map_or(0, visible_width);
        let label_start = width.saturating_sub(label_width) / 2;
        let fits = |text_width: usize| {
            label.is_some() && label_width + 2 <= width && label_start > 3 + text_width + 1
        };
        if label.is_some() && !fits(text_width) {
            text = truncate_to_width(&status.1, width, "", false);
            text_width = visible_width(&text);
        }
        if let Some(label) = label.as_deref().filter(|_| fits(text_width)) {
            let left = 3 + text_width + 1;
            return format!(
                "{}{text}{}",
                self.border.paint("── "),
                self.border.paint(&format!(
                    " {}{label}{}",
                    line(label_start - left),
                    line(width - label_start - label_width)
                ))
            );
        }
        if width >= text_width + 5 {
            return format!(
                "{}{text}{}",
                self.border.paint("── "),
                self.border
                    .paint(&format!(" {}", line(width - text_width - 4)))
            );
        }
        let spinner = truncate_to_width(&status.1, width, "", false);
        let spinner_width = visible_width(&spinner);
        let prefix = 3.min(width.saturating_sub(spinner_width));
        format!(
            "{}{spinner}{}",
            self.border.paint(&line(prefix)),
            self.border
                .paint(&line(width.saturating_sub(prefix + spinner_width)))
        )
    }

    pub(super) fn render_lines(&mut self, width: usize) -> Vec<String> {
        if width == 0 {
            return Vec::new();
        }
        let padding = self.padding_x.min((width - 1) / 2);
        let content_width = width.saturating_sub(padding * 2).max(1);
        // Without padding one column is kept free for the cursor at line end.
        let layout_width = content_width
            .saturating_sub(if padding == 0 { 1 } else { 0 })
            .max(1);
        self.last_width = layout_width;

        let layout = self.layout_text(layout_width);
        let max_visible = self.max_visible_lines.max(1);
        let cursor_index = layout.iter().position(|l| l.cursor.is_some()).unwrap_or(0);
        if cursor_index < self.scroll_offset {
            self.scroll_offset = cursor_index;
        } else if cursor_index >= self.scroll_offset + max_visible {
            self.scroll_offset = cursor_index + 1 - max_visible;
        }
        let max_scroll = layout.len().saturating_sub(max_visible);
        self.scroll_offset = self.scroll_offset.min(max_scroll);
        let visible_end = (self.scroll_offset + max_visible).min(layout.len());
        let visible = &layout[self.scroll_offset..visible_end];
        self.rendered_rows = visible.len();

        let mut out = Vec::with_capacity(visible.len() + 2);
        if let Some(status) = self.top_status.clone() {
            out.push(self.border_with_status(&status, self.scroll_offset, width));
        } else if self.scroll_offset > 0 {
            let indicator = format!("─── ↑ {} more ", self.scroll_offset);
            out.push(self.border_with_indicator(&indicator, width));
        } else {
            out.push(self.border.paint(&"─".repeat(width)));
        }

        let emit_marker = self.focused && self.autocomplete.is_none();
        let pad = " ".repeat(padding);
        for line in visible {
            let mut display = line.text.clone();
            let mut line_width = visible_width(&line.text);
            let mut cursor_in_padding = false;
            if let Some(pos) = line.cursor {
                let pos = pos.min(line.text.len());
                let (before, after) = line.text.split_at(pos);
                let marker = if emit_marker { CURSOR_MARKER } else { "" };
                if after.is_empty() {
                    display = format!("{before}{marker}\x1b[7m \x1b[27m");
                    line_width += 1;
                    cursor_in_padding = line_width > content_width && padding > 0;
                } else {
                    let first = self
                        .segments(after)
                        .first()
                        .map_or(after, |s| s.text)
                        .to_string();
                    let rest = &after[first.len()..];
                    display = format!("{before}{marker}\x1b[7m{first}\x1b[27m{rest}");
                }
            }
            let fill = " ".repeat(content_width.saturating_sub(line_width));
            let right = if cursor_in_padding {
                &pad[1..]
            } else {
                pad.as_str()
            };
            out.push(fit(format!("{pad}{display}{fill}{right}"), width));
        }

        let below = layout.len() - visible_end;
        if below > 0 {
            let indicator = format!("─── ↓ {below} more ");
            out.push(self.border_with_indicator(&indicator, width));
        } else {
            out.push(self.border.paint(&"─".repeat(width)));
        }

        if let Some(list) = &self.autocomplete {
            for row in self.render_autocomplete(list, content_width) {
                let fill = " ".repeat(content_width.saturating_sub(visible_width(&row)));
                out.push(fit(format!("{pad}{row}{fill}{pad}"), width));
            }
        }
        out
    }

    fn render_autocomplete(&self, list: &AutocompleteList, width: usize) -> Vec<String> {
        const GAP: usize = 2;
        let n = list.items.len();
        if n == 0 {
            return Vec::new();
        }
        let (min_col, max_col) = if list.prefix.starts_with('/') {
            (12, 32)
        } else {
            (32, 32)
        };
        let widest = list
            .items
            .iter()
            .map(|i| visible_width(display_value(i)) + GAP)
            .max()
            .unwrap_or(0);
        let primary_width = widest.clamp(min_col, max_col);
        let max_visible = self.autocomplete_max_visible;
        let start = list
            .selected
            .saturating_sub(max_visible / 2)
            .min(n.saturating_sub(max_visible));
        let end = (start + max_visible).min(n);

        let mut out = Vec::new();
        for (i, item) in list.items.iter().enumerate().take(end).skip(start) {
            let selected = i == list.selected;
            let prefix = if selected { "→ " } else { "  " };
            let description = item
                .description
                .as_deref()
                .map(|d| {
                    d.split(['\r', '\n'])
                        .filter(|s| !s.is_empty())
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .map(|d| d.trim().to_string())
                .filter(|d| !d.is_empty());
            out.push(self.render_item(item, selected, prefix, description, width, primary_width));
        }
        if start > 0 || end < n {
            let info = format!("  ({}/{})", list.selected + 1, n);
            out.push(self.theme.scroll_info.paint(&truncate_to_width(
                &info,
                width.saturating_sub(2),
                "",
                false,
            )));
        }
        out
    }

    fn render_item(
        &self,
        item: &Suggestion,
        selected: bool,
        prefix: &str,
        description: Option<String>,
        width: usize,
        primary_width: usize,
    ) -> String {
        const GAP: usize = 2;
        const MIN_DESCRIPTION: usize = 10;
        let prefix_width = visible_width(prefix);
        let value = display_value(item);
        if let Some(desc) = description.filter(|_| width > 40) {
            let column = primary_width.min(width - prefix_width - 4).max(1);
            let max_primary = column.saturating_sub(GAP).max(1);
            let shown = truncate_to_width(value, max_primary, "", false);
            let shown_width = visible_width(&shown);
            let spacing = " ".repeat(column.saturating_sub(shown_width).max(1));
            let desc_start = prefix_width + shown_width + spacing.len();
            let remaining = width.saturating_sub(desc_start + 2);
            if remaining > MIN_DESCRIPTION {
                let desc = truncate_to_width(&desc, remaining, "", false);
                if selected {
                    return self
                        .theme
                        .select
                        .paint(&format!("{prefix}{shown}{spacing}{desc}"));
                }
                let styled = self.theme.description.paint(&format!("{spacing}{desc}"));
                return format!("{prefix}{shown}{styled}");
            }
        }
        let max_width = width.saturating_sub(prefix_width + 2);
        let shown = truncate_to_width(value, max_width, "", false);
        if selected {
            self.theme.select.paint(&format!("{prefix}{shown}"))
        } else {
            format!("{prefix}{shown}")
        }
    }
}

/// `row` cut to `width` columns; only degenerate widths (a wide character in one
/// column, a list in two) need it.
fn fit(row: String, width: usize) -> String {
    if visible_width(&row) > width {
        truncate_to_width(&row, width, "", false)
    } else {
        row
    }
}

/// The label, or the value when the label is empty.
fn display_value(item: &Suggestion) -> &str {
    if item.label.is_empty() {
        &item.value
    } else {
        &item.label
    }
}
