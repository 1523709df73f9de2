//! The differential renderer against a small terminal emulator: after every render the
//! scrollback plus the visible screen must read exactly like the content.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_tui::width::{Segment, grapheme_width, segments};
use pi_tui::{CURSOR_MARKER, Renderer, VirtualTerminal, visible_width};

/// How the emulated terminal behaves on a height change.
#[derive(Clone, Copy)]
struct ResizeStyle {
    /// Growing pulls lines back from the scrollback (VTE, kitty) instead of adding
    /// blank rows at the bottom.
    pull_on_grow: bool,
    /// Shrinking first drops blank rows below the cursor instead of pushing top rows
    /// into the scrollback.
    drop_blank_on_shrink: bool,
}

/// A minimal VT screen: a grid of cells, a scrollback, deferred wrap, and the handful
/// of sequences the renderer may emit (anything else panics).
struct Screen {
    cols: usize,
    rows: usize,
    grid: Vec<Vec<char>>,
    scrollback: Vec<String>,
    row: usize,
    col: usize,
    wrap_pending: bool,
    cursor_visible: bool,
    sync: bool,
    resize: ResizeStyle,
}

const WIDE_TAIL: char = '\0';

impl Screen {
    fn new(cols: usize, rows: usize) -> Self {
        Screen {
            cols,
            rows,
            grid: vec![vec![' '; cols]; rows],
            scrollback: Vec::new(),
            row: 0,
            col: 0,
            wrap_pending: false,
            cursor_visible: true,
            sync: false,
            resize: ResizeStyle {
                pull_on_grow: true,
                drop_blank_on_shrink: true,
            },
        }
    }

    fn row_text(row: &[char]) -> String {
        let s: String = row.iter().filter(|&&c| c != WIDE_TAIL).collect();
        s.trim_end().to_string()
    }

    fn screen_lines(&self) -> Vec<String> {
        self.grid.iter().map(|r| Self::row_text(r)).collect()
    }

    /// Scrollback then screen, trailing blank rows removed.
    fn all_lines(&self) -> Vec<String> {
        let mut all = self.scrollback.clone();
        all.extend(self.screen_lines());
        while all.last().is_some_and(String::is_empty) {
            all.pop();
        }
        all
    }

    fn linefeed(&mut self) {
        self.wrap_pending = false;
        if self.row + 1 == self.rows {
            let top = self.grid.remove(0);
            self.scrollback.push(Self::row_text(&top));
            self.grid.push(vec![' '; self.cols]);
        } else {
            self.row += 1;
        }
    }

    fn put(&mut self, c: char) {
        let w = grapheme_width(c.encode_utf8(&mut [0; 4]));
        if w == 0 {
            return;
        }
        if self.wrap_pending {
            self.col = 0;
            self.linefeed();
        }
        if self.col + w > self.cols {
            self.col = 0;
            self.linefeed();
        }
        self.grid[self.row][self.col] = c;
        if w == 2 {
            self.grid[self.row][self.col + 1] = WIDE_TAIL;
        }
        self.col += w;
        if self.col >= self.cols {
            self.col = self.cols - 1;
            self.wrap_pending = true;
        }
    }

    fn clear_row_from(&mut self, row: usize, from: usize) {
        for cell in &mut self.grid[row][from..] {
            *cell = ' ';
        }
    }

    fn csi(&mut self, private: bool, params: &str, fin: char) {
        let nums: Vec<usize> = params.split(';').map(|p| p.parse().unwrap_or(0)).collect();
        let n = nums.first().copied().unwrap_or(0).max(1);
        if private {
            match (params, fin) {
                ("2026", 'h') => {
                    assert!(!self.sync, "nested synchronized output");
                    self.sync = true;
                }
                ("2026", 'l') => {
                    assert!(self.sync, "unbalanced synchronized output");
                    self.sync = false;
                }
                ("25", 'h') => self.cursor_visible = true,
                ("25", 'l') => self.cursor_visible = false,
                ("2004", _) => {}
                _ => panic!("unexpected private CSI ?{params}{fin}"),
            }
            return;
        }
        if fin != 'm' {
            self.wrap_pending = false;
        }
        match fin {
            'A' => self.row = self.row.saturating_sub(n),
            'B' => self.row = (self.row + n).min(self.rows - 1),
            'C' => self.col = (self.col + n).min(self.cols - 1),
            'D' => self.col = self.col.saturating_sub(n),
            'G' => self.col = (n - 1).min(self.cols - 1),
            'H' => {
                self.row = (nums.first().copied().unwrap_or(1).max(1) - 1).min(self.rows - 1);
                self.col = (nums.get(1).copied().unwrap_or(1).max(1) - 1).min(self.cols - 1);
            }
            'J' => match nums.first().copied().unwrap_or(0) {
                0 => {
                    self.clear_row_from(self.row, self.col);
                    for r in self.row + 1..self.rows {
                        self.clear_row_from(r, 0);
                    }
                }
                2 => {
                    for r in 0..self.rows {
                        self.clear_row_from(r, 0);
                    }
                }
                3 => self.scrollback.clear(),
                other => panic!("unexpected CSI {other}J"),
            },
            'K' => match nums.first().copied().unwrap_or(0) {
                0 => self.clear_row_from(self.row, self.col),
                2 => self.clear_row_from(self.row, 0),
                other => panic!("unexpected CSI {other}K"),
            },
            'm' => {}
            _ => panic!("unexpected CSI {params}{fin}"),
        }
    }

    fn feed(&mut self, data: &str) {
        let mut chars = data.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                '\x1b' => match chars.next() {
                    Some('[') => {
                        let private = chars.peek() == Some(&'?');
                        if private {
                            chars.next();
                        }
                        let mut params = String::new();
                        loop {
                            let p = chars.next().expect("unterminated CSI");
                            if ('\x40'..='\x7e').contains(&p) {
                                self.csi(private, &params, p);
                                break;
                            }
                            params.push(p);
                        }
                    }
                    Some(']') => {
                        // OSC (hyperlinks): skip to BEL or ST.
                        while let Some(p) = chars.next() {
                            if p == '\x07' || (p == '\x1b' && chars.next() == Some('\\')) {
                                break;
                            }
                        }
                    }
                    other => panic!("unexpected escape {other:?} (a cursor marker leaked?)"),
                },
                '\r' => {
                    self.col = 0;
                    self.wrap_pending = false;
                }
                '\n' => self.linefeed(),
                c if c.is_control() => panic!("unexpected control {c:?}"),
                c => self.put(c),
            }
        }
    }

    fn set_size(&mut self, cols: usize, rows: usize) {
        for row in &mut self.grid {
            row.resize(cols, ' ');
        }
        self.cols = cols;
        self.col = self.col.min(cols - 1);
        while self.rows > rows {
            let last_blank = self
                .grid
                .last()
                .is_some_and(|r| r.iter().all(|&c| c == ' '));
            let drop_blank = self.resize.drop_blank_on_shrink && self.row + 1 < self.rows;
            if (drop_blank && last_blank) || self.row == 0 {
                self.grid.pop();
            } else {
                let top = self.grid.remove(0);
                self.scrollback.push(Self::row_text(&top));
                self.row = self.row.saturating_sub(1);
            }
            self.rows -= 1;
        }
        while self.rows < rows {
            let pulled = if self.resize.pull_on_grow {
                self.scrollback.pop()
            } else {
                None
            };
            match pulled {
                Some(line) => {
                    let mut cells: Vec<char> = line.chars().collect();
                    cells.resize(cols, ' ');
                    self.grid.insert(0, cells);
                    self.row += 1;
                }
                None => self.grid.push(vec![' '; cols]),
            }
            self.rows += 1;
        }
    }
}

struct Harness {
    r: Renderer<VirtualTerminal>,
    screen: Screen,
    content: Vec<String>,
}

impl Harness {
    fn new(cols: usize, rows: usize) -> Self {
        Harness {
            r: Renderer::new(VirtualTerminal::new(cols, rows)),
            screen: Screen::new(cols, rows),
            content: Vec::new(),
        }
    }

    /// Render `lines`, feed the output to the screen, return the bytes written.
    fn render<S: AsRef<str>>(&mut self, lines: &[S]) -> usize {
        let lines: Vec<String> = lines.iter().map(|l| l.as_ref().to_string()).collect();
        self.content.clone_from(&lines);
        self.r.render(lines).unwrap();
        let out = self.r.terminal_mut().take_output();
        if !out.is_empty() {
            assert!(out.starts_with("\x1b[?2026h"), "{out:?}");
            assert!(out.ends_with("\x1b[?2026l"), "{out:?}");
        }
        self.screen.feed(&out);
        assert!(!self.screen.sync);
        self.check();
        out.len()
    }

    fn resize(&mut self, cols: usize, rows: usize) {
        self.r.terminal_mut().set_size(cols, rows);
        self.screen.set_size(cols, rows);
    }

    /// One line as the screen should show it: escapes gone, cut to the width.
    fn shown(&self, line: &str) -> String {
        if line.is_ascii() && !line.contains('\x1b') {
            return line[..line.len().min(self.screen.cols)]
                .trim_end()
                .to_string();
        }
        let mut cut = String::new();
        let mut used = 0;
        for seg in segments(line) {
            if let Segment::Grapheme(g, w) = seg {
                if used + w > self.screen.cols {
                    break;
                }
                cut.push_str(g);
                used += w;
            }
        }
        cut.trim_end().to_string()
    }

    /// The content as the screen should show it.
    fn expected(&self) -> Vec<String> {
        let mut out: Vec<String> = self.content.iter().map(|l| self.shown(l)).collect();
        while out.last().is_some_and(String::is_empty) {
            out.pop();
        }
        out
    }

    fn check(&self) {
        let (got, want) = (self.screen.all_lines(), self.expected());
        if got != want {
            let i = (0..got.len().max(want.len()))
                .find(|&i| got.get(i) != want.get(i))
                .unwrap_or(0);
            panic!(
                "screen differs at line {i} (of {} vs {}): got {:?}, want {:?}",
                got.len(),
                want.len(),
                &got[i.min(got.len())..(i + 3).min(got.len())],
                &want[i.min(want.len())..(i + 3).min(want.len())],
            );
        }
    }

    fn full_redraws(&self) -> u64 {
        self.r.stats().full_redraws
    }
}

fn numbered(n: usize) -> Vec<String> {
    (0..n).map(|i| format!("line {i}")).collect()
}

#[test]
fn append_only_streaming_never_redraws_finished_lines() {
    let mut h = Harness::new(20, 5);
    let mut lines = vec![String::new()];
    for step in 0..60 {
        if step % 4 == 3 {
            lines.push(format!("#{step}"));
        } else if let Some(last) = lines.last_mut() {
            last.push_str(" w");
        }
        h.render(&lines);
    }
    assert_eq!(h.full_redraws(), 1);
    // Earlier lines sit in the scrollback exactly once.
    assert_eq!(h.screen.scrollback.len(), lines.len() - 5);
    assert_eq!(h.screen.scrollback[0], " w w w");
}

#[test]
fn a_changed_middle_line_is_rewritten_alone() {
    let mut h = Harness::new(20, 10);
    let mut lines = numbered(5);
    h.render(&lines);
    lines[2] = "changed".into();
    let bytes = h.render(&lines);
    assert_eq!(h.screen.screen_lines()[2], "changed");
    assert_eq!(h.full_redraws(), 1);
    assert!(bytes < 40, "{bytes}");
    // Longer then shorter: the old tail must not survive.
    lines[2] = "a much longer line".into();
    h.render(&lines);
    lines[2] = "x".into();
    h.render(&lines);
    assert_eq!(h.screen.screen_lines()[2], "x");
}

#[test]
fn shrinking_clears_the_lines_below() {
    let mut h = Harness::new(20, 10);
    h.render(&numbered(6));
    h.render(&numbered(3));
    assert_eq!(h.screen.screen_lines()[3..6], ["", "", ""]);
    h.render(&numbered(5));
    h.render(&Vec::<String>::new());
    assert!(h.screen.all_lines().is_empty());
    h.render(&numbered(2));
    assert_eq!(h.full_redraws(), 1);
}

#[test]
fn growth_past_the_screen_keeps_scrollback_once() {
    let mut h = Harness::new(20, 5);
    let mut lines = numbered(3);
    h.render(&lines);
    lines = numbered(12);
    h.render(&lines);
    assert_eq!(h.screen.scrollback, numbered(7));
    // A visible line changes: diff.
    lines[9] = "nine".into();
    h.render(&lines);
    assert_eq!(h.full_redraws(), 1);
    // A line in the scrollback changes: full redraw, scrollback rebuilt.
    lines[1] = "one".into();
    h.render(&lines);
    assert_eq!(h.full_redraws(), 2);
    assert_eq!(h.screen.scrollback.len(), 7);
    assert_eq!(h.screen.scrollback[1], "one");
    // Shrinking below the screen top also needs a full redraw.
    lines.truncate(4);
    h.render(&lines);
    assert_eq!(h.full_redraws(), 3);
}

#[test]
fn width_change_redraws_everything() {
    let mut h = Harness::new(20, 5);
    let lines: Vec<String> = (0..8).map(|i| format!("{i} abcdefghijklmnop")).collect();
    h.render(&lines);
    h.resize(10, 5);
    h.render(&lines);
    assert_eq!(h.full_redraws(), 2);
    assert_eq!(h.screen.screen_lines()[4], "7 abcdefgh");
    assert_eq!(h.screen.scrollback.len(), 3);
}

#[test]
fn height_change_alone_needs_no_full_redraw() {
    for pull_on_grow in [true, false] {
        for drop_blank_on_shrink in [true, false] {
            let mut h = Harness::new(20, 10);
            h.screen.resize = ResizeStyle {
                pull_on_grow,
                drop_blank_on_shrink,
            };
            let mut lines = numbered(12);
            h.render(&lines);
            h.resize(20, 15);
            lines[11] = "last".into();
            h.render(&lines);
            lines.push("more".into());
            h.render(&lines);
            h.resize(20, 6);
            lines[12] = "more!".into();
            h.render(&lines);
            assert_eq!(h.full_redraws(), 1);
            // Anything the resize may have hidden is redrawn in full.
            lines[5] = "five".into();
            h.render(&lines);
            lines.push("tail".into());
            h.render(&lines);
        }
    }
}

#[test]
fn cursor_marker_places_and_shows_the_cursor() {
    let m = CURSOR_MARKER;
    let mut h = Harness::new(20, 6);
    let frame = |text: &str| vec!["header".to_string(), text.to_string(), "footer".to_string()];
    h.render(&frame(&format!("> hel{m}lo")));
    assert!(h.screen.cursor_visible);
    assert_eq!((h.screen.row, h.screen.col), (1, 5));
    // Same frame: nothing written.
    assert_eq!(h.render(&frame(&format!("> hel{m}lo"))), 0);
    // Only the marker moved: a cursor move, no line rewritten.
    let bytes = h.render(&frame(&format!("> {m}hello")));
    assert!(bytes < 30, "{bytes}");
    assert_eq!((h.screen.row, h.screen.col), (1, 2));
    // Wide characters count two columns.
    h.render(&frame(&format!("> 日本{m}")));
    assert_eq!((h.screen.row, h.screen.col), (1, 6));
    // No marker: hidden.
    h.render(&frame("> done"));
    assert!(!h.screen.cursor_visible);
    // On a scrolled screen the row is relative to the screen top.
    let mut lines = numbered(10);
    lines[8] = format!("ab{m}c");
    h.render(&lines);
    assert_eq!(h.screen.screen_lines()[h.screen.row], "abc");
    assert_eq!(h.screen.col, 2);
    assert!(h.screen.cursor_visible);
}

#[test]
fn unchanged_frames_write_nothing() {
    let mut h = Harness::new(20, 5);
    let lines = numbered(8);
    h.render(&lines);
    let before = h.r.terminal().bytes_written();
    assert_eq!(h.render(&lines), 0);
    assert_eq!(h.r.terminal().bytes_written(), before);
    assert_eq!(h.r.stats().renders, 2);
}

#[test]
fn a_one_line_change_costs_far_less_than_a_full_redraw() {
    let mut h = Harness::new(80, 40);
    let mut lines: Vec<String> = (0..200)
        .map(|i| format!("\x1b[32m{i:>4}\x1b[39m some earlier output of the session, line {i}"))
        .collect();
    h.render(&lines);
    lines[190] = "edited".into();
    let diff = h.render(&lines);
    h.r.request_full_redraw();
    lines[190] = "edited again".into();
    let full = h.render(&lines);
    assert!(diff * 20 < full, "diff {diff} vs full {full}");
    assert_eq!(h.screen.scrollback.len(), 160);
}

#[test]
fn stop_leaves_the_cursor_below_the_content() {
    let mut h = Harness::new(20, 5);
    h.render(&numbered(3));
    h.r.stop().unwrap();
    let out = h.r.terminal_mut().take_output();
    h.screen.feed(&out);
    assert_eq!((h.screen.row, h.screen.col), (3, 0));
    assert!(h.screen.cursor_visible);
}

#[test]
fn always_full_redraws_every_render() {
    let mut h = Harness::new(20, 5);
    h.r.set_always_full(true);
    let lines = numbered(7);
    h.render(&lines);
    h.render(&lines);
    assert_eq!(h.full_redraws(), 2);
    assert_eq!(h.screen.scrollback.len(), 2);
}

/// Pseudo-random frames (appends, edits anywhere, inserts, deletes, wide and overlong
/// lines, a moving cursor marker) must always leave the screen reading like the content.
#[test]
fn random_frames_keep_the_screen_exact() {
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move |n: usize| {
        seed = seed
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((seed >> 33) as usize) % n.max(1)
    };
    let words = [
        "alpha",
        "beta",
        "日本",
        "gamma-delta",
        "x",
        "",
        "longer words here",
    ];
    let mut h = Harness::new(24, 7);
    let mut lines: Vec<String> = Vec::new();
    let mut hidden_markers = 0;
    for step in 0..2000 {
        let word = words[next(words.len())].to_string();
        match next(10) {
            0..=2 => lines.push(word),
            3 | 4 => {
                if let Some(last) = lines.last_mut() {
                    last.push(' ');
                    last.push_str(&word);
                }
            }
            5 if !lines.is_empty() => {
                let i = next(lines.len());
                lines[i] = format!("edit {step}");
            }
            6 => {
                let i = next(lines.len() + 1);
                lines.insert(i, format!("ins {step}"));
            }
            7 => {
                let k = next(4);
                lines.truncate(lines.len().saturating_sub(k));
            }
            8 if next(8) == 0 => {
                let rows = 4 + next(6);
                h.resize(24, rows);
            }
            _ => {}
        }
        let mut frame = lines.clone();
        let marker = (!frame.is_empty() && next(2) == 0).then(|| {
            let row = frame.len() - 1 - next(frame.len().min(3));
            frame[row].push_str(CURSOR_MARKER);
            row
        });
        h.render(&frame);
        match marker {
            Some(row) if h.screen.cursor_visible => {
                let text = h.shown(&frame[row]);
                assert_eq!(h.screen.screen_lines()[h.screen.row], text, "step {step}");
                let raw = frame[row].replace(CURSOR_MARKER, "");
                let col = visible_width(&raw).min(h.screen.cols - 1);
                assert_eq!(h.screen.col, col, "step {step}");
            }
            // A marker row above what is known to be on screen (after a resize or a
            // shrink that left blank rows) cannot be reached: the cursor stays hidden.
            Some(_) => hidden_markers += 1,
            None => assert!(!h.screen.cursor_visible, "step {step}"),
        }
    }
    assert!(hidden_markers < 50, "{hidden_markers}");
    assert!(h.full_redraws() < 2000 / 3, "{}", h.full_redraws());
}
