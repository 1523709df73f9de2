//! Terminal input bytes to events: keys (legacy, xterm `modifyOtherKeys` and the kitty
//! keyboard protocol), SGR mouse reports, bracketed paste, and the terminal's replies to
//! queries (OSC colors, DA1, kitty flags, light/dark reports), which arrive on the same
//! stream while pi reads keys and must never reach the editor as keystrokes.

use crossterm::event::{
    Event, KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers, MouseButton, MouseEvent,
    MouseEventKind,
};

const ESC: u8 = 0x1b;
const PASTE_END: &[u8] = b"\x1b[201~";

/// A terminal's answer to a query, kept as text for whoever asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reply {
    /// `ESC ] body (BEL | ESC \)`: colors (`10;…`, `11;…`, `4;N;…`), program status.
    Osc(String),
    /// The light/dark report of mode 2031 (`CSI ? 997 ; 1|2 n`).
    ColorScheme(ColorScheme),
    /// The primary device attributes (`CSI ? … c`), which every terminal sends last.
    DeviceAttributes,
    /// The kitty keyboard protocol's current flags (`CSI ? flags u`).
    KeyboardFlags(u32),
    /// Any other control sequence a key never produces (`CSI ? … $ y`, `CSI 6;h;w t`, DCS, APC).
    Other(String),
}

/// What the terminal says its appearance is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColorScheme {
    Dark,
    Light,
}

/// One thing read from the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    Event(Event),
    Reply(Reply),
}

/// Splits terminal input into [`Parsed`] items; bytes may arrive in any pieces.
#[derive(Debug, Default)]
pub struct InputParser {
    buffer: Vec<u8>,
    /// Inside a bracketed paste: the text so far.
    paste: Option<Vec<u8>>,
}

/// What one attempt to read the front of the buffer found.
enum Step {
    /// The first `usize` bytes made this item.
    Item(usize, Option<Parsed>),
    /// More bytes are needed.
    Incomplete,
}

impl InputParser {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds bytes read from the terminal.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.buffer.extend_from_slice(bytes);
    }

    /// Whether bytes wait for the rest of their sequence.
    pub fn has_pending(&self) -> bool {
        !self.buffer.is_empty()
    }

    /// Whether what waits is a lone Escape (which waits less than other sequences).
    pub fn pending_is_lone_escape(&self) -> bool {
        self.paste.is_none() && self.buffer == [ESC]
    }

    /// The next complete item. With `flush` (no more bytes came in time) an unfinished
    /// sequence is read as what its first bytes are: a lone Escape, or Alt and a key.
    pub fn next(&mut self, flush: bool) -> Option<Parsed> {
        loop {
            if self.paste.is_some() {
                return self.paste_step();
            }
            if self.buffer.is_empty() {
                return None;
            }
            let step = match parse(&self.buffer) {
                Step::Incomplete if flush => flush_step(&self.buffer),
                step => step,
            };
            match step {
                Step::Incomplete => return None,
                Step::Item(used, item) => {
                    self.buffer.drain(..used.min(self.buffer.len()));
                    if item == Some(Parsed::Event(Event::Paste(String::new()))) {
                        // The paste's opening sequence: collect its text.
                        self.paste = Some(Vec::new());
                        continue;
                    }
                    if item.is_some() {
                        return item;
                    }
                }
            }
        }
    }

    /// Moves bytes into the paste until its closing sequence arrives.
    fn paste_step(&mut self) -> Option<Parsed> {
        let paste = self.paste.as_mut()?;
        paste.append(&mut self.buffer);
        let end = paste
            .windows(PASTE_END.len())
            .position(|w| w == PASTE_END)?;
        self.buffer = paste.split_off(end + PASTE_END.len());
        paste.truncate(end);
        let text = String::from_utf8_lossy(paste).into_owned();
        self.paste = None;
        Some(Parsed::Event(Event::Paste(text)))
    }
}

fn key(code: KeyCode, modifiers: KeyModifiers) -> Option<Parsed> {
    Some(Parsed::Event(Event::Key(KeyEvent::new(code, modifiers))))
}

fn key_kind(code: KeyCode, modifiers: KeyModifiers, kind: KeyEventKind) -> Option<Parsed> {
    Some(Parsed::Event(Event::Key(KeyEvent {
        code,
        modifiers,
        kind,
        state: KeyEventState::NONE,
    })))
}

/// Reads the item at the front of `bytes` (never empty).
fn parse(bytes: &[u8]) -> Step {
    if bytes[0] != ESC {
        return single_key(bytes, KeyModifiers::NONE);
    }
    let Some(&second) = bytes.get(1) else {
        return Step::Incomplete;
    };
    match second {
        b'[' => csi(bytes),
        b']' => string_sequence(bytes, true).map(|body| Parsed::Reply(Reply::Osc(body))),
        b'P' | b'_' | b'^' | b'X' => {
            string_sequence(bytes, false).map(|body| Parsed::Reply(Reply::Other(body)))
        }
        b'O' => match bytes.get(2) {
            None => Step::Incomplete,
            Some(&b) => Step::Item(3, ss3(b)),
        },
        // Two Escapes read as one, as crossterm read them.
        ESC => Step::Item(2, key(KeyCode::Esc, KeyModifiers::NONE)),
        _ => match single_key(&bytes[1..], KeyModifiers::ALT) {
            Step::Item(used, item) => Step::Item(used + 1, item),
            Step::Incomplete => Step::Incomplete,
        },
    }
}

/// What an unfinished sequence is when no more bytes come: `ESC` is Escape; `ESC x…` is
/// Alt+x (the rest is read again).
fn flush_step(bytes: &[u8]) -> Step {
    if bytes.len() == 1 || bytes[0] != ESC {
        // A lone Escape, or a cut UTF-8 character (dropped).
        let item = (bytes[0] == ESC).then(|| key(KeyCode::Esc, KeyModifiers::NONE));
        return Step::Item(1, item.flatten());
    }
    match single_key(&bytes[1..2], KeyModifiers::ALT) {
        Step::Item(_, item) => Step::Item(2, item),
        Step::Incomplete => Step::Item(2, None),
    }
}

/// A control character, Enter, Tab, Backspace or a UTF-8 character.
fn single_key(bytes: &[u8], mods: KeyModifiers) -> Step {
    let b = bytes[0];
    let ctrl = mods | KeyModifiers::CONTROL;
    let item = match b {
        b'\r' => key(KeyCode::Enter, mods),
        b'\t' => key(KeyCode::Tab, mods),
        0x7f => key(KeyCode::Backspace, mods),
        0x00 => key(KeyCode::Char(' '), ctrl),
        ESC => key(KeyCode::Esc, mods),
        0x01..=0x1a => key(KeyCode::Char(char::from(b - 1 + b'a')), ctrl),
        0x1c..=0x1f => key(KeyCode::Char(char::from(b - 0x1c + b'4')), ctrl),
        _ => {
            let width = match b {
                0x00..=0x7f => 1,
                0xc0..=0xdf => 2,
                0xe0..=0xef => 3,
                0xf0..=0xf7 => 4,
                _ => return Step::Item(1, None),
            };
            if bytes.len() < width {
                return Step::Incomplete;
            }
            return match std::str::from_utf8(&bytes[..width])
                .ok()
                .and_then(|s| s.chars().next())
            {
                Some(c) => Step::Item(width, char_key(c, mods)),
                None => Step::Item(1, None),
            };
        }
    };
    Step::Item(1, item)
}

/// A typed character; an uppercase letter carries Shift, as crossterm reported it.
fn char_key(c: char, mods: KeyModifiers) -> Option<Parsed> {
    let mods = if c.is_uppercase() {
        mods | KeyModifiers::SHIFT
    } else {
        mods
    };
    key(KeyCode::Char(c), mods)
}

/// `ESC O x`: arrows, Home/End and F1-F4 in application mode, keypad Enter.
fn ss3(b: u8) -> Option<Parsed> {
    let code = match b {
        b'A' => KeyCode::Up,
        b'B' => KeyCode::Down,
        b'C' => KeyCode::Right,
        b'D' => KeyCode::Left,
        b'H' => KeyCode::Home,
        b'F' => KeyCode::End,
        b'M' => KeyCode::Enter,
        b'P'..=b'S' => KeyCode::F(1 + b - b'P'),
        _ => return None,
    };
    key(code, KeyModifiers::NONE)
}

/// An OSC (`ESC ]`) or DCS/APC/PM/SOS string, ended by ST (`ESC \`) or, for OSC, BEL.
fn string_sequence(bytes: &[u8], bel_ends: bool) -> StringStep {
    let body = &bytes[2..];
    for (i, &b) in body.iter().enumerate() {
        if bel_ends && b == 0x07 {
            return StringStep::Done(2 + i + 1, lossy(&body[..i]));
        }
        if b == ESC {
            return match body.get(i + 1) {
                None => StringStep::Incomplete,
                Some(b'\\') => StringStep::Done(2 + i + 2, lossy(&body[..i])),
                // An Escape that does not end the string starts something else.
                Some(_) => StringStep::Done(2 + i, lossy(&body[..i])),
            };
        }
    }
    StringStep::Incomplete
}

enum StringStep {
    Done(usize, String),
    Incomplete,
}

impl StringStep {
    fn map(self, f: impl FnOnce(String) -> Parsed) -> Step {
        match self {
            StringStep::Done(used, body) => Step::Item(used, Some(f(body))),
            StringStep::Incomplete => Step::Incomplete,
        }
    }
}

fn lossy(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `ESC [ params intermediates final`.
fn csi(bytes: &[u8]) -> Step {
    let body = &bytes[2..];
    if body.first() == Some(&b'M') {
        // X10 mouse: three bytes follow (pi asks for SGR reports; read and dropped).
        return if body.len() >= 4 {
            Step::Item(6, None)
        } else {
            Step::Incomplete
        };
    }
    for (i, &b) in body.iter().enumerate() {
        match b {
            0x20..=0x3f => {}
            0x40..=0x7e => {
                let params = std::str::from_utf8(&body[..i]).unwrap_or("");
                return Step::Item(2 + i + 1, csi_item(params, char::from(b)));
            }
            // A byte no CSI holds: the sequence was cut; drop what came.
            _ => return Step::Item(2 + i, None),
        }
    }
    Step::Incomplete
}

/// The `;`-separated numbers of a CSI, each with its `:`-separated sub-parameters.
fn numbers(params: &str) -> Vec<Vec<u32>> {
    params
        .split(';')
        .map(|p| p.split(':').map(|n| n.parse().unwrap_or(0)).collect())
        .collect()
}

/// The modifiers and event kind of an xterm/kitty modifier parameter (`1 + bits[:kind]`).
fn modifiers(param: Option<&Vec<u32>>) -> (KeyModifiers, KeyEventKind) {
    let Some(param) = param else {
        return (KeyModifiers::NONE, KeyEventKind::Press);
    };
    let bits = param.first().copied().unwrap_or(1).saturating_sub(1);
    let mut mods = KeyModifiers::NONE;
    for (bit, m) in [
        (1, KeyModifiers::SHIFT),
        (2, KeyModifiers::ALT),
        (4, KeyModifiers::CONTROL),
        (8, KeyModifiers::SUPER),
        (16, KeyModifiers::HYPER),
        (32, KeyModifiers::META),
    ] {
        if bits & bit != 0 {
            mods |= m;
        }
    }
    let kind = match param.get(1) {
        Some(2) => KeyEventKind::Repeat,
        Some(3) => KeyEventKind::Release,
        _ => KeyEventKind::Press,
    };
    (mods, kind)
}

fn csi_item(params: &str, last: char) -> Option<Parsed> {
    if let Some(private) = params.strip_prefix('?') {
        return Some(Parsed::Reply(private_reply(private, last, params)));
    }
    if let Some(sgr) = params.strip_prefix('<') {
        return sgr_mouse(sgr, last);
    }
    if params.starts_with(['>', '=']) || params.contains(['$', '"', ' ']) {
        return Some(Parsed::Reply(Reply::Other(format!("{params}{last}"))));
    }
    let nums = numbers(params);
    let (mods, kind) = modifiers(nums.get(1));
    let first = nums.first().and_then(|p| p.first()).copied().unwrap_or(0);
    let code = match last {
        'A' => KeyCode::Up,
        'B' => KeyCode::Down,
        'C' => KeyCode::Right,
        'D' => KeyCode::Left,
        'H' => KeyCode::Home,
        'F' => KeyCode::End,
        'E' => KeyCode::KeypadBegin,
        'P' => KeyCode::F(1),
        'Q' => KeyCode::F(2),
        'S' => KeyCode::F(4),
        // F3 with modifiers; a cursor position report (`CSI row;col R`) is never asked for.
        'R' if first <= 1 => KeyCode::F(3),
        'Z' => return key_kind(KeyCode::BackTab, mods | KeyModifiers::SHIFT, kind),
        'I' if params.is_empty() => return Some(Parsed::Event(Event::FocusGained)),
        'O' if params.is_empty() => return Some(Parsed::Event(Event::FocusLost)),
        '~' => return tilde(first, &nums, mods, kind),
        'u' => return kitty_key(&nums, mods, kind),
        _ => return Some(Parsed::Reply(Reply::Other(format!("{params}{last}")))),
    };
    key_kind(code, mods, kind)
}

/// Replies with a `?` after the CSI: DA1, kitty flags, the mode 2031 report.
fn private_reply(private: &str, last: char, params: &str) -> Reply {
    match last {
        'c' => Reply::DeviceAttributes,
        'u' => Reply::KeyboardFlags(private.parse().unwrap_or(0)),
        'n' => match private {
            "997;1" => Reply::ColorScheme(ColorScheme::Dark),
            "997;2" => Reply::ColorScheme(ColorScheme::Light),
            _ => Reply::Other(format!("{params}{last}")),
        },
        _ => Reply::Other(format!("{params}{last}")),
    }
}

/// `CSI n ~` keys, `CSI 27 ; mods ; code ~` (xterm `modifyOtherKeys`) and the paste start.
fn tilde(first: u32, nums: &[Vec<u32>], mods: KeyModifiers, kind: KeyEventKind) -> Option<Parsed> {
    let code = match first {
        1 | 7 => KeyCode::Home,
        2 => KeyCode::Insert,
        3 => KeyCode::Delete,
        4 | 8 => KeyCode::End,
        5 => KeyCode::PageUp,
        6 => KeyCode::PageDown,
        11..=15 => KeyCode::F(u8::try_from(first - 10).ok()?),
        17..=21 => KeyCode::F(u8::try_from(first - 11).ok()?),
        23..=26 => KeyCode::F(u8::try_from(first - 12).ok()?),
        28 | 29 => KeyCode::F(u8::try_from(first - 13).ok()?),
        31..=34 => KeyCode::F(u8::try_from(first - 14).ok()?),
        27 => {
            let code = nums.get(2).and_then(|p| p.first()).copied()?;
            return code_key(code, None, mods, kind);
        }
        // The caller collects the paste's text.
        200 => return Some(Parsed::Event(Event::Paste(String::new()))),
        _ => return None,
    };
    key_kind(code, mods, kind)
}

/// `CSI code[:shifted[:base]] ; mods[:kind] [; text] u`.
fn kitty_key(nums: &[Vec<u32>], mods: KeyModifiers, kind: KeyEventKind) -> Option<Parsed> {
    let first = nums.first()?;
    let code = first.first().copied()?;
    let shifted = first.get(1).copied().filter(|&s| s != 0);
    code_key(code, shifted, mods, kind)
}

/// A key by its Unicode (or kitty functional) code, with the shifted form when the
/// terminal sent it; Shift+letter reads as the uppercase letter with Shift, as typed text.
fn code_key(
    code: u32,
    shifted: Option<u32>,
    mods: KeyModifiers,
    kind: KeyEventKind,
) -> Option<Parsed> {
    let code = match code {
        9 => KeyCode::Tab,
        13 | 57414 => KeyCode::Enter,
        27 => KeyCode::Esc,
        8 | 127 => KeyCode::Backspace,
        57399..=57408 => KeyCode::Char(char::from_digit(code - 57399, 10)?),
        57409 => KeyCode::Char('.'),
        57410 => KeyCode::Char('/'),
        57411 => KeyCode::Char('*'),
        57412 => KeyCode::Char('-'),
        57413 => KeyCode::Char('+'),
        57415 => KeyCode::Char('='),
        57417 => KeyCode::Left,
        57418 => KeyCode::Right,
        57419 => KeyCode::Up,
        57420 => KeyCode::Down,
        57421 => KeyCode::PageUp,
        57422 => KeyCode::PageDown,
        57423 => KeyCode::Home,
        57424 => KeyCode::End,
        57425 => KeyCode::Insert,
        57426 => KeyCode::Delete,
        57376..=57398 => KeyCode::F(u8::try_from(code - 57376 + 13).ok()?),
        // Modifier keys alone, locks, media keys: nothing pi binds.
        57344..=63743 => return None,
        _ => {
            let base = char::from_u32(code)?;
            let c = match shifted.and_then(char::from_u32) {
                Some(s) if mods.contains(KeyModifiers::SHIFT) => s,
                _ if mods.contains(KeyModifiers::SHIFT) && base.is_ascii_lowercase() => {
                    base.to_ascii_uppercase()
                }
                _ => base,
            };
            if c == ' ' {
                return key_kind(KeyCode::Char(' '), mods, kind);
            }
            KeyCode::Char(c)
        }
    };
    key_kind(code, mods, kind)
}

/// `CSI < button ; column ; row (M | m)`, coordinates from 1.
fn sgr_mouse(params: &str, last: char) -> Option<Parsed> {
    if last != 'M' && last != 'm' {
        return None;
    }
    let mut parts = params.split(';').map(|p| p.parse::<u16>().ok());
    let (cb, x, y) = (parts.next()??, parts.next()??, parts.next()??);
    let number = (cb & 0b11) | ((cb & 0b1100_0000) >> 4);
    let dragging = cb & 0b10_0000 != 0;
    let kind = match (number, dragging) {
        (0, false) => MouseEventKind::Down(MouseButton::Left),
        (1, false) => MouseEventKind::Down(MouseButton::Middle),
        (2, false) => MouseEventKind::Down(MouseButton::Right),
        (0, true) => MouseEventKind::Drag(MouseButton::Left),
        (1, true) => MouseEventKind::Drag(MouseButton::Middle),
        (2, true) => MouseEventKind::Drag(MouseButton::Right),
        (3, false) => MouseEventKind::Up(MouseButton::Left),
        (3..=5, true) => MouseEventKind::Moved,
        (4, false) => MouseEventKind::ScrollUp,
        (5, false) => MouseEventKind::ScrollDown,
        (6, false) => MouseEventKind::ScrollLeft,
        (7, false) => MouseEventKind::ScrollRight,
        _ => return None,
    };
    let kind = match kind {
        MouseEventKind::Down(button) if last == 'm' => MouseEventKind::Up(button),
        other => other,
    };
    let mut modifiers = KeyModifiers::NONE;
    for (bit, m) in [
        (4, KeyModifiers::SHIFT),
        (8, KeyModifiers::ALT),
        (16, KeyModifiers::CONTROL),
    ] {
        if cb & bit != 0 {
            modifiers |= m;
        }
    }
    Some(Parsed::Event(Event::Mouse(MouseEvent {
        kind,
        column: x.saturating_sub(1),
        row: y.saturating_sub(1),
        modifiers,
    })))
}

#[cfg(test)]
#[path = "input_parser_tests.rs"]
mod tests;
