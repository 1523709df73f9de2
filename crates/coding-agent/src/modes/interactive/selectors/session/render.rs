//! Drawing the picker: the header with scope, sort and filter states, one line per
//! session (tree connectors, message count, age, folder) and the key hints.

use std::time::SystemTime;

use pi_tui::width::{truncate_to_width, visible_width};

use super::super::{fit, one_line, scroll_start};
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
    /// `key desc` as pi's `keyHint` draws it: the action's keys dim, the words muted.
    fn key_hint(&self, action: &str, default: &str, what: &str) -> String {
        let t = &self.theme;
        let keys = self
            .hint_keys
            .iter()
            .find(|(id, _)| id == action)
            .map_or(default, |(_, k)| k.as_str());
        format!(
            "{}{}",
            t.fg(ThemeColor::Dim).paint(keys),
            t.fg(ThemeColor::Muted).paint(&format!(" {what}"))
        )
    }

    fn header(&self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let accent = t.fg(ThemeColor::Accent);
        let title = match self.scope {
            SessionScope::Current => "Resume Session (Current Folder)",
            SessionScope::All => "Resume Session (All)",
        };
        let left = pi_tui::Style::plain().bold().paint(title);
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
        let right = truncate_to_width(
            &format!(
                "{scope}  {}{}  {}{}",
                muted.paint("Name: "),
                accent.paint(name),
                muted.paint("Sort: "),
                accent.paint(sort)
            ),
            width,
            "",
            false,
        );
        let room = width.saturating_sub(visible_width(&right) + 1);
        let left = truncate_to_width(&left, room, "", false);
        let gap = width.saturating_sub(visible_width(&left) + visible_width(&right));
        let first = format!("{left}{}{right}", " ".repeat(gap));
        let sep = muted.paint(" · ");
        let (hint1, hint2) = if self.confirming_delete.is_some() {
            let text = format!(
                "Delete session? {} · {}",
                self.key_hint("tui.select.confirm", "enter", "confirm"),
                self.key_hint("tui.select.cancel", "escape", "cancel")
            );
            (
                t.fg(ThemeColor::Error)
                    .paint(&truncate_to_width(&text, width, "…", false)),
                String::new(),
            )
        } else if let Some((is_error, message)) = &self.status {
            let color = if *is_error {
                ThemeColor::Error
            } else {
                ThemeColor::Accent
            };
            (
                t.fg(color)
                    .paint(&truncate_to_width(message, width, "…", false)),
                String::new(),
            )
        } else {
            let path_state = if self.show_path { "(on)" } else { "(off)" };
            let hint1 = format!(
                "{}{sep}{}",
                self.key_hint("tui.input.tab", "tab", "scope"),
                muted.paint("re:<pattern> regex · \"phrase\" exact")
            );
            let hint2 = [
                self.key_hint("app.session.toggleSort", "ctrl+s", "sort"),
                self.key_hint("app.session.toggleNamedFilter", "ctrl+n", "named"),
                self.key_hint("app.session.delete", "ctrl+d", "delete"),
                self.key_hint(
                    "app.session.togglePath",
                    "ctrl+p",
                    &format!("path {path_state}"),
                ),
                self.key_hint("app.session.rename", "ctrl+r", "rename"),
            ]
            .join(&sep);
            (
                truncate_to_width(&hint1, width, "…", false),
                truncate_to_width(&hint2, width, "…", false),
            )
        };
        vec![first, hint1, hint2]
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
        let mut right = format!(
            "{} {}",
            session.message_count,
            format_age(session.modified, now)
        );
        if self.scope == SessionScope::All && !session.cwd.is_empty() {
            right = format!("{} {right}", shorten_home(&session.cwd));
        }
        if self.show_path {
            right = format!("{} {right}", shorten_home(&session.path.to_string_lossy()));
        }
        let room = width
            .saturating_sub(2 + visible_width(&prefix) + visible_width(&right) + 2)
            .max(10);
        let text = truncate_to_width(&display, room, "…", false);
        let deleting = self.confirming_delete.as_ref() == Some(&session.path);
        let is_current = self
            .current_session
            .as_ref()
            .is_some_and(|p| *p == canonical(&session.path));
        let color = if deleting {
            Some(ThemeColor::Error)
        } else if is_current {
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
            t.fg(ThemeColor::Accent).paint("› ")
        } else {
            "  ".to_owned()
        };
        let left = format!(
            "{cursor}{}{}",
            t.fg(ThemeColor::Dim).paint(&prefix),
            style.paint(&text)
        );
        let gap = width
            .saturating_sub(visible_width(&left) + visible_width(&right))
            .max(1);
        let right_color = if deleting {
            ThemeColor::Error
        } else {
            ThemeColor::Dim
        };
        let line = format!(
            "{left}{}{}",
            " ".repeat(gap),
            t.fg(right_color).paint(&right)
        );
        let line = truncate_to_width(&line, width, "…", false);
        if is_selected {
            t.bg(ThemeBg::SelectedBg).paint(&line)
        } else {
            line
        }
    }

    pub(super) fn render_lines(&mut self, width: usize) -> Vec<String> {
        let t = &self.theme;
        let muted = t.fg(ThemeColor::Muted);
        let edge = t.fg(ThemeColor::Accent).paint(&"─".repeat(width));
        let mut lines = vec![String::new(), edge.clone(), String::new()];
        if let Some(rename) = &self.renaming {
            lines.push(fit(
                &format!(" {}", pi_tui::Style::plain().bold().paint("Rename Session")),
                width,
            ));
            lines.push(String::new());
            lines.extend(rename.input.render(width));
            lines.push(String::new());
            let confirm = self.hint_key("tui.select.confirm", "enter");
            let cancel = self.hint_key("tui.select.cancel", "escape");
            lines.push(fit(
                &format!(
                    " {}",
                    muted.paint(&format!("{confirm} to save · {cancel} to cancel"))
                ),
                width,
            ));
            lines.push(String::new());
            lines.push(edge);
            return lines;
        }
        lines.extend(self.header(width));
        lines.push(String::new());
        lines.extend(self.search.render(width));
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
            lines.push(muted.paint(&truncate_to_width(message, width, "…", false)));
        }
        let now = SystemTime::now();
        let start = scroll_start(self.selected, len, MAX_VISIBLE);
        let end = (start + MAX_VISIBLE).min(len);
        for i in start..end {
            lines.push(self.row_line(&self.rows[i], i == self.selected, now, width));
        }
        if start > 0 || end < len {
            lines.push(muted.paint(&truncate_to_width(
                &format!("  ({}/{len})", self.selected + 1),
                width,
                "",
                false,
            )));
        }
        lines.push(String::new());
        lines.push(edge);
        lines
    }
}
