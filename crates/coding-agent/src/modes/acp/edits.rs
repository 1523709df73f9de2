//! What the agent changed through the editor's files, for the diffs of `edit` and `write`
//! calls: the disk does not see those changes (the editor may not have saved them), so
//! the texts come from the writes themselves (and the editor's text just before).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

/// A file's text before and after a write through the editor (`None`: it was new).
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    pub old_text: Option<String>,
    pub new_text: String,
}

/// The changes written, by file.
#[derive(Default)]
pub struct EditorEdits {
    written: Mutex<HashMap<PathBuf, Change>>,
}

/// One key for `a/./b` and `a/b`.
fn key(path: &Path) -> PathBuf {
    path.components().collect()
}

impl EditorEdits {
    /// Records a write: the file went from `old_text` to `new_text`.
    pub fn written(&self, path: &Path, old_text: Option<String>, new_text: &str) {
        let path = key(path);
        let mut written = self.written.lock().unwrap_or_else(PoisonError::into_inner);
        // Several writes in one call: the diff runs from the first text to the last.
        let old_text = match written.remove(&path) {
            Some(earlier) => earlier.old_text,
            None => old_text,
        };
        written.insert(
            path,
            Change {
                old_text,
                new_text: new_text.to_owned(),
            },
        );
    }

    /// The change written to `path` since the last take, if any.
    pub fn take(&self, path: &Path) -> Option<Change> {
        self.written
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&key(path))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_writes_run_from_the_first_text_to_the_last() {
        let edits = EditorEdits::default();
        edits.written(Path::new("/w/./a.txt"), Some("one\n".into()), "two\n");
        edits.written(Path::new("/w/a.txt"), Some("two\n".into()), "three\n");
        assert_eq!(
            edits.take(Path::new("/w/a.txt")),
            Some(Change {
                old_text: Some("one\n".into()),
                new_text: "three\n".into()
            })
        );
        assert_eq!(edits.take(Path::new("/w/a.txt")), None);
    }
}
