//! Reading terminal events: key presses, pastes, resizes and mouse reports, as [`Input`]
//! for components.

use std::io;
use std::time::Duration;

use crossterm::event::{Event, KeyEventKind};

use crate::input::Input;

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
}

/// The events that matter (key releases and focus reports are skipped).
fn convert(event: Event) -> Option<TermEvent> {
    match event {
        Event::Key(key) if key.kind != KeyEventKind::Release => {
            Some(TermEvent::Input(Input::Key(key)))
        }
        Event::Paste(text) => Some(TermEvent::Input(Input::Paste(text))),
        Event::Resize(cols, rows) => Some(TermEvent::Resize(usize::from(cols), usize::from(rows))),
        Event::Mouse(mouse) => Some(TermEvent::Mouse(mouse)),
        _ => None,
    }
}

/// Blocks until the next terminal event that matters.
pub fn read_event() -> io::Result<TermEvent> {
    loop {
        if let Some(event) = convert(crossterm::event::read()?) {
            return Ok(event);
        }
    }
}

/// Like [`read_event`], but gives up after `timeout` with `None`, so a reader thread can
/// notice that it should pause (while an external program owns the terminal).
pub fn read_event_timeout(timeout: Duration) -> io::Result<Option<TermEvent>> {
    if !crossterm::event::poll(timeout)? {
        return Ok(None);
    }
    Ok(convert(crossterm::event::read()?))
}
