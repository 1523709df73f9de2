//! Settings that change at run time: the merged view of the global and project files, and
//! the writes back to the global `settings.json` (as the TypeScript pi does for the model,
//! thinking level, queue modes, auto-compaction and auto-retry).
//!
//! A write re-reads the global file, sets only the changed key (or nested key), keeps every
//! other key in its order, and writes it with 2-space indentation and no trailing newline.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use serde_json::{Map, Value};

use super::settings::{Settings, merge, read_object};
use super::settings_file::update_settings_file;

/// The settings of a running session, writable.
#[derive(Debug)]
pub struct SettingsStore {
    global_path: PathBuf,
    project_path: PathBuf,
    /// The project is trusted: its settings file is read (pi 1.6.0 skips it otherwise).
    project_trusted: bool,
    state: Mutex<State>,
}

#[derive(Debug)]
struct State {
    global: Map<String, Value>,
    project: Map<String, Value>,
    merged: Settings,
    /// The merged object as read, for settings the typed view does not hold.
    merged_raw: Map<String, Value>,
    /// The global file exists but is not a JSON object: it is never overwritten.
    global_unreadable: bool,
}

impl State {
    fn remerge(&mut self) {
        let mut merged = self.global.clone();
        merge(&mut merged, self.project.clone());
        self.merged = super::settings::parse_settings(merged.clone());
        self.merged_raw = merged;
    }
}

fn unreadable(path: &Path) -> bool {
    crate::text_file::read_text(path)
        .ok()
        .is_some_and(|text| !matches!(serde_json::from_str::<Value>(&text), Ok(Value::Object(_))))
}

impl SettingsStore {
    /// Loads the global file and the project's `.pi/settings.json`.
    pub fn load(global: &Path, project: &Path) -> Self {
        Self::load_for_trust(global, project, true)
    }

    /// Loads the global file, and the project's only when the project is trusted.
    pub fn load_for_trust(global: &Path, project: &Path, project_trusted: bool) -> Self {
        let mut state = State {
            global: read_object(global),
            project: if project_trusted {
                read_object(project)
            } else {
                Map::new()
            },
            merged: Settings::default(),
            merged_raw: Map::new(),
            global_unreadable: unreadable(global),
        };
        state.remerge();
        Self {
            global_path: global.to_path_buf(),
            project_path: project.to_path_buf(),
            project_trusted,
            state: Mutex::new(state),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The merged settings now.
    pub fn get(&self) -> Settings {
        self.lock().merged.clone()
    }

    /// A key of the global file alone (settings pi reads only there, like `cacheWarming`).
    pub fn global_value(&self, key: &str) -> Option<Value> {
        self.lock().global.get(key).cloned()
    }

    /// The global settings file's object as read.
    pub fn global_object(&self) -> Map<String, Value> {
        self.lock().global.clone()
    }

    /// The project settings file's object as read (empty when the project is not trusted).
    pub fn project_object(&self) -> Map<String, Value> {
        self.lock().project.clone()
    }

    /// A merged key as written (`path` walks nested objects: `["terminal", "showImages"]`).
    pub fn value(&self, path: &[&str]) -> Option<Value> {
        let state = self.lock();
        let (first, rest) = path.split_first()?;
        let mut value = state.merged_raw.get(*first)?;
        for key in rest {
            value = value.get(*key)?;
        }
        Some(value.clone())
    }

    /// Reads both files again (`/reload`).
    pub fn reload(&self) {
        let mut state = self.lock();
        state.global = read_object(&self.global_path);
        if self.project_trusted {
            state.project = read_object(&self.project_path);
        }
        state.global_unreadable = unreadable(&self.global_path);
        state.remerge();
    }

    /// The project settings file this store reads.
    pub fn project_path(&self) -> &Path {
        &self.project_path
    }

    /// Sets a top-level global key and writes it.
    pub fn set(&self, key: &str, value: Value) {
        let mut state = self.lock();
        state.global.insert(key.to_owned(), value.clone());
        state.remerge();
        if !state.global_unreadable {
            self.write(|file| {
                file.insert(key.to_owned(), value);
            });
        }
    }

    /// Drops a top-level global key and writes the file without it.
    pub fn remove(&self, key: &str) {
        let mut state = self.lock();
        state.global.remove(key);
        state.remerge();
        if !state.global_unreadable {
            self.write(|file| {
                file.remove(key);
            });
        }
    }

    /// Sets `key.nested` in the global settings and writes it, keeping the other nested keys.
    pub fn set_nested(&self, key: &str, nested: &str, value: Value) {
        let mut state = self.lock();
        set_in(&mut state.global, key, nested, value.clone());
        state.remerge();
        if !state.global_unreadable {
            self.write(|file| set_in(file, key, nested, value));
        }
    }

    /// Re-reads the global file, applies `change`, and writes it back (atomically, under
    /// the settings lock).
    fn write(&self, change: impl FnOnce(&mut Map<String, Value>)) {
        if let Err(e) = update_settings_file(&self.global_path, change) {
            eprintln!("Warning: {e}");
        }
    }
}

fn set_in(map: &mut Map<String, Value>, key: &str, nested: &str, value: Value) {
    let entry = map
        .entry(key.to_owned())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Value::Object(inner) = entry {
        inner.insert(nested.to_owned(), value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_keep_order_and_append_new_keys() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("settings.json");
        std::fs::write(
            &global,
            "{\n  \"defaultModel\": \"a\",\n  \"compaction\": {\"reserveTokens\": 1000},\n  \"theme\": \"dark\"\n}\n",
        )
        .unwrap();
        let store = SettingsStore::load(&global, &dir.path().join("none.json"));
        store.set("defaultModel", "b".into());
        store.set("steeringMode", "all".into());
        store.set_nested("compaction", "enabled", false.into());
        store.set_nested("retry", "enabled", true.into());
        let text = std::fs::read_to_string(&global).unwrap();
        assert_eq!(
            text,
            "{\n  \"defaultModel\": \"b\",\n  \"compaction\": {\n    \"reserveTokens\": 1000,\n    \"enabled\": false\n  },\n  \"theme\": \"dark\",\n  \"steeringMode\": \"all\",\n  \"retry\": {\n    \"enabled\": true\n  }\n}"
        );
        assert_eq!(store.get().default_model.as_deref(), Some("b"));
    }

    #[test]
    fn an_unreadable_global_file_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("settings.json");
        std::fs::write(&global, "{ not json").unwrap();
        let store = SettingsStore::load(&global, &dir.path().join("none.json"));
        store.set("defaultModel", "b".into());
        assert_eq!(std::fs::read_to_string(&global).unwrap(), "{ not json");
        assert_eq!(store.get().default_model.as_deref(), Some("b"));
    }
}
