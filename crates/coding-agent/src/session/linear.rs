//! How far a session's entries form one chain from the first entry (each the child of the
//! one before, as an unbranched session is written), so that a walk back to the root can
//! stop there and take the entries in file order instead of following every parent.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use super::entry::SessionEntry;

/// The length of the chain found so far; grows as entries are appended, found once.
#[derive(Debug, Default)]
pub struct LinearPrefix {
    until: AtomicUsize,
    broken: AtomicBool,
}

impl LinearPrefix {
    /// How many leading entries of `entries` (append-only) form one chain from the root.
    pub fn of(&self, entries: &[SessionEntry]) -> usize {
        let mut until = self.until.load(Ordering::Relaxed);
        if self.broken.load(Ordering::Relaxed) || until >= entries.len() {
            return until.min(entries.len());
        }
        if until == 0 {
            if entries[0].parent_id.is_some() {
                self.broken.store(true, Ordering::Relaxed);
                return 0;
            }
            until = 1;
        }
        while until < entries.len() {
            if entries[until].parent_id.as_deref() != Some(entries[until - 1].id.as_str()) {
                self.broken.store(true, Ordering::Relaxed);
                break;
            }
            until += 1;
        }
        self.until.store(until, Ordering::Relaxed);
        until
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::session::entry::EntryKind;

    fn entry(id: &str, parent: Option<&str>) -> SessionEntry {
        SessionEntry {
            id: id.into(),
            parent_id: parent.map(str::to_owned),
            timestamp: "t".into(),
            kind: EntryKind::SessionInfo { name: None },
        }
    }

    #[test]
    fn grows_with_the_chain_and_stops_at_a_branch() {
        let prefix = LinearPrefix::default();
        let mut entries = vec![entry("a", None), entry("b", Some("a"))];
        assert_eq!(prefix.of(&entries), 2);
        entries.push(entry("c", Some("b")));
        assert_eq!(prefix.of(&entries), 3);
        entries.push(entry("d", Some("a")));
        entries.push(entry("e", Some("d")));
        assert_eq!(prefix.of(&entries), 3);
        assert_eq!(prefix.of(&entries), 3);
        let rootless = LinearPrefix::default();
        assert_eq!(rootless.of(&[entry("x", Some("gone"))]), 0);
    }
}
