//! `/changelog` and the release notes shown once at startup after an update, with
//! `lastChangelogVersion` kept in the global settings as pi keeps it; below pi's own, the
//! notes of extension packages updated since last seen (`extensionChangelogVersions`).

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::App;
use crate::changelog::{self, CHANGELOG};
use crate::modes::interactive::components::{ChangelogLayout, ExtensionUpdate};

impl App {
    /// `/changelog`: every release's notes, oldest first.
    pub(super) fn show_changelog(&mut self) {
        let entries = changelog::parse(CHANGELOG);
        let markdown = changelog::full_markdown(&entries);
        self.chat.add_changelog(&markdown, ChangelogLayout::Command);
    }

    /// The notes new since the saved `lastChangelogVersion` (none for a resumed session
    /// or a first start, which records this version instead), then the extension updates.
    pub(super) fn show_startup_changelog(&mut self) {
        if self.session.message_count() > 0 {
            return;
        }
        let settings = self.session.settings();
        let last = settings
            .value(&["lastChangelogVersion"])
            .and_then(|v| v.as_str().map(str::to_owned));
        let collapse = settings
            .value(&["collapseChangelog"])
            .and_then(|v| v.as_bool())
            .unwrap_or(false);
        let notes = changelog::startup_notes(&changelog::parse(CHANGELOG), last.as_deref());
        if notes.record_version {
            settings.set(
                "lastChangelogVersion",
                Value::String(crate::PI_VERSION.to_owned()),
            );
        }
        let extensions = self.extension_changelog_updates();
        if notes.markdown.is_none() && extensions.is_empty() {
            return;
        }
        let layout = if collapse {
            ChangelogLayout::Collapsed
        } else {
            ChangelogLayout::Startup
        };
        let markdown = notes.markdown.unwrap_or_default();
        self.chat.add_startup_notes(&markdown, extensions, layout);
    }

    /// pi 1.6's `getExtensionChangelogUpdates`: for each package that brings an extension
    /// and a changelog, the entries newer than the version last seen. A first sighting, or
    /// an unreadable saved version, records the package's version and shows nothing.
    fn extension_changelog_updates(&self) -> Vec<ExtensionUpdate> {
        let settings = self.session.settings();
        let mut seen = std::collections::HashSet::new();
        let mut updates = Vec::new();
        for extension in self.session.extension_runtime().extensions() {
            let info = &extension.source_info;
            if info["origin"].as_str() != Some("package") {
                continue;
            }
            let Some(base) = info["baseDir"].as_str().map(PathBuf::from) else {
                continue;
            };
            let Some(changelog_path) = package_changelog(&base) else {
                continue;
            };
            let source = info["source"].as_str().unwrap_or_default();
            let scope = info["scope"].as_str().unwrap_or_default();
            // pi's `getSourcePackageKey`: `JSON.stringify({source, scope})`.
            let key = serde_json::json!({ "source": source, "scope": scope }).to_string();
            if !seen.insert(key.clone()) {
                continue;
            }
            let Some((name, version)) = package_name_version(&base) else {
                continue;
            };
            let record = || {
                settings.set_nested(
                    "extensionChangelogVersions",
                    &key,
                    Value::String(version.clone()),
                );
            };
            let last = settings
                .value(&["extensionChangelogVersions", &key])
                .and_then(|v| v.as_str().map(str::to_owned));
            let Some(last) = last else {
                record();
                continue;
            };
            let text = crate::text_file::read_text(&changelog_path).unwrap_or_default();
            let Some(entries) = changelog::new_entries(&changelog::parse(&text), &last) else {
                record();
                continue;
            };
            if entries.is_empty() {
                continue;
            }
            record();
            let name = name.unwrap_or_else(|| source.to_owned());
            let markdown = entries
                .iter()
                .map(|e| prefix_heading(&e.content, &name))
                .collect::<Vec<_>>()
                .join("\n\n")
                .trim()
                .to_owned();
            updates.push(ExtensionUpdate {
                name,
                version,
                markdown,
            });
        }
        updates
    }
}

/// A package's changelog: `pi.changelogPath` of its package.json, else `CHANGELOG.md`; a
/// file inside the package, or none.
fn package_changelog(root: &Path) -> Option<PathBuf> {
    let manifest = read_package_json(root);
    let relative = match manifest.as_ref().map(|m| &m["pi"]["changelogPath"]) {
        Some(Value::String(path)) => path.clone(),
        _ => "CHANGELOG.md".to_owned(),
    };
    if relative.is_empty() {
        return None;
    }
    let path = root.join(&relative);
    let canonical_root = std::fs::canonicalize(root).ok()?;
    let canonical = std::fs::canonicalize(&path).ok()?;
    (canonical != canonical_root && canonical.starts_with(&canonical_root) && canonical.is_file())
        .then_some(path)
}

fn read_package_json(root: &Path) -> Option<Value> {
    let text = crate::text_file::read_text(root.join("package.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The package's `name` (if any) and `version` (none: the package is skipped).
fn package_name_version(root: &Path) -> Option<(Option<String>, String)> {
    let manifest = read_package_json(root)?;
    let version = manifest["version"].as_str().filter(|v| !v.is_empty())?;
    let name = manifest["name"]
        .as_str()
        .filter(|n| !n.is_empty())
        .map(str::to_owned);
    Some((name, version.to_owned()))
}

/// `## [1.2.0]` becomes `## name [1.2.0]`, so entries read like pi's own.
fn prefix_heading(content: &str, name: &str) -> String {
    let Some(rest) = content.strip_prefix("##") else {
        return content.to_owned();
    };
    let trimmed = rest.trim_start();
    if trimmed.len() == rest.len() {
        return content.to_owned();
    }
    format!("## {name} {trimmed}")
}
