//! Drawing: the header with hints and search, one line per visible row, the status line.

use super::super::{border, fit, hint_line, title};
use super::layout::Row;
use super::node::Paint;
use super::{FilterMode, TreeSelector};
use crate::modes::interactive::theme::{ThemeBg, ThemeColor};

impl TreeSelector {
    fn status_labels(&self) -> &'static str {
        match self.filter {
            FilterMode::Default => "",
            FilterMode::NoTools => " [no-tools]",
            FilterMode::UserOnly => " [user]",
            FilterMode::LabeledOnly => " [labeled]",
            FilterMode::All => " [all]",
        }
    }

    fn prefix(&self, row: &Row) -> String {
        let display_indent = if self.multiple_roots {
            row.indent.saturating_sub(1)
        } else {
            row.indent
        };
        let connector = row.show_connector && !row.virtual_root_child;
        let connector_level = if connector {
            display_indent.checked_sub(1)
        } else {
            None
        };
        let folded = self.folded.contains(&row.node);
        let mut out = String::with_capacity(display_indent * 3);
        for level in 0..display_indent {
            if let Some(g) = row.gutters.iter().find(|g| g.position == level) {
                out.push_str(if g.show { "│  " } else { "   " });
            } else if connector_level == Some(level) {
                out.push(if row.is_last { '└' } else { '├' });
                out.push(if folded {
                    '⊞'
                } else if self.is_foldable(row.node) {
                    '⊟'
                } else {
                    '─'
                });
                out.push(' ');
            } else {
                out.push_str("   ");
            }
        }
        out
    }

    fn row_line(&self, row: &Row, is_selected: bool, width: usize) -> String {
        let t = &self.theme;
        let node = &self.nodes[row.node];
        let cursor = if is_selected {
            t.fg(ThemeColor::Accent).paint("→ ")
        } else {
            "  ".to_owned()
        };
        let connector = row.show_connector && !row.virtual_root_child;
        let fold = if self.folded.contains(&row.node) && !connector {
            t.fg(ThemeColor::Accent).paint("⊞ ")
        } else {
            String::new()
        };
        let path = if self.active.contains(&row.node) {
            t.fg(ThemeColor::Accent).paint("• ")
        } else {
            String::new()
        };
        let label = node
            .label
            .as_ref()
            .map(|l| t.fg(ThemeColor::Warning).paint(&format!("[{l}] ")))
            .unwrap_or_default();
        let content: String = node
            .content
            .iter()
            .map(|(paint, text)| {
                let mut style = match paint {
                    Paint::Plain => pi_tui::Style::plain(),
                    Paint::Fg(c) => t.fg(*c),
                    Paint::ItalicFg(c) => t.fg(*c).italic(),
                };
                if is_selected {
                    style = style.bold();
                }
                style.paint(text)
            })
            .collect();
        let line = format!(
            "{cursor}{}{fold}{path}{label}{content}",
            t.fg(ThemeColor::Dim).paint(&self.prefix(row))
        );
        if is_selected {
            t.bg(ThemeBg::SelectedBg)
                .paint(&pi_tui::truncate_to_width(&line, width, "…", true))
        } else {
            fit(&line, width)
        }
    }

    pub(super) fn render_lines(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let mut lines = vec![border(t, width), title(t, "Session Tree", width)];
        lines.push(hint_line(
            t,
            &[
                ("↑↓", "move"),
                ("←→", "page"),
                ("ctrl+←→", "fold/branch"),
                ("enter", "select"),
                ("esc", "cancel"),
            ],
            width,
        ));
        lines.push(hint_line(
            t,
            &[
                ("ctrl+d/t/u/l/a", "filters"),
                ("ctrl+o", "cycle"),
                ("type", "search"),
            ],
            width,
        ));
        let query = self.search.query();
        let search = if query.is_empty() {
            format!("  {}", muted.paint("Type to search:"))
        } else {
            format!(
                "  {} {}",
                muted.paint("Type to search:"),
                t.fg(ThemeColor::Accent).paint(query)
            )
        };
        lines.push(fit(&search, width));
        lines.push(border(t, width));
        let len = self.rows.len();
        if len == 0 {
            lines.push(fit(&muted.paint("  No entries found"), width));
            lines.push(fit(
                &muted.paint(&format!("  (0/0){}", self.status_labels())),
                width,
            ));
        } else {
            let start = super::super::scroll_start(self.selected, len, self.max_rows);
            let end = (start + self.max_rows).min(len);
            for i in start..end {
                lines.push(self.row_line(&self.rows[i], i == self.selected, width));
            }
            lines.push(fit(
                &muted.paint(&format!(
                    "  ({}/{len}){}",
                    self.selected + 1,
                    self.status_labels()
                )),
                width,
            ));
        }
        lines.push(border(t, width));
        lines
    }
}
