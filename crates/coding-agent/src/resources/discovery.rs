//! Where skills and prompt templates are looked for, and the resolution of the paths to
//! load in precedence order, shared by both.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use super::ignore_files::IgnoreRules;
use super::paths::{canonical, normalize, read_dir_sorted, resolve_from};
use super::patterns::{apply_patterns, is_enabled_by_overrides, is_pattern};
use super::{SourceInfo, SourceScope};

/// Where to look for skills or prompt templates.
#[derive(Debug, Clone, Default)]
pub struct DiscoveryOptions {
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// The agent dir (`~/.pi/agent`).
    pub agent_dir: PathBuf,
    /// The home directory for `~` and `~/.agents/skills`; `$HOME` when `None`.
    pub home_dir: Option<PathBuf>,
    /// Entries of the agent dir's `settings.json` (`skills` or `prompts`).
    pub user_entries: Vec<String>,
    /// Entries of the project's `.pi/settings.json` (`skills` or `prompts`).
    pub project_entries: Vec<String>,
    /// Paths from the command line (`--skill` or `--prompt-template`).
    pub cli_paths: Vec<String>,
    /// Search the default directories and settings entries (false with `--no-skills` /
    /// `--no-prompt-templates`).
    pub include_defaults: bool,
    /// The project is not trusted: its settings entries, `.pi` directories and
    /// `.agents/skills` are skipped (pi 1.6.0).
    pub skip_project: bool,
}

impl DiscoveryOptions {
    /// Options searching the default places of `cwd` and `agent_dir`, nothing more.
    pub fn new(cwd: impl Into<PathBuf>, agent_dir: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            agent_dir: agent_dir.into(),
            include_defaults: true,
            ..Self::default()
        }
    }

    pub(crate) fn home(&self) -> PathBuf {
        self.home_dir
            .clone()
            .or_else(|| std::env::var_os("HOME").map(PathBuf::from))
            .unwrap_or_else(|| PathBuf::from("/"))
    }

    /// `<cwd>/.pi`, the base of project settings entries.
    pub(crate) fn project_base(&self) -> PathBuf {
        normalize(&self.cwd.join(".pi"))
    }
}

/// The nearest directory at or above `start` holding `.git`.
fn find_git_root(start: &Path) -> Option<PathBuf> {
    start
        .ancestors()
        .find(|dir| dir.join(".git").exists())
        .map(Path::to_path_buf)
}

/// `.agents/skills` in `cwd` and each parent, up to the git repository root (or the
/// filesystem root outside a repository).
pub(crate) fn ancestor_agents_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let start = normalize(cwd);
    let git_root = find_git_root(&start);
    let mut dirs = Vec::new();
    for dir in start.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if git_root.as_deref() == Some(dir) {
            break;
        }
    }
    dirs
}

/// Which resource is resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Skills,
    Prompts,
}

/// How a resolved path was found.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    source: &'static str,
    scope: SourceScope,
    base_dir: Option<PathBuf>,
}

impl Meta {
    fn rank(&self) -> u8 {
        let scope = if self.scope == SourceScope::Project {
            0
        } else {
            2
        };
        scope + u8::from(self.source != "local")
    }

    pub(crate) fn source_info(&self, path: &Path) -> SourceInfo {
        SourceInfo::local(path, self.source, self.scope, self.base_dir.clone())
    }
}

/// The paths to load, in precedence order, and how the discovered ones were found.
pub(crate) struct Resolved {
    pub paths: Vec<PathBuf>,
    pub meta: HashMap<PathBuf, Meta>,
}

/// Resolves the paths to load for `kind`, as the TypeScript pi's package manager and
/// resource loader do (without packages).
pub(crate) fn resolve(options: &DiscoveryOptions, kind: Kind) -> Resolved {
    let home = options.home();
    let cwd = normalize(&options.cwd);
    let agent_dir = normalize(&options.agent_dir);
    let project_base = options.project_base();
    let mut candidates: Vec<(PathBuf, Meta, bool)> = Vec::new();
    let mut seen: HashSet<PathBuf> = HashSet::new();
    let mut add = |path: PathBuf, meta: &Meta, enabled: bool| {
        if seen.insert(path.clone()) {
            candidates.push((path, meta.clone(), enabled));
        }
    };

    if options.include_defaults {
        let no_entries = Vec::new();
        let project_entries = if options.skip_project {
            &no_entries
        } else {
            &options.project_entries
        };
        for (entries, scope, base) in [
            (project_entries, SourceScope::Project, &project_base),
            (&options.user_entries, SourceScope::User, &agent_dir),
        ] {
            let (patterns, plain): (Vec<&String>, Vec<&String>) =
                entries.iter().partition(|e| is_pattern(e));
            let patterns: Vec<&str> = patterns.iter().map(|s| s.as_str()).collect();
            let mut files = Vec::new();
            for entry in plain {
                let path = resolve_from(entry, base, &home);
                if path.is_file() {
                    files.push(path);
                } else if path.is_dir() {
                    files.extend(match kind {
                        Kind::Skills => collect_skill_entries(&path, SkillMode::Pi),
                        Kind::Prompts => collect_markdown_files(&path),
                    });
                }
            }
            let enabled = apply_patterns(&files, &patterns, base);
            let meta = Meta {
                source: "local",
                scope,
                base_dir: None,
            };
            for file in files {
                let on = enabled.contains(&file);
                add(file, &meta, on);
            }
        }

        let user_agents_skills = normalize(&home.join(".agents").join("skills"));
        for (scope, base, entries) in [
            (
                SourceScope::Project,
                &project_base,
                &options.project_entries,
            ),
            (SourceScope::User, &agent_dir, &options.user_entries),
        ] {
            // Each file with the folder its patterns and metadata are relative to: the
            // scope's base, or for `.agents/skills` that `.agents` folder (pi 0.74.1, 0.75.5).
            let agents = |dir: &Path| -> Vec<(PathBuf, PathBuf)> {
                let agents_base = dir.parent().unwrap_or(dir).to_path_buf();
                collect_skill_entries(dir, SkillMode::Agents)
                    .into_iter()
                    .map(|file| (file, agents_base.clone()))
                    .collect()
            };
            let own = |files: Vec<PathBuf>| -> Vec<(PathBuf, PathBuf)> {
                files.into_iter().map(|file| (file, base.clone())).collect()
            };
            let found = match (kind, scope) {
                (_, SourceScope::Project) if options.skip_project => Vec::new(),
                (Kind::Skills, SourceScope::Project) => {
                    let mut found = own(collect_skill_entries(
                        &project_base.join("skills"),
                        SkillMode::Pi,
                    ));
                    for dir in ancestor_agents_skill_dirs(&cwd) {
                        if dir != user_agents_skills {
                            found.extend(agents(&dir));
                        }
                    }
                    found
                }
                (Kind::Skills, _) => {
                    let mut found = own(collect_skill_entries(
                        &agent_dir.join("skills"),
                        SkillMode::Pi,
                    ));
                    found.extend(agents(&user_agents_skills));
                    found
                }
                (Kind::Prompts, _) => own(collect_prompt_entries(&base.join("prompts"))),
            };
            for (file, file_base) in found {
                let meta = Meta {
                    source: "auto",
                    scope,
                    base_dir: Some(file_base.clone()),
                };
                let on = is_enabled_by_overrides(&file, entries, &file_base);
                add(file, &meta, on);
            }
        }
    }

    let mut meta_by_path = HashMap::new();
    for (path, meta, _) in &candidates {
        meta_by_path
            .entry(path.clone())
            .or_insert_with(|| meta.clone());
    }
    candidates.sort_by_key(|(_, meta, _)| meta.rank());
    let mut canonical_seen = HashSet::new();
    let mut paths = Vec::new();
    for (path, _, enabled) in candidates {
        if canonical_seen.insert(canonical(&path)) && enabled {
            paths.push(path);
        }
    }
    // Command-line paths come last; a path already listed is not repeated.
    let mut merged_seen: HashSet<PathBuf> = paths.iter().map(|p| canonical(p)).collect();
    for raw in &options.cli_paths {
        let path = resolve_from(raw, &cwd, &home);
        if merged_seen.insert(canonical(&path)) {
            paths.push(path);
        }
    }
    Resolved {
        paths,
        meta: meta_by_path,
    }
}

/// How a skills directory is scanned: pi's own directories also take `.md` files at their
/// root as skills; `.agents/skills` directories take `.md` files in their grouping
/// folders but not at their root (pi 0.84.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SkillMode {
    Pi,
    Agents,
}

/// The skill files under `dir`: a directory holding `SKILL.md` is one skill (not searched
/// further); otherwise its subdirectories are searched.
pub(crate) fn collect_skill_entries(dir: &Path, mode: SkillMode) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut rules = IgnoreRules::new(dir);
    collect_skill_entries_in(dir, dir, mode, &mut rules, &mut out);
    out
}

fn collect_skill_entries_in(
    dir: &Path,
    root: &Path,
    mode: SkillMode,
    rules: &mut IgnoreRules,
    out: &mut Vec<PathBuf>,
) {
    if !dir.exists() {
        return;
    }
    rules.add_dir(dir);
    let Some(entries) = read_dir_sorted(dir) else {
        return;
    };
    if let Some(skill) = entries
        .iter()
        .find(|e| e.name == "SKILL.md" && e.is_file && !rules.ignores(&e.path, false))
    {
        out.push(skill.path.clone());
        return;
    }
    for entry in &entries {
        if entry.name.starts_with('.') || entry.name == "node_modules" {
            continue;
        }
        let markdown_here = match mode {
            SkillMode::Pi => dir == root,
            SkillMode::Agents => dir != root,
        };
        if markdown_here
            && entry.is_file
            && entry.name.ends_with(".md")
            && !rules.ignores(&entry.path, false)
        {
            out.push(entry.path.clone());
            continue;
        }
        if !entry.is_dir || rules.ignores(&entry.path, true) {
            continue;
        }
        collect_skill_entries_in(&entry.path, root, mode, rules, out);
    }
}

/// Every `.md` file under `dir`, recursively (a settings entry naming a directory).
fn collect_markdown_files(dir: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, rules: &mut IgnoreRules, out: &mut Vec<PathBuf>) {
        if !dir.exists() {
            return;
        }
        rules.add_dir(dir);
        let Some(entries) = read_dir_sorted(dir) else {
            return;
        };
        for entry in entries {
            if entry.name.starts_with('.') || entry.name == "node_modules" {
                continue;
            }
            if rules.ignores(&entry.path, entry.is_dir) {
                continue;
            }
            if entry.is_dir {
                walk(&entry.path, rules, out);
            } else if entry.is_file && entry.name.ends_with(".md") {
                out.push(entry.path);
            }
        }
    }
    let mut out = Vec::new();
    let mut rules = IgnoreRules::new(dir);
    walk(dir, &mut rules, &mut out);
    out
}

/// The `.md` files directly in a default prompts directory.
fn collect_prompt_entries(dir: &Path) -> Vec<PathBuf> {
    let mut rules = IgnoreRules::new(dir);
    if !dir.exists() {
        return Vec::new();
    }
    rules.add_dir(dir);
    let Some(entries) = read_dir_sorted(dir) else {
        return Vec::new();
    };
    entries
        .into_iter()
        .filter(|e| !e.name.starts_with('.') && e.name != "node_modules")
        .filter(|e| !rules.ignores(&e.path, false))
        .filter(|e| e.is_file && e.name.ends_with(".md"))
        .map(|e| e.path)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestors_stop_at_the_git_root() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let deep = repo.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let dirs = ancestor_agents_skill_dirs(&deep);
        assert_eq!(
            dirs,
            [
                deep.join(".agents/skills"),
                repo.join("a/.agents/skills"),
                repo.join(".agents/skills")
            ]
        );
    }
}
