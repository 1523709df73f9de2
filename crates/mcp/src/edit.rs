//! Changes to an `mcp.json` that keep the rest of it: `pi mcp add`, `pi mcp remove`, and the
//! enabled state and exposure `/mcp` saves. The file is rewritten with its own indentation.

use std::path::Path;

use serde_json::{Map, Value};

use crate::config::is_override;

/// Why a file could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error("{path}: expected an object with an \"mcpServers\" object")]
    Shape { path: String },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Json(#[from] serde_json::Error),
    #[error("{path} does not define MCP server \"{name}\"")]
    NoServer { path: String, name: String },
}

/// Adds or replaces a server; true when one was replaced.
pub fn add_server(path: &Path, name: &str, config: Map<String, Value>) -> Result<bool, EditError> {
    let mut replaced = false;
    edit(path, |servers| {
        replaced = servers
            .insert(name.to_owned(), Value::Object(config))
            .is_some();
        Ok(true)
    })?;
    Ok(replaced)
}

/// Removes a server; false when the file does not define it.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, EditError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut removed = false;
    edit(path, |servers| {
        removed = servers.shift_remove(name).is_some();
        Ok(removed)
    })?;
    Ok(removed)
}

/// Sets `enabled` and/or `exposure` of a server. With `add_override`, a missing entry is
/// added as a project override. Defaults are dropped from full entries and kept in
/// overrides, which replace the global server's values.
pub fn update_server(
    path: &Path,
    name: &str,
    enabled: Option<bool>,
    exposure: Option<&str>,
    add_override: bool,
) -> Result<(), EditError> {
    let shown = path.display().to_string();
    edit(path, |servers| {
        if !servers.contains_key(name) && add_override {
            servers.insert(name.to_owned(), Value::Object(Map::new()));
        }
        let Some(Value::Object(server)) = servers.get_mut(name) else {
            return Err(EditError::NoServer {
                path: shown.clone(),
                name: name.to_owned(),
            });
        };
        let keep_defaults = is_override(server);
        if let Some(enabled) = enabled {
            if enabled && !keep_defaults {
                server.shift_remove("enabled");
            } else {
                server.insert("enabled".into(), Value::Bool(enabled));
            }
        }
        if let Some(exposure) = exposure {
            if exposure == "codemode" && !keep_defaults {
                server.shift_remove("exposure");
            } else {
                server.insert("exposure".into(), Value::from(exposure));
            }
        }
        Ok(true)
    })
}

/// Reads the file (empty when missing), lets `change` edit `mcpServers`, and writes it back
/// when `change` returns true.
fn edit(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<bool, EditError>,
) -> Result<(), EditError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(e.into()),
    };
    let shape = || EditError::Shape {
        path: path.display().to_string(),
    };
    let mut parsed: Value = match &text {
        Some(text) => serde_json::from_str(text.trim_start_matches('\u{feff}'))?,
        None => Value::Object(Map::new()),
    };
    let Value::Object(top) = &mut parsed else {
        return Err(shape());
    };
    let servers = top
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    let Value::Object(servers) = servers else {
        return Err(shape());
    };
    let write = change(servers)?;
    if !write {
        return Ok(());
    }
    let indent = text
        .as_deref()
        .and_then(indentation)
        .unwrap_or_else(|| "  ".to_owned());
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    serde::Serialize::serialize(&parsed, &mut serializer)?;
    out.push(b'\n');
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    std::fs::write(path, out)?;
    Ok(())
}

/// The indentation of the first indented line.
fn indentation(text: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let trimmed = line.trim_start_matches([' ', '\t']);
        let indent = &line[..line.len() - trimmed.len()];
        (!indent.is_empty() && !trimmed.is_empty()).then(|| indent.to_owned())
    })
}
