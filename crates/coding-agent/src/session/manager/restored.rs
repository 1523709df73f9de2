//! An in-memory session restored from entries kept outside the filesystem (pi 0.85's
//! `SessionManager.inMemory(cwd, options, entries)`): a host that stores sessions itself
//! (a database, a gateway) hands them back and the conversation goes on without a file.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value};

use super::super::entry::LineError;
use super::super::linear::LinearPrefix;
use super::super::migrate::migrate;
use super::SessionManager;

impl SessionManager {
    /// A session kept in memory only, holding `lines` as a session file would (header and
    /// entries as JSON objects). With a header its id is kept and older versions are
    /// migrated; without one the entries follow a new header. Lines that are not entries
    /// are reported in [`Self::warnings`] and left out.
    pub fn in_memory_from(cwd: &Path, lines: Vec<Value>) -> Self {
        let mut warnings = Vec::new();
        let mut objects: Vec<(usize, Map<String, Value>)> = Vec::new();
        for (index, line) in lines.into_iter().enumerate() {
            match line {
                Value::Object(object) => objects.push((index + 1, object)),
                other => warnings.push(LineError {
                    line: index + 1,
                    reason: format!("not a JSON object: {other}"),
                }),
            }
        }
        let has_header = objects
            .iter()
            .any(|(_, o)| o.get("type").and_then(Value::as_str) == Some("session"));
        if has_header {
            let mut maps: Vec<Map<String, Value>> =
                objects.iter().map(|(_, o)| o.clone()).collect();
            migrate(&mut maps);
            for ((_, slot), migrated) in objects.iter_mut().zip(maps) {
                *slot = migrated;
            }
        }
        let (header, entries) = super::parse_lines(objects.into_iter(), &mut warnings);
        let mut session = Self::in_memory(cwd);
        if let Some(header) = header {
            session.header = header;
        }
        session.by_id = entries
            .iter()
            .enumerate()
            .map(|(i, e)| (e.id.clone(), i))
            .collect::<HashMap<_, _>>();
        session.leaf = entries.last().map(|e| e.id.clone());
        session.entries = entries;
        session.linear = LinearPrefix::default();
        session.warnings = warnings;
        session
    }
}
