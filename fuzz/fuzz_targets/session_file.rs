//! A whole session file, in memory, through both loaders: the fast one of current-version
//! files (the batch parser of `load_current`, long texts left in the file and read back by
//! position) and the general one of older files (every line as JSON, the v1 → v2 → v3
//! migrations, then the entries), each followed by building the context from the tree.
//! Properties: nothing panics, migrating twice changes nothing, and every entry loaded
//! writes back as a line that reads back the same.
//!
//! (`SessionManager::open` itself reads through threads and the file system, a thousand
//! inputs a second; the parts it joins are the ones run here.)
#![no_main]

use std::io;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use pi_ai::types::TextSource;
use pi_coding_agent::session::build_session_context;
use pi_coding_agent::session::entry::{
    FileLine, SessionEntry, parse_json_object, parse_line, parse_object,
};
use pi_coding_agent::session::load::parse_entry_lines;
use pi_coding_agent::session::migrate::migrate;
use serde_json::{Map, Value};

/// The input as the file long texts are read back from.
struct Memory(Vec<u8>);

impl TextSource for Memory {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let start = usize::try_from(offset).unwrap_or(usize::MAX);
        match start
            .checked_add(buf.len())
            .and_then(|end| self.0.get(start..end))
        {
            Some(bytes) => {
                buf.copy_from_slice(bytes);
                Ok(())
            }
            None => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "past the end")),
        }
    }

    fn describe(&self) -> String {
        "the fuzz input".into()
    }
}

/// Builds the context and checks that every entry writes back as a line that reads the same.
fn check_entries(entries: &[SessionEntry]) {
    let leaf = entries.last().map(|e| e.id.as_str());
    let context = build_session_context(entries, leaf);
    if let Err(e) = serde_json::to_string(&context.messages) {
        panic!("the context does not serialize: {e}");
    }
    for entry in entries {
        let Ok(line) = entry.to_line() else {
            panic!("entry {} does not write back", entry.id)
        };
        match parse_line(&line, 1) {
            Ok((Some(FileLine::Entry(read)), _)) => {
                assert_eq!(&read, entry, "entry {} read back differently", entry.id)
            }
            other => panic!("entry {} wrote {line}, which reads as {other:?}", entry.id),
        }
    }
}

/// The fast loader: the lines after the first as one batch, texts read back from `data`.
fn fast(data: &[u8]) {
    let Some(header_end) = data.iter().position(|b| *b == b'\n').map(|at| at + 1) else {
        return;
    };
    let source: Arc<dyn TextSource> = Arc::new(Memory(data.to_vec()));
    let (entries, _) = parse_entry_lines(data[header_end..].to_vec(), header_end as u64, &source);
    check_entries(&entries);
}

/// The general loader: every line as a JSON object, migrated, then read as entries.
fn general(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut lines: Vec<(usize, Map<String, Value>)> = Vec::new();
    for (index, line) in text.split('\n').enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        if let Ok(object) = parse_json_object(line) {
            lines.push((index + 1, object));
        }
    }
    // As `SessionManager::open`: without a session header first, nothing is migrated.
    let header_ok = lines.first().is_some_and(|(_, o)| {
        o.get("type").and_then(Value::as_str) == Some("session")
            && o.get("id").is_some_and(Value::is_string)
    });
    if !header_ok {
        return;
    }
    let mut maps: Vec<Map<String, Value>> = lines.iter().map(|(_, o)| o.clone()).collect();
    migrate(&mut maps);
    let migrated = maps.clone();
    assert!(!migrate(&mut maps), "a migrated file migrates again");
    assert_eq!(maps, migrated, "a second migration changed the lines");
    let entries: Vec<SessionEntry> = lines
        .iter()
        .zip(maps)
        .filter_map(|((line, _), object)| match parse_object(object, *line) {
            Ok((Some(FileLine::Entry(entry)), _)) => Some(entry),
            _ => None,
        })
        .collect();
    check_entries(&entries);
}

fuzz_target!(|data: &[u8]| {
    fast(data);
    general(data);
});
