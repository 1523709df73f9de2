//! The differential renderer: diffs lines against what the terminal shows.
//!
//! Inline, like pi-tui's `TUI.doRender`: content starts on the cursor's line (the screen
//! below it blank) and grows downwards; lines that scroll off the top live in the
//! terminal's own scrollback and are never redrawn unless something above the visible
//! screen changes (then screen and scrollback are cleared and everything is rewritten).
//!
//! Model: rows `top..bottom` are known to be on screen, `bottom` being one past the
//! lowest content row the cursor has visited (this holds whatever line we started on).
//! Terminals differ on resize (pull scrollback back in or not, drop blank rows or push
//! top rows), so after a height change `top` is kept conservative, and content below the
//! cursor (which a shrink may have cut) forces a full redraw.

use std::fmt::Write as _;
use std::io;

use crate::component::CURSOR_MARKER;
use crate::terminal::Terminal;
use crate::width::{truncate_to_width, visible_width};

const SYNC_ON: &str = "\x1b[?2026h";
const SYNC_OFF: &str = "\x1b[?2026l";
const LINE_RESET: &str = "\x1b[0m";
const CLEAR_LINE: &str = "\x1b[2K";
const CLEAR_BELOW: &str = "\x1b[J";
const CLEAR_ALL: &str = "\x1b[2J\x1b[H\x1b[3J";
const SHOW_CURSOR: &str = "\x1b[?25h";
const HIDE_CURSOR: &str = "\x1b[?25l";

/// Counters for tests and benchmarks.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RenderStats {
    /// Calls to [`Renderer::render`].
    pub renders: u64,
    /// Renders that wrote every line (the first render included).
    pub full_redraws: u64,
    /// Bytes written to the terminal by the renderer.
    pub bytes: u64,
}

/// An inline differential renderer over a [`Terminal`].
pub struct Renderer<T: Terminal> {
    term: T,
    /// Lines of the last frame, cursor markers stripped, before truncation and resets.
    prev: Vec<String>,
    started: bool,
    width: usize,
    height: usize,
    /// First content row known to be on screen.
    top: usize,
    /// One past the lowest content row the terminal cursor has visited.
    bottom: usize,
    /// Content row of the hardware cursor.
    row: usize,
    /// Column of the hardware cursor when known.
    col: Option<usize>,
    cursor_shown: Option<bool>,
    full_pending: bool,
    always_full: bool,
    stats: RenderStats,
}

impl<T: Terminal> Renderer<T> {
    /// A renderer that will draw from the cursor's current line on a clean screen.
    pub fn new(term: T) -> Self {
        Renderer {
            term,
            prev: Vec::new(),
            started: false,
            width: 0,
            height: 0,
            top: 0,
            bottom: 0,
            row: 0,
            col: None,
            cursor_shown: None,
            full_pending: false,
            always_full: false,
            stats: RenderStats::default(),
        }
    }

    /// The terminal written to.
    pub fn terminal(&self) -> &T {
        &self.term
    }

    /// The terminal written to, mutably (e.g. to resize a virtual one).
    pub fn terminal_mut(&mut self) -> &mut T {
        &mut self.term
    }

    /// Counters so far.
    pub fn stats(&self) -> RenderStats {
        self.stats
    }

    /// Make the next render clear screen and scrollback and write everything.
    pub fn request_full_redraw(&mut self) {
        self.full_pending = true;
    }

    /// Redraw everything on every render (baseline for benchmarks).
    pub fn set_always_full(&mut self, always: bool) {
        self.always_full = always;
    }

    /// Draw a frame: `lines` are all lines of the app, top to bottom.
    pub fn render(&mut self, mut lines: Vec<String>) -> io::Result<()> {
        self.stats.renders += 1;
        let (cols, rows) = self.term.size();
        let (width, height) = (cols.max(1), rows.max(1));
        let cursor = extract_cursor(&mut lines, height);

        let mut full = !self.started || self.full_pending || self.always_full;
        let clear = self.started;
        if self.started && width != self.width {
            full = true;
        }
        if !full && height != self.height {
            if self.row + 1 < self.bottom {
                // Rows below the cursor may have been cut off by the resize.
                full = true;
            } else if height < self.height {
                // The screen lost rows at the top or (blank ones) at the bottom.
                self.top = (self.top + (self.height - height)).min(self.row);
            }
            // Growing keeps `top..bottom` on screen whether or not scrollback is pulled in.
        }
        self.width = width;
        self.height = height;

        let mut out = String::from(SYNC_ON);
        if cursor.is_none() && self.cursor_shown != Some(false) {
            out.push_str(HIDE_CURSOR);
            self.cursor_shown = Some(false);
        }
        if !full {
            full = !self.write_diff(&lines, &mut out);
        }
        if full {
            out.truncate(SYNC_ON.len());
            if cursor.is_none() {
                out.push_str(HIDE_CURSOR);
                self.cursor_shown = Some(false);
            }
            self.write_full(&lines, clear, &mut out);
        }
        self.place_cursor(cursor, lines.len(), &mut out);
        self.prev = lines;
        self.emit(out)
    }

    /// Move the cursor below the content and show it (call before exiting).
    pub fn stop(&mut self) -> io::Result<()> {
        let mut out = String::from(SYNC_ON);
        if self.started {
            match self.prev.len() {
                0 => {
                    self.move_to(0, &mut out);
                    out.push('\r');
                }
                len => {
                    self.move_to(len - 1, &mut out);
                    self.newline(&mut out);
                }
            }
        }
        out.push_str(SHOW_CURSOR);
        self.emit(out)?;
        // A later render starts afresh from where the cursor now is.
        self.started = false;
        self.prev.clear();
        self.top = 0;
        self.bottom = 0;
        self.row = 0;
        self.col = None;
        self.cursor_shown = Some(true);
        Ok(())
    }

    fn emit(&mut self, mut out: String) -> io::Result<()> {
        if out.len() == SYNC_ON.len() {
            return Ok(());
        }
        out.push_str(SYNC_OFF);
        self.stats.bytes += out.len() as u64;
        self.term.write(&out)?;
        self.term.flush()
    }

    /// Clear (unless first render) and write every line.
    fn write_full(&mut self, lines: &[String], clear: bool, out: &mut String) {
        self.stats.full_redraws += 1;
        self.full_pending = false;
        self.started = true;
        if clear {
            out.push_str(CLEAR_ALL);
            self.row = 0;
            self.top = 0;
            self.bottom = 1;
        }
        let mut i = 0;
        while i < lines.len() {
            if i > 0 {
                self.newline(out);
            }
            i += self.write_line(lines, i, lines.len() - 1, false, out);
        }
        self.col = None;
        self.bottom = self.bottom.max(self.row + 1);
    }

    /// Writes line `i` (the cursor on its row) and returns how many lines it took: a
    /// Kitty image first clears the blank rows reserved below it (scrolling the screen if
    /// it must), then is drawn from its own row, so the terminal never cuts it at the
    /// bottom edge; the cursor ends on its last reserved row.
    fn write_line(
        &mut self,
        lines: &[String],
        i: usize,
        last: usize,
        clear: bool,
        out: &mut String,
    ) -> usize {
        let line = &lines[i];
        let reserved = reserved_rows(lines, i, last);
        if reserved > 1 && reserved <= self.height {
            out.push_str(CLEAR_LINE);
            for _ in 1..reserved {
                self.newline(out);
                out.push_str(CLEAR_LINE);
            }
            let _ = write!(out, "\x1b[{}A", reserved - 1);
            push_line(out, line, self.width);
            let _ = write!(out, "\x1b[{}B", reserved - 1);
            self.col = None;
            return reserved;
        }
        if clear {
            out.push_str(CLEAR_LINE);
        }
        push_line(out, line, self.width);
        self.col = None;
        1
    }

    /// Rewrite what changed; false when that is impossible (a full redraw is needed).
    fn write_diff(&mut self, lines: &[String], out: &mut String) -> bool {
        let (prev_len, new_len) = (self.prev.len(), lines.len());
        let common = prev_len.min(new_len);
        let first = (0..common)
            .find(|&i| self.prev[i] != lines[i])
            .or((prev_len != new_len).then_some(common));
        let Some(first) = first else {
            return true;
        };
        let top = self.top;
        // Changes in the scrollback, or a shrink whose end scrolled off: redraw all.
        if first < top || (new_len < prev_len && new_len.max(1) - 1 < top) {
            return false;
        }
        let last = if new_len > prev_len {
            Some(new_len - 1)
        } else {
            (first..new_len).rev().find(|&i| self.prev[i] != lines[i])
        };
        // An image whose rows the change reaches is drawn again whole; one that moved or
        // went is deleted (the terminal keeps images apart from the text under them).
        let (first, last) = expand_for_images(&self.prev, lines, first, last);
        if first < top {
            return false;
        }
        let changed_end =
            last.map_or(prev_len, |l| l + 1)
                .max(if new_len < prev_len { prev_len } else { 0 });
        for line in self
            .prev
            .get(first..changed_end.min(prev_len))
            .unwrap_or(&[])
        {
            for id in crate::image::kitty_ids(line) {
                out.push_str(&crate::image::delete_kitty_image(id));
            }
        }
        if let Some(last) = last {
            // Rows never visited are blank already; no need to clear them.
            let fresh_from = self.bottom;
            self.move_to(first, out);
            let mut i = first;
            while i <= last {
                if i > first {
                    self.newline(out);
                }
                i += self.write_line(lines, i, last, i < fresh_from, out);
            }
        }
        if new_len < prev_len {
            self.move_to(new_len, out);
            out.push_str(CLEAR_BELOW);
        }
        true
    }

    /// Move the cursor to column 0 of content row `target` (at or below the screen top).
    fn move_to(&mut self, target: usize, out: &mut String) {
        if target < self.row {
            let _ = write!(out, "\x1b[{}A", self.row - target);
            self.row = target;
        } else if target > self.row {
            // Rows already visited are on screen; further ones are reached by newlines.
            let reach = target.min(self.bottom.saturating_sub(1));
            if reach > self.row {
                let _ = write!(out, "\x1b[{}B", reach - self.row);
                self.row = reach;
            }
        }
        while self.row < target {
            self.newline(out);
        }
        if self.col != Some(0) {
            out.push('\r');
            self.col = Some(0);
        }
    }

    /// `\r\n`: next row, scrolling the screen when at its bottom.
    fn newline(&mut self, out: &mut String) {
        out.push_str("\r\n");
        self.row += 1;
        self.col = Some(0);
        self.bottom = self.bottom.max(self.row + 1);
        self.top = self.top.max((self.row + 1).saturating_sub(self.height));
    }

    /// Put the hardware cursor at the marker (and show it), or keep it hidden.
    fn place_cursor(&mut self, cursor: Option<(usize, usize)>, len: usize, out: &mut String) {
        let target = cursor.filter(|&(row, _)| row >= self.top && row < len);
        let Some((row, col)) = target else {
            if self.cursor_shown != Some(false) {
                out.push_str(HIDE_CURSOR);
                self.cursor_shown = Some(false);
            }
            return;
        };
        let col = col.min(self.width.saturating_sub(1));
        if row != self.row || self.col != Some(col) {
            if row < self.row {
                let _ = write!(out, "\x1b[{}A", self.row - row);
            } else if row > self.row {
                let _ = write!(out, "\x1b[{}B", row - self.row);
            }
            let _ = write!(out, "\x1b[{}G", col + 1);
            self.row = row;
            self.col = Some(col);
        }
        if self.cursor_shown != Some(true) {
            out.push_str(SHOW_CURSOR);
            self.cursor_shown = Some(true);
        }
    }
}

/// Find the cursor marker (the last one within the bottom `height` lines), strip every
/// marker, and return the marker's `(row, column)`.
pub(crate) fn extract_cursor(lines: &mut [String], height: usize) -> Option<(usize, usize)> {
    let viewport_top = lines.len().saturating_sub(height);
    let mut found = None;
    for (row, line) in lines.iter_mut().enumerate().rev() {
        if !line.contains(CURSOR_MARKER) {
            continue;
        }
        if found.is_none()
            && row >= viewport_top
            && let Some(pos) = line.rfind(CURSOR_MARKER)
        {
            let before = line[..pos].replace(CURSOR_MARKER, "");
            found = Some((row, visible_width(&before)));
        }
        *line = line.replace(CURSOR_MARKER, "");
    }
    found
}

/// One line as written: no raw line breaks, cut to the width, styles reset at the end.
pub(crate) fn push_line(out: &mut String, line: &str, width: usize) {
    if crate::image::is_image_line(line) {
        // An image's sequence is written whole: cutting or resetting it would break it.
        out.push_str(line);
        return;
    }
    let cleaned;
    let mut line = line;
    if line.contains(['\r', '\n']) {
        cleaned = line.replace(['\r', '\n'], " ");
        line = &cleaned;
    }
    if visible_width(line) > width {
        out.push_str(&truncate_to_width(line, width, "", false));
    } else {
        out.push_str(line);
    }
    out.push_str(LINE_RESET);
    // A hyperlink never runs on into the next row (a wrapped link re-opens there).
    if line.contains("\x1b]8;") {
        out.push_str(LINK_RESET);
    }
}

/// The blank rows below a Kitty image at `lines[i]` that are its own (the image's rows,
/// as far as `last`), counting its first row: 1 for other lines.
fn reserved_rows(lines: &[String], i: usize, last: usize) -> usize {
    if !lines[i].contains(crate::image::KITTY_PREFIX) {
        return 1;
    }
    let Some(rows) = crate::image::kitty_rows(&lines[i]) else {
        return 1;
    };
    let most = rows.min(last + 1 - i).min(lines.len() - i);
    let mut reserved = 1;
    while reserved < most {
        let line = &lines[i + reserved];
        if crate::image::is_image_line(line) || visible_width(line) > 0 {
            break;
        }
        reserved += 1;
    }
    reserved
}

/// `first..=last` widened to the whole of every Kitty image (in the old lines or the
/// new) that starts in it or reaches into it.
fn expand_for_images(
    prev: &[String],
    lines: &[String],
    first: usize,
    last: Option<usize>,
) -> (usize, Option<usize>) {
    let (mut from, mut to) = (first, last);
    if crate::capabilities::get().images != Some(crate::capabilities::ImageProtocol::Kitty) {
        return (from, to);
    }
    // An image reaching `first` starts at most its height above it.
    let start = first.saturating_sub(crate::image::max_kitty_rows() as usize);
    for side in [prev, lines] {
        for (i, line) in side.iter().enumerate().skip(start) {
            if !line.contains(crate::image::KITTY_PREFIX) {
                continue;
            }
            let end = i + reserved_rows(side, i, side.len() - 1) - 1;
            let reaches = i >= first || to.is_some_and(|l| i <= l) && end >= first;
            if reaches {
                from = from.min(i);
                if i < lines.len() {
                    to = Some(to.map_or(end, |l| l.max(end)).min(lines.len() - 1));
                }
            }
        }
    }
    (from, to)
}

/// Ends an OSC 8 hyperlink a line may have left open.
const LINK_RESET: &str = "\x1b]8;;\x07";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_last_marker_in_the_viewport() {
        let m = CURSOR_MARKER;
        let mut lines = vec![
            format!("a{m}b"),
            "x".to_string(),
            format!("日本{m}z"),
            "tail".to_string(),
        ];
        assert_eq!(extract_cursor(&mut lines, 3), Some((2, 4)));
        assert_eq!(lines, vec!["ab", "x", "日本z", "tail"]);
        let mut lines = vec![format!("a{m}b"), "x".into(), "y".into()];
        assert_eq!(extract_cursor(&mut lines, 2), None);
        assert_eq!(lines[0], "ab");
    }

    #[test]
    fn a_kitty_image_reserves_its_rows_before_it_is_drawn() {
        let image = "\x1b_Ga=T,f=100,q=2,C=1,c=4,r=3;QUJD\x1b\\".to_owned();
        let mut renderer = Renderer::new(crate::terminal::VirtualTerminal::new(20, 10));
        renderer
            .render(vec![
                "top".into(),
                image.clone(),
                String::new(),
                String::new(),
                "after".into(),
            ])
            .unwrap();
        let out = renderer.terminal_mut().take_output();
        assert!(
            out.contains(&format!(
                "\x1b[2K\r\n\x1b[2K\r\n\x1b[2K\x1b[2A{image}\x1b[2B\r\nafter"
            )),
            "{out:?}"
        );
    }

    #[test]
    fn lines_are_truncated_and_reset() {
        let mut out = String::new();
        push_line(&mut out, "abcdef", 4);
        assert_eq!(out, "abcd\x1b[0m\x1b[0m");
        out.clear();
        push_line(&mut out, "a\nb", 4);
        assert_eq!(out, "a b\x1b[0m");
    }
}
