//! Reading terminal events: key presses, pastes and resizes, as [`Input`] for components.

use std::io;

use crossterm::event::{Event, KeyEventKind};

use crate::input::Input;

/// One thing that happened at the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TermEvent {
    /// A key press or a bracketed paste.
    Input(Input),
    /// The terminal now has this many columns and rows.
    Resize(usize, usize),
}

/// Blocks until the next terminal event that matters (key releases, focus and mouse
/// events are skipped).
pub fn read_event() -> io::Result<TermEvent> {
    loop {
        match crossterm::event::read()? {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                return Ok(TermEvent::Input(Input::Key(key)));
            }
            Event::Paste(text) => return Ok(TermEvent::Input(Input::Paste(text))),
            Event::Resize(cols, rows) => {
                return Ok(TermEvent::Resize(usize::from(cols), usize::from(rows)));
            }
            _ => {}
        }
    }
}
