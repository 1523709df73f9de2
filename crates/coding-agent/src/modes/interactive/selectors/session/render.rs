//! Drawing the picker: the header with scope, sort and filter states, one line per
//! session (tree connectors, message count, age, folder) and the key hints.

use std::time::SystemTime;

use pi_tui::width::{truncate_to_width, visible_width};

use super::super::{border, fit, hint_line, one_line, scroll_start, spread};
use super::threads::{Row, canonical};
use super::{MAX_VISIBLE, SessionScope, SessionSelector, SortMode};
use crate::modes::interactive::theme::{ThemeBg, ThemeColor};

/// Compact age: `now`, `5m`, `3h`, `2d`, `1w`, `4mo`, `1y`.
pub fn format_age(modified: SystemTime, now: SystemTime) -> String {
    let secs = now
        .duration_since(modified)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let (mins, hours, days) = (secs / 60, secs / 3600, secs / 86400);
    if mins < 1 {
        "now".into()
    } else if mins < 60 {
        format!("{mins}m")
    } else if hours < 24 {
        format!("{hours}h")
    } else if days < 7 {
        format!("{days}d")
    } else if days < 30 {
        format!("{}w", days / 7)
    } else if days < 365 {
        format!("{}mo", days / 30)
    } else {
        format!("{}y", days / 365)
    }
}

/// `~/…` for paths under the home directory.
fn shorten_home(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && path.starts_with(&home) => {
            format!("~{}", &path[home.len()..])
        }
        _ => path.to_owned(),
    }
}

impl SessionSelector {
    fn header(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let accent = t.fg(ThemeColor::Accent);
        let title = match self.scope {
            SessionScope::Current => "Resume Session (Current Folder)",
            SessionScope::All => "Resume Session (All)",
        };
        let left = format!(" {}", t.fg(ThemeColor::Accent).bold().paint(title));
        let scope = match self.scope {
            SessionScope::Current => {
                format!(
                    "{}{}",
                    accent.paint("◉ Current Folder"),
                    muted.paint(" | ○ All")
                )
            }
            SessionScope::All => {
                format!(
                    "{}{}",
                    muted.paint("○ Current Folder | "),
                    accent.paint("◉ All")
                )
            }
        };
        let sort = match self.sort {
            SortMode::Threaded => "Threaded",
            SortMode::Recent => "Recent",
            SortMode::Relevance => "Fuzzy",
        };
        let name = if self.named_only { "Named" } else { "All" };
        let right = format!(
            "{scope}  {}{}  {}{}",
            muted.paint("Name: "),
            accent.paint(name),
            muted.paint("Sort: "),
            accent.paint(sort)
        );
        let mut lines = if visible_width(&left) + visible_width(&right) < width {
            vec![spread(&left, &right, width)]
        } else {
            vec![fit(&left, width), fit(&format!(" {right}"), width)]
        };
        let path_state = if self.show_path { "(on)" } else { "(off)" };
        lines.push(hint_line(
            t,
            &[
                ("tab", "scope"),
                ("re:<pattern>", "regex"),
                ("\"phrase\"", "exact"),
            ],
            width,
        ));
        lines.push(hint_line(
            t,
            &[
                ("ctrl+s", "sort"),
                ("ctrl+n", "named"),
                ("ctrl+p", &format!("path {path_state}")),
            ],
            width,
        ));
        lines
    }

    fn row_line(&self, row: &Row, is_selected: bool, now: SystemTime, width: usize) -> String {
        let t = &self.theme;
        let Some(session) = self.sessions().get(row.index) else {
            return String::new();
        };
        let prefix = if row.depth == 0 {
            String::new()
        } else {
            let mut p: String = row
                .continues
                .iter()
                .map(|c| if *c { "│  " } else { "   " })
                .collect();
            p.push_str(if row.is_last { "└─ " } else { "├─ " });
            p
        };
        let display = one_line(session.name.as_deref().unwrap_or(&session.first_message));
        let count = session.message_count;
        let mut right = vec![
            format!("{count} message{}", if count == 1 { "" } else { "s" }),
            format_age(session.modified, now),
        ];
        if self.scope == SessionScope::All && !session.cwd.is_empty() {
            right.push(shorten_home(&session.cwd));
        }
        if self.show_path {
            right.push(shorten_home(&session.path.to_string_lossy()));
        }
        let fixed = 2 + visible_width(&prefix);
        let mut right_text = right.join(" · ");
        while fixed + visible_width(&right_text) + 2 + 10 > width {
            if right.len() > 2 {
                right.pop();
                right_text = right.join(" · ");
            } else {
                right_text.clear();
                break;
            }
        }
        let room = width.saturating_sub(fixed + visible_width(&right_text) + 2);
        let text = truncate_to_width(&display, room.max(1), "…", false);
        let is_current = self
            .current_session
            .as_ref()
            .is_some_and(|p| *p == canonical(&session.path));
        let color = if is_current {
            Some(ThemeColor::Accent)
        } else if session.name.is_some() {
            Some(ThemeColor::Warning)
        } else {
            None
        };
        let mut style = color.map_or_else(pi_tui::Style::plain, |c| t.fg(c));
        if is_selected {
            style = style.bold();
        }
        let cursor = if is_selected {
            t.fg(ThemeColor::Accent).paint("→ ")
        } else {
            "  ".to_owned()
        };
        let left = format!(
            "{cursor}{}{}",
            t.fg(ThemeColor::Dim).paint(&prefix),
            style.paint(&text)
        );
        let line = if right_text.is_empty() {
            fit(&left, width)
        } else {
            spread(&left, &t.fg(ThemeColor::Muted).paint(&right_text), width)
        };
        if is_selected {
            t.bg(ThemeBg::SelectedBg)
                .paint(&truncate_to_width(&line, width, "…", true))
        } else {
            line
        }
    }

    pub(super) fn render_lines(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let mut lines = vec![border(t, width)];
        lines.extend(self.header(width));
        lines.push(String::new());
        lines.push(self.search.render(t, "Search:", width));
        lines.push(String::new());
        let len = self.rows.len();
        if len == 0 {
            let message = match (self.named_only, self.scope) {
                (true, SessionScope::All) => "  No named sessions found. Press ctrl+n to show all.",
                (true, SessionScope::Current) => {
                    "  No named sessions in current folder. Press ctrl+n to show all, or Tab to view all."
                }
                (false, SessionScope::All) => "  No sessions found",
                (false, SessionScope::Current) => {
                    "  No sessions in current folder. Press Tab to view all."
                }
            };
            lines.push(fit(&muted.paint(message), width));
        }
        let now = SystemTime::now();
        let start = scroll_start(self.selected, len, MAX_VISIBLE);
        let end = (start + MAX_VISIBLE).min(len);
        for i in start..end {
            lines.push(self.row_line(&self.rows[i], i == self.selected, now, width));
        }
        if start > 0 || end < len {
            lines.push(fit(
                &muted.paint(&format!("  ({}/{len})", self.selected + 1)),
                width,
            ));
        }
        lines.push(String::new());
        lines.push(hint_line(
            t,
            &[("↑↓", "navigate"), ("enter", "resume"), ("esc", "cancel")],
            width,
        ));
        lines.push(border(t, width));
        lines
    }
}
