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

use super::{SelectorOutcome, action, picker_component};
use crate::modes::interactive::extension_ui::line_input::LineInput;
use crate::modes::interactive::theme::Theme;
use crate::session::delete::delete_session_file;
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
    search: LineInput,
    theme: Theme,
    outcome: Option<SelectorOutcome<PathBuf>>,
    /// The key text of the actions the hints name (`app.session.delete` → `ctrl+d`).
    hint_keys: Vec<(String, String)>,
    /// The session asked about before deleting it.
    confirming_delete: Option<PathBuf>,
    /// A result line shown in place of the key hints until the next key (error or not).
    status: Option<(bool, String)>,
    /// Renaming a session: its file and the name typed.
    renaming: Option<Rename>,
}

/// A session being renamed.
struct Rename {
    path: PathBuf,
    input: LineInput,
}

/// Actions whose keys the header hints name.
const HINTED: [&str; 8] = [
    "tui.input.tab",
    "tui.select.confirm",
    "tui.select.cancel",
    "app.session.toggleSort",
    "app.session.toggleNamedFilter",
    "app.session.delete",
    "app.session.togglePath",
    "app.session.rename",
];

impl SessionSelector {
    /// A picker over this folder's sessions and every project's (Tab switches); starts
    /// on the current folder, even an empty one (pi 1.6 then says "Press Tab to view all").
    pub fn new(current: Vec<SessionInfo>, all: Vec<SessionInfo>, theme: &Theme) -> Self {
        let scope = SessionScope::Current;
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
            search: {
                let mut input = LineInput::new();
                input.set_focused(true);
                input
            },
            theme: theme.clone(),
            outcome: None,
            hint_keys: Vec::new(),
            confirming_delete: None,
            status: None,
            renaming: None,
        };
        selector.refilter();
        selector
    }

    /// Names the keys of the user's keybindings in the hints.
    pub fn set_keys(&mut self, keys: &Keybindings) {
        self.hint_keys = HINTED
            .iter()
            .map(|id| ((*id).to_owned(), keys.keys(id).join("/")))
            .filter(|(_, k)| !k.is_empty())
            .collect();
    }

    /// The keys of `action` as the hints show them.
    pub(super) fn hint_key<'a>(&'a self, action: &str, default: &'a str) -> &'a str {
        self.hint_keys
            .iter()
            .find(|(id, _)| id == action)
            .map_or(default, |(_, k)| k.as_str())
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
        let query = self.search.value().trim();
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
        self.status = None;
        if self.renaming.is_some() {
            self.handle_rename(input, keys);
            return SelectorOutcome::Pending;
        }
        if let Some(path) = self.confirming_delete.clone() {
            if keys.matches(input, "tui.select.confirm") {
                self.confirming_delete = None;
                self.delete(&path);
            } else if keys.matches(input, "tui.select.cancel") {
                self.confirming_delete = None;
            }
            return SelectorOutcome::Pending;
        }
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
        } else if action(keys, input, "app.session.delete", &["ctrl+d"])
            || (action(
                keys,
                input,
                "app.session.deleteNoninvasive",
                &["ctrl+backspace"],
            ) && self.search.value().is_empty())
        {
            self.ask_delete();
        } else if action(keys, input, "app.session.rename", &["ctrl+r"]) {
            if let Some(session) = self.selected() {
                let mut input = LineInput::with_value(session.name.as_deref().unwrap_or(""));
                input.set_focused(true);
                self.renaming = Some(Rename {
                    path: session.path.clone(),
                    input,
                });
            }
        } else if keys.matches(input, "tui.select.up") {
            self.selected = self.selected.saturating_sub(1);
        } else if keys.matches(input, "tui.select.down") {
            self.selected = (self.selected + 1).min(len.saturating_sub(1));
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
        } else {
            let before = self.search.value().to_owned();
            self.search.handle(input);
            if self.search.value() != before {
                self.refilter();
            }
        }
        SelectorOutcome::Pending
    }

    /// Ctrl+D: asks before deleting the selected session (never the running one).
    fn ask_delete(&mut self) {
        let Some(session) = self.selected() else {
            return;
        };
        let path = session.path.clone();
        if self
            .current_session
            .as_ref()
            .is_some_and(|p| *p == canonical(&path))
        {
            self.status = Some((
                true,
                "Cannot delete the currently active session".to_owned(),
            ));
            return;
        }
        self.confirming_delete = Some(path);
    }

    fn delete(&mut self, path: &Path) {
        match delete_session_file(path) {
            Ok(message) => {
                self.current.retain(|s| s.path != path);
                self.all.retain(|s| s.path != path);
                self.refilter();
                self.status = Some((false, message.to_owned()));
            }
            Err(message) => self.status = Some((true, message)),
        }
    }

    /// Keys while renaming: Enter saves a non-empty name into the session file, Esc leaves.
    fn handle_rename(&mut self, input: &Input, keys: &Keybindings) {
        let Some(rename) = self.renaming.as_mut() else {
            return;
        };
        if keys.matches(input, "tui.select.cancel") {
            self.renaming = None;
        } else if keys.matches(input, "tui.select.confirm") {
            let name = rename.input.value().trim().to_owned();
            if name.is_empty() {
                return;
            }
            let path = rename.path.clone();
            self.renaming = None;
            let cwd = std::env::current_dir().unwrap_or_default();
            let saved = crate::session::SessionManager::open(&path, &cwd)
                .and_then(|mut manager| manager.append_session_info(&name));
            match saved {
                Ok(_) => {
                    for session in self.current.iter_mut().chain(self.all.iter_mut()) {
                        if session.path == path {
                            session.name = Some(name.clone());
                        }
                    }
                    self.refilter();
                }
                Err(e) => self.status = Some((true, e.to_string())),
            }
        } else {
            rename.input.handle(input);
        }
    }
}

picker_component!(SessionSelector);
