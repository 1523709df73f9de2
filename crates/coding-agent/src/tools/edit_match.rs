//! Finding where each `edits[].oldText` sits in a file.
//!
//! The search runs on the file with line endings folded to `\n` and the BOM removed: an
//! exact search first, then a tolerant one over a normalized copy (NFKC, trailing
//! whitespace dropped per line, typographic quotes, dashes and spaces folded to ASCII).
//! Every character of the normalized copy remembers the byte range of the text it came
//! from, so a tolerant match maps back to the exact bytes of the original; only those
//! bytes are ever replaced and the rest of the file is left as it was.

use std::ops::Range;

use unicode_normalization::char::{canonical_combining_class, compose, decompose_compatible};

/// One replacement the model asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edit {
    /// The text to find; it must occur exactly once.
    pub old_text: String,
    /// The text to put in its place.
    pub new_text: String,
}

/// A located edit: the byte range it replaces in the `\n`-only text, and the replacement
/// (with `\n` line endings).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Replacement {
    /// Index of the edit in the call's `edits` array.
    pub edit_index: usize,
    /// Bytes of the searched text this edit replaces.
    pub range: Range<usize>,
    /// The replacement text.
    pub new_text: String,
}

/// `"\r\n"` when the first line break of `content` is CRLF, `"\n"` otherwise.
pub fn detect_line_ending(content: &str) -> &'static str {
    match content.find('\n') {
        Some(i) if i > 0 && content.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// Turns CRLF and lone CR line breaks into LF.
pub fn normalize_to_lf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n")
}

/// A text with `\n`-only line breaks that can map its offsets back to the text it was
/// made from.
#[derive(Debug, Clone)]
pub struct LfText {
    /// The text with CRLF and lone CR turned into LF.
    pub text: String,
    /// Offsets (in `text`) of the `\n`s that stand for a CRLF pair.
    folded: Vec<usize>,
}

impl LfText {
    /// Folds the line breaks of `raw`.
    pub fn new(raw: &str) -> Self {
        let mut text = String::with_capacity(raw.len());
        let mut folded = Vec::new();
        let mut chars = raw.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\r' {
                if chars.peek() == Some(&'\n') {
                    folded.push(text.len());
                } else {
                    text.push('\n');
                }
            } else {
                text.push(c);
            }
        }
        Self { text, folded }
    }

    /// The offset in the original text of `offset` in [`LfText::text`]; an offset at a
    /// folded `\n` lands on its `\r`.
    pub fn to_raw(&self, offset: usize) -> usize {
        offset + self.folded.partition_point(|&f| f < offset)
    }
}

/// One character of a normalized text and the source bytes it stands for.
#[derive(Debug, Clone, Copy)]
struct Unit {
    ch: char,
    start: usize,
    end: usize,
}

/// NFKC of `text`, computed character by character so each output character carries the
/// byte range of the input it was made from (a composed character spans all its parts).
fn nfkc_units(text: &str) -> Vec<Unit> {
    let mut decomposed = Vec::with_capacity(text.len());
    for (start, c) in text.char_indices() {
        let end = start + c.len_utf8();
        decompose_compatible(c, |ch| decomposed.push(Unit { ch, start, end }));
    }

    // Canonical ordering: each run of non-starters sorted (stably) by combining class.
    let mut i = 0;
    while i < decomposed.len() {
        if canonical_combining_class(decomposed[i].ch) == 0 {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < decomposed.len() && canonical_combining_class(decomposed[j].ch) != 0 {
            j += 1;
        }
        decomposed[i..j].sort_by_key(|u| canonical_combining_class(u.ch));
        i = j;
    }

    // Canonical composition.
    let mut out: Vec<Unit> = Vec::with_capacity(decomposed.len());
    let mut starter: Option<usize> = None;
    let mut last_class: Option<u8> = None;
    for unit in decomposed {
        let class = canonical_combining_class(unit.ch);
        let blocked = matches!(last_class, Some(last) if last == 0 || last >= class);
        if let Some(base) = starter.filter(|_| !blocked).and_then(|s| out.get_mut(s))
            && let Some(composed) = compose(base.ch, unit.ch)
        {
            base.ch = composed;
            base.start = base.start.min(unit.start);
            base.end = base.end.max(unit.end);
            continue;
        }
        if class == 0 {
            starter = Some(out.len());
            last_class = None;
        } else {
            last_class = Some(class);
        }
        out.push(unit);
    }
    out
}

/// Whitespace as JavaScript's `String.prototype.trimEnd` sees it.
fn is_js_whitespace(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{0B}' | '\u{0C}' | '\r' | ' ' | '\u{A0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200A}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202F}'
                | '\u{205F}'
                | '\u{3000}'
                | '\u{FEFF}'
    )
}

/// Folds typographic quotes, dashes and spaces to their ASCII look-alikes.
fn fold_char(c: char) -> char {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' => '\'',
        '\u{201C}'..='\u{201F}' => '"',
        '\u{2010}'..='\u{2015}' | '\u{2212}' => '-',
        '\u{A0}' | '\u{2002}'..='\u{200A}' | '\u{202F}' | '\u{205F}' | '\u{3000}' => ' ',
        c => c,
    }
}

/// The normalized form of a text for tolerant matching, with a map back to the source.
#[derive(Debug, Clone)]
pub struct FuzzyText {
    /// The normalized text.
    pub text: String,
    /// Byte offset in `text` of each normalized character.
    offsets: Vec<usize>,
    /// Source byte range of each normalized character.
    sources: Vec<Range<usize>>,
    /// Length of the source text.
    source_len: usize,
}

impl FuzzyText {
    /// Normalizes `source` (which should have `\n`-only line breaks).
    pub fn new(source: &str) -> Self {
        let mut kept: Vec<Unit> = Vec::with_capacity(source.len());
        let mut line_start = 0;
        for unit in nfkc_units(source) {
            if unit.ch == '\n' {
                trim_line_end(&mut kept, line_start);
                kept.push(unit);
                line_start = kept.len();
            } else {
                kept.push(unit);
            }
        }
        trim_line_end(&mut kept, line_start);

        let mut text = String::with_capacity(kept.len());
        let mut offsets = Vec::with_capacity(kept.len());
        let mut sources = Vec::with_capacity(kept.len());
        for unit in kept {
            offsets.push(text.len());
            text.push(fold_char(unit.ch));
            sources.push(unit.start..unit.end);
        }
        Self {
            text,
            offsets,
            sources,
            source_len: source.len(),
        }
    }

    /// The source bytes that the normalized bytes `range` were made from (from the start
    /// of the first character's source to the end of the last one's). An empty range maps
    /// to the empty range where its character starts.
    ///
    /// Line-end whitespace has no normalized characters. The second range returned also
    /// takes, with `take_space_before`, the dropped whitespace before a range that starts at
    /// a line break and, with `take_space_after`, the dropped whitespace after a range that
    /// ends at a line end.
    pub fn source_range(
        &self,
        range: Range<usize>,
        take_space_before: bool,
        take_space_after: bool,
    ) -> (Range<usize>, Range<usize>) {
        let first = self.offsets.partition_point(|&o| o < range.start);
        let last = self.offsets.partition_point(|&o| o < range.end);
        let sources = self.sources.get(first..last).unwrap_or_default();
        let (Some(start), Some(end)) = (
            sources.iter().map(|s| s.start).min(),
            sources.iter().map(|s| s.end).max(),
        ) else {
            let at = self.sources.get(first).map_or(self.source_len, |s| s.start);
            return (at..at, at..at);
        };
        let mut span = start..end;
        if take_space_before && self.text[range.start..].starts_with('\n') {
            span.start = first
                .checked_sub(1)
                .and_then(|i| self.sources.get(i))
                .map_or(0, |s| s.end);
        }
        if take_space_after && !self.text[range.end..].starts_with(|c| c != '\n') {
            span.end = self.sources.get(last).map_or(self.source_len, |s| s.start);
        }
        (start..end, span)
    }
}

fn trim_line_end(units: &mut Vec<Unit>, line_start: usize) {
    while units.len() > line_start && units.last().is_some_and(|u| is_js_whitespace(u.ch)) {
        units.pop();
    }
}

/// The normalized form used for tolerant matching: NFKC, trailing whitespace removed from
/// every line, typographic quotes, dashes and spaces folded to ASCII.
pub fn normalize_for_fuzzy_match(text: &str) -> String {
    FuzzyText::new(text).text
}

/// How many times `needle` occurs in `haystack`, counted like JavaScript's
/// `haystack.split(needle).length - 1`.
fn count_occurrences(haystack: &str, needle: &str) -> usize {
    if needle.is_empty() {
        return haystack.encode_utf16().count().saturating_sub(1);
    }
    haystack.matches(needle).count()
}

fn not_found_error(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!(
            "Could not find the exact text in {path}. The old text must match exactly including all whitespace and newlines."
        )
    } else {
        format!(
            "Could not find edits[{index}] in {path}. The oldText must match exactly including all whitespace and newlines."
        )
    }
}

fn duplicate_error(path: &str, index: usize, total: usize, occurrences: usize) -> String {
    if total == 1 {
        format!(
            "Found {occurrences} occurrences of the text in {path}. The text must be unique. Please provide more context to make it unique."
        )
    } else {
        format!(
            "Found {occurrences} occurrences of edits[{index}] in {path}. Each oldText must be unique. Please provide more context to make it unique."
        )
    }
}

fn empty_old_text_error(path: &str, index: usize, total: usize) -> String {
    if total == 1 {
        format!("oldText must not be empty in {path}.")
    } else {
        format!("edits[{index}].oldText must not be empty in {path}.")
    }
}

fn no_change_error(path: &str, total: usize) -> String {
    if total == 1 {
        format!(
            "No changes made to {path}. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
        )
    } else {
        format!("No changes made to {path}. The replacements produced identical content.")
    }
}

/// A located edit in both the searched text and the original.
struct Located {
    edit_index: usize,
    /// Range in the text the search ran on (the normalized one in tolerant mode).
    searched: Range<usize>,
    /// Range in the original content of the matched characters.
    source: Range<usize>,
    /// `source` plus the line-end whitespace the tolerant match passed over.
    span: Range<usize>,
    new_text: String,
}

fn overlap_error(
    path: &str,
    located: &[Located],
    key: fn(&Located) -> &Range<usize>,
) -> Option<String> {
    located.windows(2).find_map(|pair| match pair {
        [previous, current] if key(previous).end > key(current).start => Some(format!(
            "edits[{}] and edits[{}] overlap in {path}. Merge them into one edit or target disjoint regions.",
            previous.edit_index, current.edit_index
        )),
        _ => None,
    })
}

/// Locates every edit in `content` (`\n` line breaks, no BOM), each against the original
/// content rather than after earlier edits.
///
/// When every `oldText` occurs exactly, the search is exact. Otherwise, if one of them is
/// only found tolerantly, all of them are searched in the normalized content (so they are
/// all judged alike) and each match is mapped back to the bytes of the original it covers.
/// Each must be unique (counted in the normalized content) and the matches must not
/// overlap. Returns the replacements sorted by position, or the error text for the model.
pub fn locate_edits(content: &str, edits: &[Edit], path: &str) -> Result<Vec<Replacement>, String> {
    let total = edits.len();
    let edits: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            old_text: normalize_to_lf(&e.old_text),
            new_text: normalize_to_lf(&e.new_text),
        })
        .collect();
    if let Some(index) = edits.iter().position(|e| e.old_text.is_empty()) {
        return Err(empty_old_text_error(path, index, total));
    }

    let fuzzy = FuzzyText::new(content);
    let fuzzy_olds: Vec<String> = edits
        .iter()
        .map(|e| normalize_for_fuzzy_match(&e.old_text))
        .collect();
    let tolerant = edits
        .iter()
        .zip(&fuzzy_olds)
        .any(|(e, f)| !content.contains(&e.old_text) && fuzzy.text.contains(f.as_str()));
    let searched: &str = if tolerant { &fuzzy.text } else { content };

    let mut located = Vec::with_capacity(total);
    for (index, (edit, fuzzy_old)) in edits.into_iter().zip(fuzzy_olds).enumerate() {
        let found = match searched.find(&edit.old_text) {
            Some(start) => Some(start..start + edit.old_text.len()),
            None if tolerant => searched
                .find(&fuzzy_old)
                .map(|start| start..start + fuzzy_old.len()),
            None => None,
        };
        let Some(range) = found else {
            return Err(not_found_error(path, index, total));
        };
        let occurrences = count_occurrences(&fuzzy.text, &fuzzy_old);
        if occurrences > 1 {
            return Err(duplicate_error(path, index, total, occurrences));
        }
        let (source, span) = if tolerant {
            let first_line = edit.old_text.split('\n').next().unwrap_or_default();
            let leading_blank = !first_line.is_empty() && first_line.chars().all(is_js_whitespace);
            let trailing_blank = edit
                .old_text
                .chars()
                .last()
                .is_some_and(|c| c != '\n' && is_js_whitespace(c));
            fuzzy.source_range(range.clone(), leading_blank, trailing_blank)
        } else {
            (range.clone(), range.clone())
        };
        located.push(Located {
            edit_index: index,
            searched: range,
            source,
            span,
            new_text: edit.new_text,
        });
    }

    located.sort_by_key(|l| l.searched.start);
    if let Some(error) = overlap_error(path, &located, |l| &l.searched) {
        return Err(error);
    }
    // Disjoint normalized matches can still share a source character (one that expanded
    // to several, like a ligature).
    located.sort_by_key(|l| l.source.start);
    if let Some(error) = overlap_error(path, &located, |l| &l.source) {
        return Err(error);
    }
    // Whitespace between two matches goes to the first that claims it.
    for i in 1..located.len() {
        let previous_end = located[i - 1].span.end;
        let current = &mut located[i].span;
        current.start = current.start.max(previous_end);
    }

    let mut in_searched: Vec<Replacement> = located
        .iter()
        .map(|l| Replacement {
            edit_index: l.edit_index,
            range: l.searched.clone(),
            new_text: l.new_text.clone(),
        })
        .collect();
    in_searched.sort_by_key(|r| r.range.start);
    if apply_replacements(searched, &in_searched) == searched {
        return Err(no_change_error(path, total));
    }

    Ok(located
        .into_iter()
        .map(|l| Replacement {
            edit_index: l.edit_index,
            range: l.span,
            new_text: l.new_text,
        })
        .collect())
}

/// `text` with each (sorted, disjoint) replacement applied.
pub fn apply_replacements(text: &str, replacements: &[Replacement]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut cursor = 0;
    for r in replacements {
        out.push_str(&text[cursor..r.range.start]);
        out.push_str(&r.new_text);
        cursor = r.range.end;
    }
    out.push_str(&text[cursor..]);
    out
}
