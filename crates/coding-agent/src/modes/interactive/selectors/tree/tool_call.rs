//! Tool calls condensed to one bracket, as the tree lists their results.

use serde_json::{Map, Value};

use super::node::normalize;

/// `~/…` for paths under the home directory.
fn shorten_home(path: &str) -> String {
    match std::env::var("HOME") {
        Ok(home) if !home.is_empty() && path.starts_with(&home) => {
            format!("~{}", &path[home.len()..])
        }
        _ => path.to_owned(),
    }
}

/// A tool call condensed to one bracket: `[read: src/main.rs:10-19]`, `[bash: ls -la]`.
pub(super) fn format_tool_call(name: &str, args: &Map<String, Value>) -> String {
    let text = |key: &str| -> Option<String> {
        match args.get(key) {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) if s.is_empty() => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(other) => Some(other.to_string()),
        }
    };
    let path = || {
        shorten_home(
            &text("path")
                .or_else(|| text("file_path"))
                .unwrap_or_default(),
        )
    };
    let dir = || shorten_home(&text("path").unwrap_or_else(|| ".".into()));
    match name {
        "read" => {
            let mut shown = path();
            let offset = args.get("offset").and_then(Value::as_i64);
            let limit = args.get("limit").and_then(Value::as_i64);
            if offset.is_some() || limit.is_some() {
                let start = offset.unwrap_or(1);
                shown.push_str(&format!(":{start}"));
                if let Some(limit) = limit {
                    shown.push_str(&format!("-{}", start + limit - 1));
                }
            }
            format!("[read: {shown}]")
        }
        "write" | "edit" => format!("[{name}: {}]", path()),
        "bash" => {
            let raw = text("command").unwrap_or_default();
            let command: String = normalize(&raw).chars().take(50).collect();
            let more = if raw.chars().count() > 50 { "..." } else { "" };
            format!("[bash: {command}{more}]")
        }
        "grep" => format!(
            "[grep: /{}/ in {}]",
            text("pattern").unwrap_or_default(),
            dir()
        ),
        "find" => format!(
            "[find: {} in {}]",
            text("pattern").unwrap_or_default(),
            dir()
        ),
        "ls" => format!("[ls: {}]", dir()),
        _ => {
            let json = Value::Object(args.clone()).to_string();
            let short: String = json.chars().take(40).collect();
            let more = if json.chars().count() > 40 { "..." } else { "" };
            format!("[{name}: {short}{more}]")
        }
    }
}
