//! Cursor moves over visual (word-wrapped) lines: arrow keys, paging and the sticky
//! column kept across lines of different lengths.

use super::Editor;
use super::layout::word_wrap_line;
use crate::width::visible_width;

/// One row of a visual line map: a piece of logical line `line` from byte `start`.
#[derive(Debug, Clone, Copy)]
pub(super) struct VisualLine {
    pub(super) line: usize,
    pub(super) start: usize,
    pub(super) len: usize,
}

impl Editor {
    pub(super) fn build_visual_line_map(&self, width: usize) -> Vec<VisualLine> {
        let mut out = Vec::new();
        for (i, line) in self.state.lines.iter().enumerate() {
            if line.is_empty() {
                out.push(VisualLine {
                    line: i,
                    start: 0,
                    len: 0,
                });
            } else if visible_width(line) <= width {
                out.push(VisualLine {
                    line: i,
                    start: 0,
                    len: line.len(),
                });
            } else {
                let segs = self.segments(line);
                for chunk in word_wrap_line(line, width, &segs) {
                    out.push(VisualLine {
                        line: i,
                        start: chunk.start,
                        len: chunk.end - chunk.start,
                    });
                }
            }
        }
        out
    }

    fn is_last_segment_of_line(vls: &[VisualLine], i: usize) -> bool {
        vls.get(i + 1).is_none_or(|next| next.line != vls[i].line)
    }

    fn find_visual_line_at(vls: &[VisualLine], line: usize, col: usize) -> usize {
        for (i, vl) in vls.iter().enumerate() {
            if vl.line != line || col < vl.start {
                continue;
            }
            let offset = col - vl.start;
            if offset < vl.len || (Self::is_last_segment_of_line(vls, i) && offset == vl.len) {
                return i;
            }
        }
        vls.len().saturating_sub(1)
    }

    fn current_visual_line(&self, vls: &[VisualLine]) -> usize {
        Self::find_visual_line_at(vls, self.state.cursor_line, self.state.cursor_col)
    }

    pub(super) fn is_on_first_visual_line(&self) -> bool {
        let vls = self.build_visual_line_map(self.last_width);
        self.current_visual_line(&vls) == 0
    }

    pub(super) fn is_on_last_visual_line(&self) -> bool {
        let vls = self.build_visual_line_map(self.last_width);
        self.current_visual_line(&vls) + 1 >= vls.len()
    }

    /// Sticky-column choice for vertical moves (the TypeScript decision table).
    fn compute_vertical_move_column(
        &mut self,
        current_col: usize,
        source_max: usize,
        target_max: usize,
    ) -> usize {
        let cursor_in_middle = current_col < source_max;
        let target_too_short = target_max < current_col;
        match self.preferred_visual_col {
            Some(preferred) if !cursor_in_middle => {
                if target_too_short || target_max < preferred {
                    target_max
                } else {
                    self.preferred_visual_col = None;
                    preferred
                }
            }
            _ => {
                if target_too_short {
                    self.preferred_visual_col = Some(current_col);
                    target_max
                } else {
                    self.preferred_visual_col = None;
                    current_col
                }
            }
        }
    }

    fn move_to_visual_line(&mut self, vls: &[VisualLine], current: usize, target: usize) {
        let (Some(cur_vl), Some(target_vl)) = (vls.get(current).copied(), vls.get(target).copied())
        else {
            return;
        };
        let current_col = match self.snapped_from_cursor_col {
            Some(snapped) => {
                let idx = Self::find_visual_line_at(vls, cur_vl.line, snapped);
                snapped.saturating_sub(vls[idx].start)
            }
            None => self.state.cursor_col.saturating_sub(cur_vl.start),
        };
        let max_col = |i: usize, vl: VisualLine| {
            if Self::is_last_segment_of_line(vls, i) {
                vl.len
            } else {
                vl.len.saturating_sub(1)
            }
        };
        let source_max = max_col(current, cur_vl);
        let target_max = max_col(target, target_vl);
        let visual_col = self.compute_vertical_move_column(current_col, source_max, target_max);

        self.state.cursor_line = target_vl.line;
        let line = self.current_line().to_string();
        let mut col = (target_vl.start + visual_col).min(line.len());
        while !line.is_char_boundary(col) {
            col -= 1;
        }
        self.state.cursor_col = col;

        // Never land inside a multi-byte unit; markers snap to their start.
        for seg in self.segments(&line) {
            if seg.index > col {
                break;
            }
            if seg.text.len() <= 1 || col >= seg.index + seg.text.len() {
                continue;
            }
            if !seg.marker {
                self.state.cursor_col = seg.index;
                break;
            }
            let continuation = seg.index < target_vl.start;
            if continuation && target > current {
                // Already passed this marker on the way down: skip its other rows.
                let seg_end = seg.index + seg.text.len();
                let mut next = target + 1;
                while next < vls.len()
                    && vls[next].line == target_vl.line
                    && vls[next].start < seg_end
                {
                    next += 1;
                }
                if next < vls.len() {
                    self.move_to_visual_line(vls, current, next);
                    return;
                }
            }
            self.snapped_from_cursor_col = Some(col);
            self.state.cursor_col = seg.index;
            return;
        }
        self.snapped_from_cursor_col = None;
    }

    pub(super) fn move_cursor(&mut self, delta_line: isize, delta_col: isize) {
        self.last_action = None;
        let vls = self.build_visual_line_map(self.last_width);
        let current = self.current_visual_line(&vls);
        if delta_line != 0 {
            let target = current as isize + delta_line;
            if target >= 0 && (target as usize) < vls.len() {
                self.move_to_visual_line(&vls, current, target as usize);
            }
        }
        if delta_col > 0 {
            let col = self.state.cursor_col;
            let line_len = self.current_line().len();
            if col < line_len {
                let len = {
                    let after = &self.current_line()[col..];
                    self.segments(after).first().map_or(1, |s| s.text.len())
                };
                self.set_cursor_col(col + len);
            } else if self.state.cursor_line + 1 < self.state.lines.len() {
                self.state.cursor_line += 1;
                self.set_cursor_col(0);
            } else if let Some(vl) = vls.get(current) {
                self.preferred_visual_col = Some(col.saturating_sub(vl.start));
            }
        } else if delta_col < 0 {
            let col = self.state.cursor_col;
            if col > 0 {
                let len = {
                    let before = self.before_cursor();
                    self.segments(before).last().map_or(1, |s| s.text.len())
                };
                self.set_cursor_col(col - len);
            } else if self.state.cursor_line > 0 {
                self.state.cursor_line -= 1;
                let end = self.current_line().len();
                self.set_cursor_col(end);
            }
        }
    }

    pub(super) fn page_scroll(&mut self, direction: isize) {
        self.last_action = None;
        let vls = self.build_visual_line_map(self.last_width);
        let current = self.current_visual_line(&vls);
        let page = self.max_visible_lines as isize;
        let last = vls.len().saturating_sub(1) as isize;
        let target = (current as isize + direction * page).clamp(0, last) as usize;
        self.move_to_visual_line(&vls, current, target);
    }
}
