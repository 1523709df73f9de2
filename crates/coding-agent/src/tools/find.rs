//! The `find` tool: lists files and directories whose name (or, for a pattern with a `/`,
//! whose full path) matches a glob, in-process, the way pi's TypeScript tool does through
//! `fd --glob --hidden --no-require-git --max-results N`.
//!
//! The walk honours `.gitignore` whether or not the directory is inside a git repository,
//! plus `.ignore`, `.fdignore` and fd's global ignore file; hidden entries are included and
//! symlinks are not followed. Matching is smart-case: case-insensitive unless the pattern
//! holds an upper-case letter. Results are sorted by path, directories end with `/`. As
//! with fd 10, a `.git` directory is not skipped.
//!
//! The output tail shared with `grep` (byte cap, notices, details) lives here too.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use globset::{GlobBuilder, GlobMatcher};
use ignore::WalkBuilder;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::InputBlock;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use crate::tools::grep::{aborted, run_blocking};
use crate::tools::path::{expand_path, resolve_to_cwd};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, Truncation, format_size, truncate_head};

/// Results listed when the model gives no `limit`.
const DEFAULT_LIMIT: f64 = 1000.0;

/// Builds the `find` tool for a session rooted at `cwd`.
pub fn find_tool(cwd: PathBuf) -> Arc<dyn AgentTool> {
    let description = format!(
        "List files whose names match a glob pattern; paths are given relative to the \
         directory searched. Files excluded by .gitignore are skipped. At most {} paths or \
         {}KB of output are returned, whichever limit comes first.",
        DEFAULT_LIMIT as u64,
        DEFAULT_MAX_BYTES / 1024,
    );
    let parameters = json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Glob the paths must match, such as '*.rs', '**/*.toml' or 'src/**/*_test.go'"},
            "path": {"type": "string", "description": "Directory to look in; defaults to the working directory"},
            "limit": {"type": "number", "description": "Stop after this many paths (default 1000)"}
        },
        "required": ["pattern"]
    });
    Arc::new(FindTool {
        cwd,
        description,
        parameters,
    })
}

/// The `find` tool bound to a working directory.
struct FindTool {
    cwd: PathBuf,
    description: String,
    parameters: Value,
}

impl AgentTool for FindTool {
    fn name(&self) -> &str {
        "find"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn execute(
        &self,
        _tool_call_id: &str,
        args: Value,
        cancel: CancellationToken,
        _on_update: ToolUpdateFn,
    ) -> BoxFuture<'static, Result<AgentToolResult, ToolError>> {
        let cwd = self.cwd.clone();
        Box::pin(run_blocking(cancel, move |token| {
            let pattern = args
                .get("pattern")
                .and_then(Value::as_str)
                .ok_or_else(|| ToolError::new("find needs a string `pattern` argument"))?;
            let path = args
                .get("path")
                .and_then(Value::as_str)
                .filter(|p| !p.is_empty())
                .unwrap_or(".");
            let limit = args
                .get("limit")
                .and_then(Value::as_f64)
                .unwrap_or(DEFAULT_LIMIT);
            find(pattern, &resolve_search_path(path, &cwd), limit, &token)
        }))
    }
}

/// How a pattern is applied to each entry.
struct NameFilter {
    /// `None` matches everything (an empty pattern).
    glob: Option<GlobMatcher>,
    /// Match the absolute path rather than the file name.
    full_path: bool,
}

impl NameFilter {
    /// pi 1.6.0's reading of the pattern (dist/core/tools/find.js): leading `./` dropped;
    /// with a `/` it is matched against the whole path, a relative one below `root`
    /// (case-insensitive when it has no upper-case letter); otherwise against the name, with
    /// fd's smart case. `*` never crosses `/`.
    fn new(pattern: &str, root: &Path) -> Result<Self, ToolError> {
        let mut pattern = pattern;
        while let Some(rest) = pattern.strip_prefix("./") {
            pattern = rest;
        }
        let full_path = pattern.contains('/');
        if pattern.is_empty() {
            return Ok(Self {
                glob: None,
                full_path,
            });
        }
        let case_insensitive = pattern.to_lowercase() == pattern;
        let pattern = if full_path && !pattern.starts_with('/') {
            let root = root.to_string_lossy();
            format!("{}/{pattern}", escape_glob(root.trim_end_matches('/')))
        } else {
            pattern.to_owned()
        };
        let glob = GlobBuilder::new(&pattern)
            .literal_separator(true)
            .case_insensitive(case_insensitive)
            .build()
            .map_err(|e| ToolError::new(format!("[fd error]: {e}")))?;
        Ok(Self {
            glob: Some(glob.compile_matcher()),
            full_path,
        })
    }

    fn matches(&self, path: &Path) -> bool {
        let Some(glob) = &self.glob else { return true };
        if self.full_path {
            glob.is_match(path)
        } else {
            path.file_name().is_some_and(|name| glob.is_match(name))
        }
    }
}

/// `text` with the glob metacharacters escaped, as pi escapes the search root.
fn escape_glob(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '\\' | '*' | '?' | '[' | ']' | '{' | '}') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Walks `root` and formats the matches like the TypeScript tool.
fn find(
    pattern: &str,
    root: &Path,
    limit: f64,
    cancel: &CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    if !root.is_dir() {
        return Err(ToolError::new(format!(
            "[fd error]: Search path '{}' is not a directory.\n[fd error]: No valid search paths given.",
            root.display()
        )));
    }
    let filter = NameFilter::new(pattern, root)?;
    // pi 1.6.0 asks fd for one result more than the limit, to know whether there are more.
    let limit = limit.floor().max(1.0);
    let max_results = (limit as usize).saturating_add(1);

    let mut walker = WalkBuilder::new(root);
    walker
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(true)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b));
    walker.add_custom_ignore_filename(".fdignore");
    if let Some(global) = fd_global_ignore() {
        // A malformed global ignore file is only partly applied, as fd does.
        let _ = walker.add_ignore(global);
    }

    let mut found: Vec<String> = Vec::new();
    for entry in walker.build() {
        if cancel.is_cancelled() {
            return Err(aborted());
        }
        let Ok(entry) = entry else { continue };
        if entry.depth() == 0 || !filter.matches(entry.path()) {
            continue;
        }
        let Ok(relative) = entry.path().strip_prefix(root) else {
            continue;
        };
        let mut shown = to_posix(relative);
        if entry.file_type().is_some_and(|t| t.is_dir()) {
            shown.push('/');
        }
        found.push(shown);
        if found.len() >= max_results {
            break;
        }
    }

    if found.is_empty() {
        return Ok(AgentToolResult::text("No files found matching pattern"));
    }
    let limit_hit = (found.len() as f64 > limit).then(|| {
        found.truncate(limit as usize);
        LimitHit {
            noun: "results",
            detail: "resultLimitReached",
            limit,
        }
    });
    Ok(finish(&found.join("\n"), None, limit_hit, None))
}

/// fd's global ignore file, `$XDG_CONFIG_HOME/fd/ignore` (else `~/.config/fd/ignore`).
fn fd_global_ignore() -> Option<PathBuf> {
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".config")))?;
    let file = config.join("fd").join("ignore");
    file.is_file().then_some(file)
}

/// JavaScript's `Number.MAX_SAFE_INTEGER`: the "no line limit" the TypeScript tools pass.
const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;

/// A result cap that was reached: `noun` names the items in the notice, `detail` is the
/// details key.
pub(crate) struct LimitHit {
    pub(crate) noun: &'static str,
    pub(crate) detail: &'static str,
    pub(crate) limit: f64,
}

/// The shared tail of `grep` and `find`: cuts `body` to the byte limit, then appends the
/// notices (cap, byte limit, grep's cut-lines notice) in brackets and records them in the
/// details (`linesTruncated` for the last). `totals` (lines, bytes) are those of the whole
/// output when `body` holds only its stored start.
pub(crate) fn finish(
    body: &str,
    totals: Option<(usize, usize)>,
    limit_hit: Option<LimitHit>,
    lines_notice: Option<String>,
) -> AgentToolResult {
    let mut truncation = truncate_head(body, NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
    if let Some((lines, bytes)) = totals {
        truncation.total_lines = lines;
        truncation.total_bytes = bytes;
    }
    let mut text = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if let Some(hit) = limit_hit {
        let (limit, doubled) = (js_number(hit.limit), js_number(hit.limit * 2.0));
        notices.push(format!(
            "{limit} {} limit reached. Use limit={doubled} for more, or refine pattern",
            hit.noun
        ));
        details.insert(hit.detail.into(), json_number(hit.limit));
    }
    if truncation.truncated() {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".into(), truncation_json(&truncation));
    }
    if let Some(notice) = lines_notice {
        notices.push(notice);
        details.insert("linesTruncated".into(), Value::Bool(true));
    }
    if !notices.is_empty() {
        text.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    AgentToolResult {
        content: vec![InputBlock::text(text)],
        details: (!details.is_empty()).then_some(Value::Object(details)),
        terminate: None,
        is_error: false,
        structured_content: None,
    }
}

/// Resolves the `path` argument like the TypeScript `resolveToCwd`: a relative path is
/// joined to the cwd and normalized (`.` and `..` folded), an absolute one kept as given.
pub(crate) fn resolve_search_path(input: &str, cwd: &Path) -> PathBuf {
    let resolved = resolve_to_cwd(input, cwd);
    if expand_path(input).is_absolute() {
        return resolved;
    }
    let mut normalized = PathBuf::new();
    for component in resolved.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                normalized.pop();
            }
            other => normalized.push(other),
        }
    }
    normalized
}

/// A relative path with `/` separators.
pub(crate) fn to_posix(path: &Path) -> String {
    path.components()
        .map(|c| c.as_os_str().to_string_lossy())
        .collect::<Vec<_>>()
        .join("/")
}

/// Formats a number as JavaScript prints it (`100`, not `100.0`).
pub(crate) fn js_number(value: f64) -> String {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        format!("{}", value as i64)
    } else {
        format!("{value}")
    }
}

/// A JSON number that is an integer whenever the value is whole.
pub(crate) fn json_number(value: f64) -> Value {
    if value.fract() == 0.0 && value.abs() < 1e15 {
        json!(value as i64)
    } else {
        json!(value)
    }
}

/// The `truncation` detail object, with the TypeScript `TruncationResult` field names.
pub(crate) fn truncation_json(t: &Truncation) -> Value {
    json!({
        "content": t.content,
        "truncated": t.truncated(),
        "truncatedBy": t.truncated_by.map(|by| by.as_str()),
        "totalLines": t.total_lines,
        "totalBytes": t.total_bytes,
        "outputLines": t.output_lines,
        "outputBytes": t.output_bytes,
        "lastLinePartial": t.last_line_partial,
        "firstLineExceedsLimit": t.first_line_exceeds_limit,
        "maxLines": t.max_lines,
        "maxBytes": t.max_bytes,
    })
}
