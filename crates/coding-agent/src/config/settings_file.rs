//! Writing a `settings.json` safely: the file is re-read under an exclusive lock on its
//! folder, changed, written to a temporary file beside it and renamed over it, so two pi
//! processes changing settings at once both land, and a crash never leaves half a file.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Why a settings file was not written.
#[derive(Debug, thiserror::Error)]
pub enum SettingsWriteError {
    /// The file exists but is not a JSON object: it is left as it is.
    #[error("{path} is not a JSON object; fix or remove it first")]
    NotAnObject { path: PathBuf },
    #[error("could not write {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
}

fn io_error(path: &Path) -> impl FnOnce(std::io::Error) -> SettingsWriteError + '_ {
    move |source| SettingsWriteError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The object in `path`: empty when the file is missing, an error when it holds
/// something else than a JSON object.
pub fn read_settings_object(path: &Path) -> Result<Map<String, Value>, SettingsWriteError> {
    match crate::text_file::read_text(path) {
        Ok(text) if text.trim().is_empty() => Ok(Map::new()),
        Ok(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(SettingsWriteError::NotAnObject {
                path: path.to_path_buf(),
            }),
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Map::new()),
        Err(e) => Err(io_error(path)(e)),
    }
}

/// Re-reads `path` under the lock, applies `change`, and writes the result (2-space
/// indentation, keys in their order, as the TypeScript pi writes settings). Returns what
/// `change` returned.
pub fn update_settings_file<R>(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> R,
) -> Result<R, SettingsWriteError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(io_error(path))?;
    // The folder is the lock: the file itself is replaced by the rename.
    let lock = std::fs::File::open(dir).map_err(io_error(path))?;
    lock.lock().map_err(io_error(path))?;
    let mut settings = read_settings_object(path)?;
    let result = change(&mut settings);
    let text = serde_json::to_string_pretty(&Value::Object(settings)).map_err(|e| {
        SettingsWriteError::Io {
            path: path.to_path_buf(),
            source: std::io::Error::other(e),
        }
    })?;
    let mut temp = tempfile::Builder::new()
        .prefix(".settings-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(io_error(path))?;
    temp.write_all(text.as_bytes()).map_err(io_error(path))?;
    temp.as_file().sync_all().map_err(io_error(path))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(temp.path(), meta.permissions());
    }
    temp.persist(path).map_err(|e| io_error(path)(e.error))?;
    drop(lock);
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_other_keys_and_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, r#"{"b": 1, "a": {"x": true}}"#).unwrap();
        update_settings_file(&path, |s| {
            s.insert("packages".into(), serde_json::json!(["npm:x"]));
        })
        .unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(
            text,
            "{\n  \"b\": 1,\n  \"a\": {\n    \"x\": true\n  },\n  \"packages\": [\n    \"npm:x\"\n  ]\n}"
        );
    }

    #[test]
    fn refuses_to_overwrite_a_broken_file() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{ not json").unwrap();
        let err = update_settings_file(&path, |_| ()).unwrap_err();
        assert!(matches!(err, SettingsWriteError::NotAnObject { .. }));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "{ not json");
    }

    #[test]
    fn concurrent_writers_all_land() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let path = path.clone();
                std::thread::spawn(move || {
                    update_settings_file(&path, |s| {
                        let list = s
                            .entry("packages")
                            .or_insert_with(|| Value::Array(Vec::new()));
                        if let Value::Array(items) = list {
                            items.push(Value::String(format!("npm:p{i}")));
                        }
                    })
                    .unwrap();
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let settings = read_settings_object(&path).unwrap();
        assert_eq!(settings["packages"].as_array().unwrap().len(), 8);
    }
}
