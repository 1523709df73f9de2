//! The resource list of `pi config`: package resources grouped by package and type, a
//! filter typed by the user, the selection, and a toggle written back to the package's
//! settings entry as a `+path` / `-path` pattern (the TypeScript pi's rules).

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::config::settings_file::{SettingsWriteError, update_settings_file};
use crate::packages::paths::InstallRoots;
use crate::packages::resolve::{PackageResource, ResolvedPackages};
use crate::packages::resources::ResourceType;
use crate::packages::settings::{entry_source, settings_path};
use crate::resources::{SourceScope, relative};

/// One resource line.
#[derive(Debug, Clone)]
pub struct Item {
    pub path: PathBuf,
    pub kind: ResourceType,
    pub enabled: bool,
    pub display: String,
    /// The package source as the settings write it.
    pub source: String,
    pub scope: SourceScope,
    /// The package root the settings patterns are relative to.
    pub base_dir: PathBuf,
}

/// A line of the list: a package header, a type header, or a resource.
#[derive(Debug, Clone)]
pub enum Row {
    Group(String),
    Kind(&'static str),
    Item(usize),
}

fn kind_label(kind: ResourceType) -> &'static str {
    match kind {
        ResourceType::Extensions => "Extensions",
        ResourceType::Skills => "Skills",
        ResourceType::Prompts => "Prompts",
        ResourceType::Themes => "Themes",
    }
}

fn scope_name(scope: SourceScope) -> &'static str {
    match scope {
        SourceScope::User => "user",
        SourceScope::Project => "project",
        SourceScope::Temporary => "temporary",
    }
}

/// How a resource is named in the list: `folder/file` for an extension outside an
/// `extensions` folder, the folder of a `SKILL.md`, else the file name.
fn display_name(path: &Path, kind: ResourceType) -> String {
    let name = |p: &Path| {
        p.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let file = name(path);
    let parent = path.parent().map(name).unwrap_or_default();
    match kind {
        ResourceType::Extensions if parent != "extensions" => format!("{parent}/{file}"),
        ResourceType::Skills if file == "SKILL.md" => parent,
        _ => file,
    }
}

/// Everything `pi config` shows and edits.
pub struct ResourceList {
    pub items: Vec<Item>,
    /// Rows in display order (groups, types, items), before filtering.
    rows: Vec<Row>,
    /// The rows the filter leaves.
    pub visible: Vec<Row>,
    /// Index into `visible` of the selected item row.
    pub selected: usize,
    pub query: String,
    roots: InstallRoots,
}

impl ResourceList {
    /// Groups the packages' resources: by package (user before project, then by source),
    /// types in the TS order, items by name.
    pub fn new(
        resolved: &ResolvedPackages,
        roots: InstallRoots,
        only: Option<SourceScope>,
    ) -> Self {
        let mut items: Vec<Item> = Vec::new();
        for kind in ResourceType::ALL {
            for resource in resolved.all(kind) {
                let PackageResource {
                    path,
                    enabled,
                    source_info,
                } = resource;
                if only.is_some_and(|scope| scope != source_info.scope)
                    || source_info.scope == SourceScope::Temporary
                {
                    continue;
                }
                items.push(Item {
                    path: path.clone(),
                    kind,
                    enabled: *enabled,
                    display: display_name(path, kind),
                    source: source_info.source.clone(),
                    scope: source_info.scope,
                    base_dir: source_info
                        .base_dir
                        .clone()
                        .unwrap_or_else(|| path.parent().map(PathBuf::from).unwrap_or_default()),
                });
            }
        }
        let rank = |scope: SourceScope| u8::from(scope != SourceScope::User);
        items.sort_by(|a, b| {
            (
                rank(a.scope),
                &a.source,
                a.kind as u8,
                a.display.to_lowercase(),
            )
                .cmp(&(
                    rank(b.scope),
                    &b.source,
                    b.kind as u8,
                    b.display.to_lowercase(),
                ))
        });
        let mut rows = Vec::new();
        let mut last: Option<(SourceScope, String, Option<ResourceType>)> = None;
        for (index, item) in items.iter().enumerate() {
            let same_group = last
                .as_ref()
                .is_some_and(|(scope, source, _)| *scope == item.scope && *source == item.source);
            if !same_group {
                rows.push(Row::Group(format!(
                    "{} ({})",
                    item.source,
                    scope_name(item.scope)
                )));
            }
            if !same_group || last.as_ref().and_then(|l| l.2) != Some(item.kind) {
                rows.push(Row::Kind(kind_label(item.kind)));
            }
            rows.push(Row::Item(index));
            last = Some((item.scope, item.source.clone(), Some(item.kind)));
        }
        let mut list = Self {
            items,
            visible: rows.clone(),
            rows,
            selected: 0,
            query: String::new(),
            roots,
        };
        list.select_first();
        list
    }

    fn select_first(&mut self) {
        self.selected = self
            .visible
            .iter()
            .position(|r| matches!(r, Row::Item(_)))
            .unwrap_or(0);
    }

    /// Keeps the items whose name, type or path contains the query, with their headers.
    pub fn set_query(&mut self, query: String) {
        self.query = query;
        let needle = self.query.to_lowercase();
        if needle.trim().is_empty() {
            self.visible = self.rows.clone();
            self.select_first();
            return;
        }
        let matches = |item: &Item| {
            item.display.to_lowercase().contains(&needle)
                || item.kind.key().contains(&needle)
                || item
                    .path
                    .display()
                    .to_string()
                    .to_lowercase()
                    .contains(&needle)
        };
        let mut visible = Vec::new();
        let mut pending: Vec<Row> = Vec::new();
        for row in &self.rows {
            match row {
                Row::Group(_) => {
                    pending.clear();
                    pending.push(row.clone());
                }
                Row::Kind(_) => {
                    pending.retain(|r| matches!(r, Row::Group(_)));
                    pending.push(row.clone());
                }
                Row::Item(index) => {
                    if matches(&self.items[*index]) {
                        visible.append(&mut pending);
                        visible.push(row.clone());
                    }
                }
            }
        }
        // Headers already written stay; re-add a type header after a group's first match.
        self.visible = visible;
        self.select_first();
    }

    /// Moves the selection to the next item row up (`-1`) or down (`1`).
    pub fn step(&mut self, direction: isize) {
        let mut at = self.selected as isize + direction;
        while at >= 0 && (at as usize) < self.visible.len() {
            if matches!(self.visible[at as usize], Row::Item(_)) {
                self.selected = at as usize;
                return;
            }
            at += direction;
        }
    }

    /// Flips the selected resource and writes the package's filter.
    pub fn toggle(&mut self) -> Result<(), SettingsWriteError> {
        let Some(Row::Item(index)) = self.visible.get(self.selected) else {
            return Ok(());
        };
        let item = &mut self.items[*index];
        let enabled = !item.enabled;
        let pattern = relative(&item.base_dir, &item.path);
        let key = item.kind.key();
        let source = item.source.clone();
        update_settings_file(&settings_path(&self.roots, item.scope), |settings| {
            write_pattern(settings, &source, key, &pattern, enabled);
        })?;
        item.enabled = enabled;
        Ok(())
    }
}

/// Puts `+pattern` or `-pattern` in the `key` list of the package entry for `source`,
/// replacing earlier patterns for the same path; an entry left without filters goes back
/// to its string form.
fn write_pattern(
    settings: &mut Map<String, Value>,
    source: &str,
    key: &str,
    pattern: &str,
    enabled: bool,
) {
    let Some(Value::Array(packages)) = settings.get_mut("packages") else {
        return;
    };
    let Some(entry) = packages
        .iter_mut()
        .find(|entry| entry_source(entry) == Some(source))
    else {
        return;
    };
    if let Value::String(source) = entry {
        let mut object = Map::new();
        object.insert("source".into(), Value::String(source.clone()));
        *entry = Value::Object(object);
    }
    let Value::Object(object) = entry else {
        return;
    };
    let mut list: Vec<Value> = object
        .get(key)
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    list.retain(|p| {
        let p = p.as_str().unwrap_or_default();
        let stripped = p.strip_prefix(['!', '+', '-']).unwrap_or(p);
        stripped != pattern
    });
    list.push(Value::String(format!(
        "{}{pattern}",
        if enabled { '+' } else { '-' }
    )));
    object.insert(key.to_owned(), Value::Array(list));
    let has_filters = ResourceType::ALL
        .iter()
        .any(|kind| object.contains_key(kind.key()));
    if !has_filters && let Some(Value::String(source)) = object.get("source").cloned() {
        *entry = Value::String(source);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn toggles_become_exact_patterns_in_the_package_entry() {
        let mut settings = json!({"packages": ["npm:a", {"source": "npm:b", "skills": ["-x"]}]})
            .as_object()
            .cloned()
            .unwrap();
        write_pattern(
            &mut settings,
            "npm:a",
            "extensions",
            "extensions/one.ts",
            false,
        );
        write_pattern(&mut settings, "npm:b", "skills", "x", true);
        assert_eq!(
            Value::Object(settings),
            json!({"packages": [
                {"source": "npm:a", "extensions": ["-extensions/one.ts"]},
                {"source": "npm:b", "skills": ["+x"]}
            ]})
        );
    }

    #[test]
    fn display_names_follow_the_typescript_pi() {
        assert_eq!(
            display_name(Path::new("/p/extensions/a.ts"), ResourceType::Extensions),
            "a.ts"
        );
        assert_eq!(
            display_name(Path::new("/p/src/index.ts"), ResourceType::Extensions),
            "src/index.ts"
        );
        assert_eq!(
            display_name(Path::new("/p/skills/tidy/SKILL.md"), ResourceType::Skills),
            "tidy"
        );
    }
}
