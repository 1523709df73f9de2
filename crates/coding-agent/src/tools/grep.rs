//! The `grep` tool: searches file contents in-process, the way pi's TypeScript tool does
//! through `rg --json --line-number --hidden`.
//!
//! Files come from a sorted walk (ripgrep's `--sort path` order) that honours `.gitignore`
//! (inside a git repository only, as ripgrep does by default), `.ignore` and `.rgignore`,
//! includes hidden files (a `.git` directory too, as `rg --hidden` does) and never follows
//! symlinks. Files with a NUL byte are skipped like ripgrep skips binary files. Each
//! matching line becomes `path:line: text`; with `context` the surrounding lines become
//! `path-line- text` (see [`super::grep_lines`] for the limit and context rules).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use ignore::WalkBuilder;
use ignore::overrides::OverrideBuilder;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::tools::find::{LimitHit, finish, resolve_search_path, to_posix};
use crate::tools::grep_lines::{Collector, GrepLines};
use crate::tools::truncate::{DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH};

/// Matches reported when the model gives no `limit`.
const DEFAULT_LIMIT: f64 = 100.0;

/// Builds the `grep` tool for a session rooted at `cwd`.
pub fn grep_tool(cwd: PathBuf) -> Arc<dyn AgentTool> {
    let description = format!(
        "Look for a regex or literal pattern inside files and list each matching line with \
         its file path and line number. Files excluded by .gitignore are skipped. At most \
         {} matches or {}KB of output are returned, whichever limit comes first; lines \
         longer than {GREP_MAX_LINE_LENGTH} characters are shortened.",
        DEFAULT_LIMIT as u64,
        DEFAULT_MAX_BYTES / 1024,
    );
    let parameters = json!({
        "type": "object",
        "properties": {
            "pattern": {"type": "string", "description": "Regular expression (or literal text) to look for"},
            "path": {"type": "string", "description": "File or directory to search; defaults to the working directory"},
            "glob": {"type": "string", "description": "Only search files matching this glob, such as '*.rs' or '**/*.test.ts'"},
            "ignoreCase": {"type": "boolean", "description": "Match without regard to letter case (default false)"},
            "literal": {"type": "boolean", "description": "Take the pattern as plain text rather than a regex (default false)"},
            "context": {"type": "number", "description": "Lines of context to print before and after every match (default 0)"},
            "limit": {"type": "number", "description": "Stop after this many matches (default 100)"}
        },
        "required": ["pattern"]
    });
    Arc::new(GrepTool {
        cwd,
        description,
        parameters,
    })
}

/// The `grep` tool bound to a working directory.
struct GrepTool {
    cwd: PathBuf,
    description: String,
    parameters: Value,
}

impl AgentTool for GrepTool {
    fn name(&self) -> &str {
        "grep"
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
            let request = GrepRequest::parse(&args)?;
            search(&request, &cwd, &token)
        }))
    }
}

/// The validated arguments of one call.
struct GrepRequest {
    pattern: String,
    path: String,
    glob: Option<String>,
    ignore_case: bool,
    literal: bool,
    context: usize,
    /// `max(1, floor(limit))`, as pi 1.6.0 takes it.
    limit: usize,
}

impl GrepRequest {
    fn parse(args: &Value) -> Result<Self, ToolError> {
        let pattern = args
            .get("pattern")
            .and_then(Value::as_str)
            .ok_or_else(|| ToolError::new("grep needs a string `pattern` argument"))?;
        let text = |key: &str| args.get(key).and_then(Value::as_str).map(str::to_owned);
        let flag = |key: &str| args.get(key).and_then(Value::as_bool).unwrap_or(false);
        let context = args.get("context").and_then(Value::as_f64).unwrap_or(0.0);
        Ok(Self {
            pattern: pattern.to_owned(),
            path: text("path")
                .filter(|p| !p.is_empty())
                .unwrap_or_else(|| ".".into()),
            // pi drops a leading `./` (after an optional `!`): globs are relative to `path`.
            glob: text("glob").filter(|g| !g.is_empty()).map(|g| {
                let (negation, mut rest) = match g.strip_prefix('!') {
                    Some(rest) => ("!", rest),
                    None => ("", g.as_str()),
                };
                while let Some(after) = rest.strip_prefix("./") {
                    rest = after;
                }
                format!("{negation}{rest}")
            }),
            ignore_case: flag("ignoreCase"),
            literal: flag("literal"),
            context: if context > 0.0 { context as usize } else { 0 },
            limit: args
                .get("limit")
                .and_then(Value::as_f64)
                .unwrap_or(DEFAULT_LIMIT)
                .floor()
                .max(1.0) as usize,
        })
    }
}

/// Runs the search and formats the result like the TypeScript tool.
fn search(
    request: &GrepRequest,
    cwd: &Path,
    cancel: &CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let root = resolve_search_path(&request.path, cwd);
    let is_directory = match std::fs::metadata(&root) {
        Ok(meta) => meta.is_dir(),
        Err(_) => {
            return Err(ToolError::new(format!(
                "Path not found: {}",
                root.display()
            )));
        }
    };
    let matcher = RegexMatcherBuilder::new()
        .case_insensitive(request.ignore_case)
        .fixed_strings(request.literal)
        .line_terminator(Some(b'\n'))
        .dot_matches_new_line(false)
        .build(&request.pattern)
        .map_err(rg_error)?;

    let display = |file: &Path| -> String {
        let relative = file
            .strip_prefix(&root)
            .ok()
            .filter(|_| is_directory)
            .map(to_posix)
            .filter(|r| !r.is_empty() && !r.starts_with(".."));
        if let Some(relative) = relative {
            return relative;
        }
        file.file_name()
            .map(|name| name.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let mut out = GrepLines::new(request.limit, request.context);
    if is_directory {
        let mut walker = WalkBuilder::new(&root);
        walker
            .hidden(false)
            .parents(true)
            .ignore(true)
            .git_ignore(true)
            .git_global(true)
            .git_exclude(true)
            .require_git(true)
            .follow_links(false)
            .current_dir(cwd)
            .sort_by_file_name(|a, b| a.cmp(b));
        walker.add_custom_ignore_filename(".rgignore");
        if let Some(glob) = &request.glob {
            let mut overrides = OverrideBuilder::new(&root);
            overrides.add(glob).map_err(rg_error)?;
            walker.overrides(overrides.build().map_err(rg_error)?);
        }
        let mut searcher = searcher(BinaryDetection::quit(b'\x00'), request.context);
        for entry in walker.build() {
            if cancel.is_cancelled() {
                return Err(aborted());
            }
            let Ok(entry) = entry else { continue };
            if !entry.file_type().is_some_and(|t| t.is_file()) {
                continue;
            }
            let shown = display(entry.path());
            search_file(
                &mut searcher,
                &matcher,
                entry.path(),
                &shown,
                cancel,
                &mut out,
            );
            if out.done {
                break;
            }
        }
    } else {
        // A file named explicitly is searched even if it looks binary, as ripgrep does.
        let mut searcher = searcher(BinaryDetection::convert(b'\x00'), request.context);
        let shown = display(&root);
        search_file(&mut searcher, &matcher, &root, &shown, cancel, &mut out);
    }
    if cancel.is_cancelled() {
        return Err(aborted());
    }
    Ok(format_output(request, &out))
}

/// A line-numbering searcher with the given binary handling and `context` lines before
/// and after each match (ripgrep's `--context`).
fn searcher(binary: BinaryDetection, context: usize) -> Searcher {
    SearcherBuilder::new()
        .line_number(true)
        .binary_detection(binary)
        .before_context(context)
        .after_context(context)
        .build()
}

/// Searches one file, feeding its matches and their context to `out`; an unreadable file
/// adds nothing.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    file: &Path,
    shown: &str,
    cancel: &CancellationToken,
    out: &mut GrepLines,
) {
    let sink = Collector::new(out, file, shown, cancel);
    // A read error only loses this file's matches; the walk goes on.
    let _ = searcher.search_path(matcher, file, sink);
}

/// The tool result: the lines, cut to the byte limit, and the notices.
fn format_output(request: &GrepRequest, out: &GrepLines) -> AgentToolResult {
    if out.matches() == 0 {
        return AgentToolResult::text("No matches found");
    }
    let limit_hit = out.match_limit_reached.then_some(LimitHit {
        noun: "matches",
        detail: "matchLimitReached",
        limit: request.limit as f64,
    });
    let lines_notice = out.lines_truncated.then(|| {
        format!(
            "Some lines truncated to {GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines"
        )
    });
    finish(
        &out.output.join("\n"),
        Some(out.totals()),
        limit_hit,
        lines_notice,
    )
}

/// A bad pattern or glob in ripgrep's words: pi 1.6.0 returns what `rg` prints on stderr
/// (`rg: regex parse error: ...`, `rg: error parsing glob ...`).
fn rg_error(error: impl std::fmt::Display) -> ToolError {
    ToolError::new(format!("rg: {error}"))
}

/// The error both tools return when the run is aborted.
pub(crate) fn aborted() -> ToolError {
    ToolError::new("Operation aborted")
}

/// Runs `work` on the blocking pool, handing it the cancel token to check between files;
/// `Operation aborted` as soon as the token fires.
pub(crate) async fn run_blocking<F>(
    cancel: CancellationToken,
    work: F,
) -> Result<AgentToolResult, ToolError>
where
    F: FnOnce(CancellationToken) -> Result<AgentToolResult, ToolError> + Send + 'static,
{
    let token = cancel.clone();
    super::read::cancellable(&cancel, super::read::blocking(move || work(token))).await
}
