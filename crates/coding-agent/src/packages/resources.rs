//! What an installed pi package provides: its extensions, skills, prompt templates and themes,
//! each with an enabled flag, found as the TypeScript pi's package manager finds them
//! (`collectPackageResources` and its helpers in `core/package-manager.ts`).
//!
//! A package lists its resources in the `pi` key of its `package.json` (paths, folders and
//! globs, with `!glob` / `+path` / `-path` overrides), or else offers them in convention
//! folders named after the types. A settings `packages` entry may narrow that down per type;
//! its filter applies on top of what the manifest offers.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::resources::{
    Entry, IgnoreRules, SkillMode, apply_patterns, collect_skill_entries, normalize,
    read_dir_sorted,
};

/// The four resource types, in the TS order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResourceType {
    Extensions,
    Skills,
    Prompts,
    Themes,
}

impl ResourceType {
    /// All types, in the order TS walks them (`RESOURCE_TYPES`).
    pub const ALL: [ResourceType; 4] = [
        ResourceType::Extensions,
        ResourceType::Skills,
        ResourceType::Prompts,
        ResourceType::Themes,
    ];

    /// `"extensions"` | `"skills"` | `"prompts"` | `"themes"`: the settings and manifest key,
    /// and the name of the convention folder.
    pub fn key(self) -> &'static str {
        match self {
            ResourceType::Extensions => "extensions",
            ResourceType::Skills => "skills",
            ResourceType::Prompts => "prompts",
            ResourceType::Themes => "themes",
        }
    }
}

/// The object form of a settings `packages` entry, minus `source`: per type, `None` = key absent
/// (load everything the package offers), `Some(vec![])` = load none, else patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageFilter {
    pub extensions: Option<Vec<String>>,
    pub skills: Option<Vec<String>>,
    pub prompts: Option<Vec<String>>,
    pub themes: Option<Vec<String>>,
}

impl PackageFilter {
    /// The patterns given for `kind`, `None` when the entry does not mention it.
    pub fn get(&self, kind: ResourceType) -> Option<&Vec<String>> {
        match kind {
            ResourceType::Extensions => self.extensions.as_ref(),
            ResourceType::Skills => self.skills.as_ref(),
            ResourceType::Prompts => self.prompts.as_ref(),
            ResourceType::Themes => self.themes.as_ref(),
        }
    }

    /// Reads the filter keys of a settings `packages` object entry (non-string items dropped).
    /// A key whose value is not a list counts as absent (TS would iterate a string's
    /// characters or fail on `null`).
    pub fn from_entry(entry: &Map<String, Value>) -> Self {
        let read = |kind: ResourceType| {
            entry
                .get(kind.key())
                .and_then(Value::as_array)
                .map(|a| strings(a))
        };
        Self {
            extensions: read(ResourceType::Extensions),
            skills: read(ResourceType::Skills),
            prompts: read(ResourceType::Prompts),
            themes: read(ResourceType::Themes),
        }
    }
}

/// One resource file of a package.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFile {
    /// Absolute (a skill folder's `SKILL.md`, or a top-level `.md` skill file).
    pub path: PathBuf,
    /// Off when the user's filter (or an empty filter list) switches it off.
    pub enabled: bool,
}

/// Everything a package provides.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PackageContents {
    pub extensions: Vec<PackageFile>,
    pub skills: Vec<PackageFile>,
    pub prompts: Vec<PackageFile>,
    pub themes: Vec<PackageFile>,
    /// The folder is a package: it has a `pi` manifest or a convention folder, or a filter was given
    /// (TS `collectPackageResources` returns true).
    pub is_package: bool,
}

impl PackageContents {
    /// The files of one type.
    pub fn of(&self, kind: ResourceType) -> &Vec<PackageFile> {
        match kind {
            ResourceType::Extensions => &self.extensions,
            ResourceType::Skills => &self.skills,
            ResourceType::Prompts => &self.prompts,
            ResourceType::Themes => &self.themes,
        }
    }

    fn of_mut(&mut self, kind: ResourceType) -> &mut Vec<PackageFile> {
        match kind {
            ResourceType::Extensions => &mut self.extensions,
            ResourceType::Skills => &mut self.skills,
            ResourceType::Prompts => &mut self.prompts,
            ResourceType::Themes => &mut self.themes,
        }
    }

    /// Adds files, keeping the first entry of a path (TS `addResource` into a `Map`).
    fn add(&mut self, kind: ResourceType, files: Vec<PathBuf>, enabled: impl Fn(&PathBuf) -> bool) {
        let list = self.of_mut(kind);
        let mut seen: HashSet<PathBuf> = list.iter().map(|f| f.path.clone()).collect();
        for path in files {
            if seen.insert(path.clone()) {
                let enabled = enabled(&path);
                list.push(PackageFile { path, enabled });
            }
        }
    }
}

/// TS `collectPackageResources(packageRoot, accumulator, filter, ...)`.
///
/// With a filter every type is resolved (filtered or by default) and the folder counts as a
/// package; without one a `pi` manifest decides (a type it does not list offers nothing), and
/// without a manifest the convention folders do.
pub fn collect(package_root: &Path, filter: Option<&PackageFilter>) -> PackageContents {
    let root = absolute(package_root);
    let manifest = read_manifest(&root);
    let mut out = PackageContents::default();
    if let Some(filter) = filter {
        for kind in ResourceType::ALL {
            match filter.get(kind) {
                Some(patterns) => {
                    let all = manifest_files(&root, manifest.as_ref(), kind);
                    // An empty list switches every file off.
                    let enabled = match patterns.is_empty() {
                        true => HashSet::new(),
                        false => apply_patterns(&all, &as_strs(patterns), &root),
                    };
                    out.add(kind, all, |f| enabled.contains(f));
                }
                // TS `collectDefaultResources`: any manifest list (even `[]`) wins, else the
                // convention folder, also when the manifest exists but lacks this type.
                None => match manifest.as_ref().and_then(|m| m.entries(kind)) {
                    Some(entries) => out.add(kind, manifest_enabled(&root, &entries, kind), on),
                    None => out.add(kind, convention_files(&root, kind), on),
                },
            }
        }
        out.is_package = true;
    } else if let Some(manifest) = manifest.filter(Manifest::lists_any) {
        for kind in ResourceType::ALL {
            if let Some(entries) = manifest.entries(kind) {
                out.add(kind, manifest_enabled(&root, &entries, kind), on);
            }
        }
        out.is_package = true;
    } else {
        for kind in ResourceType::ALL {
            if root.join(kind.key()).exists() {
                out.add(kind, convention_files(&root, kind), on);
                out.is_package = true;
            }
        }
    }
    out
}

/// Every file of a type the package could offer before the user's filter (TS
/// `collectManifestFiles(...).allFiles`), for the `pi config` resource list.
pub fn all_files(package_root: &Path, kind: ResourceType) -> Vec<PathBuf> {
    let root = absolute(package_root);
    manifest_files(&root, read_manifest(&root).as_ref(), kind)
}

fn on(_: &PathBuf) -> bool {
    true
}

fn strings(items: &[Value]) -> Vec<String> {
    items
        .iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

fn as_strs(items: &[String]) -> Vec<&str> {
    items.iter().map(String::as_str).collect()
}

/// `path.resolve(p)`: absolute and without `.` / `..`.
fn absolute(path: &Path) -> PathBuf {
    normalize(&std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()))
}

/// TS `isOverridePattern`: `!glob`, `+path` and `-path` entries.
fn is_override(entry: &str) -> bool {
    entry.starts_with('!') || entry.starts_with('+') || entry.starts_with('-')
}

/// The override entries of a manifest list (TS `entries.filter(isOverridePattern)`).
fn overrides(entries: &[String]) -> Vec<&str> {
    entries
        .iter()
        .map(String::as_str)
        .filter(|e| is_override(e))
        .collect()
}

// ---------------------------------------------------------------------------------------
// The manifest

/// A package's `pi` manifest object.
struct Manifest(Map<String, Value>);

impl Manifest {
    /// The manifest's list for `kind`: a value that is not a list of strings counts as
    /// absent (pi 0.84.0: a malformed resource array no longer crashes startup).
    fn entries(&self, kind: ResourceType) -> Option<Vec<String>> {
        let items = self.0.get(kind.key())?.as_array()?;
        let strings = strings(items);
        (strings.len() == items.len()).then_some(strings)
    }

    /// TS `hasManifestResourceFields`: it lists at least one resource type.
    fn lists_any(&self) -> bool {
        ResourceType::ALL
            .iter()
            .any(|kind| self.entries(*kind).is_some())
    }
}

/// TS `readPiManifestFile`: `pkg.pi ?? null`, `None` when the file is missing or not JSON.
fn read_pi(package_json: &Path) -> Option<Value> {
    let text = crate::text_file::read_text(package_json).ok()?;
    let json: Value = serde_json::from_str(&text).ok()?;
    json.get("pi").filter(|pi| !pi.is_null()).cloned()
}

/// TS `readPiManifest`: the `pi` object of `package.json` (anything else is no manifest).
fn read_manifest(root: &Path) -> Option<Manifest> {
    read_pi(&root.join("package.json"))?
        .as_object()
        .cloned()
        .map(Manifest)
}

/// TS `collectManifestFiles(...).allFiles`: a non-empty manifest list with its own overrides
/// applied (files brought back by `+path` come last, as a JS `Set` keeps them), else the
/// convention folder.
fn manifest_files(root: &Path, manifest: Option<&Manifest>, kind: ResourceType) -> Vec<PathBuf> {
    let Some(entries) = manifest
        .and_then(|m| m.entries(kind))
        .filter(|e| !e.is_empty())
    else {
        return convention_files(root, kind);
    };
    let all = files_from_manifest_entries(&entries, root, kind);
    let mut patterns = overrides(&entries);
    let enabled = apply_patterns(&all, &patterns, root);
    patterns.retain(|p| !p.starts_with('+'));
    let first = apply_patterns(&all, &patterns, root);
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for pass in [&first, &enabled] {
        for file in &all {
            if pass.contains(file) && seen.insert(file) {
                out.push(file.clone());
            }
        }
    }
    out
}

/// The files of the convention folder `<root>/<type>` (none when it is missing).
fn convention_files(root: &Path, kind: ResourceType) -> Vec<PathBuf> {
    collect_resource_files(&root.join(kind.key()), kind)
}

/// TS `addManifestEntries`: the files a manifest list names, minus those its overrides switch
/// off (which are not listed at all).
fn manifest_enabled(root: &Path, entries: &[String], kind: ResourceType) -> Vec<PathBuf> {
    let mut all = files_from_manifest_entries(entries, root, kind);
    let enabled = apply_patterns(&all, &overrides(entries), root);
    all.retain(|f| enabled.contains(f));
    all
}

/// TS `collectFilesFromManifestEntries`: plain entries resolved against the root, glob
/// entries expanded as `globSync` does; then files taken as they are and folders searched.
fn files_from_manifest_entries(
    entries: &[String],
    root: &Path,
    kind: ResourceType,
) -> Vec<PathBuf> {
    let mut paths = Vec::new();
    for entry in entries.iter().filter(|e| !is_override(e)) {
        // TS `hasGlobPattern`: only `*` and `?` make an entry a glob.
        if entry.contains(['*', '?']) {
            paths.extend(glob(entry, root));
        } else {
            paths.push(normalize(&root.join(entry)));
        }
    }
    // A file is taken whatever its name; a folder is searched (a missing path gives nothing).
    let expand = |path: PathBuf| match path.is_file() {
        true => vec![path],
        false => collect_resource_files(&path, kind),
    };
    paths.into_iter().flat_map(expand).collect()
}

// ---------------------------------------------------------------------------------------
// Folders

/// TS `collectResourceFiles`: skills as skill entries, extensions by extension discovery,
/// prompts (`.md`) and themes (`.json`) recursively.
fn collect_resource_files(dir: &Path, kind: ResourceType) -> Vec<PathBuf> {
    match kind {
        ResourceType::Skills => collect_skill_entries(dir, SkillMode::Pi),
        ResourceType::Extensions => auto_extension_entries(dir),
        ResourceType::Prompts => collect_files(dir, ".md"),
        ResourceType::Themes => collect_files(dir, ".json"),
    }
}

/// The entries of `dir` that TS's walkers look at, sorted: no dot names, no `node_modules`,
/// none that the ignore rules (with `dir`'s own ignore files added) drop.
fn visible_entries(dir: &Path, rules: &mut IgnoreRules) -> Vec<Entry> {
    if !dir.exists() {
        return Vec::new();
    }
    rules.add_dir(dir);
    let mut entries = read_dir_sorted(dir).unwrap_or_default();
    entries.retain(|e| {
        !e.name.starts_with('.') && e.name != "node_modules" && !rules.ignores(&e.path, e.is_dir)
    });
    entries
}

/// TS `collectFiles`: files ending in `suffix` under `dir`, recursively, honouring the ignore
/// files met on the way. (`resources`' `collect_markdown_files` is this walk fixed to `.md`.)
fn collect_files(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    fn walk(dir: &Path, suffix: &str, rules: &mut IgnoreRules, out: &mut Vec<PathBuf>) {
        for entry in visible_entries(dir, rules) {
            if entry.is_dir {
                walk(&entry.path, suffix, rules, out);
            } else if entry.is_file && entry.name.ends_with(suffix) {
                out.push(entry.path);
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, suffix, &mut IgnoreRules::new(dir), &mut out);
    out
}

/// TS `resolveExtensionEntries`: a folder that is one extension, through its `package.json`
/// `pi.extensions` (those that exist, folders included) or its `index.ts` / `index.js`.
/// (`extensions::discovery`'s `package_entries` is private there and keeps `..` at the root.)
fn extension_entries(dir: &Path) -> Option<Vec<PathBuf>> {
    let listed: Vec<PathBuf> = read_pi(&dir.join("package.json"))
        .and_then(|pi| pi.get("extensions")?.as_array().map(|a| strings(a)))
        .unwrap_or_default()
        .into_iter()
        .map(|p| normalize(&dir.join(p)))
        .filter(|p| p.exists())
        .collect();
    if !listed.is_empty() {
        return Some(listed);
    }
    ["index.ts", "index.js"]
        .iter()
        .map(|name| dir.join(name))
        .find(|p| p.exists())
        .map(|p| vec![p])
}

/// TS `collectAutoExtensionEntries`: the folder itself when it is one extension, else its
/// `.ts` / `.js` files and the subfolders that are one extension each (no deeper), honouring
/// the folder's own ignore files. (`extensions::discovery::entries_in_dir`, for settings and
/// `-e` folders, skips neither dot names, `node_modules` nor ignored files.)
fn auto_extension_entries(dir: &Path) -> Vec<PathBuf> {
    if let Some(entries) = extension_entries(dir) {
        return entries;
    }
    let mut out = Vec::new();
    for entry in visible_entries(dir, &mut IgnoreRules::new(dir)) {
        if entry.is_file && (entry.name.ends_with(".ts") || entry.name.ends_with(".js")) {
            out.push(entry.path);
        } else if entry.is_dir
            && let Some(found) = extension_entries(&entry.path)
        {
            out.extend(found);
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Manifest globs: TS `globSync(entry, {cwd: root, absolute: true, dot: false})`, walked the
// way glob 13 walks (the matches of a folder before its subfolders, entries in reverse name
// order as path-scurry lists them, literal segments and brace alternatives in pattern order).

/// One path segment of a glob, as minimatch splits it.
enum Segment {
    Literal(String),
    /// A segment with wildcards; `true` when it starts with `.` and so may match dot names.
    Magic(globset::GlobMatcher, bool),
    Globstar,
}

impl Segment {
    /// Whether a folder entry's name matches this (non-globstar) segment; with `dot: false`
    /// a dot name only matches a wildcard segment that starts with `.` itself.
    fn matches(&self, name: &str) -> bool {
        match self {
            Segment::Literal(s) => s == name,
            Segment::Magic(m, dot) => (*dot || !name.starts_with('.')) && m.is_match(name),
            Segment::Globstar => false,
        }
    }
}

/// A position in a glob: (alternative, segment).
type Pos = (usize, usize);

/// The paths `pattern` matches under `root`, absolute, in glob's order.
fn glob(pattern: &str, root: &Path) -> Vec<PathBuf> {
    let globs: Vec<Vec<Segment>> = expand_braces(pattern)
        .iter()
        .map(|p| parse_glob(p))
        .collect();
    let start: Vec<Pos> = (0..globs.len())
        .filter(|&g| !globs[g].is_empty())
        .map(|g| (g, 0))
        .collect();
    let mut walker = GlobWalker {
        globs: &globs,
        ..GlobWalker::default()
    };
    walker.walk(root, &start);
    walker.out
}

/// minimatch's brace expansion: `a{b,c}d` gives `abd` and `acd` (nested braces too); a brace
/// without a comma stays as it is. Numeric ranges (`{1..3}`) are not expanded.
fn expand_braces(pattern: &str) -> Vec<String> {
    // The delimiters are ASCII, so byte positions are char boundaries.
    let b = pattern.as_bytes();
    let mut from = 0;
    while let Some(i) = (from..b.len()).find(|&i| b[i] == b'{' && (i == 0 || b[i - 1] != b'\\')) {
        let (mut depth, mut cuts) = (0, vec![i]);
        let close = (i..b.len()).find(|&j| {
            match b[j] {
                b'{' => depth += 1,
                b'}' => depth -= 1,
                b',' if depth == 1 => cuts.push(j),
                _ => {}
            }
            depth == 0
        });
        match close {
            Some(end) if cuts.len() > 1 => {
                cuts.push(end);
                let (pre, post) = (&pattern[..i], expand_braces(&pattern[end + 1..]));
                return cuts
                    .windows(2)
                    .flat_map(|w| expand_braces(&pattern[w[0] + 1..w[1]]))
                    .flat_map(|alt| post.iter().map(move |p| format!("{pre}{alt}{p}")))
                    .collect();
            }
            Some(end) => from = end + 1,
            None => from = i + 1,
        }
    }
    vec![pattern.to_owned()]
}

/// Splits one brace-free glob into segments, simplified as minimatch's optimization level 2
/// does: empty and `.` segments dropped (but a leading one, and a trailing `/`), `**/**`
/// folded, `name/..` removed. An absolute glob starts with the segment `/`.
fn parse_glob(pattern: &str) -> Vec<Segment> {
    let parts: Vec<&str> = pattern.split('/').collect();
    let last = parts.len() - 1;
    let mut kept: Vec<&str> = Vec::new();
    for (i, part) in parts.iter().copied().enumerate() {
        let keep = i == 0 || (i == last && part.is_empty()) || !(part.is_empty() || part == ".");
        if !keep || (part == "**" && kept.last() == Some(&"**")) {
            continue;
        }
        if part == ".."
            && kept
                .last()
                .is_some_and(|p| !matches!(*p, ".." | "." | "" | "**"))
        {
            kept.pop();
            continue;
        }
        kept.push(part);
    }
    let multi = kept.len() > 1;
    kept.iter()
        .enumerate()
        .map(|(i, part)| {
            if i == 0 && part.is_empty() && multi {
                return Segment::Literal("/".to_owned());
            }
            if *part == "**" {
                return Segment::Globstar;
            }
            // A backslash escape is left to globset too.
            if part.contains(['*', '?', '[', '\\']) {
                // `a**b` is two stars in one segment, not a globstar.
                let mut glob = part.to_string();
                while glob.contains("**") {
                    glob = glob.replace("**", "*");
                }
                if let Ok(g) = globset::GlobBuilder::new(&glob)
                    .literal_separator(true)
                    .backslash_escape(true)
                    .build()
                {
                    return Segment::Magic(g.compile_matcher(), part.starts_with('.'));
                }
            }
            Segment::Literal(part.to_string())
        })
        .collect()
}

/// A folder entry as glob sees it; `readable` is path-scurry's `canReaddir` (a folder or a
/// symlink, whose type is not followed).
struct GlobEntry {
    name: String,
    path: PathBuf,
    readable: bool,
    is_link: bool,
}

/// A folder's entries in the order path-scurry hands them to glob (reverse name order).
fn list_for_glob(dir: &Path) -> Vec<GlobEntry> {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut entries: Vec<GlobEntry> = read
        .filter_map(Result::ok)
        .filter_map(|e| {
            let file_type = e.file_type().ok()?;
            Some(GlobEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                path: e.path(),
                readable: file_type.is_dir() || file_type.is_symlink(),
                is_link: file_type.is_symlink(),
            })
        })
        .collect();
    entries.sort_by(|a, b| b.name.as_bytes().cmp(a.name.as_bytes()));
    entries
}

/// What one walk step found (glob's `Processor`): matches (path, must be a folder) and the
/// folders to read next with the positions to go on from, both in insertion order.
#[derive(Default)]
struct Step {
    matches: Vec<(PathBuf, bool)>,
    subwalks: Vec<(PathBuf, Vec<Pos>)>,
    /// Where a path sits in `matches` (`false`) or `subwalks` (`true`).
    index: HashMap<(PathBuf, bool), usize>,
}

impl Step {
    fn add_match(&mut self, path: PathBuf, if_dir: bool) {
        let at = *self
            .index
            .entry((path.clone(), false))
            .or_insert(self.matches.len());
        match self.matches.get_mut(at) {
            Some(found) => found.1 &= if_dir,
            None => self.matches.push((path, if_dir)),
        }
    }

    fn add_subwalk(&mut self, path: PathBuf, pos: Pos) {
        let at = *self
            .index
            .entry((path.clone(), true))
            .or_insert(self.subwalks.len());
        match self.subwalks.get_mut(at) {
            Some((_, list)) if !list.contains(&pos) => list.push(pos),
            Some(_) => {}
            None => self.subwalks.push((path, vec![pos])),
        }
    }

    /// glob's `testString` / `testRegExp`: a matching entry is a match at the end of the
    /// glob, else a folder to walk on from `next`.
    fn test(&mut self, e: &GlobEntry, hit: bool, next: Pos, len: usize) {
        if hit && next.1 >= len {
            self.add_match(e.path.clone(), false);
        } else if hit && e.readable {
            self.add_subwalk(e.path.clone(), next);
        }
    }
}

/// glob's `GlobWalker` (the sync walk) over the segments of every brace alternative.
#[derive(Default)]
struct GlobWalker<'a> {
    globs: &'a [Vec<Segment>],
    out: Vec<PathBuf>,
    seen: HashSet<PathBuf>,
    /// Globstars that already followed a symlink (glob lets each follow one, none when leading).
    followed: HashSet<Pos>,
}

fn step_into(path: &Path, segment: &str) -> PathBuf {
    normalize(&path.join(segment))
}

impl GlobWalker<'_> {
    /// glob's `walkCB2Sync`: resolves leading literal segments from `target`, records matches
    /// and the folders to read, then reads them in order.
    fn walk(&mut self, target: &Path, positions: &[Pos]) {
        let mut step = Step::default();
        for &(g, start) in positions {
            let segments = &self.globs[g];
            let (mut t, mut i) = (target.to_path_buf(), start);
            while i + 1 < segments.len()
                && let Segment::Literal(s) = &segments[i]
            {
                t = step_into(&t, s);
                i += 1;
            }
            match &segments[i] {
                Segment::Literal(s) => {
                    step.add_match(step_into(&t, s), matches!(s.as_str(), "" | "." | ".."))
                }
                Segment::Magic(..) => step.add_subwalk(t, (g, i)),
                Segment::Globstar => {
                    // A symlinked start folder is walked unless this globstar may follow none.
                    let link = std::fs::symlink_metadata(&t).is_ok_and(|m| m.is_symlink());
                    if !link || (i != 0 && !self.followed.contains(&(g, i))) {
                        step.add_subwalk(t.clone(), (g, i));
                    }
                    let last = i + 2 == segments.len();
                    match segments.get(i + 1) {
                        None => step.add_match(t, false),
                        Some(Segment::Literal(s)) if last && (s.is_empty() || s == ".") => {
                            step.add_match(t, true)
                        }
                        Some(Segment::Literal(s)) if s == ".." => {
                            let parent = step_into(&t, "..");
                            if last {
                                step.add_match(parent, true);
                            } else {
                                step.add_subwalk(parent, (g, i + 2));
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
        self.emit(&step.matches);
        for (dir, positions) in step.subwalks {
            let entries = list_for_glob(&dir);
            self.walk_entries(&dir, &entries, &positions);
        }
    }

    /// glob's `walkCB3Sync` and `Processor.filterEntries`: tests a folder's entries against
    /// the positions, records matches, then walks on into the folders found.
    fn walk_entries(&mut self, parent: &Path, entries: &[GlobEntry], positions: &[Pos]) {
        let mut step = Step::default();
        for e in entries {
            for &(g, i) in positions {
                let (segments, more) = (&self.globs[g], i + 1 < self.globs[g].len());
                let Segment::Globstar = segments[i] else {
                    step.test(e, segments[i].matches(&e.name), (g, i + 1), segments.len());
                    continue;
                };
                if !e.name.starts_with('.') {
                    if !more {
                        step.add_match(e.path.clone(), false);
                    }
                    if e.readable && !e.is_link {
                        step.add_subwalk(e.path.clone(), (g, i));
                    } else if e.is_link && more && i != 0 && !self.followed.contains(&(g, i)) {
                        step.add_subwalk(e.path.clone(), (g, i + 1));
                    } else if e.is_link && i != 0 && self.followed.insert((g, i)) {
                        step.add_subwalk(e.path.clone(), (g, i));
                    }
                }
                match segments.get(i + 1) {
                    Some(Segment::Literal(s)) if s == ".." => {
                        step.add_subwalk(parent.to_path_buf(), (g, i + 1))
                    }
                    Some(Segment::Literal(s)) if s.is_empty() || s == "." => {}
                    Some(next) => step.test(e, next.matches(&e.name), (g, i + 2), segments.len()),
                    None => {}
                }
            }
        }
        self.emit(&step.matches);
        for (dir, positions) in step.subwalks {
            self.walk(&dir, &positions);
        }
    }

    /// Records matches that exist (and are folders when they must be), each path once.
    fn emit(&mut self, matches: &[(PathBuf, bool)]) {
        for (path, if_dir) in matches {
            let found = std::fs::symlink_metadata(path)
                .is_ok_and(|m| !*if_dir || m.is_dir() || m.is_symlink());
            let path = normalize(path);
            if found && self.seen.insert(path.clone()) {
                self.out.push(path);
            }
        }
    }
}

#[cfg(test)]
#[path = "resources_tests.rs"]
mod tests;
