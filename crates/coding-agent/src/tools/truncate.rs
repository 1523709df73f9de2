//! Output truncation shared by the tools: a line limit and a byte limit, whichever is hit
//! first; never a partial line (except one over-long final line in tail mode).

/// Default line limit.
pub const DEFAULT_MAX_LINES: usize = 2000;
/// Default byte limit (50 KB).
pub const DEFAULT_MAX_BYTES: usize = 50 * 1024;
/// Longest grep match line, in characters.
pub const GREP_MAX_LINE_LENGTH: usize = 500;

/// Which limit cut the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TruncatedBy {
    Lines,
    Bytes,
}

impl TruncatedBy {
    /// `"lines"` or `"bytes"`, as in tool details.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Lines => "lines",
            Self::Bytes => "bytes",
        }
    }
}

/// The outcome of a truncation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    pub content: String,
    pub truncated_by: Option<TruncatedBy>,
    pub total_lines: usize,
    pub total_bytes: usize,
    pub output_lines: usize,
    pub output_bytes: usize,
    /// Tail mode: the only kept line was cut at its start.
    pub last_line_partial: bool,
    /// Head mode: the first line alone is over the byte limit (nothing was kept).
    pub first_line_exceeds_limit: bool,
    pub max_lines: usize,
    pub max_bytes: usize,
}

impl Truncation {
    /// Whether anything was cut.
    pub fn truncated(&self) -> bool {
        self.truncated_by.is_some()
    }

    fn untouched(content: &str, lines: usize, max_lines: usize, max_bytes: usize) -> Self {
        Self {
            content: content.to_owned(),
            truncated_by: None,
            total_lines: lines,
            total_bytes: content.len(),
            output_lines: lines,
            output_bytes: content.len(),
            last_line_partial: false,
            first_line_exceeds_limit: false,
            max_lines,
            max_bytes,
        }
    }
}

/// The lines of `content` as pi 1.6.0 counts them (`splitLinesForCounting`): none for an
/// empty text, and a final newline ends the last line rather than starting another.
fn lines_for_counting(content: &str) -> Vec<&str> {
    if content.is_empty() {
        return Vec::new();
    }
    let mut lines: Vec<&str> = content.split('\n').collect();
    if content.ends_with('\n') {
        lines.pop();
    }
    lines
}

/// `512B`, `1.5KB`, `2.0MB`.
pub fn format_size(bytes: usize) -> String {
    if bytes < 1024 {
        format!("{bytes}B")
    } else if bytes < 1024 * 1024 {
        format!("{:.1}KB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1}MB", bytes as f64 / (1024.0 * 1024.0))
    }
}

/// Keeps the first lines (file reads).
pub fn truncate_head(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines = lines_for_counting(content);
    if lines.len() <= max_lines && content.len() <= max_bytes {
        return Truncation::untouched(content, lines.len(), max_lines, max_bytes);
    }
    let mut result = Truncation::untouched("", lines.len(), max_lines, max_bytes);
    result.total_bytes = content.len();
    if lines.first().is_some_and(|first| first.len() > max_bytes) {
        result.truncated_by = Some(TruncatedBy::Bytes);
        result.output_lines = 0;
        result.output_bytes = 0;
        result.first_line_exceeds_limit = true;
        return result;
    }
    let mut kept = 0;
    let mut bytes = 0;
    let mut by = TruncatedBy::Lines;
    for (i, line) in lines.iter().enumerate().take(max_lines) {
        let cost = line.len() + usize::from(i > 0);
        if bytes + cost > max_bytes {
            by = TruncatedBy::Bytes;
            break;
        }
        kept += 1;
        bytes += cost;
    }
    if kept >= max_lines && bytes <= max_bytes {
        by = TruncatedBy::Lines;
    }
    result.content = lines[..kept].join("\n");
    result.truncated_by = Some(by);
    result.output_lines = kept;
    result.output_bytes = result.content.len();
    result
}

/// Keeps the last lines (command output); one over-long last line keeps its end.
pub fn truncate_tail(content: &str, max_lines: usize, max_bytes: usize) -> Truncation {
    let lines = lines_for_counting(content);
    if lines.len() <= max_lines && content.len() <= max_bytes {
        return Truncation::untouched(content, lines.len(), max_lines, max_bytes);
    }
    let mut result = Truncation::untouched("", lines.len(), max_lines, max_bytes);
    result.total_bytes = content.len();
    let mut kept: Vec<&str> = Vec::new();
    let mut partial: Option<String> = None;
    let mut bytes = 0;
    let mut by = TruncatedBy::Lines;
    for line in lines.iter().rev() {
        if kept.len() >= max_lines {
            break;
        }
        let cost = line.len() + usize::from(!kept.is_empty());
        if bytes + cost > max_bytes {
            by = TruncatedBy::Bytes;
            if kept.is_empty() {
                let end = tail_bytes(line, max_bytes);
                bytes = end.len();
                partial = Some(end.to_owned());
                result.last_line_partial = true;
            }
            break;
        }
        kept.push(line);
        bytes += cost;
    }
    let output_lines = kept.len() + usize::from(partial.is_some());
    if output_lines >= max_lines && bytes <= max_bytes {
        by = TruncatedBy::Lines;
    }
    kept.reverse();
    result.content = match partial {
        Some(line) => line,
        None => kept.join("\n"),
    };
    result.truncated_by = Some(by);
    result.output_lines = output_lines;
    result.output_bytes = result.content.len();
    result
}

/// The longest suffix of `text` within `max_bytes`, starting on a character boundary.
fn tail_bytes(text: &str, max_bytes: usize) -> &str {
    if text.len() <= max_bytes {
        return text;
    }
    let mut start = text.len() - max_bytes;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

/// Cuts a line to `max_chars` characters with a `... [truncated]` suffix.
pub fn truncate_line(line: &str, max_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        None => (line.to_owned(), false),
        Some((cut, _)) => (format!("{}... [truncated]", &line[..cut]), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_keeps_whole_lines_within_both_limits() {
        let text = "a\nbb\nccc\ndddd";
        let t = truncate_head(text, 2, 1000);
        assert_eq!(
            (t.content.as_str(), t.truncated_by),
            ("a\nbb", Some(TruncatedBy::Lines))
        );
        let t = truncate_head(text, 10, 6);
        assert_eq!(
            (t.content.as_str(), t.truncated_by),
            ("a\nbb", Some(TruncatedBy::Bytes))
        );
        assert_eq!((t.total_lines, t.output_lines), (4, 2));
        let t = truncate_head("x".repeat(20).as_str(), 10, 5);
        assert!(t.first_line_exceeds_limit && t.content.is_empty());
        assert!(!truncate_head(text, 4, 100).truncated());
    }

    #[test]
    fn tail_keeps_the_end_and_cuts_an_overlong_last_line_on_a_char_boundary() {
        let t = truncate_tail("1\n2\n3\n4", 2, 1000);
        assert_eq!(t.content, "3\n4");
        let t = truncate_tail("first\nééééé", 10, 5);
        assert!(t.last_line_partial);
        assert_eq!(t.content, "éé");
        assert_eq!(t.truncated_by, Some(TruncatedBy::Bytes));
    }

    #[test]
    fn a_final_newline_starts_no_line_as_in_pi_16() {
        let t = truncate_tail("1\n2\n3\n", 2, 1000);
        assert_eq!((t.content.as_str(), t.total_lines), ("2\n3", 3));
        let t = truncate_head("1\n2\n3\n", 2, 1000);
        assert_eq!((t.content.as_str(), t.total_lines), ("1\n2", 3));
        let t = truncate_head("1\n2\n", 2, 1000);
        assert!(!t.truncated());
        assert_eq!((t.content.as_str(), t.total_lines), ("1\n2\n", 2));
        assert_eq!(truncate_tail("", 2, 10).total_lines, 0);
    }

    #[test]
    fn sizes_and_lines() {
        assert_eq!(format_size(512), "512B");
        assert_eq!(format_size(1536), "1.5KB");
        assert_eq!(format_size(3 * 1024 * 1024), "3.0MB");
        assert_eq!(
            truncate_line("abcdef", 3),
            ("abc... [truncated]".to_owned(), true)
        );
        assert_eq!(truncate_line("ab", 3), ("ab".to_owned(), false));
    }
}
