//! A new session from one branch of this one (`/fork`, RPC `fork`): the path to an entry,
//! its labels carried over, the old file named as the parent.

use std::collections::HashMap;

use super::super::entry::{EntryKind, SessionEntry};
use super::super::ids::short_id;
use super::{SessionError, SessionManager};

impl SessionManager {
    /// Turns this session into a new one holding only the path to `leaf` (labels on that
    /// path are carried over); its header names the old file as `parentSession`. The new
    /// file is written at once when the path holds an assistant message.
    pub fn create_branched_session(&mut self, leaf: &str) -> Result<(), SessionError> {
        if !self.by_id.contains_key(leaf) {
            return Err(SessionError::UnknownEntry(leaf.to_owned()));
        }
        let path = without_labels(self.path_to(Some(leaf)));
        let labels: Vec<(String, Option<String>, String)> = path
            .iter()
            .filter_map(|e| {
                let label_entry = self.entries.iter().rev().find(
                    |l| matches!(&l.kind, EntryKind::Label { target_id, .. } if *target_id == e.id),
                )?;
                match &label_entry.kind {
                    EntryKind::Label {
                        label: Some(label), ..
                    } => Some((
                        e.id.clone(),
                        Some(label.clone()),
                        label_entry.timestamp.clone(),
                    )),
                    _ => None,
                }
            })
            .collect();
        let previous = self.file.as_ref().map(|p| p.to_string_lossy().into_owned());
        self.new_session(previous);
        for entry in path {
            self.by_id.insert(entry.id.clone(), self.entries.len());
            self.leaf = Some(entry.id.clone());
            self.entries.push(entry);
        }
        for (target_id, label, timestamp) in labels {
            let id = short_id(|candidate| self.by_id.contains_key(candidate));
            self.by_id.insert(id.clone(), self.entries.len());
            self.entries.push(SessionEntry {
                id: id.clone(),
                parent_id: self.leaf.clone(),
                timestamp,
                kind: EntryKind::Label { target_id, label },
            });
            self.leaf = Some(id);
        }
        if self.has_conversation() {
            self.persist()?;
        }
        Ok(())
    }
}

/// A branch path without its label entries (they are written again after it), each kept
/// entry re-linked to the one before it, and a compaction whose kept boundary was a label
/// pointed at the entry after that label (pi 0.79.2, 0.85).
fn without_labels(path: Vec<&SessionEntry>) -> Vec<SessionEntry> {
    let mut kept: Vec<SessionEntry> = Vec::with_capacity(path.len());
    let mut replacement: HashMap<String, String> = HashMap::new();
    let mut pending: Vec<String> = Vec::new();
    for entry in path {
        if matches!(entry.kind, EntryKind::Label { .. }) {
            pending.push(entry.id.clone());
            continue;
        }
        for label in pending.drain(..) {
            replacement.insert(label, entry.id.clone());
        }
        let mut entry = entry.clone();
        entry.parent_id = kept.last().map(|e| e.id.clone());
        if let EntryKind::Compaction {
            first_kept_entry_id,
            ..
        } = &mut entry.kind
            && let Some(next) = replacement.get(first_kept_entry_id.as_str())
        {
            *first_kept_entry_id = next.clone();
        }
        kept.push(entry);
    }
    kept
}
