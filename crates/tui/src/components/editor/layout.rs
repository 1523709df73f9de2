//! Grapheme segmentation with atomic paste markers, and word wrapping of editor lines.

use std::collections::BTreeMap;

use unicode_segmentation::UnicodeSegmentation;

use crate::width::{grapheme_width, visible_width};

/// One unit of cursor movement: a grapheme, or a whole paste marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seg<'a> {
    /// Byte offset in the segmented text.
    pub index: usize,
    pub text: &'a str,
    /// True for a paste marker merged into one unit.
    pub marker: bool,
}

/// A paste marker found in a text: byte range and paste id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MarkerSpan {
    pub start: usize,
    pub end: usize,
    pub id: u32,
}

/// `[paste #N]`, `[paste #N +L lines]` or `[paste #N C chars]` at the start of `s`:
/// its length and id.
fn parse_marker(s: &str) -> Option<(usize, u32)> {
    let rest = s.strip_prefix("[paste #")?;
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return None;
    }
    let id: u32 = rest[..digits].parse().ok()?;
    let after = &rest[digits..];
    let head = "[paste #".len() + digits;
    if after.starts_with(']') {
        return Some((head + 1, id));
    }
    let tail = after.strip_prefix(' ')?;
    let (tail, plus) = match tail.strip_prefix('+') {
        Some(t) => (t, true),
        None => (tail, false),
    };
    let n = tail.bytes().take_while(u8::is_ascii_digit).count();
    if n == 0 {
        return None;
    }
    let word = if plus { " lines]" } else { " chars]" };
    if tail[n..].starts_with(word) {
        let used = after.len() - tail.len() + n + word.len();
        Some((head + used, id))
    } else {
        None
    }
}

/// Paste markers in `text` whose id passes `valid`.
pub fn find_markers(text: &str, valid: impl Fn(u32) -> bool) -> Vec<MarkerSpan> {
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(pos) = text[from..].find("[paste #") {
        let start = from + pos;
        match parse_marker(&text[start..]) {
            Some((len, id)) if valid(id) => {
                out.push(MarkerSpan {
                    start,
                    end: start + len,
                    id,
                });
                from = start + len;
            }
            _ => from = start + 1,
        }
    }
    out
}

/// Replace markers of known pastes by their content.
pub fn expand_markers(text: &str, pastes: &BTreeMap<u32, String>) -> String {
    let markers = find_markers(text, |id| pastes.contains_key(&id));
    if markers.is_empty() {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for m in markers {
        out.push_str(&text[last..m.start]);
        if let Some(content) = pastes.get(&m.id) {
            out.push_str(content);
        }
        last = m.end;
    }
    out.push_str(&text[last..]);
    out
}

/// Graphemes of `text`, with markers of known pastes merged into single segments.
pub fn segment<'a>(text: &'a str, pastes: &BTreeMap<u32, String>) -> Vec<Seg<'a>> {
    let markers = if pastes.is_empty() || !text.contains("[paste #") {
        Vec::new()
    } else {
        find_markers(text, |id| pastes.contains_key(&id))
    };
    let mut out = Vec::new();
    let mut mi = 0;
    for (index, g) in text.grapheme_indices(true) {
        while mi < markers.len() && markers[mi].end <= index {
            mi += 1;
        }
        match markers.get(mi) {
            Some(m) if index >= m.start && index < m.end => {
                if index == m.start {
                    out.push(Seg {
                        index,
                        text: &text[m.start..m.end],
                        marker: true,
                    });
                }
            }
            _ => out.push(Seg {
                index,
                text: g,
                marker: false,
            }),
        }
    }
    out
}

/// Whitespace as JavaScript's `\s` sees it.
pub fn is_whitespace(g: &str) -> bool {
    g.chars().next().is_some_and(char::is_whitespace)
}

/// ASCII punctuation that separates words for word motions.
pub fn is_punctuation(g: &str) -> bool {
    g.chars().next().is_some_and(|c| {
        matches!(
            c,
            '(' | ')'
                | '{'
                | '}'
                | '['
                | ']'
                | '<'
                | '>'
                | '.'
                | ','
                | ';'
                | ':'
                | '\''
                | '"'
                | '!'
                | '?'
                | '+'
                | '-'
                | '='
                | '*'
                | '/'
                | '\\'
                | '|'
                | '&'
                | '%'
                | '^'
                | '$'
                | '#'
                | '@'
                | '~'
                | '`'
        )
    })
}

/// A piece of a wrapped line: byte range `[start, end)` of the logical line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Chunk {
    pub start: usize,
    pub end: usize,
}

/// Word-wrap `line` (segmented as `segs`) to `max_width` columns, breaking after
/// whitespace when possible and inside words otherwise.
pub fn word_wrap_line(line: &str, max_width: usize, segs: &[Seg<'_>]) -> Vec<Chunk> {
    if line.is_empty() || max_width == 0 {
        return vec![Chunk { start: 0, end: 0 }];
    }
    if visible_width(line) <= max_width {
        return vec![Chunk {
            start: 0,
            end: line.len(),
        }];
    }
    let mut chunks = Vec::new();
    let mut current_width = 0usize;
    let mut chunk_start = 0usize;
    // Where a break is allowed: after the last whitespace before a word.
    let mut wrap_opp: Option<(usize, usize)> = None;

    for (i, seg) in segs.iter().enumerate() {
        let g_width = if seg.marker {
            visible_width(seg.text)
        } else {
            grapheme_width(seg.text)
        };
        let is_ws = !seg.marker && is_whitespace(seg.text);

        if current_width + g_width > max_width {
            match wrap_opp {
                Some((opp_index, opp_width))
                    if current_width - opp_width + g_width <= max_width =>
                {
                    chunks.push(Chunk {
                        start: chunk_start,
                        end: opp_index,
                    });
                    chunk_start = opp_index;
                    current_width -= opp_width;
                }
                _ if chunk_start < seg.index => {
                    chunks.push(Chunk {
                        start: chunk_start,
                        end: seg.index,
                    });
                    chunk_start = seg.index;
                    current_width = 0;
                }
                _ => {}
            }
            wrap_opp = None;
        }

        if g_width > max_width && seg.marker {
            // A marker wider than a row: split it visually, it stays one unit. (A single
            // grapheme wider than the row just overflows its own row.)
            let sub_segs: Vec<Seg<'_>> = seg
                .text
                .grapheme_indices(true)
                .map(|(index, text)| Seg {
                    index,
                    text,
                    marker: false,
                })
                .collect();
            let sub = word_wrap_line(seg.text, max_width, &sub_segs);
            if let Some((last, init)) = sub.split_last() {
                for sc in init {
                    chunks.push(Chunk {
                        start: seg.index + sc.start,
                        end: seg.index + sc.end,
                    });
                }
                chunk_start = seg.index + last.start;
                current_width = visible_width(&seg.text[last.start..last.end]);
            }
            wrap_opp = None;
            continue;
        }

        current_width += g_width;
        if is_ws
            && let Some(next) = segs.get(i + 1)
            && (next.marker || !is_whitespace(next.text))
        {
            wrap_opp = Some((next.index, current_width));
        }
    }
    chunks.push(Chunk {
        start: chunk_start,
        end: line.len(),
    });
    chunks
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wrap(line: &str, width: usize) -> Vec<&str> {
        let pastes = BTreeMap::new();
        let segs = segment(line, &pastes);
        word_wrap_line(line, width, &segs)
            .into_iter()
            .map(|c| &line[c.start..c.end])
            .collect()
    }

    #[test]
    fn wraps_at_word_boundaries() {
        assert_eq!(wrap("hello world foo", 11), vec!["hello ", "world foo"]);
        assert_eq!(wrap("abcdefghij", 4), vec!["abcd", "efgh", "ij"]);
        assert_eq!(wrap("", 4), vec![""]);
        assert_eq!(wrap("漢字", 1), vec!["漢", "字"]);
    }

    #[test]
    fn finds_and_expands_markers() {
        let mut pastes = BTreeMap::new();
        pastes.insert(1, "A\nB".to_string());
        let text = "x [paste #1 +12 lines] [paste #2 30 chars] [paste #1]";
        let m = find_markers(text, |_| true);
        assert_eq!(m.len(), 3);
        assert_eq!(&text[m[0].start..m[0].end], "[paste #1 +12 lines]");
        assert_eq!(
            expand_markers(text, &pastes),
            "x A\nB [paste #2 30 chars] A\nB"
        );
        let segs = segment(text, &pastes);
        assert!(
            segs.iter()
                .any(|s| s.marker && s.text == "[paste #1 +12 lines]")
        );
        assert!(!segs.iter().any(|s| s.marker && s.text.contains("#2")));
    }
}
