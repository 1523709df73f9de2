//! `<agentDir>/crashes.json` (pi 1.6's `core/crash-log.ts`): crashes recorded by earlier
//! runs, which a bug report carries and then clears.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// Where the crash log lives.
pub fn crash_log_path(agent_dir: &Path) -> PathBuf {
    agent_dir.join("crashes.json")
}

/// The recorded crashes (objects with a string `timestamp` and `message`); none when the
/// file is missing or unreadable.
pub fn read_crash_log(agent_dir: &Path) -> Vec<Value> {
    let Ok(text) = std::fs::read_to_string(crash_log_path(agent_dir)) else {
        return Vec::new();
    };
    match serde_json::from_str::<Value>(&text) {
        Ok(Value::Array(records)) => records
            .into_iter()
            .filter(|r| r["timestamp"].is_string() && r["message"].is_string())
            .collect(),
        _ => Vec::new(),
    }
}

/// Empties the crash log (after a report carried it).
pub fn clear_crash_log(agent_dir: &Path) {
    let _ = std::fs::remove_file(crash_log_path(agent_dir));
}
