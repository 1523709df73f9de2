//! `/tree`: the session's entry tree with branch connectors; pick an entry to continue from.
//!
//! Single-child chains stay flat, branch points indent their children with `├─`/`└─`
//! and `│` gutters; the branch holding the current leaf comes first. Filters hide
//! bookkeeping entries, typing searches, Ctrl+←/→ fold branches.

mod keys;
mod layout;
mod node;
mod render;
mod tool_call;

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

use std::collections::{HashMap, HashSet};

use super::{SearchBox, SelectorOutcome, picker_component};
use crate::modes::interactive::theme::Theme;
use crate::session::{EntryKind, SessionEntry};

use layout::{Row, flatten};
use node::{Node, describe, tool_call_map};

/// Which entries the tree shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FilterMode {
    /// Everything but settings and bookkeeping entries.
    Default,
    /// Default minus tool results.
    NoTools,
    /// User messages only.
    UserOnly,
    /// Labeled entries only.
    LabeledOnly,
    /// Every entry.
    All,
}

const FILTER_CYCLE: [FilterMode; 5] = [
    FilterMode::Default,
    FilterMode::NoTools,
    FilterMode::UserOnly,
    FilterMode::LabeledOnly,
    FilterMode::All,
];

/// The session tree picker; `Done(entry id)`.
pub struct TreeSelector {
    nodes: Vec<Node>,
    /// All nodes in display order (pre-order, active branch first).
    flat: Vec<usize>,
    leaf: Option<usize>,
    active: HashSet<usize>,
    filter: FilterMode,
    search: SearchBox,
    folded: HashSet<usize>,
    rows: Vec<Row>,
    visible_parent: HashMap<usize, Option<usize>>,
    visible_children: HashMap<Option<usize>, Vec<usize>>,
    multiple_roots: bool,
    selected: usize,
    last_selected: Option<usize>,
    max_rows: usize,
    theme: Theme,
    outcome: Option<SelectorOutcome<String>>,
}

impl TreeSelector {
    /// The tree of `entries` (labels taken from their label entries) with `leaf` selected,
    /// showing at most `max_rows` entries at once.
    pub fn new(
        entries: &[SessionEntry],
        leaf: Option<&str>,
        theme: &Theme,
        max_rows: usize,
    ) -> Self {
        let index: HashMap<&str, usize> = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.as_str(), i))
            .collect();
        let mut labels: HashMap<&str, String> = HashMap::new();
        for entry in entries {
            if let EntryKind::Label { target_id, label } = &entry.kind {
                match label.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
                    Some(l) => labels.insert(target_id.as_str(), l.to_owned()),
                    None => labels.remove(target_id.as_str()),
                };
            }
        }
        let tool_calls = tool_call_map(entries);
        let nodes: Vec<Node> = entries
            .iter()
            .enumerate()
            .map(|(i, entry)| {
                let parent = entry
                    .parent_id
                    .as_deref()
                    .and_then(|p| index.get(p).copied())
                    .filter(|p| *p != i);
                let label = labels.get(entry.id.as_str()).cloned();
                describe(entry, parent, label, &tool_calls)
            })
            .collect();
        let leaf = leaf.and_then(|l| index.get(l).copied());
        let mut active = HashSet::new();
        let mut cursor = leaf;
        while let Some(n) = cursor {
            if !active.insert(n) {
                break;
            }
            cursor = nodes[n].parent;
        }
        let flat = flatten(&nodes, &active);
        let mut selector = Self {
            nodes,
            flat,
            leaf,
            active,
            filter: FilterMode::Default,
            search: SearchBox::default(),
            folded: HashSet::new(),
            rows: Vec::new(),
            visible_parent: HashMap::new(),
            visible_children: HashMap::new(),
            multiple_roots: false,
            selected: 0,
            last_selected: leaf,
            max_rows: max_rows.max(1),
            theme: theme.clone(),
            outcome: None,
        };
        selector.apply_filter();
        selector
    }

    /// The finished outcome when driven through `Component::handle_input`.
    pub fn take_outcome(&mut self) -> Option<SelectorOutcome<String>> {
        self.outcome.take()
    }

    /// The entry id under the cursor.
    pub fn selected_id(&self) -> Option<&str> {
        let row = self.rows.get(self.selected)?;
        Some(self.nodes[row.node].id.as_str())
    }

    /// The active filter.
    pub fn filter(&self) -> FilterMode {
        self.filter
    }

    /// Starts with another filter.
    pub fn set_filter(&mut self, filter: FilterMode) {
        self.filter = filter;
        self.folded.clear();
        self.apply_filter();
    }

    /// The ids of the shown entries, top to bottom.
    pub fn visible_ids(&self) -> Vec<&str> {
        self.rows
            .iter()
            .map(|r| self.nodes[r.node].id.as_str())
            .collect()
    }
}

picker_component!(TreeSelector);
