//! How pi 1.6.0's grep turns ripgrep's match and context lines into its output
//! (dist/core/tools/grep.js): each line once, context windows merged, the match limit
//! with the last match's trailing context, and the byte cap on stored lines.

use std::path::{Path, PathBuf};

use crate::tools::truncate::{DEFAULT_MAX_BYTES, GREP_MAX_LINE_LENGTH, truncate_line};

/// The output lines built from the match and context lines fed in, in order.
pub(crate) struct GrepLines {
    limit: usize,
    context: usize,
    matches: usize,
    limit_hit: bool,
    trailing_end: usize,
    last_file: Option<PathBuf>,
    /// A match came after the limit: there are more than `limit` matches.
    pub(crate) match_limit_reached: bool,
    /// Nothing more is taken; the search can stop.
    pub(crate) done: bool,
    /// The stored lines (only while the output is within the byte cap).
    pub(crate) output: Vec<String>,
    output_bytes: usize,
    output_line_count: usize,
    /// Some line was cut to `GREP_MAX_LINE_LENGTH` characters.
    pub(crate) lines_truncated: bool,
}

impl GrepLines {
    pub(crate) fn new(limit: usize, context: usize) -> Self {
        Self {
            limit,
            context,
            matches: 0,
            limit_hit: false,
            trailing_end: 0,
            last_file: None,
            match_limit_reached: false,
            done: false,
            output: Vec::new(),
            output_bytes: 0,
            output_line_count: 0,
            lines_truncated: false,
        }
    }

    /// How many matches were shown.
    pub(crate) fn matches(&self) -> usize {
        self.matches
    }

    /// Lines and bytes of the whole output, stored or not.
    pub(crate) fn totals(&self) -> (usize, usize) {
        (self.output_line_count, self.output_bytes.saturating_sub(1))
    }

    /// One line as ripgrep reports it: a match, or a context line around one.
    fn feed(&mut self, file: &Path, shown: &str, line: usize, text: &str, is_match: bool) {
        if self.done {
            return;
        }
        if !self.limit_hit {
            self.push(file, shown, line, text, is_match);
            if is_match {
                self.matches += 1;
                if self.matches >= self.limit {
                    self.limit_hit = true;
                    self.trailing_end = line + self.context;
                }
            }
            return;
        }
        let in_window = self.last_file.as_deref() == Some(file) && line <= self.trailing_end;
        if in_window {
            self.push(file, shown, line, text, false);
        }
        if is_match {
            self.match_limit_reached = true;
        }
        if self.match_limit_reached && !(in_window && line < self.trailing_end) {
            self.done = true;
        }
    }

    fn push(&mut self, file: &Path, shown: &str, line: usize, text: &str, is_match: bool) {
        self.last_file = Some(file.to_path_buf());
        let (text, cut) = truncate_line(strip_line_end(text), GREP_MAX_LINE_LENGTH);
        self.lines_truncated |= cut;
        let formatted = if is_match {
            format!("{shown}:{line}: {text}")
        } else {
            format!("{shown}-{line}- {text}")
        };
        let size = formatted.len() + 1;
        if self.output_bytes <= DEFAULT_MAX_BYTES + 1 {
            self.output.push(formatted);
        }
        self.output_bytes += size;
        self.output_line_count += 1;
    }
}

/// A line without its ending, as pi strips it (`/\r?\n?$/`).
fn strip_line_end(text: &str) -> &str {
    text.strip_suffix("\r\n")
        .or_else(|| text.strip_suffix('\n'))
        .or_else(|| text.strip_suffix('\r'))
        .unwrap_or(text)
}

/// One file's matches, fed in order with the context lines ripgrep would print around
/// them (each line once).
pub(crate) struct FileLines<'a> {
    out: &'a mut GrepLines,
    file: &'a Path,
    shown: &'a str,
    /// The file's lines, read at the first match when context is asked for.
    lines: Option<Vec<String>>,
    /// The last line fed (0 before the first).
    fed_upto: usize,
    last_match: Option<usize>,
}

impl<'a> FileLines<'a> {
    pub(crate) fn new(out: &'a mut GrepLines, file: &'a Path, shown: &'a str) -> Self {
        Self {
            out,
            file,
            shown,
            lines: None,
            fed_upto: 0,
            last_match: None,
        }
    }

    /// Whether the search can stop.
    pub(crate) fn done(&self) -> bool {
        self.out.done
    }

    /// A matching line (`text` as the searcher gives it, line ending included).
    pub(crate) fn matched(&mut self, line: usize, text: &str) {
        let context = self.out.context;
        if context > 0 && self.lines.is_none() {
            self.lines = Some(read_lines(self.file));
        }
        self.after_context(line.saturating_sub(1));
        self.context_lines(line.saturating_sub(context).max(1), line.saturating_sub(1));
        self.out.feed(self.file, self.shown, line, text, true);
        self.fed_upto = line;
        self.last_match = Some(line);
    }

    /// The context after the last match, once the file has no more matches.
    pub(crate) fn finish(&mut self) {
        self.after_context(self.line_count());
    }

    fn line_count(&self) -> usize {
        self.lines.as_ref().map_or(0, Vec::len)
    }

    /// The trailing context of the last match, up to line `until`.
    fn after_context(&mut self, until: usize) {
        if let Some(last) = self.last_match {
            let end = until.min(last + self.out.context).min(self.line_count());
            self.context_lines(self.fed_upto + 1, end);
        }
    }

    fn context_lines(&mut self, from: usize, to: usize) {
        for line in from.max(self.fed_upto + 1)..=to {
            let text = self
                .lines
                .as_ref()
                .and_then(|lines| lines.get(line - 1))
                .map_or("", String::as_str);
            self.out.feed(self.file, self.shown, line, text, false);
            self.fed_upto = line;
        }
    }
}

/// A file's lines as ripgrep numbers them (`\n` ends a line; a final one starts none);
/// empty if unreadable.
fn read_lines(file: &Path) -> Vec<String> {
    let Ok(bytes) = std::fs::read(file) else {
        return Vec::new();
    };
    if bytes.is_empty() {
        return Vec::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let text = text.strip_suffix('\n').unwrap_or(&text);
    text.split('\n').map(str::to_owned).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(context: usize, limit: usize, file_matches: &[(&str, &[usize])]) -> GrepLines {
        let dir = tempfile::tempdir().unwrap();
        let mut out = GrepLines::new(limit, context);
        for (name, matches) in file_matches {
            let path = dir.path().join(name);
            let text: String = (1..=10).map(|n| format!("l{n}\n")).collect();
            std::fs::write(&path, text).unwrap();
            let mut file = FileLines::new(&mut out, &path, name);
            for &line in *matches {
                file.matched(line, &format!("l{line}\n"));
            }
            file.finish();
        }
        out
    }

    #[test]
    fn windows_merge_and_stop_at_the_end_of_the_file() {
        let out = run(1, 100, &[("a", &[2, 3, 10])]);
        assert_eq!(
            out.output,
            [
                "a-1- l1",
                "a:2: l2",
                "a:3: l3",
                "a-4- l4",
                "a-9- l9",
                "a:10: l10"
            ]
        );
        assert!(!out.match_limit_reached);
    }

    #[test]
    fn the_limit_is_reached_only_when_another_match_follows() {
        let exact = run(0, 2, &[("a", &[1, 5])]);
        assert!(!exact.match_limit_reached);
        let more = run(0, 2, &[("a", &[1]), ("b", &[4, 7])]);
        assert_eq!(more.output, ["a:1: l1", "b:4: l4"]);
        assert!(more.match_limit_reached && more.done);
        // The last match keeps its trailing context, a match in it shown as context.
        let window = run(2, 1, &[("a", &[3, 4, 9])]);
        assert_eq!(
            window.output,
            ["a-1- l1", "a-2- l2", "a:3: l3", "a-4- l4", "a-5- l5"]
        );
        assert!(window.match_limit_reached);
    }
}
