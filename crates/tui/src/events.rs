//! Reading terminal events: key presses, pastes, resizes, mouse reports and the terminal's
//! replies to queries, as [`TermEvent`]s. pi reads the terminal itself (not through
//! crossterm's reader, which drops replies it does not know or turns them into keys).

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use crossterm::event::{Event, KeyEventKind};
use nix::poll::{PollFd, PollFlags, PollTimeout, poll};

use crate::input::Input;
use crate::input_parser::{InputParser, Parsed, Reply};

/// One thing that happened at the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermEvent {
    /// A key press or a bracketed paste.
    Input(Input),
    /// The terminal now has this many columns and rows.
    Resize(usize, usize),
    /// A wheel notch, click, drag or motion (reported only while the fullscreen renderer
    /// asked for the mouse).
    Mouse(crossterm::event::MouseEvent),
    /// The terminal answered a query (or reported a light/dark switch).
    Reply(Reply),
    /// The terminal window lost focus (reported while the fullscreen renderer asked).
    FocusLost,
}

/// How long a lone Escape waits for the rest of a sequence (pi's `PI_TUI_ESC_TIMEOUT`;
/// 10 ms, or 100 ms over SSH where bytes arrive in pieces).
fn escape_timeout() -> Duration {
    static TIMEOUT: OnceLock<Duration> = OnceLock::new();
    *TIMEOUT.get_or_init(|| {
        let configured = std::env::var("PI_TUI_ESC_TIMEOUT")
            .ok()
            .and_then(|v| v.trim().parse::<u64>().ok())
            .filter(|&ms| ms > 0);
        let ssh =
            std::env::var_os("SSH_CONNECTION").is_some() || std::env::var_os("SSH_TTY").is_some();
        Duration::from_millis(configured.unwrap_or(if ssh { 100 } else { 10 }))
    })
}

/// How long an unfinished sequence other than Escape waits for its end.
const SEQUENCE_TIMEOUT: Duration = Duration::from_millis(50);

/// How often a blocked read looks at the window size (resizes are noticed this fast).
const SIZE_CHECK: Duration = Duration::from_millis(50);

/// The terminal's input and what is buffered of it.
struct Reader {
    /// `/dev/tty` when stdin is not the terminal.
    tty: Option<OwnedFd>,
    stdin: io::Stdin,
    parser: InputParser,
    size: Option<(u16, u16)>,
    /// When the bytes now pending arrived (an unfinished sequence is given up after a while).
    pending_since: Option<Instant>,
}

impl Reader {
    fn open() -> io::Result<Reader> {
        use std::io::IsTerminal;
        let tty = if io::stdin().is_terminal() {
            None
        } else {
            let file = std::fs::File::options()
                .read(true)
                .write(true)
                .open("/dev/tty")?;
            Some(OwnedFd::from(file))
        };
        Ok(Reader {
            tty,
            stdin: io::stdin(),
            parser: InputParser::new(),
            size: crossterm::terminal::size().ok(),
            pending_since: None,
        })
    }

    fn fd(&self) -> BorrowedFd<'_> {
        match &self.tty {
            Some(fd) => fd.as_fd(),
            None => self.stdin.as_fd(),
        }
    }

    /// A resize since the last look.
    fn resized(&mut self) -> Option<TermEvent> {
        let now = crossterm::terminal::size().ok()?;
        if self.size == Some(now) {
            return None;
        }
        self.size = Some(now);
        Some(TermEvent::Resize(usize::from(now.0), usize::from(now.1)))
    }

    /// The next event, waiting at most `timeout` (`None`: forever).
    fn next(&mut self, timeout: Option<Duration>) -> io::Result<Option<TermEvent>> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            if let Some(event) = self.parsed(false) {
                return Ok(Some(event));
            }
            if let Some(event) = self.resized() {
                return Ok(Some(event));
            }
            let now = Instant::now();
            let mut wait = SIZE_CHECK;
            if let Some(deadline) = deadline {
                if now >= deadline {
                    return Ok(None);
                }
                wait = wait.min(deadline - now);
            }
            if let Some(since) = self.pending_since {
                let limit = if self.parser.pending_is_lone_escape() {
                    escape_timeout()
                } else {
                    SEQUENCE_TIMEOUT
                };
                let left = (since + limit).saturating_duration_since(now);
                if left.is_zero() {
                    if let Some(event) = self.parsed(true) {
                        return Ok(Some(event));
                    }
                    continue;
                }
                wait = wait.min(left);
            }
            if self.wait_readable(wait)? {
                self.read_more()?;
            }
        }
    }

    /// The next parsed event (key releases and focus reports skipped).
    fn parsed(&mut self, flush: bool) -> Option<TermEvent> {
        loop {
            let item = self.parser.next(flush);
            self.pending_since = match (self.parser.has_pending(), self.pending_since) {
                (false, _) => None,
                (true, None) => Some(Instant::now()),
                (true, since) => since,
            };
            if let Some(event) = convert(item?) {
                return Some(event);
            }
        }
    }

    fn wait_readable(&self, wait: Duration) -> io::Result<bool> {
        let millis = u16::try_from(wait.as_millis().max(1)).unwrap_or(u16::MAX);
        let mut fds = [PollFd::new(self.fd(), PollFlags::POLLIN)];
        match poll(&mut fds, PollTimeout::from(millis)) {
            Ok(n) => Ok(n > 0),
            Err(nix::errno::Errno::EINTR) => Ok(false),
            Err(e) => Err(io::Error::from(e)),
        }
    }

    fn read_more(&mut self) -> io::Result<()> {
        let mut chunk = [0u8; 4096];
        match nix::unistd::read(self.fd(), &mut chunk) {
            Ok(0) => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the terminal closed",
            )),
            Ok(n) => {
                self.parser.feed(&chunk[..n]);
                if self.pending_since.is_none() {
                    self.pending_since = Some(Instant::now());
                }
                Ok(())
            }
            Err(nix::errno::Errno::EINTR | nix::errno::Errno::EAGAIN) => Ok(()),
            Err(e) => Err(io::Error::from(e)),
        }
    }
}

/// The events that matter (key releases and focus gains are skipped).
fn convert(item: Parsed) -> Option<TermEvent> {
    match item {
        Parsed::Event(Event::Key(key)) if key.kind != KeyEventKind::Release => {
            Some(TermEvent::Input(Input::Key(key)))
        }
        Parsed::Event(Event::Paste(text)) => Some(TermEvent::Input(Input::Paste(text))),
        Parsed::Event(Event::Mouse(mouse)) => Some(TermEvent::Mouse(mouse)),
        Parsed::Event(Event::FocusLost) => Some(TermEvent::FocusLost),
        Parsed::Event(_) => None,
        Parsed::Reply(reply) => Some(TermEvent::Reply(reply)),
    }
}

fn reader() -> io::Result<MutexGuard<'static, Option<Reader>>> {
    static READER: Mutex<Option<Reader>> = Mutex::new(None);
    let mut guard = READER
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if guard.is_none() {
        *guard = Some(Reader::open()?);
    }
    Ok(guard)
}

/// Blocks until the next terminal event that matters.
pub fn read_event() -> io::Result<TermEvent> {
    loop {
        let mut guard = reader()?;
        let Some(reader) = guard.as_mut() else {
            continue;
        };
        if let Some(event) = reader.next(None)? {
            return Ok(event);
        }
    }
}

/// Like [`read_event`], but gives up after `timeout` with `None`, so a reader thread can
/// notice that it should pause (while an external program owns the terminal).
pub fn read_event_timeout(timeout: Duration) -> io::Result<Option<TermEvent>> {
    let mut guard = reader()?;
    match guard.as_mut() {
        Some(reader) => reader.next(Some(timeout)),
        None => Ok(None),
    }
}
