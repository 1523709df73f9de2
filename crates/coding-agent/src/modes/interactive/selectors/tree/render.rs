//! Drawing: the header with hints and search, one line per visible row, the status line.

use pi_tui::keybindings::Keybindings;
use pi_tui::width::{visible_width, wrap_text_with_ansi};

use super::super::{border, fit};
use super::layout::Row;
use super::node::Paint;
use super::{FilterMode, TreeSelector};
use crate::modes::interactive::theme::{ThemeBg, ThemeColor};

/// The first key of each action, shortened as pi 1.6's tree help shows them: a shared
/// modifier written once (`ctrl+d/t/u/l/a`), arrows as `↑`, `←`.
fn help_keys(keys: &Keybindings, actions: &[&str]) -> String {
    let firsts: Vec<String> = actions
        .iter()
        .filter_map(|a| keys.keys(a).first().cloned())
        .collect();
    let joined = match firsts.as_slice() {
        [] => return String::new(),
        [one] => one.clone(),
        many => {
            let split = |k: &str| match k.rfind('+') {
                Some(i) => (k[..=i].to_owned(), k[i + 1..].to_owned()),
                None => (String::new(), k.to_owned()),
            };
            let (prefix, _) = split(&many[0]);
            if !prefix.is_empty() && many.iter().all(|k| split(k).0 == prefix) {
                let suffixes: Vec<String> = many.iter().map(|k| split(k).1).collect();
                format!("{prefix}{}", suffixes.join("/"))
            } else {
                many.join("/")
            }
        }
    };
    joined
        .split('/')
        .map(|part| {
            part.split('+')
                .map(|word| match word {
                    "pageUp" => "pgup",
                    "pageDown" => "pgdn",
                    "up" => "↑",
                    "down" => "↓",
                    "left" => "←",
                    "right" => "→",
                    other => other,
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The tree's help items (pi 1.6's `TREE_HELP_ITEMS`) with the user's keys.
pub(super) fn help_items(keys: &Keybindings) -> Vec<String> {
    let items: [(&[&str], &str, bool); 8] = [
        (&["tui.select.up", "tui.select.down"], "move", false),
        (
            &["tui.editor.cursorLeft", "tui.editor.cursorRight"],
            "page",
            false,
        ),
        (
            &["app.tree.foldOrUp", "app.tree.unfoldOrDown"],
            "branch",
            false,
        ),
        (&["app.message.copy"], "copy", false),
        (&["app.tree.editLabel"], "label", false),
        (&["app.tree.toggleLabelTimestamp"], "label time", false),
        (
            &[
                "app.tree.filter.default",
                "app.tree.filter.noTools",
                "app.tree.filter.userOnly",
                "app.tree.filter.labeledOnly",
                "app.tree.filter.all",
            ],
            "filters",
            true,
        ),
        (
            &[
                "app.tree.filter.cycleForward",
                "app.tree.filter.cycleBackward",
            ],
            "cycle",
            true,
        ),
    ];
    items
        .iter()
        .map(|(actions, label, label_first)| {
            let text = help_keys(keys, actions);
            match (text.is_empty(), label_first) {
                (true, _) => (*label).to_owned(),
                (false, true) => format!("{label} {text}"),
                (false, false) => format!("{text} {label}"),
            }
        })
        .collect()
}

/// A label's time as pi 1.6 shows it: `HH:MM` today, `M/D HH:MM` this year, else
/// `YY/M/D HH:MM` (UTC; pi shows local time).
fn label_time(iso: &str, now: &str) -> String {
    let num = |range: std::ops::Range<usize>| iso.get(range).and_then(|s| s.parse::<u32>().ok());
    let (Some(year), Some(month), Some(day)) = (num(0..4), num(5..7), num(8..10)) else {
        return String::new();
    };
    let time = iso.get(11..16).unwrap_or("");
    if iso.get(0..10) == now.get(0..10) {
        time.to_owned()
    } else if iso.get(0..4) == now.get(0..4) {
        format!("{month}/{day} {time}")
    } else {
        format!("{:02}/{month}/{day} {time}", year % 100)
    }
}

impl TreeSelector {
    fn status_labels(&self) -> String {
        let filter = match self.filter {
            FilterMode::Default => "",
            FilterMode::NoTools => " [no-tools]",
            FilterMode::UserOnly => " [user]",
            FilterMode::LabeledOnly => " [labeled]",
            FilterMode::All => " [all]",
        };
        let time = if self.show_label_time {
            " [+label time]"
        } else {
            ""
        };
        format!("{filter}{time}")
    }

    /// The help items, wrapped into rows with a two-space indent (pi's `TreeHelp`).
    fn help_rows(&self, width: usize) -> Vec<String> {
        let muted = self.theme.fg(ThemeColor::Muted);
        let width = width.max(1);
        let mut rows = Vec::new();
        let mut line = String::new();
        for item in &self.help {
            let indented = format!("  {item}");
            let candidate = if line.is_empty() {
                if visible_width(&indented) <= width {
                    indented.clone()
                } else {
                    item.clone()
                }
            } else {
                format!("{line} · {item}")
            };
            if line.is_empty() || visible_width(&candidate) <= width {
                line = candidate;
                continue;
            }
            rows.extend(wrap_text_with_ansi(line.trim_end(), width));
            line = if visible_width(&indented) <= width {
                indented
            } else {
                item.clone()
            };
        }
        if !line.is_empty() {
            rows.extend(wrap_text_with_ansi(line.trim_end(), width));
        }
        rows.into_iter().map(|r| muted.paint(&r)).collect()
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
            t.fg(ThemeColor::Accent).paint("› ")
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
        let label_time = match (&node.label, &node.label_time) {
            (Some(_), Some(time)) if self.show_label_time => t.fg(ThemeColor::Muted).paint(
                &format!("{} ", label_time(time, &crate::session::time::iso_now())),
            ),
            _ => String::new(),
        };
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
            "{cursor}{}{fold}{path}{label}{label_time}{content}",
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
        let mut lines = vec![String::new(), border(t, width)];
        lines.push(fit(
            &format!("   {}", pi_tui::Style::plain().bold().paint("Session Tree")),
            width,
        ));
        lines.extend(self.help_rows(width));
        let query = self.search.query();
        let search = if query.is_empty() {
            format!("  {} ", muted.paint("Type to search:"))
        } else {
            format!(
                "  {} {}",
                muted.paint("Type to search:"),
                t.fg(ThemeColor::Accent).paint(query)
            )
        };
        lines.push(fit(&search, width));
        lines.push(border(t, width));
        lines.push(String::new());
        if let Some((_, editor)) = &self.label_edit {
            let (confirm, cancel) = &self.label_keys;
            let dim = t.fg(ThemeColor::Dim);
            lines.push(fit(
                &format!("  {}", muted.paint("Label (empty to remove):")),
                width,
            ));
            for line in editor.render(width.saturating_sub(2)) {
                lines.push(fit(&format!("  {line}"), width));
            }
            lines.push(fit(
                &format!(
                    "  {}{}  {}{}",
                    dim.paint(confirm),
                    muted.paint(" save"),
                    dim.paint(cancel),
                    muted.paint(" cancel")
                ),
                width,
            ));
            lines.push(String::new());
            lines.push(border(t, width));
            return lines;
        }
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
        lines.push(String::new());
        lines.push(border(t, width));
        lines
    }
}
