//! `settings.json`: arbitrary text for the global and the project file (split at the first
//! NUL byte), each read as the settings loader reads it, merged, and parsed leniently (a key
//! this build cannot read is dropped, not the whole file). Properties: nothing panics, and a
//! map whose keys were all kept parses with none dropped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_coding_agent::config::settings::parse_lenient;
use serde_json::{Map, Value};

/// A settings file's object, as the loader reads it (anything else counts as empty).
fn object(text: &[u8]) -> Map<String, Value> {
    match serde_json::from_slice::<Value>(text) {
        Ok(Value::Object(map)) => map,
        _ => Map::new(),
    }
}

/// The loader's merge: nested objects key by key, anything else replaced.
fn merge(base: &mut Map<String, Value>, over: Map<String, Value>) {
    for (key, value) in over {
        match (base.get_mut(&key), value) {
            (Some(Value::Object(existing)), Value::Object(nested)) => merge(existing, nested),
            (_, value) => {
                base.insert(key, value);
            }
        }
    }
}

fn check(map: Map<String, Value>) {
    let (settings, dropped) = parse_lenient(map.clone());
    let _ = settings.compaction_settings();
    if dropped.is_empty() {
        return;
    }
    let kept: Map<String, Value> = map
        .into_iter()
        .filter(|(key, _)| {
            !dropped
                .iter()
                .any(|d| d.starts_with(&format!("\"{key}\" (")))
        })
        .collect();
    let (_, again) = parse_lenient(kept);
    assert!(
        again.is_empty(),
        "keys kept once are dropped later: {again:?}"
    );
}

fuzz_target!(|data: &[u8]| {
    let (global, project) = match data.iter().position(|b| *b == 0) {
        Some(at) => (&data[..at], &data[at + 1..]),
        None => (data, &[][..]),
    };
    let (global, project) = (object(global), object(project));
    check(global.clone());
    check(project.clone());
    let mut merged = global;
    merge(&mut merged, project);
    check(merged);
});
