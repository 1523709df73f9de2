//! The terminal the renderer writes to: a real one (crossterm) or a virtual one for tests.

use std::io::{self, BufWriter, Stdout, Write};

/// Where rendered bytes go, and how big the screen is.
pub trait Terminal {
    /// Queue `data` for output (may be buffered until [`Terminal::flush`]).
    fn write(&mut self, data: &str) -> io::Result<()>;
    /// Push buffered output to the device.
    fn flush(&mut self) -> io::Result<()>;
    /// The screen size as `(columns, rows)`.
    fn size(&self) -> (usize, usize);
}

const BRACKETED_PASTE_ON: &str = "\x1b[?2004h";
const BRACKETED_PASTE_OFF: &str = "\x1b[?2004l";
const SHOW_CURSOR: &str = "\x1b[?25h";
/// The kitty keyboard protocol with pi's flags: disambiguate, event types, alternate keys.
const KITTY_KEYBOARD_ON: &str = "\x1b[>7u";
const KITTY_KEYBOARD_OFF: &str = "\x1b[<u";
/// xterm's `modifyOtherKeys` level 2 (tmux's extended keys): Shift+Enter and the like.
const MODIFY_OTHER_KEYS_ON: &str = "\x1b[>4;2m";
const MODIFY_OTHER_KEYS_OFF: &str = "\x1b[>4;0m";
/// Mode 2031: the terminal reports when it switches between light and dark.
const COLOR_SCHEME_REPORTS_ON: &str = "\x1b[?2031h";
const COLOR_SCHEME_REPORTS_OFF: &str = "\x1b[?2031l";

/// How keys with modifiers reach pi, as pi 1.6 negotiates it: the kitty protocol where the
/// terminal answered its query, else `modifyOtherKeys` where it answered DA1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KeyboardProtocol {
    /// Nothing asked (the terminal answered no query).
    #[default]
    Legacy,
    Kitty,
    ModifyOtherKeys,
}

impl KeyboardProtocol {
    fn on(self) -> &'static str {
        match self {
            KeyboardProtocol::Legacy => "",
            KeyboardProtocol::Kitty => KITTY_KEYBOARD_ON,
            KeyboardProtocol::ModifyOtherKeys => MODIFY_OTHER_KEYS_ON,
        }
    }

    fn off(self) -> &'static str {
        match self {
            KeyboardProtocol::Legacy => "",
            KeyboardProtocol::Kitty => KITTY_KEYBOARD_OFF,
            KeyboardProtocol::ModifyOtherKeys => MODIFY_OTHER_KEYS_OFF,
        }
    }
}

/// What a started terminal must undo, for the panic hook (which has no terminal at hand).
static RESTORE: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Writes what a started terminal needs undone and leaves raw mode; for a panicking pi.
pub fn restore_after_panic() {
    let pending = RESTORE
        .lock()
        .map(|mut slot| slot.take())
        .unwrap_or_default();
    if let Some(sequence) = pending {
        let mut out = io::stdout();
        let _ = out.write_all(sequence.as_bytes());
        let _ = out.flush();
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

/// The real terminal: buffered stdout, raw mode and bracketed paste via crossterm.
pub struct CrosstermTerminal {
    out: BufWriter<Stdout>,
    started: bool,
    keyboard: KeyboardProtocol,
    color_scheme_reports: bool,
}

impl CrosstermTerminal {
    /// A terminal over stdout; call [`CrosstermTerminal::start`] before reading keys.
    pub fn new() -> Self {
        CrosstermTerminal {
            out: BufWriter::with_capacity(64 * 1024, io::stdout()),
            started: false,
            keyboard: KeyboardProtocol::Legacy,
            color_scheme_reports: false,
        }
    }

    /// The keyboard protocol to ask for from the next [`CrosstermTerminal::start`] on.
    pub fn set_keyboard_protocol(&mut self, protocol: KeyboardProtocol) {
        self.keyboard = protocol;
    }

    /// Turns the terminal's light/dark reports (mode 2031) on or off, now if started.
    pub fn set_color_scheme_reports(&mut self, on: bool) -> io::Result<()> {
        if self.color_scheme_reports == on {
            return Ok(());
        }
        self.color_scheme_reports = on;
        if !self.started {
            return Ok(());
        }
        let sequence = if on {
            COLOR_SCHEME_REPORTS_ON
        } else {
            COLOR_SCHEME_REPORTS_OFF
        };
        self.out.write_all(sequence.as_bytes())?;
        self.out.flush()?;
        self.record_restore();
        Ok(())
    }

    /// What [`CrosstermTerminal::stop`] writes.
    fn restore_sequence(&self) -> String {
        let mut sequence = String::from(BRACKETED_PASTE_OFF);
        sequence.push_str(self.keyboard.off());
        if self.color_scheme_reports {
            sequence.push_str(COLOR_SCHEME_REPORTS_OFF);
        }
        sequence.push_str(SHOW_CURSOR);
        sequence
    }

    fn record_restore(&self) {
        if let Ok(mut slot) = RESTORE.lock() {
            *slot = self.started.then(|| self.restore_sequence());
        }
    }

    /// Enter raw mode and enable bracketed paste, the keyboard protocol and the
    /// light/dark reports asked for.
    pub fn start(&mut self) -> io::Result<()> {
        crossterm::terminal::enable_raw_mode()?;
        self.started = true;
        self.record_restore();
        self.out.write_all(BRACKETED_PASTE_ON.as_bytes())?;
        self.out.write_all(self.keyboard.on().as_bytes())?;
        if self.color_scheme_reports {
            self.out.write_all(COLOR_SCHEME_REPORTS_ON.as_bytes())?;
        }
        self.out.flush()
    }

    /// Undo [`CrosstermTerminal::start`]: disable bracketed paste, the keyboard protocol
    /// and the light/dark reports, show the cursor, leave raw mode. Safe to call more than
    /// once.
    pub fn stop(&mut self) -> io::Result<()> {
        if !self.started {
            return self.out.flush();
        }
        let sequence = self.restore_sequence();
        self.started = false;
        self.record_restore();
        self.out.write_all(sequence.as_bytes())?;
        self.out.flush()?;
        crossterm::terminal::disable_raw_mode()
    }
}

impl Default for CrosstermTerminal {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for CrosstermTerminal {
    fn drop(&mut self) {
        // Best effort: never leave the user's shell in raw mode.
        let _ = self.stop();
    }
}

impl Terminal for CrosstermTerminal {
    fn write(&mut self, data: &str) -> io::Result<()> {
        self.out.write_all(data.as_bytes())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn size(&self) -> (usize, usize) {
        match crossterm::terminal::size() {
            Ok((cols, rows)) if cols > 0 && rows > 0 => (usize::from(cols), usize::from(rows)),
            _ => (80, 24),
        }
    }
}

/// An in-memory terminal for tests and benchmarks: records what is written.
#[derive(Debug, Clone)]
pub struct VirtualTerminal {
    cols: usize,
    rows: usize,
    output: String,
    keep_output: bool,
    bytes: u64,
    flushes: u64,
}

impl VirtualTerminal {
    /// A virtual screen of `cols` × `rows`.
    pub fn new(cols: usize, rows: usize) -> Self {
        VirtualTerminal {
            cols,
            rows,
            output: String::new(),
            keep_output: true,
            bytes: 0,
            flushes: 0,
        }
    }

    /// Change the reported size (a resize).
    pub fn set_size(&mut self, cols: usize, rows: usize) {
        self.cols = cols;
        self.rows = rows;
    }

    /// Everything written since creation or the last [`VirtualTerminal::take_output`].
    pub fn output(&self) -> &str {
        &self.output
    }

    /// Return and forget the recorded output.
    pub fn take_output(&mut self) -> String {
        std::mem::take(&mut self.output)
    }

    /// Total bytes ever written (not reset by `take_output`).
    pub fn bytes_written(&self) -> u64 {
        self.bytes
    }

    /// How many times `flush` was called.
    pub fn flushes(&self) -> u64 {
        self.flushes
    }

    /// Keep (default) or drop written bytes; benchmarks only count them.
    pub fn set_keep_output(&mut self, keep: bool) {
        self.keep_output = keep;
        if !keep {
            self.output = String::new();
        }
    }
}

impl Terminal for VirtualTerminal {
    fn write(&mut self, data: &str) -> io::Result<()> {
        self.bytes += data.len() as u64;
        if self.keep_output {
            self.output.push_str(data);
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.flushes += 1;
        Ok(())
    }

    fn size(&self) -> (usize, usize) {
        (self.cols, self.rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn virtual_terminal_records_and_counts() -> io::Result<()> {
        let mut t = VirtualTerminal::new(10, 4);
        t.write("abc")?;
        t.write("de")?;
        t.flush()?;
        assert_eq!(t.output(), "abcde");
        assert_eq!(t.take_output(), "abcde");
        assert_eq!(t.output(), "");
        assert_eq!(t.bytes_written(), 5);
        assert_eq!(t.flushes(), 1);
        t.set_size(20, 5);
        assert_eq!(t.size(), (20, 5));
        t.set_keep_output(false);
        t.write("xyz")?;
        assert_eq!(t.output(), "");
        assert_eq!(t.bytes_written(), 8);
        Ok(())
    }
}
