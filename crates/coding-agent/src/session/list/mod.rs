//! Listing session files with their metadata, for the resume picker.
//!
//! Each folder keeps a listing index (see [`index`]): a file listed before is read only
//! from where the last listing stopped, so listing thousands of sessions and gigabytes
//! reads what was appended since, not the files. Files are read on every core.

mod index;
mod scan;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::SystemTime;

use index::{Index, Record};
use scan::Scan;

pub use index::INDEX_FILE;

/// What the resume picker shows of one session file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub path: PathBuf,
    pub id: String,
    /// Working directory the session was started in (empty for old sessions).
    pub cwd: String,
    /// The name given by the last `session_info` entry.
    pub name: Option<String>,
    pub parent_session: Option<String>,
    /// The header's timestamp.
    pub created: String,
    /// The file's modification time.
    pub modified: SystemTime,
    pub message_count: usize,
    /// The first user message's text, or `(no messages)`.
    pub first_message: String,
    /// The text of the user and assistant messages, for search (the first 8 KiB).
    pub all_messages_text: String,
}

/// The sessions of one session directory, newest modified first; unreadable files and
/// files without a session header are skipped.
pub fn list_sessions(dir: &Path) -> Vec<SessionInfo> {
    list_folders(vec![dir.to_path_buf()])
}

/// The sessions of every project directory under `sessions_root`, newest modified first.
pub fn list_all_sessions(sessions_root: &Path) -> Vec<SessionInfo> {
    let Ok(entries) = std::fs::read_dir(sessions_root) else {
        return Vec::new();
    };
    let folders = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        // `is_dir` follows a symlinked project folder (pi 0.84).
        .filter(|path| path.is_dir())
        .collect();
    list_folders(folders)
}

/// One session file to list, with what its folder's index kept of it.
struct Listed {
    folder: usize,
    path: PathBuf,
    name: String,
    len: u64,
    modified: SystemTime,
    kept: Option<Record>,
}

/// What listing one file found: a new record for the index (none when the kept one still
/// holds) and the scan including an unterminated last line, when that differs.
struct Found {
    record: Option<Record>,
    with_tail: Option<Scan>,
}

impl Found {
    /// The record now true of the file: the new one or the one kept.
    fn record<'a>(&'a self, item: &'a Listed) -> Option<&'a Record> {
        self.record.as_ref().or(item.kept.as_ref())
    }
}

fn list_folders(folders: Vec<PathBuf>) -> Vec<SessionInfo> {
    let mut indexes: Vec<Index> = folders.iter().map(|d| Index::load(d)).collect();
    let mut listed = Vec::new();
    for (folder, dir) in folders.iter().enumerate() {
        for (path, name, meta) in jsonl_files(dir) {
            let Ok(modified) = meta.modified() else {
                continue;
            };
            let kept = indexes[folder].take(&name);
            listed.push(Listed {
                folder,
                path,
                name,
                len: meta.len(),
                modified,
                kept,
            });
        }
    }
    let found = read_all(&listed);
    // Rewrite an index when a file changed, appeared or went away.
    for (folder, dir) in folders.iter().enumerate() {
        let stale = !indexes[folder].is_empty();
        let mut changed = stale;
        let mut records = Vec::new();
        for (item, result) in listed.iter().zip(&found) {
            if item.folder != folder {
                continue;
            }
            match result.as_ref().and_then(|f| Some((f, f.record(item)?))) {
                Some((found, record)) => {
                    changed |= found.record.is_some();
                    records.push((item.name.as_str(), record));
                }
                None => changed |= item.kept.is_some(),
            }
        }
        if changed {
            Index::save(dir, &records);
        }
    }
    let mut sessions: Vec<SessionInfo> = listed
        .into_iter()
        .zip(found)
        .filter_map(|(item, found)| {
            let found = found?;
            let scan = match found.with_tail {
                Some(scan) => scan,
                None => found.record.or(item.kept)?.scan,
            };
            info_from(&item.path, item.modified, scan)
        })
        .collect();
    sort_newest_first(&mut sessions);
    sessions
}

/// Reads every listed file on every core (a few large files read side by side).
fn read_all(listed: &[Listed]) -> Vec<Option<Found>> {
    let results: Vec<Mutex<Option<Found>>> = listed.iter().map(|_| Mutex::new(None)).collect();
    let next = AtomicUsize::new(0);
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(listed.len());
    let work = || {
        let mut buf = Vec::new();
        loop {
            let n = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = listed.get(n) else {
                break;
            };
            let found = read_listed(item, &mut buf);
            if let Ok(mut slot) = results[n].lock() {
                *slot = found;
            }
        }
    };
    if workers <= 1 {
        work();
    } else {
        std::thread::scope(|scope| {
            for _ in 0..workers {
                scope.spawn(work);
            }
        });
    }
    results
        .into_iter()
        .map(|slot| slot.into_inner().ok().flatten())
        .collect()
}

/// Reads what is new in one file: nothing when the index has it as it is, the appended
/// part when it grew, the whole file otherwise.
fn read_listed(item: &Listed, buf: &mut Vec<u8>) -> Option<Found> {
    if let Some(kept) = &item.kept
        && kept.unchanged(item.len, item.modified)
        && kept.end == item.len
    {
        return Some(Found {
            record: None,
            with_tail: None,
        });
    }
    let mut file = File::open(&item.path).ok()?;
    let (start, offset) = match &item.kept {
        Some(kept) if kept.continues_in(&mut file, item.len) => (kept.scan.clone(), kept.end),
        _ => (Scan::default(), 0),
    };
    let scanned = start.read_on(&mut file, offset, item.len, buf).ok()?;
    let with_tail = (scanned.with_tail != scanned.complete).then_some(scanned.with_tail);
    let record = Record::new(
        &mut file,
        item.len,
        item.modified,
        scanned.complete_end,
        scanned.complete,
    )
    .ok()?;
    let changed = item.kept.as_ref() != Some(&record);
    Some(Found {
        record: changed.then_some(record),
        with_tail,
    })
}

fn info_from(path: &Path, modified: SystemTime, scan: Scan) -> Option<SessionInfo> {
    let header = scan.header?;
    Some(SessionInfo {
        path: path.to_path_buf(),
        id: header.id,
        cwd: header.cwd,
        name: scan.name,
        parent_session: header.parent_session,
        created: header.created,
        modified,
        message_count: scan.message_count,
        first_message: if scan.first_message.is_empty() {
            "(no messages)".into()
        } else {
            scan.first_message
        },
        all_messages_text: scan.search_text,
    })
}

fn sort_newest_first(sessions: &mut [SessionInfo]) {
    sessions.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
}

/// The `.jsonl` files of a folder with their names and metadata.
fn jsonl_files(dir: &Path) -> Vec<(PathBuf, String, std::fs::Metadata)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            if !name.ends_with(".jsonl") {
                return None;
            }
            let path = e.path();
            // Follows a symlink, as the old listing did.
            let meta = std::fs::metadata(&path).ok()?;
            meta.is_file().then_some((path, name, meta))
        })
        .collect()
}

#[cfg(test)]
mod tests;
