//! Migrations of older session files: v1 (a linear list) → v2 (the id/parentId tree) →
//! v3 (`hookMessage` role renamed `custom`).

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::entry::CURRENT_SESSION_VERSION;
use super::ids::short_id;

/// Brings the lines (header first) to the current version; returns whether anything changed.
pub fn migrate(lines: &mut [Map<String, Value>]) -> bool {
    let version = lines
        .iter()
        .find(|l| l.get("type").and_then(Value::as_str) == Some("session"))
        .and_then(|h| h.get("version").and_then(Value::as_u64))
        .unwrap_or(1);
    if version >= CURRENT_SESSION_VERSION {
        return false;
    }
    if version < 2 {
        v1_to_v2(lines);
    }
    v2_to_v3(lines);
    true
}

fn v1_to_v2(lines: &mut [Map<String, Value>]) {
    let mut ids: HashSet<String> = HashSet::new();
    let mut assigned: Vec<Option<String>> = Vec::with_capacity(lines.len());
    let mut previous: Option<String> = None;
    for line in lines.iter_mut() {
        if line.get("type").and_then(Value::as_str) == Some("session") {
            line.insert("version".into(), Value::from(2));
            assigned.push(None);
            continue;
        }
        let id = short_id(|candidate| ids.contains(candidate));
        ids.insert(id.clone());
        line.insert("id".into(), Value::String(id.clone()));
        line.insert(
            "parentId".into(),
            previous.clone().map_or(Value::Null, Value::String),
        );
        previous = Some(id.clone());
        assigned.push(Some(id));
    }
    for line in lines.iter_mut() {
        if line.get("type").and_then(Value::as_str) != Some("compaction") {
            continue;
        }
        if let Some(index) = line
            .shift_remove("firstKeptEntryIndex")
            .and_then(|v| v.as_u64())
            && let Some(Some(id)) = assigned.get(index as usize)
        {
            line.insert("firstKeptEntryId".into(), Value::String(id.clone()));
        }
    }
}

fn v2_to_v3(lines: &mut [Map<String, Value>]) {
    for line in lines.iter_mut() {
        match line.get("type").and_then(Value::as_str) {
            Some("session") => {
                line.insert("version".into(), Value::from(CURRENT_SESSION_VERSION));
            }
            Some("message") => {
                if let Some(Value::Object(message)) = line.get_mut("message")
                    && message.get("role").and_then(Value::as_str) == Some("hookMessage")
                {
                    message.insert("role".into(), Value::from("custom"));
                }
            }
            _ => {}
        }
    }
}
