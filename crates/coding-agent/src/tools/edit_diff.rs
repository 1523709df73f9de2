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
    }
}
