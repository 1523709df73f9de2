//! The threaded order: forks under their parent session, newest first at every level,
//! with the connector lines each row needs.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::session::list::SessionInfo;

/// A row of the list: an index into the scope's sessions and its place in the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Row {
    pub(super) index: usize,
    pub(super) depth: usize,
    pub(super) is_last: bool,
    /// For each ancestor level, whether a connector line continues there.
    pub(super) continues: Vec<bool>,
}

pub(super) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Forks under their parents, newest first at every level.
pub(super) fn threaded_rows(sessions: &[SessionInfo], indices: &[usize]) -> Vec<Row> {
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
