//! The listing index: what the last listing read of each session file in a folder, kept
//! beside them in `.session-index.json`, so the next listing reads only what was
//! appended since (session files only grow) and an unchanged file not at all.
//!
//! The index is a cache: a missing, unreadable or outdated one is rebuilt from the files,
//! and one that cannot be written (a read-only folder) is simply not kept.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::scan::Scan;

/// The index's file name in a session folder (not `.jsonl`: no pi lists it as a session).
pub const INDEX_FILE: &str = ".session-index.json";

/// Bumped when a record's meaning changes; an index of another version is rebuilt.
const VERSION: u32 = 1;

/// How many bytes at the start and before the end of the read part are kept to tell an
/// appended file from a rewritten one.
const MARK: u64 = 32;

/// The records of one folder, by file name.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Index {
    version: u32,
    files: HashMap<String, Record>,
}

/// What was read of one file, and how to know it is the same file grown.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct Record {
    /// The file's length and modification time when it was read.
    pub len: u64,
    pub modified_ns: u64,
    /// The offset the reading reached: just past the last complete line.
    pub end: u64,
    /// The first and the last bytes before `end`, in hex.
    pub head: String,
    pub tail: String,
    pub scan: Scan,
}

impl Index {
    /// The folder's index, or an empty one when there is none it can use.
    pub fn load(dir: &Path) -> Index {
        let Ok(bytes) = std::fs::read(dir.join(INDEX_FILE)) else {
            return Index::default();
        };
        match serde_json::from_slice::<Index>(&bytes) {
            Ok(index) if index.version == VERSION => index,
            _ => Index::default(),
        }
    }

    /// Whether no record is left (every file listed took its own).
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Takes the record kept for `name`.
    pub fn take(&mut self, name: &str) -> Option<Record> {
        self.files.remove(name)
    }

    /// Writes the index for `records` (file name → record) through a temporary file, so
    /// a listing running at the same time reads the old index or the new one, never half.
    pub fn save(dir: &Path, records: &[(&str, &Record)]) {
        let index = IndexRef {
            version: VERSION,
            files: records.iter().copied().collect(),
        };
        let Ok(bytes) = serde_json::to_vec(&index) else {
            return;
        };
        let temporary = dir.join(format!("{INDEX_FILE}.{}.tmp", std::process::id()));
        if std::fs::write(&temporary, bytes).is_err() {
            let _ = std::fs::remove_file(&temporary);
            return;
        }
        if std::fs::rename(&temporary, dir.join(INDEX_FILE)).is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
    }
}

/// The borrowed form of [`Index`] for writing.
#[derive(Serialize)]
struct IndexRef<'a> {
    version: u32,
    files: HashMap<&'a str, &'a Record>,
}

impl Record {
    /// A record for `scan`, which read `file` (of `len` bytes, modified at `modified`) up
    /// to `end`.
    pub fn new(
        file: &mut File,
        len: u64,
        modified: SystemTime,
        end: u64,
        scan: Scan,
    ) -> std::io::Result<Record> {
        Ok(Record {
            len,
            modified_ns: nanos(modified),
            end,
            head: hex(&read_at(file, 0, MARK.min(end))?),
            tail: hex(&read_at(file, end.saturating_sub(MARK), MARK.min(end))?),
            scan,
        })
    }

    /// Whether the file is exactly as when it was read (nothing to read again).
    pub fn unchanged(&self, len: u64, modified: SystemTime) -> bool {
        self.len == len && self.modified_ns == nanos(modified)
    }

    /// Whether `file` (now `len` bytes) still starts with what was read: the same file,
    /// grown, so reading can go on from `end`.
    pub fn continues_in(&self, file: &mut File, len: u64) -> bool {
        if len < self.end {
            return false;
        }
        let head = read_at(file, 0, MARK.min(self.end));
        let tail = read_at(file, self.end.saturating_sub(MARK), MARK.min(self.end));
        matches!((head, tail), (Ok(h), Ok(t)) if hex(&h) == self.head && hex(&t) == self.tail)
    }
}

fn nanos(time: SystemTime) -> u64 {
    time.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
}

fn read_at(file: &mut File, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = Vec::with_capacity(len as usize);
    file.take(len).read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
