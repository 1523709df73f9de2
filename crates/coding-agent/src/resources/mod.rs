//! Prompt templates and skills: discovery, loading and expansion, as the TypeScript pi does.
//!
//! Where resources come from, highest precedence first (the first of two with the same name
//! wins; the other is reported as a collision):
//!
//! 1. entries of the project's `.pi/settings.json` (`skills` / `prompts`, paths relative to
//!    `<cwd>/.pi`);
//! 2. the project's own directories: `<cwd>/.pi/skills` and `.agents/skills` in the cwd and
//!    every parent up to the git repository root (or the filesystem root), or
//!    `<cwd>/.pi/prompts`;
//! 3. entries of the agent dir's `settings.json` (paths relative to the agent dir);
//! 4. the user's directories: `<agentDir>/skills` and `~/.agents/skills`, or
//!    `<agentDir>/prompts`;
//! 5. paths given on the command line (`--skill`, `--prompt-template`), which still load
//!    with `--no-skills` / `--no-prompt-templates` (those drop 1–4).
//!
//! Settings entries may also be patterns that switch discovered files off and on:
//! `!glob` excludes, `+path` forces a path in, `-path` forces it out; a plain glob keeps only
//! the files of the settings entries that match it. `.gitignore`, `.ignore` and `.fdignore`
//! files inside the scanned directories are honoured, and names starting with `.` as well as
//! `node_modules` are skipped.

pub mod frontmatter;
pub mod prompt_templates;
pub mod skills;

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

pub use prompt_templates::{
    LoadPromptTemplatesResult, PromptTemplate, expand_prompt_template, load_prompt_templates,
    load_prompt_templates_with_diagnostics, parse_command_args, substitute_args,
};
pub use skills::{
    LoadSkillsResult, Skill, SkillExpansionError, expand_skill_command, format_skills_for_prompt,
    load_skills,
};

/// Whose a resource is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceScope {
    /// From the agent dir or the home directory.
    User,
    /// From the project (the cwd and its parents).
    Project,
    /// Given for this run only (command line).
    Temporary,
}

/// Whether a resource came from a package or stands on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceOrigin {
    /// Part of an installed pi package (not discovered by this build).
    #[serde(rename = "package")]
    Package,
    /// A file or directory of its own.
    #[serde(rename = "top-level")]
    TopLevel,
}

/// Where a resource was found, in the shape the TypeScript pi reports it (`sourceInfo`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceInfo {
    /// The resource's file.
    pub path: PathBuf,
    /// `auto` (found in a default directory), `local` (a settings entry or a path) or `cli`.
    pub source: String,
    /// Whose it is.
    pub scope: SourceScope,
    /// Package or top-level.
    pub origin: SourceOrigin,
    /// The directory the resource's relative references start from, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub base_dir: Option<PathBuf>,
}

impl SourceInfo {
    /// A top-level source info.
    pub fn local(path: &Path, source: &str, scope: SourceScope, base_dir: Option<PathBuf>) -> Self {
        Self {
            path: path.to_path_buf(),
            source: source.to_owned(),
            scope,
            origin: SourceOrigin::TopLevel,
            base_dir,
        }
    }
}

/// The kind of a diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiagnosticKind {
    /// Loaded anyway, or skipped with a reason.
    Warning,
    /// Something asked for could not be loaded.
    Error,
    /// Two resources share a name; the first one found wins.
    Collision,
}

/// The two sides of a name collision.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourceCollision {
    /// `skill` or `prompt`.
    pub resource_type: String,
    /// The shared name.
    pub name: String,
    /// The resource that is used.
    pub winner_path: PathBuf,
    /// The resource that is dropped.
    pub loser_path: PathBuf,
}

/// A problem found while loading resources.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ResourceDiagnostic {
    /// Warning, error or collision.
    #[serde(rename = "type")]
    pub kind: DiagnosticKind,
    /// What happened.
    pub message: String,
    /// The file or directory concerned.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<PathBuf>,
    /// For collisions: which file won and which lost.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub collision: Option<ResourceCollision>,
}

/// One line: `path: message`, or for a collision which file is used and which is skipped.
impl std::fmt::Display for ResourceDiagnostic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (&self.collision, &self.path) {
            (Some(c), _) => write!(
                f,
                "{}: {} is skipped, {} is used",
                self.message,
                c.loser_path.display(),
                c.winner_path.display()
            ),
            (None, Some(path)) => write!(f, "{}: {}", path.display(), self.message),
            (None, None) => f.write_str(&self.message),
        }
    }
}

impl ResourceDiagnostic {
    pub(crate) fn warning(message: impl Into<String>, path: &Path) -> Self {
        Self {
            kind: DiagnosticKind::Warning,
            message: message.into(),
            path: Some(path.to_path_buf()),
            collision: None,
        }
    }

    pub(crate) fn error(message: impl Into<String>, path: &Path) -> Self {
        Self {
            kind: DiagnosticKind::Error,
            ..Self::warning(message, path)
        }
    }

    pub(crate) fn collision(
        resource_type: &str,
        label: &str,
        name: &str,
        winner: &Path,
        loser: &Path,
    ) -> Self {
        Self {
            kind: DiagnosticKind::Collision,
            message: format!("name \"{label}\" collision"),
            path: Some(loser.to_path_buf()),
            collision: Some(ResourceCollision {
                resource_type: resource_type.to_owned(),
                name: name.to_owned(),
                winner_path: winner.to_path_buf(),
                loser_path: loser.to_path_buf(),
            }),
        }
    }
}

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

/// The resource keys of both settings files, read separately (the project's entries resolve
/// against `<cwd>/.pi`, the user's against the agent dir).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceSettings {
    /// `skills` of the agent dir's `settings.json`.
    pub user_skills: Vec<String>,
    /// `skills` of `.pi/settings.json`.
    pub project_skills: Vec<String>,
    /// `prompts` of the agent dir's `settings.json`.
    pub user_prompts: Vec<String>,
    /// `prompts` of `.pi/settings.json`.
    pub project_prompts: Vec<String>,
    /// `enableSkillCommands` (project over global; default true): offer `/skill:name`.
    pub enable_skill_commands: bool,
}

impl Default for ResourceSettings {
    fn default() -> Self {
        Self {
            user_skills: Vec::new(),
            project_skills: Vec::new(),
            user_prompts: Vec::new(),
            project_prompts: Vec::new(),
            enable_skill_commands: true,
        }
    }
}

/// One settings file's resource keys, with the old `skills` object migrated as the TypeScript
/// pi does (`{"customDirectories": [...], "enableSkillCommands": bool}`).
fn read_resource_keys(path: &Path) -> (Vec<String>, Vec<String>, Option<bool>) {
    let Some(Value::Object(map)) = std::fs::read_to_string(path)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
    else {
        return (Vec::new(), Vec::new(), None);
    };
    let mut enable = map.get("enableSkillCommands").and_then(Value::as_bool);
    let skills = match map.get("skills") {
        Some(Value::Object(legacy)) => {
            if enable.is_none() {
                enable = legacy.get("enableSkillCommands").and_then(Value::as_bool);
            }
            legacy
                .get("customDirectories")
                .map(string_list)
                .unwrap_or_default()
        }
        Some(v) => string_list(v),
        None => Vec::new(),
    };
    let prompts = map.get("prompts").map(string_list).unwrap_or_default();
    (skills, prompts, enable)
}

fn string_list(value: &Value) -> Vec<String> {
    match value {
        Value::Array(items) => items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        _ => Vec::new(),
    }
}

impl ResourceSettings {
    /// Reads `global` (the agent dir's `settings.json`) and `project` (`.pi/settings.json`);
    /// a missing or unreadable file contributes nothing.
    pub fn load(global: &Path, project: &Path) -> Self {
        let (user_skills, user_prompts, user_enable) = read_resource_keys(global);
        let (project_skills, project_prompts, project_enable) = read_resource_keys(project);
        Self {
            user_skills,
            project_skills,
            user_prompts,
            project_prompts,
            enable_skill_commands: project_enable.or(user_enable).unwrap_or(true),
        }
    }
}

/// Deserializes a settings list of strings leniently: a non-list is `None`, non-strings are
/// dropped, and the old `skills` object yields its `customDirectories`.
pub fn deserialize_string_list<'de, D>(deserializer: D) -> Result<Option<Vec<String>>, D::Error>
where
    D: Deserializer<'de>,
{
    let value = Option::<Value>::deserialize(deserializer)?;
    Ok(match value {
        Some(v @ Value::Array(_)) => Some(string_list(&v)),
        Some(Value::Object(legacy)) => legacy
            .get("customDirectories")
            .map(string_list)
            .filter(|l| !l.is_empty()),
        _ => None,
    })
}

// ---------------------------------------------------------------------------------------
// Paths

/// Resolves `.` and `..` without touching the filesystem (as Node's `path.resolve`).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// `~`, `~/x` and (as the TypeScript pi) `~x` expand to the home directory.
pub(crate) fn expand_home(input: &str, home: &Path) -> PathBuf {
    let trimmed = input.trim();
    if trimmed == "~" {
        home.to_path_buf()
    } else if let Some(rest) = trimmed.strip_prefix("~/") {
        home.join(rest)
    } else if let Some(rest) = trimmed.strip_prefix('~') {
        home.join(rest)
    } else {
        PathBuf::from(trimmed)
    }
}

/// A settings or command-line path, absolute: `~` expanded, relative to `base` otherwise.
pub(crate) fn resolve_from(input: &str, base: &Path, home: &Path) -> PathBuf {
    let expanded = expand_home(input, home);
    if expanded.is_absolute() {
        normalize(&expanded)
    } else {
        normalize(&base.join(expanded))
    }
}

/// Whether `target` is `root` or inside it (lexically).
pub(crate) fn is_under(target: &Path, root: &Path) -> bool {
    normalize(target).starts_with(normalize(root))
}

/// The path of `to` relative to `from` with `/` separators (Node's `path.relative`).
pub(crate) fn relative(from: &Path, to: &Path) -> String {
    let from = normalize(from);
    let to = normalize(to);
    let from_parts: Vec<_> = from.components().collect();
    let to_parts: Vec<_> = to.components().collect();
    let common = from_parts
        .iter()
        .zip(&to_parts)
        .take_while(|(a, b)| a == b)
        .count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from_parts.len() - common];
    parts.extend(
        to_parts[common..]
            .iter()
            .map(|c| c.as_os_str().to_string_lossy().into_owned()),
    );
    parts.join("/")
}

/// The real path of `path`, or `path` itself when it cannot be resolved.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

fn posix(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

/// A directory entry with symlinks followed (broken links are left out).
pub(crate) struct Entry {
    pub name: String,
    pub path: PathBuf,
    pub is_dir: bool,
    pub is_file: bool,
}

/// The entries of `dir` sorted by name (as Node lists them); `None` when it can't be read.
pub(crate) fn read_dir_sorted(dir: &Path) -> Option<Vec<Entry>> {
    let mut entries: Vec<Entry> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let path = e.path();
            let file_type = e.file_type().ok()?;
            let (is_dir, is_file) = if file_type.is_symlink() {
                let meta = std::fs::metadata(&path).ok()?;
                (meta.is_dir(), meta.is_file())
            } else {
                (file_type.is_dir(), file_type.is_file())
            };
            Some(Entry {
                name: e.file_name().to_string_lossy().into_owned(),
                path,
                is_dir,
                is_file,
            })
        })
        .collect();
    entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    Some(entries)
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

// ---------------------------------------------------------------------------------------
// Ignore files

const IGNORE_FILE_NAMES: [&str; 3] = [".gitignore", ".ignore", ".fdignore"];

/// The ignore rules met while walking down from a root: each directory's rules are added
/// with that directory's path (relative to the root) as a prefix.
pub(crate) struct IgnoreRules {
    root: PathBuf,
    lines: Vec<String>,
    matcher: Option<ignore::gitignore::Gitignore>,
}

fn prefix_ignore_pattern(line: &str, prefix: &str) -> Option<String> {
    let trimmed = line.trim();
    if trimmed.is_empty() || (trimmed.starts_with('#') && !trimmed.starts_with("\\#")) {
        return None;
    }
    let mut pattern = line;
    let mut negated = false;
    if let Some(rest) = pattern.strip_prefix('!') {
        negated = true;
        pattern = rest;
    } else if pattern.starts_with("\\!") {
        pattern = &pattern[1..];
    }
    let pattern = pattern.strip_prefix('/').unwrap_or(pattern);
    let prefixed = format!("{prefix}{pattern}");
    Some(if negated {
        format!("!{prefixed}")
    } else {
        prefixed
    })
}

impl IgnoreRules {
    pub(crate) fn new(root: &Path) -> Self {
        Self {
            root: root.to_path_buf(),
            lines: Vec::new(),
            matcher: None,
        }
    }

    /// Adds the ignore files of `dir`.
    pub(crate) fn add_dir(&mut self, dir: &Path) {
        let rel = relative(&self.root, dir);
        let prefix = if rel.is_empty() {
            String::new()
        } else {
            format!("{rel}/")
        };
        let before = self.lines.len();
        for name in IGNORE_FILE_NAMES {
            let Ok(content) = std::fs::read_to_string(dir.join(name)) else {
                continue;
            };
            for line in content.split('\n') {
                let line = line.strip_suffix('\r').unwrap_or(line);
                if let Some(pattern) = prefix_ignore_pattern(line, &prefix) {
                    self.lines.push(pattern);
                }
            }
        }
        if self.lines.len() != before {
            let mut builder = ignore::gitignore::GitignoreBuilder::new(".");
            for line in &self.lines {
                // A line that is not a valid glob is skipped, not fatal.
                let _ = builder.add_line(None, line);
            }
            self.matcher = builder.build().ok();
        }
    }

    /// Whether `path` (under the root) or one of its parent directories is ignored.
    pub(crate) fn ignores(&self, path: &Path, is_dir: bool) -> bool {
        let Some(matcher) = &self.matcher else {
            return false;
        };
        let rel = PathBuf::from(relative(&self.root, path));
        let mut current: &Path = &rel;
        let mut dir = is_dir;
        loop {
            match matcher.matched(current, dir) {
                ignore::Match::Ignore(_) => return true,
                ignore::Match::Whitelist(_) => return false,
                ignore::Match::None => {}
            }
            match current.parent() {
                Some(parent) if !parent.as_os_str().is_empty() => {
                    current = parent;
                    dir = true;
                }
                _ => return false,
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Settings patterns

fn is_pattern(s: &str) -> bool {
    s.starts_with('!')
        || s.starts_with('+')
        || s.starts_with('-')
        || s.contains('*')
        || s.contains('?')
}

fn glob_match(pattern: &str, candidate: &str) -> bool {
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher().is_match(candidate))
        .unwrap_or(false)
}

/// The forms of a file a pattern is matched against: relative to `base`, its name, its
/// absolute path, and for a `SKILL.md` the same three of its directory.
fn match_forms(file: &Path, base: &Path) -> Vec<String> {
    let mut forms = vec![
        relative(base, file),
        file.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default(),
        posix(file),
    ];
    if file.file_name().is_some_and(|n| n == "SKILL.md")
        && let Some(parent) = file.parent()
    {
        forms.push(relative(base, parent));
        forms.push(
            parent
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        );
        forms.push(posix(parent));
    }
    forms
}

fn matches_any_pattern(file: &Path, patterns: &[&str], base: &Path) -> bool {
    let forms = match_forms(file, base);
    patterns.iter().any(|p| {
        let p = p.replace('\\', "/");
        forms.iter().any(|f| glob_match(&p, f))
    })
}

fn matches_any_exact_pattern(file: &Path, patterns: &[&str], base: &Path) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let forms = match_forms(file, base);
    // The file name alone does not count for exact matches.
    let exact: Vec<&String> = forms
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != 1 && *i != 4)
        .map(|(_, f)| f)
        .collect();
    patterns.iter().any(|p| {
        let p = p
            .strip_prefix("./")
            .or_else(|| p.strip_prefix(".\\"))
            .unwrap_or(p)
            .replace('\\', "/");
        exact.iter().any(|f| **f == p)
    })
}

/// The files of `all` that settings `patterns` leave enabled.
pub(crate) fn apply_patterns(all: &[PathBuf], patterns: &[&str], base: &Path) -> HashSet<PathBuf> {
    let mut includes = Vec::new();
    let mut excludes = Vec::new();
    let mut force_in = Vec::new();
    let mut force_out = Vec::new();
    for p in patterns {
        if let Some(rest) = p.strip_prefix('+') {
            force_in.push(rest);
        } else if let Some(rest) = p.strip_prefix('-') {
            force_out.push(rest);
        } else if let Some(rest) = p.strip_prefix('!') {
            excludes.push(rest);
        } else {
            includes.push(*p);
        }
    }
    let mut result: Vec<&PathBuf> = if includes.is_empty() {
        all.iter().collect()
    } else {
        all.iter()
            .filter(|f| matches_any_pattern(f, &includes, base))
            .collect()
    };
    if !excludes.is_empty() {
        result.retain(|f| !matches_any_pattern(f, &excludes, base));
    }
    for f in all {
        if !force_in.is_empty()
            && !result.contains(&f)
            && matches_any_exact_pattern(f, &force_in, base)
        {
            result.push(f);
        }
    }
    if !force_out.is_empty() {
        result.retain(|f| !matches_any_exact_pattern(f, &force_out, base));
    }
    result.into_iter().cloned().collect()
}

/// Whether the override patterns (`!`, `+`, `-`) among settings `entries` leave an
/// auto-discovered `file` enabled.
fn is_enabled_by_overrides(file: &Path, entries: &[String], base: &Path) -> bool {
    let strip = |prefix: char| -> Vec<&str> {
        entries
            .iter()
            .filter_map(|e| e.strip_prefix(prefix))
            .collect()
    };
    let excludes = strip('!');
    let force_in = strip('+');
    let force_out = strip('-');
    let mut enabled = true;
    if !excludes.is_empty() && matches_any_pattern(file, &excludes, base) {
        enabled = false;
    }
    if matches_any_exact_pattern(file, &force_in, base) {
        enabled = true;
    }
    if matches_any_exact_pattern(file, &force_out, base) {
        enabled = false;
    }
    enabled
}

// ---------------------------------------------------------------------------------------
// Resolution shared by skills and prompt templates

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

/// Whether a string names a local path rather than a package source or URL.
pub(crate) fn is_local_path(value: &str) -> bool {
    let t = value.trim();
    !["npm:", "git:", "github:", "http:", "https:", "ssh:"]
        .iter()
        .any(|p| t.starts_with(p))
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
        for (entries, scope, base) in [
            (
                &options.project_entries,
                SourceScope::Project,
                &project_base,
            ),
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
            let found = match (kind, scope) {
                (Kind::Skills, SourceScope::Project) => {
                    let mut found =
                        collect_skill_entries(&project_base.join("skills"), SkillMode::Pi);
                    for dir in ancestor_agents_skill_dirs(&cwd) {
                        if dir != user_agents_skills {
                            found.extend(collect_skill_entries(&dir, SkillMode::Agents));
                        }
                    }
                    found
                }
                (Kind::Skills, _) => {
                    let mut found = collect_skill_entries(&agent_dir.join("skills"), SkillMode::Pi);
                    found.extend(collect_skill_entries(
                        &user_agents_skills,
                        SkillMode::Agents,
                    ));
                    found
                }
                (Kind::Prompts, _) => collect_prompt_entries(&base.join("prompts")),
            };
            let meta = Meta {
                source: "auto",
                scope,
                base_dir: Some(base.clone()),
            };
            for file in found {
                let on = is_enabled_by_overrides(&file, entries, base);
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
/// root as skills; `.agents/skills` directories take only `SKILL.md` files.
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
        if mode == SkillMode::Pi
            && dir == root
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
    fn paths_resolve_like_node() {
        let home = Path::new("/home/u");
        assert_eq!(
            resolve_from("~", Path::new("/b"), home),
            PathBuf::from("/home/u")
        );
        assert_eq!(
            resolve_from("~/x", Path::new("/b"), home),
            PathBuf::from("/home/u/x")
        );
        assert_eq!(
            resolve_from("~x", Path::new("/b"), home),
            PathBuf::from("/home/u/x")
        );
        assert_eq!(
            resolve_from(" ../c/./d ", Path::new("/a/b"), home),
            PathBuf::from("/a/c/d")
        );
        assert_eq!(
            resolve_from("/abs", Path::new("/a"), home),
            PathBuf::from("/abs")
        );
        assert_eq!(relative(Path::new("/a/b"), Path::new("/a/c/d")), "../c/d");
        assert_eq!(relative(Path::new("/a"), Path::new("/a")), "");
        assert!(is_under(Path::new("/a/b/c"), Path::new("/a/b")));
        assert!(!is_under(Path::new("/a/bc"), Path::new("/a/b")));
        assert!(is_local_path("./x") && !is_local_path("npm:foo"));
    }

    #[test]
    fn ignore_patterns_are_prefixed_per_directory() {
        assert_eq!(
            prefix_ignore_pattern("/foo", "sub/"),
            Some("sub/foo".into())
        );
        assert_eq!(
            prefix_ignore_pattern("!bar", "sub/"),
            Some("!sub/bar".into())
        );
        assert_eq!(prefix_ignore_pattern("\\!baz", ""), Some("!baz".into()));
        assert_eq!(prefix_ignore_pattern("# c", ""), None);
        assert_eq!(prefix_ignore_pattern("   ", ""), None);

        let root = tempfile::tempdir().unwrap();
        let sub = root.path().join("sub");
        std::fs::create_dir_all(sub.join("drafts")).unwrap();
        std::fs::write(root.path().join(".gitignore"), "*.tmp\n").unwrap();
        std::fs::write(sub.join(".ignore"), "drafts/\n").unwrap();
        let mut rules = IgnoreRules::new(root.path());
        rules.add_dir(root.path());
        rules.add_dir(&sub);
        assert!(rules.ignores(&sub.join("x.tmp"), false));
        assert!(rules.ignores(&sub.join("drafts"), true));
        assert!(rules.ignores(&sub.join("drafts/a.md"), false));
        assert!(!rules.ignores(&sub.join("keep.md"), false));
    }

    #[test]
    fn settings_patterns() {
        let base = Path::new("/p/.pi");
        let files = vec![
            PathBuf::from("/p/.pi/skills/a/SKILL.md"),
            PathBuf::from("/p/.pi/skills/b/SKILL.md"),
            PathBuf::from("/p/.pi/skills/c.md"),
        ];
        let on = apply_patterns(&files, &["skills/*/SKILL.md"], base);
        assert_eq!(on.len(), 2);
        let on = apply_patterns(&files, &["!a", "+skills/a"], base);
        assert_eq!(on.len(), 3);
        let on = apply_patterns(&files, &["!c.md", "-skills/b"], base);
        assert_eq!(on.len(), 1);
        assert!(on.contains(Path::new("/p/.pi/skills/a/SKILL.md")));
        assert!(!is_enabled_by_overrides(&files[0], &["!a".into()], base));
        assert!(is_enabled_by_overrides(
            &files[0],
            &["!a".into(), "+skills/a".into()],
            base
        ));
        assert!(is_enabled_by_overrides(&files[0], &["a*".into()], base));
        assert!(apply_patterns(&files, &["!*.md"], base).is_empty());
    }

    #[test]
    fn resource_settings_read_both_files_and_migrate() {
        let dir = tempfile::tempdir().unwrap();
        let global = dir.path().join("g.json");
        let project = dir.path().join("p.json");
        std::fs::write(
            &global,
            r#"{"skills": {"customDirectories": ["~/.claude/skills"], "enableSkillCommands": false}, "prompts": ["p", 3]}"#,
        )
        .unwrap();
        std::fs::write(&project, r#"{"skills": ["../s"]}"#).unwrap();
        let s = ResourceSettings::load(&global, &project);
        assert_eq!(s.user_skills, ["~/.claude/skills"]);
        assert_eq!(s.project_skills, ["../s"]);
        assert_eq!(s.user_prompts, ["p"]);
        assert!(s.project_prompts.is_empty());
        assert!(!s.enable_skill_commands);
        let none = ResourceSettings::load(&dir.path().join("x"), &dir.path().join("y"));
        assert_eq!(none, ResourceSettings::default());
        assert!(none.enable_skill_commands);
    }

    #[test]
    fn diagnostics_display_on_one_line() {
        let w = ResourceDiagnostic::warning("description is required", Path::new("/s/SKILL.md"));
        assert_eq!(w.to_string(), "/s/SKILL.md: description is required");
        let c = ResourceDiagnostic::collision(
            "prompt",
            "/x",
            "x",
            Path::new("/a/x.md"),
            Path::new("/b/x.md"),
        );
        assert_eq!(
            c.to_string(),
            "name \"/x\" collision: /b/x.md is skipped, /a/x.md is used"
        );
        let json = serde_json::to_value(&c).unwrap();
        assert_eq!(json["type"], "collision");
        assert_eq!(json["collision"]["resourceType"], "prompt");
        assert_eq!(json["collision"]["winnerPath"], "/a/x.md");
        let info = SourceInfo::local(Path::new("/f"), "auto", SourceScope::User, None);
        assert_eq!(
            serde_json::to_value(&info).unwrap(),
            serde_json::json!({"path": "/f", "source": "auto", "scope": "user", "origin": "top-level"})
        );
    }

    #[test]
    fn settings_fields_tolerate_the_old_skills_object() {
        use crate::config::settings::Settings;
        let s: Settings = serde_json::from_value(serde_json::json!({
            "skills": {"customDirectories": ["~/x"], "enableSkillCommands": false},
            "prompts": ["a", 1],
            "enableSkillCommands": true,
            "defaultModel": "m"
        }))
        .unwrap();
        assert_eq!(s.skills, Some(vec!["~/x".to_owned()]));
        assert_eq!(s.prompts, Some(vec!["a".to_owned()]));
        assert_eq!(s.enable_skill_commands, Some(true));
        assert_eq!(s.default_model.as_deref(), Some("m"));
        let s: Settings = serde_json::from_value(serde_json::json!({"skills": "x"})).unwrap();
        assert_eq!(s.skills, None);
    }

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
