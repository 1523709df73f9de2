//! `/resume` and `pi -r`: pick a session of this folder or of every project.
//!
//! Without a search the sessions show as a tree of forks (threaded); a search matches
//! fuzzy tokens, `"exact phrases"` or `re:<regex>` against id, name, messages and cwd.

mod render;
mod search;
#[cfg(test)]
mod tests;
mod threads;

use std::path::{Path, PathBuf};

use pi_tui::Input;
use pi_tui::keybindings::Keybindings;

use super::{SearchBox, SelectorOutcome, action, picker_component, wrap_next, wrap_prev};
use crate::modes::interactive::theme::Theme;
use crate::session::list::SessionInfo;

pub use render::format_age;
use search::{match_session, parse_query};
use threads::{Row, canonical, threaded_rows};

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
}

picker_component!(SessionSelector);
