//! Finding session files from their headers: the newest session of a folder, and a session
//! by its exact id. With a custom session dir several working directories share one folder,
//! so these lookups can be limited to the sessions of one cwd (pi 0.77).

use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// The most of a file read to find its header line.
const HEADER_SCAN_BYTES: u64 = 64 * 1024;

/// Whether the first 512 bytes start with a session header.
fn has_session_header(path: &Path) -> bool {
    let Ok(file) = File::open(path) else {
        return false;
    };
    let mut first = String::new();
    let mut reader = BufReader::new(file.take(512));
    if reader.read_line(&mut first).is_err() {
        return false;
    }
    serde_json::from_str::<Map<String, Value>>(first.trim())
        .is_ok_and(|o| o.get("type").and_then(Value::as_str) == Some("session"))
        || (first.starts_with("{\"type\":\"session\"") && !first.ends_with('\n'))
}

/// The session header of `path` (its first line, `type: "session"`), read without the
/// transcript after it.
pub fn read_header(path: &Path) -> Option<Map<String, Value>> {
    let file = File::open(path).ok()?;
    let mut first = String::new();
    BufReader::new(file.take(HEADER_SCAN_BYTES))
        .read_line(&mut first)
        .ok()?;
    let header: Map<String, Value> = serde_json::from_str(first.trim()).ok()?;
    (header.get("type").and_then(Value::as_str) == Some("session")).then_some(header)
}

/// Whether a header names `cwd` as its working directory.
fn header_in(header: &Map<String, Value>, cwd: &Path) -> bool {
    header
        .get("cwd")
        .and_then(Value::as_str)
        .is_some_and(|dir| !dir.is_empty() && Path::new(dir) == cwd)
}

/// The `*.jsonl` files of `dir` with their modification times.
pub(super) fn session_files(dir: &Path) -> Vec<(std::time::SystemTime, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .filter_map(|p| {
            std::fs::metadata(&p)
                .and_then(|m| m.modified())
                .ok()
                .map(|t| (t, p))
        })
        .collect()
}

/// The newest session file in `dir` by modification time.
pub fn find_most_recent(dir: &Path) -> Option<PathBuf> {
    find_most_recent_in(dir, None)
}

/// The newest session file in `dir` by modification time; with `cwd`, the newest whose
/// header names that working directory.
pub fn find_most_recent_in(dir: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    let mut files = session_files(dir);
    files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    files
        .into_iter()
        .map(|(_, path)| path)
        .find(|path| match cwd {
            None => has_session_header(path),
            Some(cwd) => read_header(path).is_some_and(|h| header_in(&h, cwd)),
        })
}

/// The newest session file in `dir` whose header has exactly this id (and, with `cwd`,
/// names that working directory), found from the headers alone (pi 0.86).
pub fn find_exact_id(id: &str, dir: &Path, cwd: Option<&Path>) -> Option<PathBuf> {
    let mut files = session_files(dir);
    files.sort_by_key(|(modified, _)| std::cmp::Reverse(*modified));
    files.into_iter().map(|(_, path)| path).find(|path| {
        read_header(path).is_some_and(|h| {
            h.get("id").and_then(Value::as_str) == Some(id) && cwd.is_none_or(|c| header_in(&h, c))
        })
    })
}
