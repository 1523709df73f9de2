//! The line diff the edit tool puts in its details: changed lines prefixed with `-`/`+`,
//! a few numbered context lines around each change, and ` ...` where lines are skipped.
//!
//! Each line reads `<sign><number> <text>`, the number right-aligned to the width of the
//! longer file's line count; removed and context lines carry old line numbers, added lines
//! new ones.

use similar::{DiffTag, TextDiff};

/// Context lines shown before and after each change.
pub const DEFAULT_CONTEXT_LINES: usize = 4;

/// A rendered diff and the first line (1-based, in the new text) that changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditDiff {
    /// The rendered diff, lines joined with `\n`.
    pub diff: String,
    /// The first changed line in the new text, if anything changed.
    pub first_changed_line: Option<usize>,
    /// The unified patch (pi 1.6.0's `details.patch`), where the caller made one.
    pub patch: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Same,
    Removed,
    Added,
}

/// Runs of lines (without their `\n`) of one kind; within a changed region removed lines
/// come before added ones.
fn diff_parts<'a>(old: &'a str, new: &'a str) -> Vec<(Kind, Vec<&'a str>)> {
    let diff = TextDiff::from_lines(old, new);
    let strip = |line: &&'a str| -> &'a str { line.strip_suffix('\n').unwrap_or(line) };
    let mut parts: Vec<(Kind, Vec<&'a str>)> = Vec::new();
    let mut removed: Vec<&'a str> = Vec::new();
    let mut added: Vec<&'a str> = Vec::new();

    let flush = |parts: &mut Vec<(Kind, Vec<&'a str>)>,
                 removed: &mut Vec<&'a str>,
                 added: &mut Vec<&'a str>| {
        if !removed.is_empty() {
            parts.push((Kind::Removed, std::mem::take(removed)));
        }
        if !added.is_empty() {
            parts.push((Kind::Added, std::mem::take(added)));
        }
    };

    for op in diff.ops() {
        let (tag, old_range, new_range) = op.as_tag_tuple();
        let old_lines = diff.old_slices()[old_range].iter().map(strip);
        let new_lines = diff.new_slices()[new_range].iter().map(strip);
        match tag {
            DiffTag::Equal => {
                flush(&mut parts, &mut removed, &mut added);
                parts.push((Kind::Same, old_lines.collect()));
            }
            DiffTag::Delete => removed.extend(old_lines),
            DiffTag::Insert => added.extend(new_lines),
            DiffTag::Replace => {
                removed.extend(old_lines);
                added.extend(new_lines);
            }
        }
    }
    flush(&mut parts, &mut removed, &mut added);
    parts
}

/// Renders the diff between two `\n`-separated texts with `context_lines` of context.
pub fn generate_diff_string(old: &str, new: &str, context_lines: usize) -> EditDiff {
    let parts = diff_parts(old, new);
    let line_count = old.split('\n').count().max(new.split('\n').count());
    let width = line_count.to_string().len();
    let gap = format!(" {} ...", " ".repeat(width));

    let mut output: Vec<String> = Vec::new();
    let mut old_line = 1;
    let mut new_line = 1;
    let mut last_was_change = false;
    let mut first_changed_line = None;

    for (i, (kind, lines)) in parts.iter().enumerate() {
        match kind {
            Kind::Removed | Kind::Added => {
                first_changed_line.get_or_insert(new_line);
                for line in lines {
                    if *kind == Kind::Added {
                        output.push(format!("+{new_line:>width$} {line}"));
                        new_line += 1;
                    } else {
                        output.push(format!("-{old_line:>width$} {line}"));
                        old_line += 1;
                    }
                }
                last_was_change = true;
            }
            Kind::Same => {
                let next_is_change = parts
                    .get(i + 1)
                    .is_some_and(|(next, _)| *next != Kind::Same);
                let total = lines.len();
                // Which lines to show: a head after a change, a tail before the next one.
                let (head, tail) = match (last_was_change, next_is_change) {
                    (true, true) if total <= context_lines * 2 => (total, 0),
                    (true, true) => (context_lines, context_lines),
                    (true, false) => (context_lines.min(total), 0),
                    (false, true) => (0, context_lines.min(total)),
                    (false, false) => (0, 0),
                };
                for line in &lines[..head] {
                    output.push(format!(" {old_line:>width$} {line}"));
                    old_line += 1;
                    new_line += 1;
                }
                let skipped = total - head - tail;
                if skipped > 0 {
                    if last_was_change || next_is_change {
                        output.push(gap.clone());
                    }
                    old_line += skipped;
                    new_line += skipped;
                }
                for line in &lines[total - tail..] {
                    output.push(format!(" {old_line:>width$} {line}"));
                    old_line += 1;
                    new_line += 1;
                }
                last_was_change = false;
            }
        }
    }

    EditDiff {
        diff: output.join("\n"),
        first_changed_line,
        patch: None,
    }
}

/// The standard unified patch of an edit (pi 1.6.0's `details.patch`, jsdiff's
/// `formatPatch` with file headers only): `--- path` / `+++ path`, then hunks with
/// `context_lines` of context, each header with both counts (`@@ -3,1 +3,1 @@`), and
/// `\ No newline at end of file` after a last line without one.
pub fn unified_patch(path: &str, old: &str, new: &str, context_lines: usize) -> String {
    let diff = TextDiff::from_lines(old, new);
    let mut out = format!("--- {path}\n+++ {path}\n");
    for group in diff.grouped_ops(context_lines) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        // An empty side counts from the line before it, as jsdiff does.
        let start = |range: &std::ops::Range<usize>| {
            if range.is_empty() {
                range.start
            } else {
                range.start + 1
            }
        };
        out.push_str(&format!(
            "@@ -{},{} +{},{} @@\n",
            start(&old_range),
            old_range.len(),
            start(&new_range),
            new_range.len()
        ));
        for op in &group {
            for change in diff.iter_changes(op) {
                let sign = match change.tag() {
                    similar::ChangeTag::Equal => ' ',
                    similar::ChangeTag::Delete => '-',
                    similar::ChangeTag::Insert => '+',
                };
                let text = change.value();
                out.push(sign);
                out.push_str(text.strip_suffix('\n').unwrap_or(text));
                out.push('\n');
                if !text.ends_with('\n') {
                    out.push_str("\\ No newline at end of file\n");
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::unified_patch;

    /// The expected patches are jsdiff 8's `formatPatch(structuredPatch(…, {context: 4}),
    /// FILE_HEADERS_ONLY)` for the same texts, as pi 1.6.0 builds `details.patch`.
    #[test]
    fn unified_patch_matches_jsdiff() {
        let cases = [
            (
                "one\ntwo\nthree\nfour\nfive\n",
                "one\nTWO\nthree\nfour\nfive\n",
                "--- f.txt\n+++ f.txt\n@@ -1,5 +1,5 @@\n one\n-two\n+TWO\n three\n four\n five\n",
            ),
            (
                "a\nb",
                "a\nc",
                "--- f.txt\n+++ f.txt\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n",
            ),
            (
                "a\n",
                "a\nb\n",
                "--- f.txt\n+++ f.txt\n@@ -1,1 +1,2 @@\n a\n+b\n",
            ),
            ("x\n", "", "--- f.txt\n+++ f.txt\n@@ -1,1 +0,0 @@\n-x\n"),
            (
                "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n",
                "1\n2x\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14x\n15\n",
                "--- f.txt\n+++ f.txt\n@@ -1,6 +1,6 @@\n 1\n-2\n+2x\n 3\n 4\n 5\n 6\n@@ -10,6 +10,6 @@\n 10\n 11\n 12\n 13\n-14\n+14x\n 15\n",
            ),
        ];
        for (old, new, expected) in cases {
            assert_eq!(
                unified_patch("f.txt", old, new, 4),
                expected,
                "{old:?} -> {new:?}"
            );
        }
    }
}
