//! Finding extensions as the TypeScript pi does: `<cwd>/.pi/extensions/` (only in a trusted
//! project), `<agentDir>/extensions/`, the settings' `extensions` entries, then `-e` paths;
//! de-duplicated by resolved path, in that order.

use std::path::{Path, PathBuf};

use crate::resources::{SourceInfo, SourceScope};

/// An extension entry file and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiscoveredExtension {
    pub path: PathBuf,
    pub source_info: SourceInfo,
    /// Given with `-e`: a failure to load it ends pi (exit 1).
    pub explicit: bool,
}

/// What discovery looks at.
#[derive(Debug, Clone, Default)]
pub struct ExtensionSources {
    pub cwd: PathBuf,
    pub agent_dir: PathBuf,
    /// `extensions` of the global settings (relative to the agent dir).
    pub user_entries: Vec<String>,
    /// `extensions` of the project settings (relative to `<cwd>/.pi`).
    pub project_entries: Vec<String>,
    /// `-e/--extension` paths (relative to the cwd).
    pub cli_paths: Vec<String>,
    /// `--no-extensions`: only `-e` paths load.
    pub no_discovery: bool,
    /// The project is trusted: `.pi/extensions` and project settings entries load.
    pub project_trusted: bool,
}

/// Whether a project has project-local extension code that needs trust.
pub fn project_has_extensions(cwd: &Path, project_entries: &[String]) -> bool {
    !entries_in_dir(&cwd.join(".pi").join("extensions")).is_empty() || !project_entries.is_empty()
}

/// Every extension to load, in load order.
pub fn discover(sources: &ExtensionSources) -> Vec<DiscoveredExtension> {
    let mut found: Vec<DiscoveredExtension> = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let mut add =
        |path: PathBuf, source: &str, scope: SourceScope, _base: &Path, explicit: bool| {
            let key = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            match seen.iter().position(|k| *k == key) {
                // Given again with -e: still found once, but now a failure is fatal.
                Some(at) => found[at].explicit |= explicit,
                None => {
                    seen.push(key);
                    found.push(DiscoveredExtension {
                        source_info: SourceInfo::local(&path, source, scope, None),
                        path,
                        explicit,
                    });
                }
            }
        };
    if !sources.no_discovery {
        if sources.project_trusted {
            let dir = sources.cwd.join(".pi").join("extensions");
            for path in entries_in_dir(&dir) {
                add(path, "auto", SourceScope::Project, &dir, false);
            }
        }
        let dir = sources.agent_dir.join("extensions");
        for path in entries_in_dir(&dir) {
            add(path, "auto", SourceScope::User, &dir, false);
        }
        for entry in paths_only(&sources.user_entries) {
            for path in resolve_entry(entry, &sources.agent_dir) {
                add(path, "local", SourceScope::User, &sources.agent_dir, false);
            }
        }
        if sources.project_trusted {
            let base = sources.cwd.join(".pi");
            for entry in paths_only(&sources.project_entries) {
                for path in resolve_entry(entry, &base) {
                    add(path, "local", SourceScope::Project, &base, false);
                }
            }
        }
    }
    for entry in paths_only(&sources.cli_paths) {
        for path in resolve_entry(entry, &sources.cwd) {
            add(path, "cli", SourceScope::Temporary, &sources.cwd, true);
        }
    }
    found
}

/// The entries that are paths: `builtin:<name>` and its `+`/`-`/`!` forms name pi's
/// built-in extensions (see `crate::builtins`), not files.
fn paths_only(entries: &[String]) -> impl Iterator<Item = &String> {
    entries
        .iter()
        .filter(|e| !crate::builtins::is_builtin_entry(e))
}

/// `~/x` and relative paths made absolute.
fn expand(entry: &str, base: &Path) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    if let Some(rest) = entry.strip_prefix("~/")
        && let Some(home) = &home
    {
        return home.join(rest);
    }
    if entry == "~"
        && let Some(home) = home
    {
        return home;
    }
    let path = Path::new(entry);
    if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    }
}

/// A configured path (`-e`, settings `extensions`), resolved as the TypeScript pi resolves
/// a local source: a file as it is; a directory as a package (its `package.json` `pi`
/// manifest, else its `extensions/`, `skills/`, `prompts/`, `themes/` folders), or, when it
/// is neither, as one extension (its index file). A missing path is kept, so loading
/// reports it.
fn resolve_entry(entry: &str, base: &Path) -> Vec<PathBuf> {
    let path = expand(entry, base);
    match package(&path) {
        Some(found) => found.extensions,
        None => vec![path],
    }
}

/// What a package directory holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageResources {
    pub root: PathBuf,
    /// Declared by a `package.json` `pi` manifest (else found by folder names).
    pub manifest: bool,
    pub extensions: Vec<PathBuf>,
    pub prompts: Vec<PathBuf>,
    pub skills: Vec<PathBuf>,
}

/// A directory's package contents, or `None` when it is not a package (a file, a missing
/// path, or a folder with neither a manifest nor resource folders).
pub fn package(dir: &Path) -> Option<PackageResources> {
    if !dir.is_dir() {
        return None;
    }
    let listed = |manifest: &serde_json::Value, key: &str| -> Vec<PathBuf> {
        manifest
            .get(key)
            .and_then(serde_json::Value::as_array)
            .map(|list| {
                list.iter()
                    .filter_map(serde_json::Value::as_str)
                    .filter(|p| !p.starts_with('!'))
                    .map(|p| normalize(&dir.join(p)))
                    .filter(|p| p.exists())
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Ok(text) = crate::text_file::read_text(dir.join("package.json"))
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(manifest) = json.get("pi").filter(|pi| pi.is_object())
    {
        let mut extensions = Vec::new();
        for path in listed(manifest, "extensions") {
            if path.is_dir() {
                extensions.extend(entries_in_dir(&path));
            } else {
                extensions.push(path);
            }
        }
        return Some(PackageResources {
            root: dir.to_path_buf(),
            manifest: true,
            extensions,
            prompts: listed(manifest, "prompts"),
            skills: listed(manifest, "skills"),
        });
    }
    let folder = |name: &str| Some(dir.join(name)).filter(|p| p.is_dir());
    let (extensions, prompts, skills, themes) = (
        folder("extensions"),
        folder("prompts"),
        folder("skills"),
        folder("themes"),
    );
    if extensions.is_none() && prompts.is_none() && skills.is_none() && themes.is_none() {
        return None;
    }
    Some(PackageResources {
        root: dir.to_path_buf(),
        manifest: false,
        extensions: extensions.map(|d| entries_in_dir(&d)).unwrap_or_default(),
        prompts: prompts.into_iter().collect(),
        skills: skills.into_iter().collect(),
    })
}

/// The packages among the configured paths (settings entries and `-e`), for their prompt
/// templates and skills.
pub fn packages(sources: &ExtensionSources) -> Vec<PackageResources> {
    let mut entries: Vec<PathBuf> = Vec::new();
    if !sources.no_discovery {
        entries.extend(paths_only(&sources.user_entries).map(|e| expand(e, &sources.agent_dir)));
        if sources.project_trusted {
            let base = sources.cwd.join(".pi");
            entries.extend(paths_only(&sources.project_entries).map(|e| expand(e, &base)));
        }
    }
    entries.extend(paths_only(&sources.cli_paths).map(|e| expand(e, &sources.cwd)));
    entries.iter().filter_map(|p| package(p)).collect()
}

/// The entries of a directory holding one extension: `package.json` `pi.extensions`
/// (those that exist), else `index.ts`, else `index.js` (auto-discovered subfolders).
fn package_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    let manifest = dir.join("package.json");
    if let Ok(text) = crate::text_file::read_text(&manifest)
        && let Ok(json) = serde_json::from_str::<serde_json::Value>(&text)
        && let Some(list) = json
            .get("pi")
            .and_then(|pi| pi.get("extensions"))
            .and_then(serde_json::Value::as_array)
    {
        let entries: Vec<PathBuf> = list
            .iter()
            .filter_map(serde_json::Value::as_str)
            .map(|p| normalize(&dir.join(p)))
            .filter(|p| p.exists())
            .collect();
        if !entries.is_empty() {
            return Some(entries);
        }
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.exists())
        .map(|p| vec![p])
}

/// `a/./b/../c` → `a/c` without touching the file system.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// A directory of extensions: its `*.ts` / `*.js` files, and each subdirectory's entries
/// (manifest or index); no deeper. Sorted by name, as the TypeScript pi reads them.
fn entries_in_dir(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<PathBuf> = read.flatten().map(|e| e.path()).collect();
    names.sort();
    let mut found = Vec::new();
    for path in names {
        let is_file = path.is_file();
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if is_file && (name.ends_with(".ts") || name.ends_with(".js")) {
            found.push(path);
        } else if path.is_dir()
            && let Some(entries) = package_entries(&path)
        {
            found.extend(entries);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovers_in_order_and_skips_untrusted_projects() {
        let dir = tempfile::tempdir().unwrap();
        let cwd = dir.path().join("work");
        let agent = dir.path().join("agent");
        std::fs::create_dir_all(cwd.join(".pi/extensions/pkg")).unwrap();
        std::fs::create_dir_all(agent.join("extensions/sub")).unwrap();
        std::fs::write(cwd.join(".pi/extensions/a.ts"), "").unwrap();
        std::fs::write(
            cwd.join(".pi/extensions/pkg/package.json"),
            r#"{"pi":{"extensions":["./src/main.ts","./missing.ts"]}}"#,
        )
        .unwrap();
        std::fs::create_dir_all(cwd.join(".pi/extensions/pkg/src")).unwrap();
        std::fs::write(cwd.join(".pi/extensions/pkg/src/main.ts"), "").unwrap();
        std::fs::write(agent.join("extensions/b.js"), "").unwrap();
        std::fs::write(agent.join("extensions/notes.md"), "").unwrap();
        std::fs::write(agent.join("extensions/sub/index.ts"), "").unwrap();
        std::fs::write(cwd.join("cli.ts"), "").unwrap();
        let mut sources = ExtensionSources {
            cwd: cwd.clone(),
            agent_dir: agent.clone(),
            cli_paths: vec!["cli.ts".into(), "./cli.ts".into()],
            project_trusted: true,
            ..ExtensionSources::default()
        };
        let found: Vec<PathBuf> = discover(&sources).into_iter().map(|d| d.path).collect();
        assert_eq!(
            found,
            vec![
                cwd.join(".pi/extensions/a.ts"),
                cwd.join(".pi/extensions/pkg/src/main.ts"),
                agent.join("extensions/b.js"),
                agent.join("extensions/sub/index.ts"),
                cwd.join("cli.ts"),
            ]
        );
        sources.project_trusted = false;
        assert_eq!(discover(&sources).len(), 3);
        sources.no_discovery = true;
        let only_cli = discover(&sources);
        assert_eq!(only_cli.len(), 1);
        assert!(only_cli[0].explicit);
        assert_eq!(only_cli[0].source_info.source, "cli");
        assert!(project_has_extensions(&cwd, &[]));
    }
}
