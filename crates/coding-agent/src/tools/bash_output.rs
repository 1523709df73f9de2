//! Collects the streamed output of a shell command with bounded memory: a decoded rolling
//! tail for display, line and byte totals, and a temp file holding every byte once the
//! output outgrows the display limits.

use std::fs::File;
use std::hash::{BuildHasher, Hasher};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Map, Value, json};

use crate::tools::truncate::{
    DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TruncatedBy, Truncation, format_size, truncate_tail,
};

/// The prefix of the temp files that keep a command's full output.
pub const TEMP_FILE_PREFIX: &str = "pi-bash";

/// A view of the output so far: the tail to show and how it was cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputSnapshot {
    /// The kept tail of the output.
    pub content: String,
    /// How the tail was cut; totals cover the whole output.
    pub truncation: Truncation,
    /// The temp file with the full output, once one exists.
    pub full_output_path: Option<PathBuf>,
}

/// Incremental UTF-8 decoding, invalid sequences becoming U+FFFD.
#[derive(Default)]
struct Utf8Stream {
    pending: Vec<u8>,
    started: bool,
}

impl Utf8Stream {
    fn decode(&mut self, bytes: &[u8], out: &mut String) {
        self.pending.extend_from_slice(bytes);
        let mut rest: &[u8] = &self.pending;
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    rest = &[];
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    out.push_str(&String::from_utf8_lossy(valid));
                    match error.error_len() {
                        Some(bad) => {
                            out.push('\u{FFFD}');
                            rest = &after[bad..];
                        }
                        None => {
                            rest = after;
                            break;
                        }
                    }
                }
            }
        }
        self.pending = rest.to_vec();
        self.strip_bom(out);
    }

    fn finish(&mut self, out: &mut String) {
        if !self.pending.is_empty() {
            self.pending.clear();
            out.push('\u{FFFD}');
        }
        self.strip_bom(out);
    }

    /// A byte-order mark opening the stream is dropped, as a default text decoder does.
    fn strip_bom(&mut self, out: &mut String) {
        if !self.started && !out.is_empty() {
            self.started = true;
            if out.starts_with('\u{FEFF}') {
                out.drain(..'\u{FEFF}'.len_utf8());
            }
        }
    }
}

/// Tracks a command's output as it streams in.
pub struct OutputAccumulator {
    max_lines: usize,
    max_bytes: usize,
    max_rolling_bytes: usize,
    decoder: Utf8Stream,
    raw_chunks: Vec<Vec<u8>>,
    tail: String,
    tail_starts_at_line_boundary: bool,
    total_raw_bytes: usize,
    total_decoded_bytes: usize,
    /// Lines ended by a newline so far.
    completed_lines: usize,
    /// Whether text follows the last newline (a line still open).
    has_open_line: bool,
    current_line_bytes: usize,
    finished: bool,
    temp_path: Option<PathBuf>,
    temp_file: Option<BufWriter<File>>,
}

impl Default for OutputAccumulator {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES)
    }
}

impl OutputAccumulator {
    /// An empty accumulator with these display limits.
    pub fn new(max_lines: usize, max_bytes: usize) -> Self {
        Self {
            max_lines,
            max_bytes,
            max_rolling_bytes: (max_bytes * 2).max(1),
            decoder: Utf8Stream::default(),
            raw_chunks: Vec::new(),
            tail: String::new(),
            tail_starts_at_line_boundary: true,
            total_raw_bytes: 0,
            total_decoded_bytes: 0,
            completed_lines: 0,
            has_open_line: false,
            current_line_bytes: 0,
            finished: false,
            temp_path: None,
            temp_file: None,
        }
    }

    /// Adds raw output bytes; returns the text they decoded to.
    pub fn append(&mut self, data: &[u8]) -> String {
        if self.finished {
            return String::new();
        }
        self.total_raw_bytes += data.len();
        let mut text = String::new();
        self.decoder.decode(data, &mut text);
        self.append_text(&text);
        if self.temp_file.is_some() || self.needs_temp_file() {
            self.ensure_temp_file();
            self.write_temp(data);
        } else if !data.is_empty() {
            self.raw_chunks.push(data.to_vec());
        }
        text
    }

    /// Ends the stream: flushes the decoder and saves the output if it is over the limits.
    pub fn finish(&mut self) {
        if self.finished {
            return;
        }
        self.finished = true;
        let mut text = String::new();
        self.decoder.finish(&mut text);
        self.append_text(&text);
        if self.needs_temp_file() {
            self.ensure_temp_file();
        }
    }

    /// The tail to show now; with `persist_if_truncated`, a cut output gets its temp file.
    pub fn snapshot(&mut self, persist_if_truncated: bool) -> OutputSnapshot {
        let mut truncation = truncate_tail(self.snapshot_text(), self.max_lines, self.max_bytes);
        let over_lines = self.total_lines() > self.max_lines;
        let over_bytes = self.total_decoded_bytes > self.max_bytes;
        truncation.truncated_by = if over_lines || over_bytes {
            Some(truncation.truncated_by.unwrap_or(if over_bytes {
                TruncatedBy::Bytes
            } else {
                TruncatedBy::Lines
            }))
        } else {
            None
        };
        truncation.total_lines = self.total_lines();
        truncation.total_bytes = self.total_decoded_bytes;
        if persist_if_truncated && truncation.truncated() {
            self.ensure_temp_file();
        }
        OutputSnapshot {
            content: truncation.content.clone(),
            truncation,
            full_output_path: self.temp_path.clone(),
        }
    }

    /// Flushes and closes the temp file, if one is open.
    pub fn close_temp_file(&mut self) {
        if let Some(mut file) = self.temp_file.take() {
            // A failed flush leaves a shorter file; the output shown is unaffected.
            let _ = file.flush();
        }
    }

    /// Bytes of the last (unfinished) line.
    pub fn last_line_bytes(&self) -> usize {
        self.current_line_bytes
    }

    fn append_text(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        self.total_decoded_bytes += text.len();
        self.tail.push_str(text);
        if self.tail.len() > self.max_rolling_bytes * 2 {
            self.trim_tail();
        }
        match text.rfind('\n') {
            None => {
                self.current_line_bytes += text.len();
                self.has_open_line = true;
            }
            Some(last) => {
                self.completed_lines += text.bytes().filter(|&b| b == b'\n').count();
                self.current_line_bytes = text.len() - last - 1;
                self.has_open_line = self.current_line_bytes > 0;
            }
        }
    }

    /// Lines so far, as pi 1.6.0 counts them: a final newline opens no new line.
    fn total_lines(&self) -> usize {
        self.completed_lines + usize::from(self.has_open_line)
    }

    fn trim_tail(&mut self) {
        if self.tail.len() <= self.max_rolling_bytes {
            return;
        }
        let mut start = self.tail.len() - self.max_rolling_bytes;
        while !self.tail.is_char_boundary(start) {
            start += 1;
        }
        if start > 0 {
            self.tail_starts_at_line_boundary = self.tail.as_bytes()[start - 1] == b'\n';
        }
        self.tail.drain(..start);
    }

    fn snapshot_text(&self) -> &str {
        if self.tail_starts_at_line_boundary {
            return &self.tail;
        }
        match self.tail.find('\n') {
            Some(first) => &self.tail[first + 1..],
            None => &self.tail,
        }
    }

    fn needs_temp_file(&self) -> bool {
        self.total_raw_bytes > self.max_bytes
            || self.total_decoded_bytes > self.max_bytes
            || self.total_lines() > self.max_lines
    }

    fn ensure_temp_file(&mut self) {
        if self.temp_path.is_some() {
            return;
        }
        let Some((path, file)) = create_temp_file() else {
            return;
        };
        self.temp_path = Some(path);
        self.temp_file = Some(BufWriter::new(file));
        for chunk in std::mem::take(&mut self.raw_chunks) {
            self.write_temp(&chunk);
        }
    }

    fn write_temp(&mut self, data: &[u8]) {
        if let Some(file) = self.temp_file.as_mut()
            && file.write_all(data).is_err()
        {
            // Stop writing a file that cannot be written; its path stays reported.
            self.temp_file = None;
        }
    }
}

/// Creates `<temp dir>/pi-bash-<16 hex digits>.log`, never reusing an existing name.
fn create_temp_file() -> Option<(PathBuf, File)> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    for _ in 0..16 {
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
        hasher.write_u32(std::process::id());
        if let Ok(elapsed) = std::time::UNIX_EPOCH.elapsed() {
            hasher.write_u128(elapsed.as_nanos());
        }
        let name = format!("{TEMP_FILE_PREFIX}-{:016x}.log", hasher.finish());
        let path = std::env::temp_dir().join(name);
        let mut options = File::options();
        options.write(true).create_new(true);
        // The full output can hold secrets a command printed: readable by the user only.
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        match options.open(&path) {
            Ok(file) => return Some((path, file)),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(_) => return None,
        }
    }
    None
}

/// The `truncation` object of tool details (camelCase, as the UI reads it).
pub fn truncation_json(truncation: &Truncation) -> Value {
    json!({
        "content": truncation.content,
        "truncated": truncation.truncated(),
        "truncatedBy": truncation.truncated_by.map(TruncatedBy::as_str),
        "totalLines": truncation.total_lines,
        "totalBytes": truncation.total_bytes,
        "outputLines": truncation.output_lines,
        "outputBytes": truncation.output_bytes,
        "lastLinePartial": truncation.last_line_partial,
        "firstLineExceedsLimit": truncation.first_line_exceeds_limit,
        "maxLines": truncation.max_lines,
        "maxBytes": truncation.max_bytes,
    })
}

/// Details of a streamed update: the truncation when cut, and the full-output file if any.
pub fn update_details(snapshot: &OutputSnapshot) -> Value {
    let mut details = Map::new();
    if snapshot.truncation.truncated() {
        details.insert(
            "truncation".to_owned(),
            truncation_json(&snapshot.truncation),
        );
    }
    if let Some(path) = &snapshot.full_output_path {
        details.insert(
            "fullOutputPath".to_owned(),
            Value::String(path.display().to_string()),
        );
    }
    Value::Object(details)
}

/// The text shown for an output (`empty_text` when there is none), with a notice naming the
/// full-output file when the output was cut; details exist only for a cut output.
pub fn format_output(
    snapshot: &OutputSnapshot,
    last_line_bytes: usize,
    empty_text: &str,
) -> (String, Option<Value>) {
    let mut text = if snapshot.content.is_empty() {
        empty_text.to_owned()
    } else {
        snapshot.content.clone()
    };
    let truncation = &snapshot.truncation;
    if !truncation.truncated() {
        return (text, None);
    }
    let path = snapshot
        .full_output_path
        .as_ref()
        .map_or_else(|| "(unavailable)".to_owned(), |p| p.display().to_string());
    let end = truncation.total_lines;
    let start = (end + 1).saturating_sub(truncation.output_lines);
    let notice = if truncation.last_line_partial {
        format!(
            "[Showing last {} of line {end} (line is {}). Full output: {path}]",
            format_size(truncation.output_bytes),
            format_size(last_line_bytes),
        )
    } else if truncation.truncated_by == Some(TruncatedBy::Lines) {
        format!("[Showing lines {start}-{end} of {end}. Full output: {path}]")
    } else {
        format!(
            "[Showing lines {start}-{end} of {end} ({} limit). Full output: {path}]",
            format_size(DEFAULT_MAX_BYTES),
        )
    };
    text.push_str("\n\n");
    text.push_str(&notice);
    let mut details = Map::new();
    details.insert("truncation".to_owned(), truncation_json(truncation));
    if let Some(path) = &snapshot.full_output_path {
        details.insert(
            "fullOutputPath".to_owned(),
            Value::String(path.display().to_string()),
        );
    }
    (text, Some(Value::Object(details)))
}
