//! `mcp-auth.json`: OAuth state per server, as pi 1.5 keeps it, keyed by
//! `mcp__<server>|<url>` (servers sharing a URL keep separate accounts) or, as older
//! versions wrote it, by the URL alone.

use std::path::Path;

use serde_json::{Map, Value};

use crate::naming::namespace;

/// The keys of a server's state: its own, and the legacy one by URL.
pub fn keys(server: &str, url: &str) -> (String, String) {
    let legacy = url::Url::parse(url).map_or_else(|_| url.to_owned(), |u| u.to_string());
    (format!("{}|{legacy}", namespace(server)), legacy)
}

/// Removes a server's stored credentials; false when there were none.
pub fn remove(path: &Path, server: &str, url: &str) -> std::io::Result<bool> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => return Err(e),
    };
    let mut states: Map<String, Value> = if text.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str(&text)? {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    };
    let (key, legacy) = keys(server, url);
    let stored = if states.contains_key(&key) {
        key
    } else if states.contains_key(&legacy) {
        legacy
    } else {
        return Ok(false);
    };
    states.shift_remove(&stored);
    let mut out = serde_json::to_string_pretty(&Value::Object(states))?;
    out.push('\n');
    std::fs::write(path, out)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removes_by_name_and_url_then_by_url() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mcp-auth.json");
        std::fs::write(
            &path,
            r#"{"mcp__my_srv|https://x.test/mcp":{"tokens":{}},"https://y.test/":{"tokens":{}},"other":1}"#,
        )
        .unwrap();
        assert!(remove(&path, "my-srv", "https://x.test/mcp").unwrap());
        assert!(!remove(&path, "my-srv", "https://x.test/mcp").unwrap());
        assert!(remove(&path, "y", "https://y.test").unwrap());
        let left: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(left, serde_json::json!({"other": 1}));
    }
}
