//! The fullscreen renderer (pi 1.6's alternate-screen mode): the program owns every row of
//! the alternate screen; each frame is exactly one screen of rows, and only the rows that
//! differ from the last frame are rewritten, each addressed absolutely.

use std::fmt::Write as _;
use std::io::{self, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::renderer::{RenderStats, extract_cursor, push_line};
use crate::terminal::Terminal;

const SYNC_ON: &str = "\x1b[?2026h";
const SYNC_OFF: &str = "\x1b[?2026l";
const ENTER_ALT_SCREEN: &str = "\x1b[?1049h";
const LEAVE_ALT_SCREEN: &str = "\x1b[?1049l";
const AUTOWRAP_OFF: &str = "\x1b[?7l";
const AUTOWRAP_ON: &str = "\x1b[?7h";
/// Clicks, drags and wheel (1000, 1002), focus reports (1004), SGR coordinates (1006).
const MOUSE_ON_MULTIPLEXED: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1004h\x1b[?1006h";
/// As above, plus every pointer motion (1003), where no multiplexer sits in between.
const MOUSE_ON_ALL_MOTION: &str = "\x1b[?1000h\x1b[?1002h\x1b[?1003h\x1b[?1004h\x1b[?1006h";
const MOUSE_OFF: &str = "\x1b[?1006l\x1b[?1004l\x1b[?1003l\x1b[?1002l\x1b[?1000l";
const CLEAR_SCREEN: &str = "\x1b[2J\x1b[H";
const CLEAR_LINE: &str = "\x1b[2K";
/// Ends an OSC 8 hyperlink a row may have left open.
const LINK_RESET: &str = "\x1b]8;;\x07";
const SHOW_CURSOR: &str = "\x1b[?25h";
const HIDE_CURSOR: &str = "\x1b[?25l";

/// Set while some renderer holds the alternate screen, for the panic hook.
static ON_ALT_SCREEN: AtomicBool = AtomicBool::new(false);

/// Makes a panic hand the terminal back before the message prints: mouse reporting off,
/// autowrap on, the main screen, the cursor, bracketed paste off and cooked mode.
pub fn restore_on_panic() {
    static INSTALLED: std::sync::Once = std::sync::Once::new();
    INSTALLED.call_once(install_panic_restore);
}

fn install_panic_restore() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if ON_ALT_SCREEN.swap(false, Ordering::SeqCst) {
            let mut out = io::stdout();
            let _ = out.write_all(
                format!(
                    "{SYNC_OFF}{MOUSE_OFF}{AUTOWRAP_ON}{LEAVE_ALT_SCREEN}{SHOW_CURSOR}\x1b[?2004l"
                )
                .as_bytes(),
            );
            let _ = out.flush();
            let _ = crossterm::terminal::disable_raw_mode();
        }
        crate::terminal::restore_after_panic();
        previous(info);
    }));
}

/// Whether a terminal multiplexer relays the mouse (tmux, screen, zellij): there pi 1.6
/// asks for button motion only.
pub fn behind_multiplexer() -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    let term = std::env::var("TERM").unwrap_or_default();
    set("TMUX")
        || set("ZELLIJ")
        || set("STY")
        || term.starts_with("tmux")
        || term.starts_with("screen")
}

/// A renderer that owns the alternate screen.
pub struct ScreenRenderer<T: Terminal> {
    term: T,
    /// Rows of the last frame as shown (markers stripped).
    prev: Vec<String>,
    width: usize,
    height: usize,
    /// Between [`ScreenRenderer::enter`] and [`ScreenRenderer::leave`].
    active: bool,
    full_pending: bool,
    cursor_shown: Option<bool>,
    stats: RenderStats,
    images: crate::screen_images::ScreenImages,
}

impl<T: Terminal> ScreenRenderer<T> {
    pub fn new(term: T) -> Self {
        ScreenRenderer {
            term,
            prev: Vec::new(),
            width: 0,
            height: 0,
            active: false,
            full_pending: true,
            cursor_shown: None,
            stats: RenderStats::default(),
            images: crate::screen_images::ScreenImages::default(),
        }
    }

    pub fn terminal(&self) -> &T {
        &self.term
    }

    pub fn terminal_mut(&mut self) -> &mut T {
        &mut self.term
    }

    pub fn stats(&self) -> RenderStats {
        self.stats
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    /// The next frame repaints every row.
    pub fn request_full_redraw(&mut self) {
        self.full_pending = true;
    }

    /// Switches to the alternate screen, turns autowrap off and mouse reporting on.
    pub fn enter(&mut self) -> io::Result<()> {
        if self.active {
            return Ok(());
        }
        self.active = true;
        ON_ALT_SCREEN.store(true, Ordering::SeqCst);
        self.full_pending = true;
        self.cursor_shown = Some(false);
        let mouse = if behind_multiplexer() {
            MOUSE_ON_MULTIPLEXED
        } else {
            MOUSE_ON_ALL_MOTION
        };
        let out = format!("{ENTER_ALT_SCREEN}{AUTOWRAP_OFF}{mouse}{CLEAR_SCREEN}{HIDE_CURSOR}");
        self.term.write(&out)?;
        self.term.flush()
    }

    /// Turns mouse reporting off, autowrap on, and returns to the main screen with the
    /// cursor shown. Safe to call more than once.
    pub fn leave(&mut self) -> io::Result<()> {
        if !self.active {
            return Ok(());
        }
        self.active = false;
        ON_ALT_SCREEN.store(false, Ordering::SeqCst);
        self.prev.clear();
        self.images.clear();
        let out = format!(
            "{SYNC_ON}{MOUSE_OFF}{AUTOWRAP_ON}{SYNC_OFF}{SYNC_ON}{LEAVE_ALT_SCREEN}{SHOW_CURSOR}{SYNC_OFF}"
        );
        self.term.write(&out)?;
        self.term.flush()
    }

    /// Draws one frame: `rows` are cut or padded to the screen's height; the cursor marker,
    /// if a visible row holds one, places the hardware cursor.
    pub fn render(&mut self, mut rows: Vec<String>) -> io::Result<()> {
        if !self.active {
            return Ok(());
        }
        self.stats.renders += 1;
        let (width, height) = self.term.size();
        let (width, height) = (width.max(1), height.max(1));
        rows.resize(height, String::new());
        let cursor = extract_cursor(&mut rows, height);
        let full = self.full_pending || width != self.width || height != self.height;
        self.width = width;
        self.height = height;
        let mut out = String::from(SYNC_ON);
        let protocol = crate::capabilities::get().images;
        let images = self.images.frame(&rows, &self.prev, full, protocol);
        if full {
            self.stats.full_redraws += 1;
            self.full_pending = false;
            if let Some(frame) = &images {
                out.push_str(&frame.prefix);
            }
            out.push_str(CLEAR_SCREEN);
        }
        match images {
            Some(frame) if frame.redraw => {
                if !full {
                    out.push_str(&frame.prefix);
                }
                write_image_frame(&mut out, &frame.lines, width, protocol);
            }
            _ => {
                for (row, line) in rows.iter().enumerate() {
                    if !full && self.prev.get(row) == Some(line) {
                        continue;
                    }
                    let _ = write!(out, "\x1b[{};1H{CLEAR_LINE}", row + 1);
                    push_line(&mut out, line, width);
                    out.push_str(LINK_RESET);
                }
            }
        }
        match cursor {
            Some((row, col)) => {
                let _ = write!(out, "\x1b[{};{}H", row + 1, col.min(width - 1) + 1);
                if self.cursor_shown != Some(true) {
                    out.push_str(SHOW_CURSOR);
                    self.cursor_shown = Some(true);
                }
            }
            None if self.cursor_shown != Some(false) => {
                out.push_str(HIDE_CURSOR);
                self.cursor_shown = Some(false);
            }
            None => {}
        }
        self.prev = rows;
        if out.len() == SYNC_ON.len() {
            return Ok(());
        }
        out.push_str(SYNC_OFF);
        self.stats.bytes += out.len() as u64;
        self.term.write(&out)?;
        self.term.flush()
    }
}

/// Every row of a frame with images: for Kitty, the rows cleared, then the text rows,
/// then the image rows (an image drawn before the text under it would be cut by it).
fn write_image_frame(
    out: &mut String,
    lines: &[String],
    width: usize,
    protocol: Option<crate::capabilities::ImageProtocol>,
) {
    let is_image = |line: &String| crate::image::is_image_line(line);
    if protocol != Some(crate::capabilities::ImageProtocol::Kitty) {
        for (row, line) in lines.iter().enumerate() {
            let _ = write!(out, "\x1b[{};1H{CLEAR_LINE}", row + 1);
            push_line(out, line, width);
            if !is_image(line) {
                out.push_str(LINK_RESET);
            }
        }
        return;
    }
    for row in 0..lines.len() {
        let _ = write!(out, "\x1b[{};1H{CLEAR_LINE}", row + 1);
    }
    for image_pass in [false, true] {
        for (row, line) in lines.iter().enumerate() {
            if is_image(line) != image_pass {
                continue;
            }
            let _ = write!(out, "\x1b[{};1H", row + 1);
            push_line(out, line, width);
            if !image_pass {
                out.push_str(LINK_RESET);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::component::CURSOR_MARKER;
    use crate::terminal::VirtualTerminal;

    fn frame(rows: &[&str]) -> Vec<String> {
        rows.iter().map(|r| (*r).to_owned()).collect()
    }

    #[test]
    fn kitty_images_are_written_after_the_rows_they_cover() {
        let image = "\x1b_Ga=T,f=100,q=2,C=1,c=4,r=2;QUJD\x1b\\".to_owned();
        let mut out = String::new();
        let lines = vec![image.clone(), "under".to_owned(), "text".to_owned()];
        write_image_frame(
            &mut out,
            &lines,
            10,
            Some(crate::capabilities::ImageProtocol::Kitty),
        );
        let image_at = out.find(&image).expect("the image");
        assert!(out.find("under").is_some_and(|t| t < image_at), "{out:?}");
        assert!(out.find("text").is_some_and(|t| t < image_at), "{out:?}");
        assert!(out.ends_with(&format!("\x1b[1;1H{image}")), "{out:?}");
    }

    #[test]
    fn only_changed_rows_are_rewritten_at_their_address() {
        let mut screen = ScreenRenderer::new(VirtualTerminal::new(10, 3));
        screen.enter().unwrap();
        screen.render(frame(&["a", "b", "c"])).unwrap();
        let first = screen.terminal_mut().take_output();
        assert!(first.starts_with(ENTER_ALT_SCREEN), "{first:?}");
        assert!(first.contains("\x1b[2J"), "{first:?}");
        screen.render(frame(&["a", "B", "c"])).unwrap();
        let second = screen.terminal_mut().take_output();
        assert!(second.contains("\x1b[2;1H\x1b[2KB"), "{second:?}");
        assert!(!second.contains("\x1b[1;1H"), "{second:?}");
        screen.render(frame(&["a", "B", "c"])).unwrap();
        assert_eq!(screen.terminal_mut().take_output(), "");
    }

    #[test]
    fn frames_fill_the_screen_and_place_the_cursor() {
        let mut screen = ScreenRenderer::new(VirtualTerminal::new(10, 4));
        screen.enter().unwrap();
        screen.terminal_mut().take_output();
        screen.render(vec![format!("ab{CURSOR_MARKER}c")]).unwrap();
        let out = screen.terminal_mut().take_output();
        assert!(out.contains("\x1b[4;1H\x1b[2K"), "{out:?}");
        assert!(out.contains("\x1b[1;3H\x1b[?25h"), "{out:?}");
        assert!(!out.contains(CURSOR_MARKER), "{out:?}");
    }

    #[test]
    fn leaving_restores_the_main_screen_once() {
        let mut screen = ScreenRenderer::new(VirtualTerminal::new(10, 2));
        screen.enter().unwrap();
        screen.leave().unwrap();
        screen.leave().unwrap();
        let out = screen.terminal_mut().take_output();
        assert_eq!(out.matches(LEAVE_ALT_SCREEN).count(), 1, "{out:?}");
        assert!(
            out.contains(MOUSE_OFF) && out.contains(AUTOWRAP_ON),
            "{out:?}"
        );
    }
}
