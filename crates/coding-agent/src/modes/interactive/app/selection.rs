//! Selecting transcript text with the mouse in fullscreen (pi 1.6): press and drag, double
//! click for a word, triple click for a row; the selection is drawn in reverse video and
//! copied on release (`fullscreenCopyOnSelect`) or with Ctrl+X, flashing `Copied!`.

use std::time::{Duration, Instant};

use pi_tui::width::{Segment, segments, slice_columns, strip_escapes, visible_width};

/// Clicks this close together on one spot count as a double or triple click.
const MULTI_CLICK: Duration = Duration::from_millis(500);

/// What a drag extends by.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    Cell,
    Word,
    Row,
}

/// A content position: transcript row and column.
type Point = (usize, usize);

/// The selection and the clicks that made it.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    /// Fixed end and moving end of the selection, with what they extend by.
    range: Option<(Point, Point, Unit)>,
    /// The word or row the drag started on (double and triple clicks).
    origin: Option<(Point, Point)>,
    pub(super) dragging: bool,
    last_click: Option<(Instant, Point, u8)>,
}

/// Characters that join words, as iTerm2 joins them.
fn is_word_char(g: &str) -> bool {
    g.chars()
        .all(|c| c.is_alphanumeric() || "/-+\\~_.".contains(c))
}

/// The columns `start..end` of the word at `col` in `line` (or the cell alone).
fn word_at(line: &str, col: usize) -> (usize, usize) {
    let cells: Vec<(usize, usize, bool)> = {
        let mut at = 0;
        segments(line)
            .into_iter()
            .filter_map(|s| match s {
                Segment::Grapheme(g, w) => {
                    let cell = (at, w, is_word_char(g));
                    at += w;
                    Some(cell)
                }
                Segment::Escape(_) => None,
            })
            .collect()
    };
    let Some(index) = cells.iter().position(|(c, w, _)| col >= *c && col < c + w) else {
        return (col, col + 1);
    };
    if !cells[index].2 {
        return (cells[index].0, cells[index].0 + cells[index].1.max(1));
    }
    let first = (0..=index)
        .rev()
        .take_while(|i| cells[*i].2)
        .last()
        .unwrap_or(index);
    let last = (index..cells.len())
        .take_while(|i| cells[*i].2)
        .last()
        .unwrap_or(index);
    (cells[first].0, cells[last].0 + cells[last].1)
}

impl Selection {
    /// A left press at content `point`, `line` being that row.
    pub(super) fn press(&mut self, point: Point, line: &str, now: Instant) {
        let count = match self.last_click {
            Some((at, p, n)) if p == point && now.duration_since(at) <= MULTI_CLICK => n % 3 + 1,
            _ => 1,
        };
        self.last_click = Some((now, point, count));
        self.dragging = true;
        let (unit, start, end) = match count {
            2 => {
                let (s, e) = word_at(line, point.1);
                (Unit::Word, (point.0, s), (point.0, e))
            }
            3 => (Unit::Row, (point.0, 0), (point.0, visible_width(line))),
            _ => (Unit::Cell, point, point),
        };
        self.origin = Some((start, end));
        self.range = Some((start, end, unit));
    }

    /// A drag to content `point` (`line` being that row): the selection grows from where
    /// it started.
    pub(super) fn drag(&mut self, point: Point, line: &str) {
        let (Some((start, end)), Some((_, _, unit))) = (self.origin, self.range) else {
            return;
        };
        if !self.dragging {
            return;
        }
        let (low, high) = match unit {
            Unit::Cell => (point, (point.0, point.1 + 1)),
            Unit::Word => {
                let (s, e) = word_at(line, point.1);
                ((point.0, s), (point.0, e))
            }
            Unit::Row => ((point.0, 0), (point.0, visible_width(line))),
        };
        self.range = Some(if low < start {
            (
                low,
                if unit == Unit::Cell {
                    (start.0, start.1 + 1)
                } else {
                    end
                },
                unit,
            )
        } else {
            (start, high.max(end), unit)
        });
    }

    /// The left button came up.
    pub(super) fn release(&mut self) {
        self.dragging = false;
    }

    pub(super) fn clear(&mut self) {
        self.range = None;
        self.origin = None;
        self.dragging = false;
    }

    /// The selected span as `(first, end)`, `end` exclusive; `None` when nothing is.
    fn bounds(&self) -> Option<(Point, Point)> {
        let (start, end, _) = self.range?;
        (start != end).then_some((start, end))
    }

    pub(super) fn is_active(&self) -> bool {
        self.bounds().is_some()
    }

    /// The first and last content rows the selection covers.
    pub(super) fn row_range(&self) -> Option<(usize, usize)> {
        self.bounds().map(|((first, _), (last, _))| (first, last))
    }

    /// The selected text: each row's part without styles, trailing blanks trimmed. `rows`
    /// are the transcript's rows from content row `offset` on.
    pub(super) fn text(&self, rows: &[String], offset: usize) -> Option<String> {
        let ((first_row, first_col), (last_row, end_col)) = self.bounds()?;
        let mut out = Vec::new();
        for row in first_row..=last_row {
            let line = rows
                .get(row.wrapping_sub(offset))
                .map(String::as_str)
                .unwrap_or_default();
            let from = if row == first_row { first_col } else { 0 };
            let to = if row == last_row {
                end_col
            } else {
                visible_width(line)
            };
            let part = strip_escapes(&slice_columns(line, from, to.saturating_sub(from)));
            out.push(part.trim_end().to_owned());
        }
        Some(out.join("\n"))
    }

    /// Draws the selection over the visible `rows` (the first is content row `top`).
    pub(super) fn paint(&self, rows: &mut [String], top: usize) {
        let Some(((first_row, first_col), (last_row, end_col))) = self.bounds() else {
            return;
        };
        for (offset, line) in rows.iter_mut().enumerate() {
            let row = top + offset;
            if row < first_row || row > last_row {
                continue;
            }
            let width = visible_width(line);
            let from = if row == first_row { first_col } else { 0 };
            let to = if row == last_row {
                end_col.min(width)
            } else {
                width
            };
            if to <= from {
                continue;
            }
            let mut inside = String::from("\x1b[7m");
            for segment in segments(&slice_columns(line, from, to - from)) {
                match segment {
                    // Styles inside keep the reverse video on.
                    Segment::Escape(e) => {
                        inside.push_str(e);
                        inside.push_str("\x1b[7m");
                    }
                    Segment::Grapheme(g, _) => inside.push_str(g),
                }
            }
            inside.push_str("\x1b[27m");
            *line = format!(
                "{}{inside}{}",
                slice_columns(line, 0, from),
                slice_columns(line, to, width.saturating_sub(to))
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(lines: &[&str]) -> Vec<String> {
        lines.iter().map(|l| (*l).to_owned()).collect()
    }

    #[test]
    fn a_drag_selects_across_rows_and_copies_plain_text() {
        let rows = rows(&[" first \x1b[1mrow\x1b[0m   ", " second row", " third row"]);
        let mut selection = Selection::default();
        let now = Instant::now();
        selection.press((0, 7), &rows[0], now);
        selection.drag((2, 3), &rows[2]);
        selection.release();
        assert_eq!(selection.text(&rows, 0).unwrap(), "row\n second row\n thi");
        let mut shown = rows.clone();
        selection.paint(&mut shown, 0);
        assert!(shown[1].starts_with("\x1b[7m second row"), "{:?}", shown[1]);
        // A click without a drag selects nothing.
        selection.press((1, 1), &rows[1], now + Duration::from_secs(2));
        selection.release();
        assert!(!selection.is_active());
    }

    #[test]
    fn double_and_triple_clicks_take_a_word_and_a_row() {
        let rows = rows(&[" see src/main.rs now"]);
        let mut selection = Selection::default();
        let now = Instant::now();
        selection.press((0, 8), &rows[0], now);
        selection.press((0, 8), &rows[0], now + Duration::from_millis(100));
        assert_eq!(selection.text(&rows, 0).unwrap(), "src/main.rs");
        selection.press((0, 8), &rows[0], now + Duration::from_millis(200));
        assert_eq!(selection.text(&rows, 0).unwrap(), " see src/main.rs now");
    }
}
