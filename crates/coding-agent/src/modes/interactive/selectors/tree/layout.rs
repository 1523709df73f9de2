//! Which nodes show and where: filters, search and folds pick the visible nodes, which
//! get their indentation, connectors and gutters; branch-wise cursor moves.

use std::collections::{HashMap, HashSet};

use super::node::{Class, Node};
use super::{FilterMode, TreeSelector};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Gutter {
    /// The display indent level where the ancestor's connector was drawn.
    pub(super) position: usize,
    /// Draw `│` (more siblings follow) or blank.
    pub(super) show: bool,
}

/// A visible node with its place in the drawn tree.
#[derive(Debug, Clone)]
pub(super) struct Row {
    pub(super) node: usize,
    pub(super) indent: usize,
    pub(super) show_connector: bool,
    pub(super) is_last: bool,
    pub(super) gutters: Vec<Gutter>,
    pub(super) virtual_root_child: bool,
}

/// Pre-order over the tree, the branch holding the active leaf first at every fork.
pub(super) fn flatten(nodes: &[Node], active: &HashSet<usize>) -> Vec<usize> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); nodes.len()];
    let mut roots = Vec::new();
    for (i, node) in nodes.iter().enumerate() {
        match node.parent {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let active_first = |list: &mut Vec<usize>| {
        list.sort_by_key(|n| !active.contains(n));
    };
    active_first(&mut roots);
    for list in &mut children {
        active_first(list);
    }
    let mut out = Vec::with_capacity(nodes.len());
    let mut seen = vec![false; nodes.len()];
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(n) = stack.pop() {
        if std::mem::replace(&mut seen[n], true) {
            continue;
        }
        out.push(n);
        stack.extend(children[n].iter().rev());
    }
    out
}

impl TreeSelector {
    fn passes(&self, n: usize, tokens: &[String]) -> bool {
        let node = &self.nodes[n];
        if let Class::Assistant { has_text, failed } = node.class
            && !has_text
            && !failed
            && Some(n) != self.leaf
        {
            return false;
        }
        let shown = match self.filter {
            FilterMode::Default => node.class != Class::Settings,
            FilterMode::NoTools => !matches!(node.class, Class::Settings | Class::ToolResult),
            FilterMode::UserOnly => node.class == Class::User,
            FilterMode::LabeledOnly => node.label.is_some(),
            FilterMode::All => true,
        };
        shown && tokens.iter().all(|t| node.search.contains(t.as_str()))
    }

    pub(super) fn apply_filter(&mut self) {
        if let Some(row) = self.rows.get(self.selected) {
            self.last_selected = Some(row.node);
        }
        let tokens: Vec<String> = self
            .search
            .query()
            .to_lowercase()
            .split_whitespace()
            .map(str::to_owned)
            .collect();
        let mut visible: Vec<usize> = self
            .flat
            .iter()
            .copied()
            .filter(|n| self.passes(*n, &tokens))
            .collect();
        if !self.folded.is_empty() {
            let mut skip: HashSet<usize> = HashSet::new();
            for &n in &self.flat {
                if let Some(p) = self.nodes[n].parent
                    && (self.folded.contains(&p) || skip.contains(&p))
                {
                    skip.insert(n);
                }
            }
            visible.retain(|n| !skip.contains(n));
        }
        self.recalculate(&visible);
        self.selected = match self.last_selected {
            Some(n) => self.nearest_visible(n),
            None => self.selected.min(self.rows.len().saturating_sub(1)),
        };
        if let Some(row) = self.rows.get(self.selected) {
            self.last_selected = Some(row.node);
        }
    }

    /// The row of `n` or of its nearest shown ancestor; the last row otherwise.
    fn nearest_visible(&self, n: usize) -> usize {
        let positions: HashMap<usize, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.node, i))
            .collect();
        let mut cursor = Some(n);
        let mut steps = 0;
        while let Some(c) = cursor {
            if let Some(i) = positions.get(&c) {
                return *i;
            }
            steps += 1;
            if steps > self.nodes.len() {
                break;
            }
            cursor = self.nodes[c].parent;
        }
        self.rows.len().saturating_sub(1)
    }

    /// Indentation, connectors and gutters for the shown nodes: hidden entries' children
    /// hang from their nearest shown ancestor.
    fn recalculate(&mut self, visible: &[usize]) {
        let shown: HashSet<usize> = visible.iter().copied().collect();
        let mut parent_of: HashMap<usize, Option<usize>> = HashMap::new();
        let mut children: HashMap<Option<usize>, Vec<usize>> = HashMap::new();
        children.insert(None, Vec::new());
        for &n in visible {
            let mut ancestor = self.nodes[n].parent;
            let mut steps = 0;
            while let Some(a) = ancestor {
                if shown.contains(&a) || steps > self.nodes.len() {
                    break;
                }
                ancestor = self.nodes[a].parent;
                steps += 1;
            }
            let ancestor = ancestor.filter(|a| shown.contains(a));
            parent_of.insert(n, ancestor);
            children.entry(ancestor).or_default().push(n);
        }
        let roots = children.get(&None).cloned().unwrap_or_default();
        let multiple_roots = roots.len() > 1;
        let mut rows = Vec::with_capacity(visible.len());
        // (node, indent, just_branched, show_connector, is_last, gutters, virtual_root_child)
        type Item = (usize, usize, bool, bool, bool, Vec<Gutter>, bool);
        let mut stack: Vec<Item> = roots
            .iter()
            .enumerate()
            .rev()
            .map(|(i, n)| {
                (
                    *n,
                    usize::from(multiple_roots),
                    multiple_roots,
                    multiple_roots,
                    i + 1 == roots.len(),
                    Vec::new(),
                    multiple_roots,
                )
            })
            .collect();
        let mut seen = HashSet::new();
        while let Some((n, indent, just_branched, show_connector, is_last, gutters, virt)) =
            stack.pop()
        {
            if !seen.insert(n) {
                continue;
            }
            let kids = children.get(&Some(n)).cloned().unwrap_or_default();
            let multiple = kids.len() > 1;
            let child_indent = if multiple || (just_branched && indent > 0) {
                indent + 1
            } else {
                indent
            };
            let connector_shown = show_connector && !virt;
            let display_indent = if multiple_roots {
                indent.saturating_sub(1)
            } else {
                indent
            };
            let mut child_gutters = gutters.clone();
            if connector_shown {
                child_gutters.push(Gutter {
                    position: display_indent.saturating_sub(1),
                    show: !is_last,
                });
            }
            for (i, kid) in kids.iter().enumerate().rev() {
                stack.push((
                    *kid,
                    child_indent,
                    multiple,
                    multiple,
                    i + 1 == kids.len(),
                    child_gutters.clone(),
                    false,
                ));
            }
            rows.push(Row {
                node: n,
                indent,
                show_connector,
                is_last,
                gutters,
                virtual_root_child: virt,
            });
        }
        self.rows = rows;
        self.multiple_roots = multiple_roots;
        self.visible_parent = parent_of;
        self.visible_children = children;
    }

    /// A node folds when it has shown children and starts a branch segment (or is a root).
    pub(super) fn is_foldable(&self, n: usize) -> bool {
        if self
            .visible_children
            .get(&Some(n))
            .is_none_or(|c| c.is_empty())
        {
            return false;
        }
        match self.visible_parent.get(&n).copied().flatten() {
            None => true,
            Some(p) => self
                .visible_children
                .get(&Some(p))
                .is_some_and(|s| s.len() > 1),
        }
    }

    /// The row of the next branch segment start up (parent chain) or down (first children).
    pub(super) fn branch_segment_start(&self, down: bool) -> usize {
        let Some(row) = self.rows.get(self.selected) else {
            return self.selected;
        };
        let positions: HashMap<usize, usize> = self
            .rows
            .iter()
            .enumerate()
            .map(|(i, r)| (r.node, i))
            .collect();
        let position = |n: usize| positions.get(&n).copied().unwrap_or(self.selected);
        let mut current = row.node;
        for _ in 0..=self.nodes.len() {
            if down {
                let kids = self
                    .visible_children
                    .get(&Some(current))
                    .cloned()
                    .unwrap_or_default();
                match kids.as_slice() {
                    [] => return position(current),
                    [only] => current = *only,
                    [first, ..] => return position(*first),
                }
            } else {
                let Some(parent) = self.visible_parent.get(&current).copied().flatten() else {
                    return position(current);
                };
                let siblings = self.visible_children.get(&Some(parent)).map_or(0, Vec::len);
                if siblings > 1 && position(current) < self.selected {
                    return position(current);
                }
                current = parent;
            }
        }
        self.selected
    }
}
