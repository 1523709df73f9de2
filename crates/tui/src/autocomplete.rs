//! Completion providers: slash commands and @-file paths.
//!
//! Columns are byte offsets into a line (always on char boundaries), as the editor keeps
//! them.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::fuzzy::{fuzzy_filter, fuzzy_match};

/// Characters that end a path token.
const PATH_DELIMITERS: &[char] = &[' ', '\t', '"', '\'', '='];

/// Most entries one directory walk collects for @-completion.
const MAX_WALK_ENTRIES: usize = 10_000;

/// How long a cached directory walk is reused before walking again.
const WALK_TTL: Duration = Duration::from_secs(30);

/// Most @-file suggestions returned.
const MAX_FILE_SUGGESTIONS: usize = 20;

/// A slash command offered when the prompt starts with `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlashCommand {
    pub name: String,
    pub description: Option<String>,
}

impl SlashCommand {
    /// A command with a description (an empty description counts as none).
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        let description = description.into();
        SlashCommand {
            name: name.into(),
            description: (!description.is_empty()).then_some(description),
        }
    }
}

/// One completion candidate: `value` is inserted, `label` shown.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestion {
    pub value: String,
    pub label: String,
    pub description: Option<String>,
}

/// Candidates plus the text before the cursor they replace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suggestions {
    pub items: Vec<Suggestion>,
    pub prefix: String,
}

/// Source of completions for the editor.
pub trait AutocompleteProvider: Send {
    /// Candidates for the cursor position; `force` is an explicit Tab (path completion).
    fn suggestions(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        force: bool,
    ) -> Option<Suggestions>;

    /// Apply `item` in place of `prefix`: the new lines and cursor (line, column).
    fn apply(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        item: &Suggestion,
        prefix: &str,
    ) -> (Vec<String>, usize, usize) {
        apply_completion(lines, cursor_line, cursor_col, item, prefix)
    }

    /// Drop cached state (such as directory walks) so new files show up.
    fn refresh(&self) {}

    /// Whether an explicit Tab should start file completion here.
    fn should_trigger_file_completion(
        &self,
        _lines: &[String],
        _cursor_line: usize,
        _cursor_col: usize,
    ) -> bool {
        true
    }
}

/// The standard way to apply a completion (slash command, @-file, path), as the
/// TypeScript pi does.
pub fn apply_completion(
    lines: &[String],
    cursor_line: usize,
    cursor_col: usize,
    item: &Suggestion,
    prefix: &str,
) -> (Vec<String>, usize, usize) {
    let line = lines.get(cursor_line).map_or("", String::as_str);
    let col = clamp_boundary(line, cursor_col);
    let before_prefix = line.get(..col.saturating_sub(prefix.len())).unwrap_or("");
    let after_cursor = &line[col..];
    let quoted_prefix = prefix.starts_with('"') || prefix.starts_with("@\"");
    let after = if quoted_prefix && item.value.ends_with('"') && after_cursor.starts_with('"') {
        &after_cursor[1..]
    } else {
        after_cursor
    };
    let replace = |new_line: String| {
        let mut out = lines.to_vec();
        if cursor_line < out.len() {
            out[cursor_line] = new_line;
        } else {
            out.push(new_line);
        }
        out
    };
    let is_dir = item.label.ends_with('/');
    let trailing_quote = item.value.ends_with('"');
    let cursor_offset = if is_dir && trailing_quote {
        item.value.len() - 1
    } else {
        item.value.len()
    };

    let is_slash_command =
        prefix.starts_with('/') && before_prefix.trim().is_empty() && !prefix[1..].contains('/');
    if is_slash_command {
        let new_line = format!("{before_prefix}/{} {after}", item.value);
        let new_col = before_prefix.len() + item.value.len() + 2;
        return (replace(new_line), cursor_line, new_col);
    }
    if prefix.starts_with('@') {
        // No space after a directory, so completion can continue into it.
        let suffix = if is_dir { "" } else { " " };
        let new_line = format!("{before_prefix}{}{suffix}{after}", item.value);
        let new_col = before_prefix.len() + cursor_offset + suffix.len();
        return (replace(new_line), cursor_line, new_col);
    }
    let new_line = format!("{before_prefix}{}{after}", item.value);
    (
        replace(new_line),
        cursor_line,
        before_prefix.len() + cursor_offset,
    )
}

/// `col` moved down to a char boundary of `line`.
fn clamp_boundary(line: &str, col: usize) -> usize {
    let mut col = col.min(line.len());
    while !line.is_char_boundary(col) {
        col -= 1;
    }
    col
}

fn find_last_delimiter(text: &str) -> Option<usize> {
    text.rfind(PATH_DELIMITERS)
}

fn find_unclosed_quote_start(text: &str) -> Option<usize> {
    let mut start = None;
    for (i, c) in text.char_indices() {
        if c == '"' {
            start = if start.is_some() { None } else { Some(i) };
        }
    }
    start
}

fn is_token_start(text: &str, index: usize) -> bool {
    index == 0
        || text[..index]
            .chars()
            .next_back()
            .is_some_and(|c| PATH_DELIMITERS.contains(&c))
}

/// The text from an unclosed `"` (or `@"`) that starts a token, to the end.
fn extract_quoted_prefix(text: &str) -> Option<&str> {
    let quote = find_unclosed_quote_start(text)?;
    if quote > 0 && text.as_bytes()[quote - 1] == b'@' {
        return is_token_start(text, quote - 1).then(|| &text[quote - 1..]);
    }
    is_token_start(text, quote).then(|| &text[quote..])
}

/// `(raw path, has @, is quoted)` of a completion prefix.
fn parse_path_prefix(prefix: &str) -> (&str, bool, bool) {
    if let Some(rest) = prefix.strip_prefix("@\"") {
        (rest, true, true)
    } else if let Some(rest) = prefix.strip_prefix('"') {
        (rest, false, true)
    } else if let Some(rest) = prefix.strip_prefix('@') {
        (rest, true, false)
    } else {
        (prefix, false, false)
    }
}

fn build_completion_value(path: &str, is_at: bool, quoted: bool) -> String {
    let at = if is_at { "@" } else { "" };
    if quoted || path.contains(' ') {
        format!("{at}\"{path}\"")
    } else {
        format!("{at}{path}")
    }
}

fn extract_at_prefix(text: &str) -> Option<&str> {
    if let Some(quoted) = extract_quoted_prefix(text)
        && quoted.starts_with("@\"")
    {
        return Some(quoted);
    }
    let start = find_last_delimiter(text).map_or(0, |i| i + 1);
    let token = &text[start..];
    token.starts_with('@').then_some(token)
}

fn extract_path_prefix(text: &str, force: bool) -> Option<&str> {
    if let Some(quoted) = extract_quoted_prefix(text) {
        return Some(quoted);
    }
    let start = find_last_delimiter(text).map_or(0, |i| i + 1);
    let token = &text[start..];
    if force || token.contains('/') || token.starts_with('.') || token.starts_with("~/") {
        return Some(token);
    }
    (token.is_empty() && text.ends_with(' ')).then_some(token)
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// `~/x` and `~` to the home directory; anything else unchanged.
fn expand_home(path: &str) -> String {
    let Some(home) = home_dir() else {
        return path.to_string();
    };
    let home = home.to_string_lossy().trim_end_matches('/').to_string();
    if let Some(rest) = path.strip_prefix("~/") {
        format!("{home}/{rest}")
    } else if path == "~" {
        home
    } else {
        path.to_string()
    }
}

/// Node's `dirname`/`basename` on `/`-separated paths.
fn split_dir(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(0) => ("/", &path[1..]),
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (".", path),
    }
}

/// Join and drop `.` and empty segments (keeps `..` and a leading `/`).
fn join_normalized(dir: &str, name: &str) -> String {
    let absolute = dir.starts_with('/');
    let parts: Vec<&str> = dir
        .split('/')
        .chain(std::iter::once(name))
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    let joined = parts.join("/");
    if absolute {
        format!("/{joined}")
    } else {
        joined
    }
}

/// One walked file or directory, relative to the walk root with `/` separators.
#[derive(Debug, Clone)]
struct WalkEntry {
    path: String,
    is_dir: bool,
}

/// A directory walk and when it was taken.
type CachedWalk = (Instant, Arc<Vec<WalkEntry>>);

/// Walk `dir` honoring ignore files, skipping `.git`, shallow entries first.
fn walk_dir(dir: &Path) -> Vec<WalkEntry> {
    let walker = ignore::WalkBuilder::new(dir)
        .hidden(false)
        .follow_links(true)
        .require_git(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut out = Vec::new();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(dir) else {
            continue;
        };
        let path = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy())
            .collect::<Vec<_>>()
            .join("/");
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        out.push(WalkEntry { path, is_dir });
        if out.len() >= MAX_WALK_ENTRIES {
            break;
        }
    }
    out.sort_by(|a, b| {
        let depth = |p: &str| p.matches('/').count();
        depth(&a.path)
            .cmp(&depth(&b.path))
            .then_with(|| a.path.cmp(&b.path))
    });
    out
}

/// Rank of a walked entry for a query (higher is better), TS tiers plus fuzzy-only hits.
fn entry_rank(path: &str, query: &str, is_dir: bool) -> Option<(u32, f64)> {
    let name = path.rsplit('/').next().unwrap_or(path);
    let lower_name = name.to_lowercase();
    let lower_query = query.to_lowercase();
    let fuzzy_name = fuzzy_match(query, name);
    let fuzzy_path = fuzzy_match(query, path);
    let tier = if lower_name == lower_query {
        100
    } else if lower_name.starts_with(&lower_query) {
        80
    } else if lower_name.contains(&lower_query) {
        50
    } else if path.to_lowercase().contains(&lower_query) {
        30
    } else if fuzzy_name.is_some() {
        20
    } else if fuzzy_path.is_some() {
        10
    } else {
        return None;
    };
    let bonus = if is_dir { 10 } else { 0 };
    let fuzzy = fuzzy_name.or(fuzzy_path).unwrap_or(0.0);
    Some((tier + bonus, fuzzy))
}

/// Slash commands at the start of the prompt, fuzzy @-file search under a base
/// directory, and Tab path completion.
pub struct CombinedAutocompleteProvider {
    commands: Vec<SlashCommand>,
    base_dir: PathBuf,
    walks: Mutex<HashMap<PathBuf, CachedWalk>>,
}

impl CombinedAutocompleteProvider {
    /// A provider for `commands` completing paths under `base_dir`.
    pub fn new(commands: Vec<SlashCommand>, base_dir: PathBuf) -> Self {
        CombinedAutocompleteProvider {
            commands,
            base_dir,
            walks: Mutex::new(HashMap::new()),
        }
    }

    /// Replace the slash commands.
    pub fn set_commands(&mut self, commands: Vec<SlashCommand>) {
        self.commands = commands;
    }

    /// The slash commands offered.
    pub fn commands(&self) -> &[SlashCommand] {
        &self.commands
    }

    fn walk(&self, dir: &Path) -> Arc<Vec<WalkEntry>> {
        let mut walks = self
            .walks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((at, entries)) = walks.get(dir)
            && at.elapsed() < WALK_TTL
        {
            return Arc::clone(entries);
        }
        let entries = Arc::new(walk_dir(dir));
        walks.insert(dir.to_path_buf(), (Instant::now(), Arc::clone(&entries)));
        entries
    }

    fn command_suggestions(&self, query: &str) -> Vec<Suggestion> {
        let items: Vec<&SlashCommand> = self.commands.iter().collect();
        fuzzy_filter(items, query, |c| c.name.as_str())
            .into_iter()
            .map(|c| Suggestion {
                value: c.name.clone(),
                label: c.name.clone(),
                description: c.description.clone().filter(|d| !d.is_empty()),
            })
            .collect()
    }

    /// The directory a query with a `/` is scoped to, its display base and the rest.
    fn scope<'q>(&self, query: &'q str) -> Option<(PathBuf, &'q str, &'q str)> {
        let slash = query.rfind('/')?;
        let display_base = &query[..=slash];
        let rest = &query[slash + 1..];
        let dir = if display_base.starts_with("~/") {
            PathBuf::from(expand_home(display_base))
        } else if display_base.starts_with('/') {
            PathBuf::from(display_base)
        } else {
            self.base_dir.join(display_base)
        };
        dir.is_dir().then_some((dir, display_base, rest))
    }

    fn fuzzy_file_suggestions(&self, raw_query: &str, quoted: bool) -> Vec<Suggestion> {
        let query = raw_query.replace('\\', "/");
        let (dir, q, display_base) = match self.scope(&query) {
            Some((dir, base, rest)) => (dir, rest.to_string(), base.to_string()),
            None => (self.base_dir.clone(), query.clone(), String::new()),
        };
        let entries = self.walk(&dir);
        let mut ranked: Vec<(u32, f64, &WalkEntry)> = entries
            .iter()
            .filter_map(|e| {
                if q.is_empty() {
                    return Some((1, 0.0, e));
                }
                entry_rank(&e.path, &q, e.is_dir).map(|(t, f)| (t, f, e))
            })
            .collect();
        if !q.is_empty() {
            ranked.sort_by(|a, b| {
                b.0.cmp(&a.0)
                    .then_with(|| a.1.total_cmp(&b.1))
                    .then_with(|| a.2.path.len().cmp(&b.2.path.len()))
                    .then_with(|| a.2.path.cmp(&b.2.path))
            });
        }
        ranked
            .into_iter()
            .take(MAX_FILE_SUGGESTIONS)
            .map(|(_, _, e)| {
                let display = format!("{display_base}{}", e.path);
                let name = e.path.rsplit('/').next().unwrap_or(&e.path);
                let completion = if e.is_dir {
                    format!("{display}/")
                } else {
                    display.clone()
                };
                Suggestion {
                    value: build_completion_value(&completion, true, quoted),
                    label: if e.is_dir {
                        format!("{name}/")
                    } else {
                        name.to_string()
                    },
                    description: Some(display),
                }
            })
            .collect()
    }

    /// Directory listing completion for a path prefix (Tab).
    fn file_suggestions(&self, prefix: &str) -> Vec<Suggestion> {
        let (raw, is_at, quoted) = parse_path_prefix(prefix);
        let expanded = if raw.starts_with('~') {
            expand_home(raw)
        } else {
            raw.to_string()
        };
        let outside_base = raw.starts_with('~') || expanded.starts_with('/');
        let resolve = |p: &str| {
            if outside_base {
                PathBuf::from(p)
            } else {
                self.base_dir.join(p)
            }
        };
        let is_root = matches!(raw, "" | "./" | "../" | "~" | "~/" | "/");
        let (search_dir, search_prefix) = if is_root || raw.ends_with('/') {
            (resolve(&expanded), String::new())
        } else {
            let (dir, file) = split_dir(&expanded);
            (resolve(dir), file.to_lowercase())
        };
        let Ok(read) = std::fs::read_dir(&search_dir) else {
            return Vec::new();
        };
        let mut out: Vec<(bool, Suggestion)> = Vec::new();
        for entry in read.flatten() {
            let name = entry.file_name().to_string_lossy().to_string();
            if !name.to_lowercase().starts_with(&search_prefix) {
                continue;
            }
            // Follows symlinks, so a link to a directory counts as one.
            let is_dir = std::fs::metadata(entry.path()).is_ok_and(|m| m.is_dir());
            let relative = if raw.ends_with('/') {
                format!("{raw}{name}")
            } else if raw.contains('/') {
                if let Some(home_rel) = raw.strip_prefix("~/") {
                    let (dir, _) = split_dir(home_rel);
                    if dir == "." {
                        format!("~/{name}")
                    } else {
                        format!("~/{}", join_normalized(dir, &name))
                    }
                } else if raw.starts_with('/') {
                    let (dir, _) = split_dir(raw);
                    if dir == "/" {
                        format!("/{name}")
                    } else {
                        format!("{dir}/{name}")
                    }
                } else {
                    let (dir, _) = split_dir(raw);
                    let joined = join_normalized(dir, &name);
                    if raw.starts_with("./") && !joined.starts_with("./") {
                        format!("./{joined}")
                    } else {
                        joined
                    }
                }
            } else if raw.starts_with('~') {
                format!("~/{name}")
            } else {
                name.clone()
            };
            let path_value = if is_dir {
                format!("{relative}/")
            } else {
                relative
            };
            out.push((
                is_dir,
                Suggestion {
                    value: build_completion_value(&path_value, is_at, quoted),
                    label: if is_dir { format!("{name}/") } else { name },
                    description: None,
                },
            ));
        }
        out.sort_by(|a, b| {
            b.0.cmp(&a.0).then_with(|| {
                a.1.label
                    .to_lowercase()
                    .cmp(&b.1.label.to_lowercase())
                    .then_with(|| a.1.label.cmp(&b.1.label))
            })
        });
        out.into_iter().map(|(_, s)| s).collect()
    }
}

impl AutocompleteProvider for CombinedAutocompleteProvider {
    fn suggestions(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
        force: bool,
    ) -> Option<Suggestions> {
        let line = lines.get(cursor_line).map_or("", String::as_str);
        let before = &line[..clamp_boundary(line, cursor_col)];

        if let Some(at) = extract_at_prefix(before) {
            let (raw, _, quoted) = parse_path_prefix(at);
            let items = self.fuzzy_file_suggestions(raw, quoted);
            return (!items.is_empty()).then(|| Suggestions {
                items,
                prefix: at.to_string(),
            });
        }

        if !force && let Some(query) = before.strip_prefix('/') {
            if query.contains(' ') {
                // Argument completion is not offered.
                return None;
            }
            let items = self.command_suggestions(query);
            return (!items.is_empty()).then(|| Suggestions {
                items,
                prefix: before.to_string(),
            });
        }

        let path = extract_path_prefix(before, force)?;
        let items = self.file_suggestions(path);
        (!items.is_empty()).then(|| Suggestions {
            items,
            prefix: path.to_string(),
        })
    }

    /// Forget cached directory walks (files were created or removed); walks are also
    /// redone after 30 seconds.
    fn refresh(&self) {
        self.walks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clear();
    }

    fn should_trigger_file_completion(
        &self,
        lines: &[String],
        cursor_line: usize,
        cursor_col: usize,
    ) -> bool {
        let line = lines.get(cursor_line).map_or("", String::as_str);
        let before = line[..clamp_boundary(line, cursor_col)].trim();
        !before.starts_with('/') || before.contains(' ')
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_extracted_like_the_typescript_pi() {
        assert_eq!(extract_at_prefix("see @src/ma"), Some("@src/ma"));
        assert_eq!(extract_at_prefix("mail a@b"), None);
        assert_eq!(extract_at_prefix("open @\"my fi"), Some("@\"my fi"));
        assert_eq!(extract_path_prefix("cat ./sr", false), Some("./sr"));
        assert_eq!(extract_path_prefix("cat sr", false), None);
        assert_eq!(extract_path_prefix("cat sr", true), Some("sr"));
        assert_eq!(extract_path_prefix("cat ", false), Some(""));
        assert_eq!(split_dir("src/ma"), ("src", "ma"));
        assert_eq!(split_dir("/x"), ("/", "x"));
        assert_eq!(join_normalized("./src", "a.rs"), "src/a.rs");
    }

    #[test]
    fn applies_slash_commands_and_files() {
        let item = Suggestion {
            value: "model".into(),
            label: "model".into(),
            description: None,
        };
        let (lines, line, col) = apply_completion(&["/mo".to_string()], 0, 3, &item, "/mo");
        assert_eq!((lines[0].as_str(), line, col), ("/model ", 0, 7));

        let dir = Suggestion {
            value: "@src/".into(),
            label: "src/".into(),
            description: None,
        };
        let (lines, _, col) = apply_completion(&["x @sr y".to_string()], 0, 5, &dir, "@sr");
        assert_eq!((lines[0].as_str(), col), ("x @src/ y", 7));
    }
}
