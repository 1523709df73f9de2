//! The `ls` tool: a directory's entries (dotfiles included), sorted case-insensitively, with
//! `/` after directories, capped by an entry count and by 50 KB.

use std::cmp::Ordering;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

use super::path::resolve_to_cwd;
use super::read::{
    blocking, cancellable, fs_error_text, js_number, normalize_path, truncation_details,
};
use super::truncate::{DEFAULT_MAX_BYTES, format_size, truncate_head};

/// Entries listed when the model gives no limit.
pub const DEFAULT_LS_LIMIT: usize = 500;
/// JavaScript's `Number.MAX_SAFE_INTEGER`: the "no line limit" of the byte truncation.
const NO_LINE_LIMIT: usize = 9_007_199_254_740_991;
/// ASCII punctuation and symbols in the order of the Unicode root collation.
const PUNCTUATION_ORDER: &str = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$";

/// The `ls` tool; see [`ls_tool`].
pub struct LsTool {
    cwd: PathBuf,
    description: String,
    parameters: Value,
}

/// The `ls` tool, resolving relative paths against `cwd`.
pub fn ls_tool(cwd: PathBuf) -> Arc<dyn AgentTool> {
    let description = format!(
        "Lists the entries of a directory, dotfiles included, sorted alphabetically without \
         regard to case; directory names end with '/'. The listing stops at {DEFAULT_LS_LIMIT} \
         entries or {}KB, whichever limit comes first.",
        DEFAULT_MAX_BYTES / 1024
    );
    let parameters = json!({
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "Directory to list (defaults to the working directory)"},
            "limit": {"type": "number", "description": "Largest number of entries to return (defaults to 500)"}
        }
    });
    Arc::new(LsTool {
        cwd,
        description,
        parameters,
    })
}

impl AgentTool for LsTool {
    fn name(&self) -> &str {
        "ls"
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
        Box::pin(async move {
            let path = match args.get("path").and_then(Value::as_str) {
                Some(p) if !p.is_empty() => p.to_owned(),
                _ => ".".to_owned(),
            };
            let limit = args
                .get("limit")
                .and_then(Value::as_f64)
                .unwrap_or(DEFAULT_LS_LIMIT as f64);
            // pi 1.5.1: a limit below 1 means 1 (0 listed nothing, as if the folder were
            // empty), and a fraction is rounded down.
            let limit = limit.floor().max(1.0);
            let dir = normalize_path(&resolve_to_cwd(&path, &cwd));
            cancellable(&cancel, blocking(move || list(&dir, limit))).await
        })
    }
}

/// Lists `dir`, keeping at most `limit` entries.
fn list(dir: &Path, limit: f64) -> Result<AgentToolResult, ToolError> {
    let Ok(metadata) = std::fs::metadata(dir) else {
        return Err(ToolError::new(format!("Path not found: {}", dir.display())));
    };
    if !metadata.is_dir() {
        return Err(ToolError::new(format!(
            "Not a directory: {}",
            dir.display()
        )));
    }
    let cannot_read = |e: std::io::Error| {
        ToolError::new(format!(
            "Cannot read directory: {}",
            fs_error_text(&e, "scandir", Some(dir))
        ))
    };
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(cannot_read)? {
        let entry = entry.map_err(cannot_read)?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort_by(|a, b| collate(a, b));

    let mut results: Vec<String> = Vec::new();
    let mut limit_reached = false;
    for name in names {
        if results.len() as f64 >= limit {
            limit_reached = true;
            break;
        }
        // Entries that cannot be stat'ed (broken links, races) are skipped.
        let Ok(entry_meta) = std::fs::metadata(dir.join(&name)) else {
            continue;
        };
        let suffix = if entry_meta.is_dir() { "/" } else { "" };
        results.push(format!("{name}{suffix}"));
    }
    if results.is_empty() {
        return Ok(AgentToolResult::text("(empty directory)"));
    }

    let truncation = truncate_head(&results.join("\n"), NO_LINE_LIMIT, DEFAULT_MAX_BYTES);
    let mut output = truncation.content.clone();
    let mut details = Map::new();
    let mut notices = Vec::new();
    if limit_reached {
        notices.push(format!(
            "{} entries limit reached. Use limit={} for more",
            js_number(limit),
            js_number(limit * 2.0)
        ));
        let reached = if limit.fract() == 0.0 {
            json!(limit as i64)
        } else {
            json!(limit)
        };
        details.insert("entryLimitReached".to_owned(), reached);
    }
    if truncation.truncated() {
        notices.push(format!("{} limit reached", format_size(DEFAULT_MAX_BYTES)));
        details.insert("truncation".to_owned(), truncation_details(&truncation));
    }
    if !notices.is_empty() {
        output.push_str(&format!("\n\n[{}]", notices.join(". ")));
    }
    Ok(AgentToolResult {
        details: (!details.is_empty()).then_some(Value::Object(details)),
        ..AgentToolResult::text(output)
    })
}

/// Orders names as `a.toLowerCase().localeCompare(b.toLowerCase())` does with the root
/// collation: whitespace, punctuation, symbols, digits, then letters, accents second.
fn collate(a: &str, b: &str) -> Ordering {
    let (la, lb) = (a.to_lowercase(), b.to_lowercase());
    primary_key(&la)
        .cmp(&primary_key(&lb))
        .then_with(|| la.nfd().cmp(lb.nfd()))
        .then_with(|| a.cmp(b))
}

/// Per base character: its class, then its rank within the class.
fn primary_key(text: &str) -> Vec<(u8, u32)> {
    text.nfd()
        .filter(|&c| !is_combining_mark(c))
        .map(|c| {
            if c.is_whitespace() {
                (0, u32::from(c))
            } else if let Some(rank) = PUNCTUATION_ORDER.find(c) {
                (1, rank as u32)
            } else if c.is_ascii_digit() {
                (2, u32::from(c))
            } else if c.is_alphanumeric() {
                (3, u32::from(c))
            } else {
                (1, 0x100 + u32::from(c))
            }
        })
        .collect()
}
