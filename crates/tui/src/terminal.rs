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

/// The real terminal: buffered stdout, raw mode and bracketed paste via crossterm.
pub struct CrosstermTerminal {
    out: BufWriter<Stdout>,
    started: bool,
}

impl CrosstermTerminal {
    /// A terminal over stdout; call [`CrosstermTerminal::start`] before reading keys.
    pub fn new() -> Self {
        CrosstermTerminal {
            out: BufWriter::with_capacity(64 * 1024, io::stdout()),
            started: false,
        }
    }

    /// Enter raw mode and enable bracketed paste.
    pub fn start(&mut self) -> io::Result<()> {
        crossterm::terminal::enable_raw_mode()?;
        self.started = true;
        self.out.write_all(BRACKETED_PASTE_ON.as_bytes())?;
        self.out.flush()
    }

    /// Undo [`CrosstermTerminal::start`]: disable bracketed paste, show the cursor, leave
    /// raw mode. Safe to call more than once.
    pub fn stop(&mut self) -> io::Result<()> {
        if !self.started {
            return self.out.flush();
        }
        self.started = false;
        self.out.write_all(BRACKETED_PASTE_OFF.as_bytes())?;
        self.out.write_all(SHOW_CURSOR.as_bytes())?;
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
