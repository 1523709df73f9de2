//! Finding text in rendered rows (pi 1.6's transcript search): the rows' plain text joined
//! by single spaces with whitespace runs collapsed, matched case-insensitively, so a match
//! may run across a line break; each match maps back to column spans of its rows.

use crate::width::{Segment, segments, slice_columns, visible_width};

/// The part of one row a match covers: `row`, and columns `start..end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub row: usize,
    pub start: usize,
    pub end: usize,
}

/// One match: its spans, first row first.
pub type Match = Vec<Span>;

/// A unit of the searched text: a lowercased grapheme (or the space standing for a run of
/// whitespace or a line break) and where it came from.
struct Unit {
    text: String,
    row: usize,
    col: usize,
    width: usize,
}

/// The query as matched: whitespace runs are one space, ends trimmed, lowercased.
pub fn normalize_query(query: &str) -> String {
    query
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_lowercase()
}

fn corpus(rows: &[String]) -> Vec<Unit> {
    let mut units: Vec<Unit> = Vec::new();
    let space = |units: &Vec<Unit>| units.last().is_none_or(|u| u.text == " ");
    for (row, line) in rows.iter().enumerate() {
        // The line break is a space, unless one is there already.
        if !space(&units) {
            units.push(Unit {
                text: " ".into(),
                row,
                col: 0,
                width: 0,
            });
        }
        let mut col = 0;
        for segment in segments(line) {
            let Segment::Grapheme(g, width) = segment else {
                continue;
            };
            if g.chars().all(char::is_whitespace) {
                if !space(&units) {
                    units.push(Unit {
                        text: " ".into(),
                        row,
                        col,
                        width,
                    });
                }
            } else {
                units.push(Unit {
                    text: g.to_lowercase(),
                    row,
                    col,
                    width,
                });
            }
            col += width;
        }
    }
    units
}

/// Every match of `query` in `rows`, in order, not overlapping.
pub fn find(rows: &[String], query: &str) -> Vec<Match> {
    let query = normalize_query(query);
    if query.is_empty() {
        return Vec::new();
    }
    let needle: Vec<String> = crate::width::segments(&query)
        .into_iter()
        .filter_map(|s| match s {
            Segment::Grapheme(g, _) => Some(g.to_owned()),
            Segment::Escape(_) => None,
        })
        .collect();
    let units = corpus(rows);
    let mut matches = Vec::new();
    let mut at = 0;
    while at + needle.len() <= units.len() {
        let hit = needle
            .iter()
            .zip(&units[at..])
            .all(|(want, unit)| *want == unit.text);
        if !hit {
            at += 1;
            continue;
        }
        let mut spans: Vec<Span> = Vec::new();
        // Whitespace is never highlighted: words a space apart are spans of their own,
        // as pi 1.6 draws them.
        for unit in &units[at..at + needle.len()] {
            if unit.width == 0 || unit.text == " " {
                continue;
            }
            match spans.last_mut() {
                Some(span) if span.row == unit.row && unit.col <= span.end => {
                    span.end = unit.col + unit.width
                }
                _ => spans.push(Span {
                    row: unit.row,
                    start: unit.col,
                    end: unit.col + unit.width,
                }),
            }
        }
        matches.push(spans);
        at += needle.len();
    }
    matches
}

/// `line` with the columns of `spans` (all on this row) restyled by `paint`.
pub fn highlight(
    line: &str,
    spans: &[(Span, bool)],
    paint: &dyn Fn(&str, bool) -> String,
) -> String {
    if spans.is_empty() {
        return line.to_owned();
    }
    let total = visible_width(line);
    let mut out = String::new();
    let mut col = 0;
    for (span, current) in spans {
        if span.start < col {
            continue;
        }
        out.push_str(&slice_columns(line, col, span.start - col));
        // Each plain run is painted; the escapes between runs stay, as in pi 1.6.
        let text = slice_columns(line, span.start, span.end - span.start);
        let mut plain = String::new();
        for segment in segments(&text) {
            match segment {
                Segment::Grapheme(g, _) => plain.push_str(g),
                Segment::Escape(e) => {
                    if !plain.is_empty() {
                        out.push_str(&paint(&std::mem::take(&mut plain), *current));
                    }
                    out.push_str(e);
                }
            }
        }
        if !plain.is_empty() {
            out.push_str(&paint(&plain, *current));
        }
        col = span.end;
    }
    out.push_str(&slice_columns(line, col, total.saturating_sub(col)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(rows: &[&str]) -> Vec<String> {
        rows.iter().map(|r| (*r).to_owned()).collect()
    }

    #[test]
    fn matches_ignore_case_and_cross_line_breaks() {
        let rows = lines(&[" The quick", "\x1b[1mbrown\x1b[0m  fox", "", "QUICK brown"]);
        let found = find(&rows, "quick   brown");
        assert_eq!(
            found,
            vec![
                vec![
                    Span {
                        row: 0,
                        start: 5,
                        end: 10
                    },
                    Span {
                        row: 1,
                        start: 0,
                        end: 5
                    }
                ],
                vec![
                    Span {
                        row: 3,
                        start: 0,
                        end: 5
                    },
                    Span {
                        row: 3,
                        start: 6,
                        end: 11
                    }
                ],
            ]
        );
        assert_eq!(find(&rows, "  "), Vec::<Match>::new());
        assert_eq!(find(&rows, "fox quick").len(), 1);
    }

    #[test]
    fn highlights_restyle_only_their_columns() {
        let span = Span {
            row: 0,
            start: 4,
            end: 9,
        };
        let out = highlight(
            "the \x1b[31mquick\x1b[0m fox",
            &[(span, true)],
            &|t, current| format!("[{t}{}]", if current { "*" } else { "" }),
        );
        assert_eq!(crate::width::strip_escapes(&out), "the [quick*] fox");
    }
}
