//! The settings' `packages` lists (global and project), read and changed as the TypeScript
//! pi does: entries are source strings or objects with a `source` and per-type filters;
//! two entries match when their sources name the same package.

use std::path::PathBuf;

use serde_json::Value;

use super::paths::{InstallRoots, home};
use super::resources::PackageFilter;
use super::source::PackageSource;
use crate::config::settings::read_object;
use crate::config::settings_file::{SettingsWriteError, update_settings_file};
use crate::resources::{SourceScope, resolve_from};

/// One `packages` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct ConfiguredPackage {
    /// The source as written in the settings.
    pub source: String,
    pub scope: SourceScope,
    /// The object form's filters (`None` for a plain string).
    pub filter: Option<PackageFilter>,
}

/// The settings file of a scope.
pub fn settings_path(roots: &InstallRoots, scope: SourceScope) -> PathBuf {
    match scope {
        SourceScope::Project => roots.project_dir().join("settings.json"),
        _ => roots.agent_dir.join("settings.json"),
    }
}

/// The source of a `packages` entry (a string, or an object's `source`).
pub fn entry_source(entry: &Value) -> Option<&str> {
    match entry {
        Value::String(source) => Some(source),
        Value::Object(map) => map.get("source").and_then(Value::as_str),
        _ => None,
    }
}

/// The `packages` entries of one scope's settings, in order.
pub fn read_scope(roots: &InstallRoots, scope: SourceScope) -> Vec<ConfiguredPackage> {
    let settings = read_object(&settings_path(roots, scope));
    let Some(Value::Array(entries)) = settings.get("packages") else {
        return Vec::new();
    };
    entries
        .iter()
        .filter_map(|entry| {
            let source = entry_source(entry)?.to_owned();
            let filter = match entry {
                Value::Object(map) => Some(PackageFilter::from_entry(map)),
                _ => None,
            };
            Some(ConfiguredPackage {
                source,
                scope,
                filter,
            })
        })
        .collect()
}

/// The user's packages, then the project's (only when the project is trusted).
pub fn configured(roots: &InstallRoots, project_trusted: bool) -> Vec<ConfiguredPackage> {
    let mut all = read_scope(roots, SourceScope::User);
    if project_trusted {
        all.extend(read_scope(roots, SourceScope::Project));
    }
    all
}

/// `npmCommand` of the settings (project over global): the argv that stands for `npm`.
pub fn npm_command(roots: &InstallRoots, project_trusted: bool) -> Vec<String> {
    let pick = |path: PathBuf| -> Option<Vec<String>> {
        let list = read_object(&path).get("npmCommand")?.as_array()?.clone();
        let argv: Vec<String> = list
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect();
        (!argv.is_empty()).then_some(argv)
    };
    project_trusted
        .then(|| pick(settings_path(roots, SourceScope::Project)))
        .flatten()
        .or_else(|| pick(settings_path(roots, SourceScope::User)))
        .unwrap_or_else(|| vec!["npm".to_owned()])
}

/// The identity of a source as settings of `scope` hold it (local paths resolved against
/// the scope's folder), or as typed on the command line (against the cwd).
pub fn identity(roots: &InstallRoots, source: &str, scope: Option<SourceScope>) -> String {
    match PackageSource::parse(source) {
        PackageSource::Local { path } => {
            let base = match scope {
                Some(scope) => roots.base_dir(scope),
                None => roots.cwd.clone(),
            };
            format!("local:{}", resolve_from(&path, &base, &home()).display())
        }
        parsed => parsed.identity(),
    }
}

/// A source as it is written into a scope's settings: local paths relative to the
/// scope's folder (`.` for the folder itself), others as typed.
pub fn normalized_for_settings(roots: &InstallRoots, source: &str, scope: SourceScope) -> String {
    match PackageSource::parse(source) {
        PackageSource::Local { path } => {
            let resolved = resolve_from(&path, &roots.cwd, &home());
            let relative = crate::resources::relative(&roots.base_dir(scope), &resolved);
            if relative.is_empty() {
                ".".to_owned()
            } else {
                relative
            }
        }
        _ => source.to_owned(),
    }
}

/// Adds `source` to a scope's `packages` (an entry for the same package gets the new
/// source, keeping its filters). Returns whether the settings changed.
pub fn add(
    roots: &InstallRoots,
    source: &str,
    scope: SourceScope,
) -> Result<bool, SettingsWriteError> {
    let normalized = normalized_for_settings(roots, source, scope);
    let wanted = identity(roots, source, None);
    update_settings_file(&settings_path(roots, scope), |settings| {
        let entries = settings
            .entry("packages")
            .or_insert_with(|| Value::Array(Vec::new()));
        if !entries.is_array() {
            *entries = Value::Array(Vec::new());
        }
        let Value::Array(entries) = entries else {
            return false;
        };
        let existing = entries.iter_mut().find(|entry| {
            entry_source(entry).is_some_and(|s| identity(roots, s, Some(scope)) == wanted)
        });
        match existing {
            Some(entry) if entry_source(entry) == Some(normalized.as_str()) => false,
            Some(Value::Object(map)) => {
                map.insert("source".into(), Value::String(normalized));
                true
            }
            Some(entry) => {
                *entry = Value::String(normalized);
                true
            }
            None => {
                entries.push(Value::String(normalized));
                true
            }
        }
    })
}

/// Removes every entry of a scope's `packages` naming the same package as `source`.
/// Returns whether one was there.
pub fn remove(
    roots: &InstallRoots,
    source: &str,
    scope: SourceScope,
) -> Result<bool, SettingsWriteError> {
    let path = settings_path(roots, scope);
    let wanted = identity(roots, source, None);
    let present = read_scope(roots, scope)
        .iter()
        .any(|p| identity(roots, &p.source, Some(scope)) == wanted);
    if !present {
        return Ok(false);
    }
    update_settings_file(&path, |settings| {
        let Some(Value::Array(entries)) = settings.get_mut("packages") else {
            return false;
        };
        let before = entries.len();
        entries.retain(|entry| {
            entry_source(entry).is_none_or(|s| identity(roots, s, Some(scope)) != wanted)
        });
        entries.len() != before
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn roots(dir: &Path) -> InstallRoots {
        InstallRoots {
            cwd: dir.join("work"),
            agent_dir: dir.join("agent"),
        }
    }

    #[test]
    fn local_sources_are_written_relative_to_the_settings_folder() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        assert!(add(&r, "../localpkg", SourceScope::User).unwrap());
        assert!(!add(&r, "../localpkg", SourceScope::User).unwrap());
        assert!(add(&r, "npm:foo@1.0.0", SourceScope::Project).unwrap());
        let user = read_scope(&r, SourceScope::User);
        assert_eq!(user[0].source, "../localpkg");
        let project = read_scope(&r, SourceScope::Project);
        assert_eq!(project[0].source, "npm:foo@1.0.0");
        // A new version of the same package replaces the entry.
        assert!(add(&r, "npm:foo", SourceScope::Project).unwrap());
        let project = read_scope(&r, SourceScope::Project);
        assert_eq!(project.len(), 1);
        assert_eq!(project[0].source, "npm:foo");
        assert!(remove(&r, "npm:foo@2", SourceScope::Project).unwrap());
        assert!(!remove(&r, "npm:foo", SourceScope::Project).unwrap());
        assert!(read_scope(&r, SourceScope::Project).is_empty());
    }

    #[test]
    fn object_entries_keep_their_filters() {
        let dir = tempfile::tempdir().unwrap();
        let r = roots(dir.path());
        std::fs::create_dir_all(&r.agent_dir).unwrap();
        std::fs::write(
            r.agent_dir.join("settings.json"),
            r#"{"packages":[{"source":"git:github.com/a/b@v1","skills":[]}]}"#,
        )
        .unwrap();
        assert!(add(&r, "git:github.com/a/b@v2", SourceScope::User).unwrap());
        let user = read_scope(&r, SourceScope::User);
        assert_eq!(user[0].source, "git:github.com/a/b@v2");
        assert_eq!(user[0].filter.as_ref().unwrap().skills, Some(Vec::new()));
    }
}
