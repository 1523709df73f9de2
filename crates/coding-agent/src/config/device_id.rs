//! This installation's device id: a UUID kept as `deviceId` in the global settings.json,
//! made on first use (pi 1.6.0's `getOrCreateDeviceId`). Sign in with ChatGPT registers the
//! agent under it.

use std::path::Path;

use serde_json::Value;

use super::settings_file::update_settings_file;

/// The `deviceId` of the global settings at `settings_path`, created and saved when missing;
/// `None` when the file cannot be written.
pub fn get_or_create(settings_path: &Path) -> Option<String> {
    update_settings_file(settings_path, |settings| {
        match settings.get("deviceId").and_then(Value::as_str) {
            Some(id) if !id.is_empty() => id.to_owned(),
            _ => {
                let id = uuid::Uuid::new_v4().to_string();
                settings.insert("deviceId".into(), Value::from(id.clone()));
                id
            }
        }
    })
    .ok()
}

#[cfg(test)]
mod tests {
    use super::get_or_create;

    #[test]
    fn made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "{\"theme\": \"dark\"}").unwrap();
        let first = get_or_create(&path).unwrap();
        assert!(uuid::Uuid::parse_str(&first).is_ok());
        assert_eq!(get_or_create(&path).unwrap(), first);
        let saved: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        assert_eq!(saved["theme"], "dark");
        assert_eq!(saved["deviceId"], first.as_str());
    }
}
