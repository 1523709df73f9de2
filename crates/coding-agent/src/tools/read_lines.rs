//! The lines a `read` call selects, taken from a file streamed in chunks as pi 1.6.0 does
//! (dist/core/tools/read.js `selectLinesFromStream`): only lines the output can show are
//! kept, the rest are counted, so memory does not grow with the file.

use std::io::{self, Read};

use tokio_util::sync::CancellationToken;

use crate::tools::truncate::{DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, Truncation, truncate_head};

/// The selected lines of a file, truncated for the output, with the file's line count.
pub(crate) struct Selection {
    /// Lines in the whole file (`split("\n").length`).
    pub total_file_lines: usize,
    pub truncation: Truncation,
    /// Size of the first selected line; used only when it alone is over the byte limit.
    pub first_line_bytes: usize,
}

/// Whether a range can be streamed: whole-number offset and limit, the limit not negative.
/// Other values keep pi's whole-file path, whose array slicing defines what they select.
pub(crate) fn is_streamable(offset: Option<f64>, limit: Option<f64>) -> bool {
    offset.is_none_or(|o| o.is_finite() && o.fract() == 0.0)
        && limit.is_none_or(|l| l.is_finite() && l.fract() == 0.0 && l >= 0.0)
}

/// Selects lines from the whole text in memory, as pi's `allLines.slice(start, start + limit)`
/// does (JavaScript slicing: fractions truncate, a negative end counts from the end).
pub(crate) fn select_from_text(text: &str, start: f64, limit: Option<f64>) -> Selection {
    let lines: Vec<&str> = text.split('\n').collect();
    let len = lines.len();
    let from = js_slice_index(start, len);
    let to = limit.map_or(len, |l| js_slice_index((start + l).min(len as f64), len));
    let selected = if from < to { &lines[from..to] } else { &[][..] };
    let truncation = truncate_head(&selected.join("\n"), DEFAULT_MAX_LINES, DEFAULT_MAX_BYTES);
    let first_line_bytes = if truncation.first_line_exceeds_limit {
        lines.get(from).map_or(0, |l| l.len())
    } else {
        0
    };
    Selection {
        total_file_lines: len,
        truncation,
        first_line_bytes,
    }
}

/// An `Array.prototype.slice` bound: truncated toward zero, negative from the end, clamped.
fn js_slice_index(n: f64, len: usize) -> usize {
    if n.is_nan() {
        return 0;
    }
    let n = n.trunc();
    if n < 0.0 {
        (len as f64 + n).max(0.0) as usize
    } else {
        n.min(len as f64) as usize
    }
}

/// Selects lines from `reader` read in chunks; `Operation aborted` once `cancel` fires.
pub(crate) fn select_from_stream(
    reader: impl Read,
    start_line: usize,
    limit: Option<usize>,
    cancel: &CancellationToken,
) -> io::Result<Selection> {
    let end_line = limit.map_or(usize::MAX, |l| start_line.saturating_add(l));
    let mut state = StreamSelect::new(start_line, end_line);
    let mut decoder = LossyDecoder::default();
    let mut reader = reader;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        if cancel.is_cancelled() {
            return Err(io::Error::other("Operation aborted"));
        }
        let n = match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let text = decoder.decode(&buf[..n]);
        state.select(&text);
    }
    let rest = decoder.finish();
    state.select(&rest);
    Ok(state.finish())
}

/// The running selection: stored lines while they can still be shown, counts for the rest.
struct StreamSelect {
    start_line: usize,
    end_line: usize,
    stored: Vec<String>,
    stored_bytes: usize,
    stored_past_caps: bool,
    line: usize,
    selected_lines: usize,
    selected_bytes: usize,
    first_line_bytes: usize,
    last_line_empty: bool,
    /// The selected line being read, while it is stored.
    pieces: Option<String>,
    line_bytes: usize,
    line_has_text: bool,
}

impl StreamSelect {
    fn new(start_line: usize, end_line: usize) -> Self {
        Self {
            start_line,
            end_line,
            stored: Vec::new(),
            stored_bytes: 0,
            stored_past_caps: false,
            line: 0,
            selected_lines: 0,
            selected_bytes: 0,
            first_line_bytes: 0,
            last_line_empty: true,
            pieces: Some(String::new()),
            line_bytes: 0,
            line_has_text: false,
        }
    }

    fn selected(&self) -> bool {
        self.line >= self.start_line && self.line < self.end_line
    }

    /// Part of the current line; a line over the byte cap stops growing (it is never shown).
    fn append(&mut self, piece: &str) {
        self.line_has_text = true;
        if let Some(pieces) = &mut self.pieces
            && self.line_bytes <= DEFAULT_MAX_BYTES
        {
            pieces.push_str(piece);
        }
        self.line_bytes += piece.len();
    }

    fn finish_line(&mut self) {
        if let Some(text) = self.pieces.take() {
            if self.selected_lines == 0 {
                self.first_line_bytes = self.line_bytes;
            }
            // One line past the caps is kept: truncation ignores a trailing empty line, so
            // the line after the cap decides truncation as it would for the full text.
            if self.stored.len() > DEFAULT_MAX_LINES || self.stored_bytes > DEFAULT_MAX_BYTES {
                self.stored_past_caps = true;
            }
            self.stored_bytes += text.len() + usize::from(!self.stored.is_empty());
            self.stored.push(text);
        }
        self.selected_lines += 1;
        self.last_line_empty = !self.line_has_text;
        self.pieces = (!self.stored_past_caps).then(String::new);
        self.line_bytes = 0;
        self.line_has_text = false;
    }

    fn select(&mut self, text: &str) {
        let mut position = 0;
        let mut selection_start: Option<usize> = None;
        loop {
            let selected = self.selected();
            if selected && selection_start.is_none() {
                selection_start = Some(position);
            }
            let newline = text[position..].find('\n').map(|i| position + i);
            let end = newline.unwrap_or(text.len());
            if selected && end > position {
                self.append(&text[position..end]);
            }
            let Some(newline) = newline else { break };
            if selected {
                self.finish_line();
                if self.line + 1 == self.end_line
                    && let Some(start) = selection_start.take()
                {
                    self.selected_bytes += newline - start;
                }
            }
            self.line += 1;
            position = newline + 1;
        }
        if let Some(start) = selection_start {
            self.selected_bytes += text.len() - start;
        }
    }

    fn finish(mut self) -> Selection {
        if self.selected() {
            self.finish_line();
        }
        let mut truncation = truncate_head(
            &self.stored.join("\n"),
            DEFAULT_MAX_LINES,
            DEFAULT_MAX_BYTES,
        );
        truncation.total_lines = if self.selected_bytes == 0 {
            0
        } else {
            self.selected_lines - usize::from(self.last_line_empty)
        };
        truncation.total_bytes = self.selected_bytes;
        Selection {
            total_file_lines: self.line + 1,
            truncation,
            first_line_bytes: self.first_line_bytes,
        }
    }
}

/// UTF-8 decoding across chunk boundaries; invalid bytes become U+FFFD as a whole-file
/// lossy decode would make them.
#[derive(Default)]
struct LossyDecoder {
    /// The start of a character cut by the chunk's end.
    carry: Vec<u8>,
}

impl LossyDecoder {
    fn decode(&mut self, chunk: &[u8]) -> String {
        let mut bytes = std::mem::take(&mut self.carry);
        bytes.extend_from_slice(chunk);
        let mut out = String::with_capacity(bytes.len());
        let mut rest = &bytes[..];
        loop {
            match std::str::from_utf8(rest) {
                Ok(valid) => {
                    out.push_str(valid);
                    break;
                }
                Err(error) => {
                    let (valid, after) = rest.split_at(error.valid_up_to());
                    // Checked valid by from_utf8 up to here.
                    out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                    match error.error_len() {
                        Some(len) => {
                            out.push(char::REPLACEMENT_CHARACTER);
                            rest = &after[len..];
                        }
                        None => {
                            self.carry = after.to_vec();
                            break;
                        }
                    }
                }
            }
        }
        out
    }

    /// What is left at the end: an incomplete character is one replacement.
    fn finish(&mut self) -> String {
        if self.carry.is_empty() {
            String::new()
        } else {
            self.carry.clear();
            char::REPLACEMENT_CHARACTER.to_string()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Streams `text` in chunks of `chunk` bytes.
    fn stream(text: &[u8], chunk: usize, start: usize, limit: Option<usize>) -> Selection {
        struct Chunks<'a>(&'a [u8], usize);
        impl Read for Chunks<'_> {
            fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
                let n = self.0.len().min(self.1).min(buf.len());
                buf[..n].copy_from_slice(&self.0[..n]);
                self.0 = &self.0[n..];
                Ok(n)
            }
        }
        select_from_stream(Chunks(text, chunk), start, limit, &CancellationToken::new()).unwrap()
    }

    fn same(a: &Selection, b: &Selection) {
        assert_eq!(a.total_file_lines, b.total_file_lines);
        let (x, y) = (&a.truncation, &b.truncation);
        // The size of the first line is used (and measured by both) only when it is too long.
        if x.first_line_exceeds_limit {
            assert_eq!(a.first_line_bytes, b.first_line_bytes);
        }
        assert_eq!(x.content, y.content);
        assert_eq!(x.truncated_by, y.truncated_by);
        assert_eq!(
            (x.total_lines, x.total_bytes),
            (y.total_lines, y.total_bytes)
        );
        assert_eq!(
            (x.output_lines, x.output_bytes),
            (y.output_lines, y.output_bytes)
        );
        assert_eq!(x.first_line_exceeds_limit, y.first_line_exceeds_limit);
    }

    #[test]
    fn streaming_selects_what_the_whole_text_selects() {
        let long_line = "x".repeat(DEFAULT_MAX_BYTES + 10);
        let many: String = (1..=2500).map(|n| format!("line {n}\n")).collect();
        let texts = [
            "".to_owned(),
            "a".to_owned(),
            "a\n".to_owned(),
            "a\nb\n\n".to_owned(),
            "é€😀\nsecond\nthird".to_owned(),
            format!("{long_line}\nshort\n"),
            format!("short\n{long_line}\nafter"),
            many.clone(),
            many.trim_end().to_owned(),
        ];
        for text in &texts {
            for (start, limit) in [
                (0, None),
                (1, None),
                (0, Some(0)),
                (1, Some(2)),
                (2000, Some(600)),
            ] {
                let whole = select_from_text(text, start as f64, limit.map(|l| l as f64));
                for chunk in [1, 3, 7, 4096] {
                    same(&stream(text.as_bytes(), chunk, start, limit), &whole);
                }
            }
        }
    }

    #[test]
    fn invalid_utf8_decodes_as_a_whole_file_would() {
        let bytes = b"ok \xff\xfe\ncut \xe2\x82\nend \xf0\x9f";
        let whole = String::from_utf8_lossy(bytes);
        for chunk in [1, 2, 5] {
            let mut decoder = LossyDecoder::default();
            let mut text: String = bytes.chunks(chunk).map(|c| decoder.decode(c)).collect();
            text.push_str(&decoder.finish());
            assert_eq!(text, whole);
        }
    }

    #[test]
    fn unusual_ranges_slice_as_javascript_does() {
        let text = "a\nb\nc\nd";
        // limit -1 from the start: every line but the last.
        assert_eq!(
            select_from_text(text, 0.0, Some(-1.0)).truncation.content,
            "a\nb\nc"
        );
        assert_eq!(
            select_from_text(text, 1.5, Some(2.0)).truncation.content,
            "b\nc"
        );
        assert_eq!(
            select_from_text(text, 1.0, Some(1.5)).truncation.content,
            "b"
        );
    }

    #[test]
    fn ranges_with_fractions_or_negative_limits_are_not_streamed() {
        assert!(is_streamable(None, None));
        assert!(is_streamable(Some(3.0), Some(0.0)));
        assert!(!is_streamable(Some(2.5), None));
        assert!(!is_streamable(None, Some(-1.0)));
    }
}
