//! How pi 1.6.0's grep turns ripgrep's match and context lines into its output
//! (dist/core/tools/grep.js): the match limit with the last match's trailing context, and
//! the byte cap on stored lines (lines past it are counted, not kept).

use std::io;
use std::path::{Path, PathBuf};

use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};
use tokio_util::sync::CancellationToken;

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
    pub(crate) fn feed(
        &mut self,
        file: &Path,
        shown: &str,
        line: usize,
        text: &str,
        is_match: bool,
    ) {
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

/// The [`Sink`] feeding one file's match and context lines, as the searcher reports them
/// (each line once, windows merged, as ripgrep's `--context`), until the output is done.
/// Context comes from the searcher's own buffer: a matched file is never read whole.
pub(crate) struct Collector<'a> {
    out: &'a mut GrepLines,
    file: &'a Path,
    shown: &'a str,
    cancel: &'a CancellationToken,
}

impl<'a> Collector<'a> {
    pub(crate) fn new(
        out: &'a mut GrepLines,
        file: &'a Path,
        shown: &'a str,
        cancel: &'a CancellationToken,
    ) -> Self {
        Self {
            out,
            file,
            shown,
            cancel,
        }
    }

    fn take(&mut self, line: Option<u64>, bytes: &[u8], is_match: bool) -> bool {
        if self.cancel.is_cancelled() {
            return false;
        }
        let line = line.unwrap_or(0) as usize;
        let text = String::from_utf8_lossy(bytes);
        self.out.feed(self.file, self.shown, line, &text, is_match);
        !self.out.done
    }
}

impl Sink for Collector<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, mat: &SinkMatch<'_>) -> Result<bool, io::Error> {
        Ok(self.take(mat.line_number(), mat.bytes(), true))
    }

    fn context(
        &mut self,
        _searcher: &Searcher,
        context: &SinkContext<'_>,
    ) -> Result<bool, io::Error> {
        Ok(self.take(context.line_number(), context.bytes(), false))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Searches files of lines `l1`..`l10` for the given matching lines, as the tool does.
    fn run(context: usize, limit: usize, file_matches: &[(&str, &[usize])]) -> GrepLines {
        let dir = tempfile::tempdir().unwrap();
        let mut out = GrepLines::new(limit, context);
        let cancel = CancellationToken::new();
        let mut searcher = grep_searcher::SearcherBuilder::new()
            .line_number(true)
            .before_context(context)
            .after_context(context)
            .build();
        for (name, matches) in file_matches {
            let path = dir.path().join(name);
            let text: String = (1..=10).map(|n| format!("l{n}\n")).collect();
            std::fs::write(&path, text).unwrap();
            let alternatives: Vec<String> = matches.iter().map(|n| format!("^l{n}$")).collect();
            let matcher =
                grep_regex::RegexMatcher::new_line_matcher(&alternatives.join("|")).unwrap();
            let sink = Collector::new(&mut out, &path, name, &cancel);
            searcher.search_path(&matcher, &path, sink).unwrap();
            if out.done {
                break;
            }
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
