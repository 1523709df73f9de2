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
use crate::modes::interactive::extension_ui::line_input::LineInput;
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

impl FilterMode {
    /// The `treeFilterMode` setting's value.
    pub fn from_setting(value: &str) -> Option<Self> {
        Some(match value {
            "default" => Self::Default,
            "no-tools" => Self::NoTools,
            "user-only" => Self::UserOnly,
            "labeled-only" => Self::LabeledOnly,
            "all" => Self::All,
            _ => return None,
        })
    }
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
    /// Label times shown after labels (`app.tree.toggleLabelTimestamp`).
    show_label_time: bool,
    /// The label being edited: the node and the text.
    label_edit: Option<(usize, LineInput)>,
    /// What the app is asked to do (copy an entry, save a label).
    requests: Vec<TreeRequest>,
    /// The help row items, with the user's keys (set by [`TreeSelector::set_keys`]).
    help: Vec<String>,
    /// The keys that save and cancel a label, as its hint names them.
    label_keys: (String, String),
}

/// Something the tree asks of the app.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TreeRequest {
    /// Copy this entry's text (`None`: it has none).
    Copy(Option<String>),
    /// Save a label for an entry (`None` removes it).
    Label(String, Option<String>),
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
        let mut labels: HashMap<&str, (String, String)> = HashMap::new();
        for entry in entries {
            if let EntryKind::Label { target_id, label } = &entry.kind {
                match label.as_deref().map(str::trim).filter(|l| !l.is_empty()) {
                    Some(l) => {
                        labels.insert(target_id.as_str(), (l.to_owned(), entry.timestamp.clone()))
                    }
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
                let (label, time) = labels.get(entry.id.as_str()).cloned().unzip();
                let mut node = describe(entry, parent, label, &tool_calls);
                node.label_time = time;
                node
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
            show_label_time: false,
            label_edit: None,
            requests: Vec::new(),
            help: Vec::new(),
            label_keys: ("enter".to_owned(), "escape".to_owned()),
        };
        selector.set_keys(&super::default_keys());
        selector.apply_filter();
        selector
    }

    /// The help rows name the user's keys, as pi 1.6's tree does.
    pub fn set_keys(&mut self, keys: &pi_tui::keybindings::Keybindings) {
        self.help = render::help_items(keys);
        self.label_keys = (
            keys.keys("tui.select.confirm").join("/"),
            keys.keys("tui.select.cancel").join("/"),
        );
    }

    /// What the tree asked of the app since the last call.
    pub fn take_requests(&mut self) -> Vec<TreeRequest> {
        std::mem::take(&mut self.requests)
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
