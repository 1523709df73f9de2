//! The `read` tool: a text file's lines (head-truncated, with a notice saying how to go
//! on), or an image as an attachment. Also holds small helpers the `write` and `ls` tools
//! share: Node-style file-system error texts, path normalization, cancellation.

use std::fs::File;
use std::future::Future;
use std::io::{self, Read};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use nix::errno::Errno;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError, ToolUpdateFn};
use pi_ai::{ImageContent, InputBlock};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::path::resolve_read_path;
use super::read_lines::{self, Selection};
use super::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, Truncation, format_size};

/// The `read` tool; see [`read_tool`].
pub struct ReadTool {
    cwd: PathBuf,
    description: String,
    parameters: Value,
    output_schema: Value,
}

/// The `read` tool, resolving relative paths against `cwd`.
pub fn read_tool(cwd: PathBuf) -> Arc<dyn AgentTool> {
    let description = format!(
        "Reads a file. Text files and images (jpg, png, gif, webp, bmp) are supported; images are \
         returned as attachments. Text output stops at {DEFAULT_MAX_LINES} lines or {}KB, \
         whichever limit comes first. Page through large files with offset/limit, and keep \
         going from the offset named in the notice when you need the whole file.",
        DEFAULT_MAX_BYTES / 1024
    );
    let parameters = json!({
        "type": "object",
        "required": ["path"],
        "properties": {
            "path": {"type": "string", "description": "File to read, absolute or relative to the working directory"},
            "offset": {"type": "number", "description": "First line to return, counting from 1"},
            "limit": {"type": "number", "description": "Largest number of lines to return"}
        }
    });
    let output_schema = json!({
        "anyOf": [
            {"type": "string"},
            {
                "type": "object",
                "required": ["type", "data", "mimeType", "note"],
                "properties": {
                    "type": {"const": "image"},
                    "data": {"type": "string"},
                    "mimeType": {"type": "string"},
                    "note": {"type": "string"}
                }
            }
        ]
    });
    Arc::new(ReadTool {
        cwd,
        description,
        parameters,
        output_schema,
    })
}

impl AgentTool for ReadTool {
    fn name(&self) -> &str {
        "read"
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> &Value {
        &self.parameters
    }

    fn output_schema(&self) -> Option<&Value> {
        Some(&self.output_schema)
    }

    /// Strict JSON-schema sampling where the model's API has it, as pi 1.6's built-ins ask.
    fn constrained_sampling(&self) -> Option<pi_ai::ConstrainedSampling> {
        Some(super::STRICT_IF_POSSIBLE)
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
            let path = string_arg(&args, "path")?;
            let offset = args.get("offset").and_then(Value::as_f64);
            let limit = args.get("limit").and_then(Value::as_f64);
            let absolute = normalize_path(&resolve_read_path(&path, &cwd));
            if let Some(text) = read_through_client(&absolute, &cancel).await? {
                let start = first_line(offset);
                let selection = read_lines::select_from_text(&text, start, limit);
                let mut result = text_result(&selection, &path, offset, start, limit)?;
                result.structured_content = Some(Box::new(script_value(&result.content)));
                return Ok(result);
            }
            let token = cancel.clone();
            let mut result = cancellable(
                &cancel,
                blocking(move || read_file(&absolute, &path, offset, limit, &token)),
            )
            .await?;
            result.structured_content = Some(Box::new(script_value(&result.content)));
            Ok(result)
        })
    }
}

/// What a codemode script's `read` resolves to: the text, or for an image the image block
/// with the text that goes with it as `note` (pi 1.6).
fn script_value(content: &[InputBlock]) -> Value {
    let text = content.iter().find_map(InputBlock::as_text).unwrap_or("");
    match content.iter().find_map(|b| match b {
        InputBlock::Image(image) => Some(image),
        InputBlock::Text(_) => None,
    }) {
        Some(image) => json!({
            "type": "image",
            "data": image.data.to_string(),
            "mimeType": image.mime_type,
            "note": text,
        }),
        None => Value::String(text.to_owned()),
    }
}

/// The 0-based line an `offset` starts at (0 and no offset: the first).
fn first_line(offset: Option<f64>) -> f64 {
    match offset {
        Some(o) if o != 0.0 && !o.is_nan() => (o - 1.0).max(0.0),
        _ => 0.0,
    }
}

/// The file's text from the client when one reads files (an editor's buffer); `None` for
/// the disk: no client, or an image on disk (the client reads text only).
async fn read_through_client(
    absolute: &Path,
    cancel: &CancellationToken,
) -> Result<Option<String>, ToolError> {
    let Some(client) = super::client_files::get() else {
        return Ok(None);
    };
    let mut head = Vec::with_capacity(IMAGE_SNIFF_BYTES);
    if let Ok(file) = File::open(absolute) {
        let _ = file.take(IMAGE_SNIFF_BYTES as u64).read_to_end(&mut head);
        if detect_image_mime_type(&head).is_some() {
            return Ok(None);
        }
    }
    let Some(reading) = client.read_text(absolute) else {
        return Ok(None);
    };
    tokio::select! {
        text = reading => text.map(Some).map_err(ToolError::new),
        () = cancel.cancelled() => Err(ToolError::new("Operation aborted")),
    }
}

/// Reads `absolute` (named `path` by the model) and builds the result. Text is streamed:
/// a large file costs only the lines the result can show.
fn read_file(
    absolute: &Path,
    path: &str,
    offset: Option<f64>,
    limit: Option<f64>,
    cancel: &CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let access_error = |e: &io::Error| ToolError::new(fs_error_text(e, "access", Some(absolute)));
    let read_error = |e: io::Error| match e.raw_os_error() {
        Some(code) if Errno::from_raw(code) == Errno::EISDIR => {
            ToolError::new(fs_error_text(&e, "read", None))
        }
        Some(_) => access_error(&e),
        None => ToolError::new(e.to_string()),
    };
    let metadata = std::fs::metadata(absolute).map_err(|e| access_error(&e))?;
    if metadata.is_dir() {
        return Err(ToolError::new(
            "EISDIR: illegal operation on a directory, read",
        ));
    }
    let mut file = File::open(absolute).map_err(read_error)?;
    let mut head = Vec::with_capacity(IMAGE_SNIFF_BYTES);
    (&mut file)
        .take(IMAGE_SNIFF_BYTES as u64)
        .read_to_end(&mut head)
        .map_err(read_error)?;
    if let Some(mime_type) = detect_image_mime_type(&head) {
        let mut bytes = head;
        file.read_to_end(&mut bytes).map_err(read_error)?;
        return Ok(image_result(&bytes, mime_type));
    }
    // Anything else is text, as in pi 1.6.0 (no binary check; invalid UTF-8 becomes U+FFFD).
    let start = first_line(offset);
    let selection = if read_lines::is_streamable(offset, limit) {
        let rest = io::Cursor::new(head).chain(file);
        // Whole numbers here; `as` saturates past usize.
        let limit = limit.map(|l| l as usize);
        read_lines::select_from_stream(rest, start as usize, limit, cancel).map_err(read_error)?
    } else {
        let mut bytes = head;
        file.read_to_end(&mut bytes).map_err(read_error)?;
        read_lines::select_from_text(&String::from_utf8_lossy(&bytes), start, limit)
    };
    text_result(&selection, path, offset, start, limit)
}

/// The image MIME type named by the leading bytes, as pi 1.6.0's `detectSupportedImageMimeType`
/// (dist/utils/mime.js) decides it: JPEG (not JPEG-LS), PNG with an IHDR header and no
/// animation, GIF87a/GIF89a, WebP and BMP.
pub(crate) fn detect_image_mime_type(bytes: &[u8]) -> Option<&'static str> {
    let head = &bytes[..bytes.len().min(IMAGE_SNIFF_BYTES)];
    if head.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return (head.get(3) != Some(&0xF7)).then_some("image/jpeg");
    }
    if head.starts_with(PNG_SIGNATURE) {
        let png = head.len() >= 16 && be_u32(head, 8) == 13 && head[12..16] == *b"IHDR";
        return (png && !is_animated_png(head)).then_some("image/png");
    }
    if head.starts_with(b"GIF87a") || head.starts_with(b"GIF89a") {
        return Some("image/gif");
    }
    if head.len() >= 12 && head.starts_with(b"RIFF") && head[8..12] == *b"WEBP" {
        return Some("image/webp");
    }
    (head.starts_with(b"BM") && is_bmp(head)).then_some("image/bmp")
}

/// How many leading bytes the image detection looks at (pi's `IMAGE_TYPE_SNIFF_BYTES`).
const IMAGE_SNIFF_BYTES: usize = 4100;
const PNG_SIGNATURE: &[u8] = b"\x89PNG\r\n\x1a\n";

fn be_u32(bytes: &[u8], at: usize) -> u64 {
    (0..4).fold(0, |n, i| {
        n * 256 + u64::from(*bytes.get(at + i).unwrap_or(&0))
    })
}

fn le_u32(bytes: &[u8], at: usize) -> u64 {
    (0..4).rev().fold(0, |n, i| {
        n * 256 + u64::from(*bytes.get(at + i).unwrap_or(&0))
    })
}

fn le_u16(bytes: &[u8], at: usize) -> u64 {
    (0..2).rev().fold(0, |n, i| {
        n * 256 + u64::from(*bytes.get(at + i).unwrap_or(&0))
    })
}

/// An `acTL` chunk before the first `IDAT`: an animated PNG.
fn is_animated_png(head: &[u8]) -> bool {
    let mut offset = PNG_SIGNATURE.len();
    while offset + 8 <= head.len() {
        match &head[offset + 4..offset + 8] {
            b"acTL" => return true,
            b"IDAT" => return false,
            _ => {}
        }
        let next = offset as u64 + 12 + be_u32(head, offset);
        if next > head.len() as u64 {
            return false;
        }
        offset = next as usize;
    }
    false
}

/// A BMP header pi accepts: consistent sizes, one colour plane, a usual bit depth.
fn is_bmp(head: &[u8]) -> bool {
    if head.len() < 26 {
        return false;
    }
    let (declared, pixels, dib) = (le_u32(head, 2), le_u32(head, 10), le_u32(head, 14));
    if (declared != 0 && declared < 26)
        || pixels < 14 + dib
        || (declared != 0 && pixels >= declared)
    {
        return false;
    }
    let (planes, bits) = match dib {
        12 => (le_u16(head, 22), le_u16(head, 24)),
        40..=124 if head.len() >= 30 => (le_u16(head, 26), le_u16(head, 28)),
        _ => return false,
    };
    planes == 1 && [1, 4, 8, 16, 24, 32].contains(&bits)
}

/// A note plus the image made ready for the model (converted, resized to the active
/// model's profile, with notes on what was done), or only a note when that failed.
fn image_result(bytes: &[u8], mime_type: &str) -> AgentToolResult {
    match crate::images::process_image(bytes, mime_type, &crate::images::limits::active()) {
        Err(message) => AgentToolResult::text(format!("Read image file [{mime_type}]\n{message}")),
        Ok(processed) => {
            let mut note = format!("Read image file [{}]", processed.mime_type);
            if !processed.hints.is_empty() {
                note = format!("{note}\n{}", processed.hints.join("\n"));
            }
            AgentToolResult {
                content: vec![
                    InputBlock::text(note),
                    InputBlock::Image(ImageContent::new(processed.data, processed.mime_type)),
                ],
                details: None,
                terminate: None,
                is_error: false,
                structured_content: None,
            }
        }
    }
}

/// The selected lines with the notice telling how to continue, as pi 1.6.0 words it.
/// `start` is the 0-based first line (fractional when the offset was).
fn text_result(
    selection: &Selection,
    path: &str,
    offset: Option<f64>,
    start: f64,
    limit: Option<f64>,
) -> Result<AgentToolResult, ToolError> {
    let total = selection.total_file_lines as f64;
    let truncation = &selection.truncation;
    if start >= total {
        let shown = offset.map_or_else(|| "undefined".to_owned(), js_number);
        return Err(ToolError::new(format!(
            "Offset {shown} is beyond end of file ({} lines total)",
            selection.total_file_lines
        )));
    }
    let first = js_number(start + 1.0);
    let limit_text = format_size(DEFAULT_MAX_BYTES);
    if truncation.first_line_exceeds_limit {
        let size = format_size(selection.first_line_bytes);
        let output = format!(
            "[Line {first} is {size}, exceeds {limit_text} limit. Use bash: sed -n '{first}p' {path} | head -c {DEFAULT_MAX_BYTES}]"
        );
        return Ok(with_truncation(output, truncation));
    }
    let total_text = selection.total_file_lines;
    if truncation.truncated() {
        let last = start + 1.0 + truncation.output_lines as f64 - 1.0;
        let (last, next) = (js_number(last), js_number(last + 1.0));
        let notice = if truncation.truncated_by == Some(TruncatedBy::Lines) {
            format!(
                "[Showing lines {first}-{last} of {total_text}. Use offset={next} to continue.]"
            )
        } else {
            format!(
                "[Showing lines {first}-{last} of {total_text} ({limit_text} limit). Use offset={next} to continue.]"
            )
        };
        let output = format!("{}\n\n{notice}", truncation.content);
        return Ok(with_truncation(output, truncation));
    }
    if let Some(limit) = limit {
        let shown_end = (start + limit).min(total);
        if shown_end < total {
            let remaining = js_number(total - shown_end);
            let next = js_number(shown_end + 1.0);
            return Ok(AgentToolResult::text(format!(
                "{}\n\n[{remaining} more lines in file. Use offset={next} to continue.]",
                truncation.content
            )));
        }
    }
    Ok(AgentToolResult::text(truncation.content.clone()))
}

/// A text result whose details carry the truncation.
fn with_truncation(output: String, truncation: &Truncation) -> AgentToolResult {
    AgentToolResult {
        details: Some(json!({ "truncation": truncation_details(truncation) })),
        ..AgentToolResult::text(output)
    }
}

/// A truncation as tool details show it (camelCase, as the TypeScript `TruncationResult`).
pub(crate) fn truncation_details(t: &Truncation) -> Value {
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

/// A required string argument.
pub(crate) fn string_arg(args: &Value, name: &str) -> Result<String, ToolError> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .ok_or_else(|| ToolError::new(format!("Missing required string argument: {name}")))
}

/// A number as JavaScript prints it (integers without a fraction).
pub(crate) fn js_number(n: f64) -> String {
    if n.is_finite() && n.fract() == 0.0 && n.abs() < 1e21 {
        format!("{}", n as i128)
    } else if n.is_nan() {
        "NaN".to_owned()
    } else if n.is_infinite() {
        if n > 0.0 { "Infinity" } else { "-Infinity" }.to_owned()
    } else {
        format!("{n}")
    }
}

/// An error as Node.js words it: `ENOENT: no such file or directory, access '/abs/path'`.
pub(crate) fn fs_error_text(err: &io::Error, syscall: &str, path: Option<&Path>) -> String {
    let Some(code) = err.raw_os_error() else {
        return err.to_string();
    };
    let errno = Errno::from_raw(code);
    let message = match errno {
        Errno::ENOENT => "no such file or directory".to_owned(),
        Errno::EACCES => "permission denied".to_owned(),
        Errno::EISDIR => "illegal operation on a directory".to_owned(),
        Errno::ENOTDIR => "not a directory".to_owned(),
        Errno::EPERM => "operation not permitted".to_owned(),
        Errno::EEXIST => "file already exists".to_owned(),
        Errno::ENOSPC => "no space left on device".to_owned(),
        Errno::EROFS => "read-only file system".to_owned(),
        Errno::ELOOP => "too many symbolic links encountered".to_owned(),
        Errno::ENAMETOOLONG => "name too long".to_owned(),
        Errno::EMFILE => "too many open files".to_owned(),
        Errno::EBUSY => "resource busy or locked".to_owned(),
        Errno::EIO => "i/o error".to_owned(),
        other => other.desc().to_lowercase(),
    };
    match path {
        Some(path) => format!("{errno:?}: {message}, {syscall} '{}'", path.display()),
        None => format!("{errno:?}: {message}, {syscall}"),
    }
}

/// Resolves `.` and `..` lexically, as Node's `path.resolve` does.
pub(crate) fn normalize_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if out.components().all(|c| c == Component::ParentDir) {
                    out.push("..");
                } else if out.parent().is_some() {
                    out.pop();
                }
            }
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

/// Runs blocking file-system work off the async threads.
pub(crate) async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ToolError> + Send + 'static,
) -> Result<T, ToolError> {
    tokio::task::spawn_blocking(work)
        .await
        .unwrap_or_else(|e| Err(ToolError::new(format!("Tool task failed: {e}"))))
}

/// `work`, or the `Operation aborted` error once `cancel` fires (also when it already has).
pub(crate) async fn cancellable<T>(
    cancel: &CancellationToken,
    work: impl Future<Output = Result<T, ToolError>>,
) -> Result<T, ToolError> {
    if cancel.is_cancelled() {
        return Err(ToolError::new("Operation aborted"));
    }
    tokio::select! {
        biased;
        () = cancel.cancelled() => Err(ToolError::new("Operation aborted")),
        result = work => result,
    }
}
