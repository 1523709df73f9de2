//! `/resume` and `pi -r`: pick a session of this folder or of every project.
//!
//! Without a search the sessions show as a tree of forks (threaded); a search matches
//! fuzzy tokens, `"exact phrases"` or `re:<regex>` against id, name, messages and cwd.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use pi_tui::Input;
use pi_tui::fuzzy::fuzzy_match;
use pi_tui::keybindings::Keybindings;
use pi_tui::width::{truncate_to_width, visible_width};

use super::{
    SearchBox, SelectorOutcome, action, border, fit, hint_line, one_line, picker_component,
    scroll_start, spread, wrap_next, wrap_prev,
};
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};
use crate::session::list::SessionInfo;

const MAX_VISIBLE: usize = 10;

/// Which sessions are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionScope {
    /// The current folder's sessions.
    Current,
    /// Every project's sessions.
    All,
}

/// How the list is ordered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortMode {
    /// Forks under their parent session, newest first (a search sorts by relevance).
    Threaded,
    /// Newest first, flat.
    Recent,
    /// Best search match first.
    Relevance,
}

/// One search token.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Fuzzy(String),
    Phrase(String),
}

/// A parsed search query.
#[derive(Debug, Clone)]
enum Query {
    Tokens(Vec<Token>),
    Regex(regex::Regex),
    /// A `re:` pattern that does not compile: nothing matches.
    Invalid,
}

fn parse_query(query: &str) -> Query {
    let trimmed = query.trim();
    if let Some(pattern) = trimmed.strip_prefix("re:") {
        let pattern = pattern.trim();
        if pattern.is_empty() {
            return Query::Invalid;
        }
        return regex::RegexBuilder::new(pattern)
            .case_insensitive(true)
            .build()
            .map_or(Query::Invalid, Query::Regex);
    }
    let mut tokens = Vec::new();
    let mut buf = String::new();
    let mut in_quote = false;
    let flush = |buf: &mut String, tokens: &mut Vec<Token>, phrase: bool| {
        let value = buf.trim().to_owned();
        buf.clear();
        if !value.is_empty() {
            tokens.push(if phrase {
                Token::Phrase(value)
            } else {
                Token::Fuzzy(value)
            });
        }
    };
    for c in trimmed.chars() {
        if c == '"' {
            flush(&mut buf, &mut tokens, in_quote);
            in_quote = !in_quote;
        } else if !in_quote && c.is_whitespace() {
            flush(&mut buf, &mut tokens, false);
        } else {
            buf.push(c);
        }
    }
    if in_quote {
        // Unbalanced quotes: plain whitespace tokens.
        return Query::Tokens(
            trimmed
                .split_whitespace()
                .map(|t| Token::Fuzzy(t.to_owned()))
                .collect(),
        );
    }
    flush(&mut buf, &mut tokens, false);
    Query::Tokens(tokens)
}

fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

/// The match score of a session (lower is better), `None` when it does not match.
fn match_session(session: &SessionInfo, query: &Query) -> Option<f64> {
    let text = format!(
        "{} {} {} {}",
        session.id,
        session.name.as_deref().unwrap_or(""),
        session.all_messages_text,
        session.cwd
    );
    match query {
        Query::Invalid => None,
        Query::Regex(re) => re.find(&text).map(|m| m.start() as f64 * 0.1),
        Query::Tokens(tokens) => {
            let mut total = 0.0;
            let mut normalized: Option<String> = None;
            for token in tokens {
                match token {
                    Token::Phrase(phrase) => {
                        let haystack = normalized.get_or_insert_with(|| normalize(&text));
                        let phrase = normalize(phrase);
                        if phrase.is_empty() {
                            continue;
                        }
                        total += haystack.find(&phrase)? as f64 * 0.1;
                    }
                    Token::Fuzzy(value) => total += fuzzy_match(value, &text)?,
                }
            }
            Some(total)
        }
    }
}

/// A row of the list: an index into the scope's sessions and its place in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Row {
    index: usize,
    depth: usize,
    is_last: bool,
    /// For each ancestor level, whether a connector line continues there.
    continues: Vec<bool>,
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Forks under their parents, newest first at every level.
fn threaded_rows(sessions: &[SessionInfo], indices: &[usize]) -> Vec<Row> {
    let by_path: HashMap<PathBuf, usize> = indices
        .iter()
        .map(|i| (canonical(&sessions[*i].path), *i))
        .collect();
    let mut children: HashMap<usize, Vec<usize>> = HashMap::new();
    let mut roots = Vec::new();
    for &i in indices {
        let parent = sessions[i]
            .parent_session
            .as_deref()
            .filter(|p| !p.is_empty())
            .and_then(|p| by_path.get(&canonical(Path::new(p))))
            .filter(|p| **p != i);
        match parent {
            Some(p) => children.entry(*p).or_default().push(i),
            None => roots.push(i),
        }
    }
    let newest_first = |list: &mut Vec<usize>| {
        list.sort_by(|a, b| sessions[*b].modified.cmp(&sessions[*a].modified));
    };
    newest_first(&mut roots);
    for list in children.values_mut() {
        newest_first(list);
    }
    let mut rows = Vec::with_capacity(indices.len());
    // (index, depth, is_last, continues)
    let mut stack: Vec<(usize, usize, bool, Vec<bool>)> = roots
        .iter()
        .enumerate()
        .rev()
        .map(|(n, i)| (*i, 0, n + 1 == roots.len(), Vec::new()))
        .collect();
    let mut seen = std::collections::HashSet::new();
    while let Some((index, depth, is_last, continues)) = stack.pop() {
        if !seen.insert(index) {
            continue;
        }
        let kids = children.get(&index).cloned().unwrap_or_default();
        for (n, child) in kids.iter().enumerate().rev() {
            let mut next = continues.clone();
            next.push(depth > 0 && !is_last);
            stack.push((*child, depth + 1, n + 1 == kids.len(), next));
        }
        rows.push(Row {
            index,
            depth,
            is_last,
            continues,
        });
    }
    rows
}

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

/// The session picker; `Done(path of the session file)`.
pub struct SessionSelector {
    current: Vec<SessionInfo>,
    all: Vec<SessionInfo>,
    scope: SessionScope,
    sort: SortMode,
    named_only: bool,
    show_path: bool,
    current_session: Option<PathBuf>,
    rows: Vec<Row>,
    selected: usize,
    search: SearchBox,
    theme: Theme,
    outcome: Option<SelectorOutcome<PathBuf>>,
}

impl SessionSelector {
    /// A picker over this folder's sessions and every project's (Tab switches); starts
    /// on the current folder unless it has none.
    pub fn new(current: Vec<SessionInfo>, all: Vec<SessionInfo>, theme: &Theme) -> Self {
        let scope = if current.is_empty() && !all.is_empty() {
            SessionScope::All
        } else {
            SessionScope::Current
        };
        let mut selector = Self {
            current,
            all,
            scope,
            sort: SortMode::Threaded,
            named_only: false,
            show_path: false,
            current_session: None,
            rows: Vec::new(),
            selected: 0,
            search: SearchBox::default(),
            theme: theme.clone(),
            outcome: None,
        };
        selector.refilter();
        selector
    }

    /// Marks the running session's file (drawn in the accent color).
    pub fn set_current_session(&mut self, path: &Path) {
        self.current_session = Some(canonical(path));
    }

    /// The finished outcome when driven through `Component::handle_input`.
    pub fn take_outcome(&mut self) -> Option<SelectorOutcome<PathBuf>> {
        self.outcome.take()
    }

    /// Which sessions are listed.
    pub fn scope(&self) -> SessionScope {
        self.scope
    }

    /// The current ordering.
    pub fn sort_mode(&self) -> SortMode {
        self.sort
    }

    /// The session under the cursor.
    pub fn selected(&self) -> Option<&SessionInfo> {
        let row = self.rows.get(self.selected)?;
        self.sessions().get(row.index)
    }

    /// The listed sessions in display order.
    pub fn visible(&self) -> Vec<&SessionInfo> {
        let sessions = self.sessions();
        self.rows
            .iter()
            .filter_map(|r| sessions.get(r.index))
            .collect()
    }

    fn sessions(&self) -> &[SessionInfo] {
        match self.scope {
            SessionScope::Current => &self.current,
            SessionScope::All => &self.all,
        }
    }

    fn refilter(&mut self) {
        let selected_path = self.selected().map(|s| s.path.clone());
        let sessions = self.sessions();
        let candidates: Vec<usize> = (0..sessions.len())
            .filter(|i| !self.named_only || sessions[*i].name.is_some())
            .collect();
        let query = self.search.query().trim();
        let flat = |indices: Vec<usize>| -> Vec<Row> {
            indices
                .into_iter()
                .map(|index| Row {
                    index,
                    depth: 0,
                    is_last: true,
                    continues: Vec::new(),
                })
                .collect()
        };
        let rows = if query.is_empty() {
            match self.sort {
                SortMode::Threaded => threaded_rows(sessions, &candidates),
                _ => {
                    let mut sorted = candidates;
                    sorted.sort_by(|a, b| sessions[*b].modified.cmp(&sessions[*a].modified));
                    flat(sorted)
                }
            }
        } else {
            let parsed = parse_query(query);
            let mut scored: Vec<(f64, usize)> = candidates
                .into_iter()
                .filter_map(|i| match_session(&sessions[i], &parsed).map(|s| (s, i)))
                .collect();
            if self.sort == SortMode::Recent {
                scored.sort_by(|a, b| sessions[b.1].modified.cmp(&sessions[a.1].modified));
            } else {
                scored.sort_by(|a, b| {
                    a.0.total_cmp(&b.0)
                        .then_with(|| sessions[b.1].modified.cmp(&sessions[a.1].modified))
                });
            }
            flat(scored.into_iter().map(|(_, i)| i).collect())
        };
        self.rows = rows;
        let sessions = self.sessions();
        self.selected = if query.is_empty() {
            selected_path
                .and_then(|p| self.rows.iter().position(|r| sessions[r.index].path == p))
                .unwrap_or(0)
        } else {
            0
        };
    }

    /// Handle one input with the app's keybindings.
    pub fn handle(&mut self, input: &Input, keys: &Keybindings) -> SelectorOutcome<PathBuf> {
        let len = self.rows.len();
        if action(keys, input, "tui.input.tab", &["tab"]) {
            self.scope = match self.scope {
                SessionScope::Current => SessionScope::All,
                SessionScope::All => SessionScope::Current,
            };
            self.selected = 0;
            self.refilter();
            self.selected = 0;
        } else if action(keys, input, "app.session.toggleSort", &["ctrl+s"]) {
            self.sort = match self.sort {
                SortMode::Threaded => SortMode::Recent,
                SortMode::Recent => SortMode::Relevance,
                SortMode::Relevance => SortMode::Threaded,
            };
            self.refilter();
        } else if action(keys, input, "app.session.toggleNamedFilter", &["ctrl+n"]) {
            self.named_only = !self.named_only;
            self.refilter();
        } else if action(keys, input, "app.session.togglePath", &["ctrl+p"]) {
            self.show_path = !self.show_path;
        } else if keys.matches(input, "tui.select.up") {
            self.selected = wrap_prev(self.selected, len);
        } else if keys.matches(input, "tui.select.down") {
            self.selected = wrap_next(self.selected, len);
        } else if keys.matches(input, "tui.select.pageUp") {
            self.selected = self.selected.saturating_sub(MAX_VISIBLE);
        } else if keys.matches(input, "tui.select.pageDown") {
            self.selected = (self.selected + MAX_VISIBLE).min(len.saturating_sub(1));
        } else if keys.matches(input, "tui.select.confirm") {
            if let Some(session) = self.selected() {
                return SelectorOutcome::Done(session.path.clone());
            }
        } else if keys.matches(input, "tui.select.cancel") {
            return SelectorOutcome::Cancelled;
        } else if self.search.edit(input, keys) {
            self.refilter();
        }
        SelectorOutcome::Pending
    }

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

    fn render_lines(&mut self, width: usize) -> Vec<String> {
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

picker_component!(SessionSelector);

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;
    use pi_tui::{Component, KeyCode};
    use std::time::Duration;

    fn session(path: &str, first: &str, age_secs: u64) -> SessionInfo {
        SessionInfo {
            path: PathBuf::from(path),
            id: format!("id-{}", path.trim_start_matches('/')),
            cwd: "/home/user/project".into(),
            name: None,
            parent_session: None,
            created: "2025-01-01T00:00:00.000Z".into(),
            modified: SystemTime::now() - Duration::from_secs(age_secs),
            message_count: 4,
            first_message: first.into(),
            all_messages_text: format!("{first} and the answer"),
        }
    }

    fn current() -> Vec<SessionInfo> {
        let mut named = session("/s/b.jsonl", "refactor the parser", 3_600);
        named.name = Some("Parser work".into());
        let mut fork = session("/s/c.jsonl", "fork of a", 60);
        fork.parent_session = Some("/s/a.jsonl".into());
        let mut fork2 = session("/s/d.jsonl", "second fork of a", 120);
        fork2.parent_session = Some("/s/a.jsonl".into());
        vec![
            session("/s/a.jsonl", "fix the login bug", 7_200),
            named,
            fork,
            fork2,
        ]
    }

    fn all() -> Vec<SessionInfo> {
        let mut other = session("/o/x.jsonl", "deploy kubernetes cluster", 10);
        other.cwd = "/srv/ops".into();
        let mut list = current();
        list.push(other);
        list
    }

    fn paths(s: &SessionSelector) -> Vec<String> {
        s.visible()
            .iter()
            .map(|i| i.path.to_string_lossy().into_owned())
            .collect()
    }

    #[test]
    fn threaded_tree_without_search() {
        let mut s = SessionSelector::new(current(), all(), &theme());
        assert_eq!(
            paths(&s),
            ["/s/b.jsonl", "/s/a.jsonl", "/s/c.jsonl", "/s/d.jsonl"]
        );
        let plain = plain(&s.render(100));
        assert!(
            plain.iter().any(|l| l.starts_with("     ├─ fork of a")),
            "{plain:?}"
        );
        assert!(
            plain
                .iter()
                .any(|l| l.starts_with("     └─ second fork of a"))
        );
        assert!(
            plain
                .iter()
                .any(|l| l.starts_with("→ Parser work") && l.contains("4 messages · 1h"))
        );
    }

    #[test]
    fn search_filters_and_sorts() {
        let keys = keys();
        let mut s = SessionSelector::new(current(), all(), &theme());
        for c in "login".chars() {
            s.handle(&typed(c), &keys);
        }
        assert_eq!(paths(&s).first().map(String::as_str), Some("/s/a.jsonl"));
        s.search.clear();
        s.handle(&Input::Paste("\"parser\"".into()), &keys);
        assert_eq!(paths(&s), ["/s/b.jsonl"]);
        s.search.clear();
        s.handle(&Input::Paste("re:^id-s/c".into()), &keys);
        assert_eq!(paths(&s), ["/s/c.jsonl"]);
        s.search.clear();
        s.handle(&Input::Paste("re:(".into()), &keys);
        assert!(paths(&s).is_empty());
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Pending
        );
        for _ in 0..4 {
            s.handle(&key(KeyCode::Backspace), &keys);
        }
        assert_eq!(paths(&s).len(), 4);
    }

    #[test]
    fn tab_switches_scope_and_named_filter() {
        let keys = keys();
        let mut s = SessionSelector::new(current(), all(), &theme());
        assert_eq!(s.scope(), SessionScope::Current);
        s.handle(&key(KeyCode::Tab), &keys);
        assert_eq!(s.scope(), SessionScope::All);
        assert_eq!(paths(&s).first().map(String::as_str), Some("/o/x.jsonl"));
        let plain = plain(&s.render(120));
        assert!(plain.iter().any(|l| l.contains("Resume Session (All)")));
        assert!(plain.iter().any(|l| l.contains("/srv/ops")));
        s.handle(&ctrl('n'), &keys);
        assert_eq!(paths(&s), ["/s/b.jsonl"]);
        s.handle(&ctrl('s'), &keys);
        assert_eq!(s.sort_mode(), SortMode::Recent);
        let empty = SessionSelector::new(Vec::new(), all(), &theme());
        assert_eq!(empty.scope(), SessionScope::All);
    }

    #[test]
    fn navigation_wraps_and_outcomes() {
        let keys = keys();
        let mut s = SessionSelector::new(current(), all(), &theme());
        s.handle(&key(KeyCode::Up), &keys);
        assert_eq!(
            s.selected().map(|x| x.path.clone()),
            Some("/s/d.jsonl".into())
        );
        s.handle(&key(KeyCode::Down), &keys);
        s.handle(&key(KeyCode::Down), &keys);
        assert_eq!(
            s.handle(&key(KeyCode::Enter), &keys),
            SelectorOutcome::Done(PathBuf::from("/s/a.jsonl"))
        );
        assert_eq!(
            s.handle(&key(KeyCode::Esc), &keys),
            SelectorOutcome::Cancelled
        );
    }

    #[test]
    fn renders_within_width() {
        let mut many = all();
        for i in 0..20 {
            let mut extra = session(
                &format!("/very/long/path/to/a/session/file/number-{i}.jsonl"),
                "an extremely long first message that goes on and on past any terminal width you might have",
                86_400 * (i + 1),
            );
            extra.cwd = "/a/very/long/working/directory/path/that/is/long".into();
            many.push(extra);
        }
        let mut s = SessionSelector::new(many.clone(), many, &theme());
        s.handle(&ctrl('p'), &keys());
        for width in [40, 100] {
            for _ in 0..2 {
                let lines = s.render(width);
                assert_fits(&lines, width);
                s.handle(&key(KeyCode::Tab), &keys());
            }
        }
        let plain = plain(&s.render(40));
        assert!(plain.iter().any(|l| l.contains("(1/25)")));
    }

    #[test]
    fn ages_are_compact() {
        let now = SystemTime::now();
        let ago = |s: u64| format_age(now - Duration::from_secs(s), now);
        assert_eq!(ago(10), "now");
        assert_eq!(ago(300), "5m");
        assert_eq!(ago(7_200), "2h");
        assert_eq!(ago(86_400 * 3), "3d");
        assert_eq!(ago(86_400 * 14), "2w");
        assert_eq!(ago(86_400 * 60), "2mo");
        assert_eq!(ago(86_400 * 800), "2y");
    }

    #[test]
    fn query_parsing() {
        let Query::Tokens(tokens) = parse_query(r#"foo "node cve" bar"#) else {
            panic!("tokens expected");
        };
        assert_eq!(
            tokens,
            vec![
                Token::Fuzzy("foo".into()),
                Token::Phrase("node cve".into()),
                Token::Fuzzy("bar".into())
            ]
        );
        let Query::Tokens(tokens) = parse_query(r#"foo "open"#) else {
            panic!("tokens expected");
        };
        assert_eq!(tokens.len(), 2);
        assert!(matches!(parse_query("re:"), Query::Invalid));
        assert!(matches!(parse_query("re:a+"), Query::Regex(_)));
    }
}
