//! The `edit` tool: targeted exact-text replacements in one file.
//!
//! Every `edits[].oldText` is located in the original file (exactly, or failing that
//! tolerantly, see [`super::edit_match`]); the located spans must be unique and disjoint.
//! Only those spans are rewritten: the rest of the file, its BOM and its line endings are
//! kept byte for byte, and the replacement text takes the file's line ending.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

use futures_util::future::BoxFuture;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::InputBlock;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use super::edit_diff::{DEFAULT_CONTEXT_LINES, generate_diff_string};
use super::edit_match::{Edit, LfText, Replacement, detect_line_ending, locate_edits};
use super::mutation::with_file_lock;
use super::path::resolve_to_cwd;

const DESCRIPTION: &str = "Change one file by replacing exact pieces of text. Each edits[].oldText has to match exactly one place in the original file, and no two of them may overlap. When changes touch the same block or neighbouring lines, fold them into a single edit instead of sending overlapping edits. Avoid padding oldText with long unchanged stretches just to bridge changes that are far apart.";

/// The arguments. Like pi 1.6.0's, the schema sets no `additionalProperties`: providers are
/// told what pi tells them, and an edit with an extra key is not refused.
static PARAMETERS: LazyLock<Value> = LazyLock::new(|| {
    json!({
        "type": "object",
        "required": ["path", "edits"],
        "properties": {
            "path": {
                "type": "string",
                "description": "File to edit, absolute or relative to the working directory"
            },
            "edits": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["oldText", "newText"],
                    "properties": {
                        "oldText": {
                            "type": "string",
                            "description": "The exact text to replace. It must occur only once in the original file and must not overlap the oldText of any other edit in this call."
                        },
                        "newText": {
                            "type": "string",
                            "description": "The text that takes the place of oldText."
                        }
                    }
                },
                "description": "The replacements to make, one or more. All of them are located in the original file, not one after another. Overlapping or nested edits are not allowed: when two changes touch the same block or nearby lines, combine them into one edit."
            }
        }
    })
});

const ABORTED: &str = "Operation aborted";
const INVALID_EDITS: &str =
    "Edit tool input is invalid. edits must contain at least one replacement.";

/// The `edit` tool working relative to `cwd`.
pub fn edit_tool(cwd: PathBuf) -> Arc<dyn AgentTool> {
    Arc::new(EditTool { cwd })
}

/// Replaces unique, non-overlapping pieces of one file's text.
#[derive(Debug, Clone)]
pub struct EditTool {
    cwd: PathBuf,
}

impl AgentTool for EditTool {
    fn name(&self) -> &str {
        "edit"
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn parameters(&self) -> &Value {
        &PARAMETERS
    }

    /// Strict JSON-schema sampling where the model's API has it, as pi 1.6's built-ins ask.
    fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
        Some(super::STRICT_IF_POSSIBLE)
    }

    fn prepare_arguments(&self, arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
        prepare_edit_arguments(arguments)
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
            let (path, edits) = parse_args(&args)?;
            let absolute = resolve_to_cwd(&path, &cwd);
            with_file_lock(&absolute, async {
                if cancel.is_cancelled() {
                    return Err(ToolError::new(ABORTED));
                }
                let through_client = edit_through_client(&absolute, &path, &edits).await;
                let outcome = if let Some(outcome) = through_client {
                    outcome
                } else {
                    let (absolute, cancel) = (absolute.clone(), cancel.clone());
                    let path = path.clone();
                    let edits_for_task = edits.clone();
                    tokio::task::spawn_blocking(move || {
                        edit_file(&absolute, &path, &edits_for_task, &cancel)
                    })
                    .await
                    .map_err(|e| ToolError::new(e.to_string()))?
                };
                // An abort at any point of the operation wins over its outcome.
                if cancel.is_cancelled() {
                    return Err(ToolError::new(ABORTED));
                }
                let diff = outcome.map_err(ToolError::new)?;
                let mut details = Map::new();
                details.insert("diff".into(), Value::String(diff.diff));
                if let Some(patch) = diff.patch {
                    details.insert("patch".into(), Value::String(patch));
                }
                if let Some(line) = diff.first_changed_line {
                    details.insert("firstChangedLine".into(), json!(line));
                }
                Ok(AgentToolResult {
                    content: vec![InputBlock::text(format!(
                        "Successfully replaced {} block(s) in {path}.",
                        edits.len()
                    ))],
                    details: Some(Value::Object(details)),
                    terminate: None,
                    is_error: false,
                    structured_content: None,
                })
            })
            .await
        })
    }
}

/// Accepts the argument shapes models send besides the schema's, as pi 1.6.0's
/// `prepareEditArguments`: `edits` as a JSON string holding the array or one edit, `edits`
/// as one edit object, and a single top-level `oldText`/`newText` pair (appended to
/// `edits`). `None` when nothing needed reshaping.
pub fn prepare_edit_arguments(arguments: &Map<String, Value>) -> Option<Map<String, Value>> {
    let mut args = arguments.clone();
    let mut changed = false;

    let edits = match args.get("edits") {
        Some(Value::String(text)) => serde_json::from_str::<Value>(text).ok(),
        Some(single) if is_single_edit(single) => Some(single.clone()),
        _ => None,
    };
    match edits {
        Some(parsed @ Value::Array(_)) => {
            args.insert("edits".into(), parsed);
            changed = true;
        }
        Some(single) if is_single_edit(&single) => {
            args.insert("edits".into(), Value::Array(vec![single]));
            changed = true;
        }
        _ => {}
    }

    if let (Some(Value::String(old_text)), Some(Value::String(new_text))) =
        (args.get("oldText"), args.get("newText"))
    {
        let legacy = json!({ "oldText": old_text, "newText": new_text });
        let mut edits = match args.get("edits") {
            Some(Value::Array(existing)) => existing.clone(),
            _ => Vec::new(),
        };
        edits.push(legacy);
        args.remove("oldText");
        args.remove("newText");
        args.insert("edits".into(), Value::Array(edits));
        changed = true;
    }

    changed.then_some(args)
}

/// An object with string `oldText` and `newText`: one edit sent without its array.
fn is_single_edit(value: &Value) -> bool {
    value.get("oldText").is_some_and(Value::is_string)
        && value.get("newText").is_some_and(Value::is_string)
}

fn parse_args(args: &Value) -> Result<(String, Vec<Edit>), ToolError> {
    let path = args
        .get("path")
        .and_then(Value::as_str)
        .ok_or_else(|| ToolError::new("Edit tool input is invalid. path must be a string."))?
        .to_owned();
    let items = match args.get("edits") {
        Some(Value::Array(items)) if !items.is_empty() => items,
        _ => return Err(ToolError::new(INVALID_EDITS)),
    };
    let edits = items
        .iter()
        .map(|item| {
            let field = |name: &str| item.get(name).and_then(Value::as_str).map(str::to_owned);
            match (field("oldText"), field("newText")) {
                (Some(old_text), Some(new_text)) => Ok(Edit { old_text, new_text }),
                _ => Err(ToolError::new(INVALID_EDITS)),
            }
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((path, edits))
}

/// Node's name for an I/O error (`ENOENT`, `EACCES`, ...).
fn error_code(error: &io::Error) -> Option<String> {
    error
        .raw_os_error()
        .map(|code| format!("{:?}", nix::errno::Errno::from_raw(code)))
}

/// An I/O failure worded the way Node words it: `EACCES: permission denied, open '<path>'`.
fn node_io_error(error: &io::Error, syscall: &str, path: &Path) -> String {
    match error.raw_os_error() {
        Some(code) => {
            let errno = nix::errno::Errno::from_raw(code);
            format!(
                "{errno:?}: {}, {syscall} '{}'",
                errno.desc().to_lowercase(),
                path.display()
            )
        }
        None => error.to_string(),
    }
}

/// Checks that the file can be read and written, as `access(R_OK | W_OK)` would.
fn check_access(absolute: &Path, path: &str) -> Result<(), String> {
    let describe = |error: io::Error| match error_code(&error) {
        Some(code) => format!("Could not edit file: {path}. Error code: {code}."),
        None => format!("Could not edit file: {path}. {error}."),
    };
    let metadata = std::fs::metadata(absolute).map_err(describe)?;
    if metadata.is_dir() {
        // Directories pass the access check; reading them is what fails.
        return Err("EISDIR: illegal operation on a directory, read".to_owned());
    }
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(absolute)
        .map(drop)
        .map_err(describe)
}

/// Reads, edits and writes the file; returns the diff of the change.
fn edit_file(
    absolute: &Path,
    path: &str,
    edits: &[Edit],
    cancel: &CancellationToken,
) -> Result<super::edit_diff::EditDiff, String> {
    check_access(absolute, path)?;
    if cancel.is_cancelled() {
        return Err(ABORTED.to_owned());
    }
    let bytes = std::fs::read(absolute).map_err(|e| node_io_error(&e, "read", absolute))?;
    let raw = String::from_utf8_lossy(&bytes);
    let (output, diff) = edit_text(&raw, path, edits)?;
    if cancel.is_cancelled() {
        return Err(ABORTED.to_owned());
    }
    super::atomic_write::write_atomically(absolute, output.as_bytes())
        .map_err(|e| node_io_error(&e, "open", absolute))?;
    Ok(diff)
}

/// The text after the edits, and the diff of the change.
fn edit_text(
    raw: &str,
    path: &str,
    edits: &[Edit],
) -> Result<(String, super::edit_diff::EditDiff), String> {
    // The model never includes the invisible BOM in oldText.
    let (bom, body) = match raw.strip_prefix('\u{FEFF}') {
        Some(rest) => ("\u{FEFF}", rest),
        None => ("", raw),
    };
    let ending = detect_line_ending(body);
    let lf = LfText::new(body);
    let replacements = locate_edits(&lf.text, edits, path)?;

    let new_body = splice_raw(body, &lf, &replacements, ending);
    let new_lf = super::edit_match::apply_replacements(&lf.text, &replacements);

    let mut output = String::with_capacity(bom.len() + new_body.len());
    output.push_str(bom);
    output.push_str(&new_body);

    let mut diff = generate_diff_string(&lf.text, &new_lf, DEFAULT_CONTEXT_LINES);
    diff.patch = Some(super::edit_diff::unified_patch(
        path,
        &lf.text,
        &new_lf,
        DEFAULT_CONTEXT_LINES,
    ));
    Ok((output, diff))
}

/// Edits through the client when it reads and writes files (an editor's buffers); `None`
/// when there is no such client.
async fn edit_through_client(
    absolute: &Path,
    path: &str,
    edits: &[Edit],
) -> Option<Result<super::edit_diff::EditDiff, String>> {
    let client = super::client_files::get()?;
    let reading = client.read_text(absolute)?;
    let raw = match reading.await {
        Ok(raw) => raw,
        Err(error) => return Some(Err(format!("Could not edit file: {path}. {error}."))),
    };
    let (output, diff) = match edit_text(&raw, path, edits) {
        Ok(done) => done,
        Err(error) => return Some(Err(error)),
    };
    let writing = client.write_text(absolute, &output)?;
    Some(writing.await.map(|()| diff))
}

/// Applies the replacements (located in the `\n`-only text) to the original text: only the
/// matched bytes change, and the new text uses the file's line ending.
fn splice_raw(raw: &str, lf: &LfText, replacements: &[Replacement], ending: &str) -> String {
    let mut out = String::with_capacity(raw.len());
    let mut cursor = 0;
    for r in replacements {
        let start = lf.to_raw(r.range.start);
        let end = lf.to_raw(r.range.end);
        out.push_str(&raw[cursor..start]);
        if ending == "\n" {
            out.push_str(&r.new_text);
        } else {
            out.push_str(&r.new_text.replace('\n', ending));
        }
        cursor = end;
    }
    out.push_str(&raw[cursor..]);
    out
}
