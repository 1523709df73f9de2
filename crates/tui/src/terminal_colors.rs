//! What pi asks the terminal at startup: its own colors (default foreground and
//! background, 16-color palette; OSC 10/11/4) and whether it takes program status reports
//! (OSC 7501), the size of a cell in pixels when images are shown (`CSI 16 t`), with a
//! trailing DA1 request that every terminal answers (so one that
//! reports nothing is known at once, not after a timeout).

use std::io::Write;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use crate::color_space::Rgb;

/// What the terminal reported; `None` where it said nothing. The palette is kept only
/// when all 16 colors came.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalColors {
    pub foreground: Option<Rgb>,
    pub background: Option<Rgb>,
    pub palette: Option<Vec<Rgb>>,
}

/// What the terminal answered.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TerminalReport {
    pub colors: TerminalColors,
    /// The cell size it reported (asked only when it shows images).
    pub cell: Option<crate::image::CellDimensions>,
    /// It answered the OSC 7501 support query.
    pub program_status: bool,
    /// It answered the kitty keyboard protocol query (`CSI ? u`).
    pub kitty_keyboard: bool,
    /// The DA1 answer came (it closes every query).
    pub answered: bool,
}

/// The OSC 7501 (program status) support query.
pub const PROGRAM_STATUS_QUERY: &str = "\x1b]7501;?\x1b\\";

/// The kitty keyboard protocol query: a terminal that has the protocol answers its flags.
pub const KITTY_KEYBOARD_QUERY: &str = "\x1b[?u";

/// The color query alone: foreground, background, palette 0-15, then DA1 (asked again
/// when the terminal reports a light/dark switch).
pub fn color_query_text() -> String {
    let mut text = colors_text();
    text.push_str("\x1b[c");
    text
}

fn colors_text() -> String {
    let mut text = String::from("\x1b]10;?\x07\x1b]11;?\x07");
    for index in 0..16 {
        text.push_str(&format!("\x1b]4;{index};?\x07"));
    }
    text
}

/// The startup queries: the kitty keyboard protocol, foreground, background, palette 0-15
/// (pi 1.6's color query), the program status query and the cell-size query when asked
/// for, then DA1.
pub fn query_text(program_status: bool, cell_size: bool) -> String {
    let mut text = String::from(KITTY_KEYBOARD_QUERY);
    text.push_str(&colors_text());
    if program_status {
        text.push_str(PROGRAM_STATUS_QUERY);
    }
    if cell_size {
        text.push_str(crate::image::CELL_SIZE_QUERY);
    }
    text.push_str("\x1b[c");
    text
}

/// A channel of 1-4 hex digits scaled to 0-255.
fn hex_channel(text: &str) -> Option<u8> {
    if text.is_empty() || text.len() > 4 || !text.chars().all(|c| c.is_ascii_hexdigit()) {
        return None;
    }
    let max = 16f64.powi(i32::try_from(text.len()).ok()?) - 1.0;
    let value = f64::from(u32::from_str_radix(text, 16).ok()?);
    // value <= max, so the result is within 0-255.
    Some((value / max * 255.0).round() as u8)
}

/// An OSC color value: `rgb:R/G/B` (or `rgba:`), `#rrggbb` or `#rrrrggggbbbb`.
pub fn parse_color_value(raw: &str) -> Option<Rgb> {
    let value = raw.trim();
    if let Some(hex) = value.strip_prefix('#') {
        let per = match hex.len() {
            6 => 2,
            12 => 4,
            _ => return None,
        };
        return Some(Rgb::new(
            hex_channel(&hex[..per])?,
            hex_channel(&hex[per..2 * per])?,
            hex_channel(&hex[2 * per..])?,
        ));
    }
    let lower = value.to_ascii_lowercase();
    let rest = lower
        .strip_prefix("rgba:")
        .or_else(|| lower.strip_prefix("rgb:"))
        .unwrap_or(&lower);
    let mut parts = rest.split('/');
    let (r, g, b) = (parts.next()?, parts.next()?, parts.next()?);
    Some(Rgb::new(hex_channel(r)?, hex_channel(g)?, hex_channel(b)?))
}

/// Which color an OSC reply is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Target {
    Foreground,
    Background,
    Palette(usize),
}

/// The replies found in `buffer` so far, and whether the DA1 answer closed them.
#[derive(Debug, Default)]
struct Replies {
    foreground: Option<Rgb>,
    background: Option<Rgb>,
    palette: [Option<Rgb>; 16],
    program_status: bool,
    kitty_keyboard: bool,
    cell: Option<crate::image::CellDimensions>,
    done: bool,
}

/// Collects the replies that the input reader hands over one by one (a query asked while
/// pi reads keys, or answers that came after the startup wait).
#[derive(Debug, Default)]
pub struct ReplyCollector {
    replies: Replies,
}

impl ReplyCollector {
    /// Records what an OSC reply (its body, between `ESC ]` and the terminator) says.
    pub fn osc(&mut self, body: &str) {
        self.replies.osc(body);
    }

    /// Whether any color came since the last [`ReplyCollector::take`].
    pub fn has_colors(&self) -> bool {
        let r = &self.replies;
        r.foreground.is_some() || r.background.is_some() || r.palette.iter().any(Option::is_some)
    }

    /// The colors collected (a palette only when all 16 came), and a fresh start.
    pub fn take(&mut self) -> TerminalColors {
        std::mem::take(&mut self.replies).report().colors
    }
}

impl Replies {
    fn osc(&mut self, text: &str) {
        if text.starts_with("7501;?") {
            self.program_status = true;
        }
        if let Some((target, rgb)) = osc_reply(text) {
            match target {
                Target::Foreground => self.foreground = Some(rgb),
                Target::Background => self.background = Some(rgb),
                Target::Palette(i) => self.palette[i] = Some(rgb),
            }
        }
    }

    fn report(&self) -> TerminalReport {
        let palette: Option<Vec<Rgb>> = self.palette.iter().copied().collect();
        TerminalReport {
            colors: TerminalColors {
                foreground: self.foreground,
                background: self.background,
                palette,
            },
            program_status: self.program_status,
            kitty_keyboard: self.kitty_keyboard,
            answered: self.done,
            cell: self.cell,
        }
    }

    /// Reads every complete reply in `buffer`; an incomplete one at the end is kept.
    fn scan(&mut self, buffer: &mut Vec<u8>) {
        let mut at = 0;
        while let Some(offset) = buffer[at..].iter().position(|&b| b == 0x1b) {
            let start = at + offset;
            match self.reply_at(&buffer[start..]) {
                Some(length) => at = start + length,
                None => {
                    at = start;
                    break;
                }
            }
            if at >= buffer.len() {
                break;
            }
        }
        if !buffer[at..].contains(&0x1b) {
            at = buffer.len();
        }
        buffer.drain(..at);
    }

    /// The length of the sequence at the start of `bytes` (recording what it says), or
    /// `None` while it is incomplete.
    fn reply_at(&mut self, bytes: &[u8]) -> Option<usize> {
        if let Some(body) = bytes.strip_prefix(b"\x1b]") {
            let end = body.iter().position(|&b| b == 0x07 || b == 0x1b)?;
            let terminator = if body[end] == 0x1b {
                if body.len() < end + 2 {
                    return None;
                }
                2
            } else {
                1
            };
            let text = std::str::from_utf8(&body[..end]).unwrap_or("");
            self.osc(text);
            return Some(2 + end + terminator);
        }
        if let Some(body) = bytes.strip_prefix(b"\x1b[?") {
            let end = body
                .iter()
                .position(|&b| !(b.is_ascii_digit() || b == b';'))?;
            match body[end] {
                b'c' => self.done = true,
                b'u' => self.kitty_keyboard = true,
                _ => {}
            }
            return Some(3 + end + 1);
        }
        if let Some(body) = bytes.strip_prefix(b"\x1b[6;") {
            let end = body
                .iter()
                .position(|&b| !(b.is_ascii_digit() || b == b';'))?;
            let reply = std::str::from_utf8(&bytes[..4 + end + 1]).unwrap_or("");
            if let Some(cell) = crate::image::parse_cell_size_response(reply) {
                self.cell = cell;
            }
            return Some(4 + end + 1);
        }
        if bytes.len() < 3 {
            return None;
        }
        Some(1)
    }
}

/// `10;rgb:…`, `11;…` or `4;N;…`.
fn osc_reply(body: &str) -> Option<(Target, Rgb)> {
    let (code, value) = body.split_once(';')?;
    let (target, value) = match code {
        "10" => (Target::Foreground, value),
        "11" => (Target::Background, value),
        "4" => {
            let (index, value) = value.split_once(';')?;
            let index: usize = index.parse().ok()?;
            (index < 16).then_some((Target::Palette(index), value))?
        }
        _ => return None,
    };
    Some((target, parse_color_value(value)?))
}

/// Parses a whole reply stream (for tests and recorded terminals); `true` once DA1 came.
pub fn parse_replies(bytes: &[u8]) -> (TerminalReport, bool) {
    let mut replies = Replies::default();
    let mut buffer = bytes.to_vec();
    replies.scan(&mut buffer);
    (replies.report(), replies.done)
}

/// Asks the terminal on stdin/stdout for its colors (and, with `program_status`, whether
/// it takes OSC 7501 reports; with `cell_size`, its cell size in pixels), waiting at most `timeout` for the DA1 answer. Raw mode is
/// on for the call (and left as it was). A terminal that answers nothing, or an error,
/// reports nothing.
pub fn query(timeout: Duration, program_status: bool, cell_size: bool) -> TerminalReport {
    let was_raw = crossterm::terminal::is_raw_mode_enabled().unwrap_or(false);
    if !was_raw && crossterm::terminal::enable_raw_mode().is_err() {
        return TerminalReport::default();
    }
    let report = ask(timeout, program_status, cell_size);
    if !was_raw {
        let _ = crossterm::terminal::disable_raw_mode();
    }
    report
}

fn ask(timeout: Duration, program_status: bool, cell_size: bool) -> TerminalReport {
    use nix::poll::{PollFd, PollFlags, PollTimeout, poll};
    let mut out = std::io::stdout();
    let text = query_text(program_status, cell_size);
    if out
        .write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .is_err()
    {
        return TerminalReport::default();
    }
    let stdin = std::io::stdin();
    let deadline = Instant::now() + timeout;
    let mut replies = Replies::default();
    let mut buffer = Vec::new();
    while !replies.done {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let millis = u16::try_from(left.as_millis().max(1)).unwrap_or(u16::MAX);
        let fd = stdin.as_fd();
        let mut fds = [PollFd::new(fd, PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(n) if n > 0 => {}
            Ok(_) => break,
            Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => break,
        }
        let mut chunk = [0u8; 1024];
        match nix::unistd::read(fd, &mut chunk) {
            Ok(0) | Err(_) => break,
            Ok(n) => buffer.extend_from_slice(&chunk[..n]),
        }
        replies.scan(&mut buffer);
    }
    replies.report()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_xterm_replies_to_the_da1_answer() {
        let mut stream = b"\x1b]10;rgb:e5e5/e5e5/e7e7\x07\x1b]11;rgb:0000/0000/0000\x1b\\".to_vec();
        for i in 0..16u8 {
            stream.extend_from_slice(
                format!("\x1b]4;{i};rgb:{i:02x}/{i:02x}/{i:02x}\x07").as_bytes(),
            );
        }
        stream.extend_from_slice(b"\x1b[?64;1;2c");
        let (report, done) = parse_replies(&stream);
        let colors = report.colors;
        assert!(done && !report.program_status);
        assert_eq!(colors.foreground, Some(Rgb::new(0xe5, 0xe5, 0xe7)));
        assert_eq!(colors.background, Some(Rgb::new(0, 0, 0)));
        let palette = colors.palette.unwrap();
        assert_eq!(palette[15], Rgb::new(15, 15, 15));
    }

    #[test]
    fn a_terminal_without_colors_answers_only_da1() {
        let (report, done) = parse_replies(b"\x1b[?1;2c");
        assert!(done);
        let answered = TerminalReport {
            answered: true,
            ..TerminalReport::default()
        };
        assert_eq!(report, answered);
        let (report, _) = parse_replies(b"\x1b[?0u\x1b[?1;2c");
        assert!(report.kitty_keyboard && report.answered);
        let (report, _) = parse_replies(b"\x1b]7501;?state=idle\x1b\\\x1b[?1;2c");
        assert!(report.program_status);
    }

    #[test]
    fn a_partial_palette_is_dropped_and_values_scale() {
        let (report, done) = parse_replies(b"\x1b]4;1;rgb:f/0/0\x07\x1b]11;#ffffff\x07");
        let colors = report.colors;
        assert!(!done);
        assert_eq!(colors.palette, None);
        assert_eq!(colors.background, Some(Rgb::new(255, 255, 255)));
        assert_eq!(
            parse_color_value("rgb:ffff/8080/0000"),
            Some(Rgb::new(255, 128, 0))
        );
        assert_eq!(parse_color_value("#12345"), None);
    }
}
