//! Keys as the raw terminal bytes host components expect (`component_input`,
//! `terminal_input`), and back.
//!
//! pi reads keys through crossterm; the extension host's components (pi-tui's
//! `matchesKey`) read the bytes a terminal sends. Keys are encoded the way a legacy xterm
//! sends them, modified arrows and function keys as `CSI 1;m X`, Shift+Enter as the kitty
//! `CSI 13;2u` (which pi-tui understands), pastes as bracketed pastes.

use pi_tui::{Input, KeyCode, KeyEvent, KeyModifiers};

const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// The xterm modifier parameter (`1 + shift + 2·alt + 4·ctrl`), `None` without modifiers.
fn modifier_param(mods: KeyModifiers) -> Option<u8> {
    let mut param = 1;
    if mods.contains(KeyModifiers::SHIFT) {
        param += 1;
    }
    if mods.contains(KeyModifiers::ALT) {
        param += 2;
    }
    if mods.contains(KeyModifiers::CONTROL) {
        param += 4;
    }
    (param > 1).then_some(param)
}

/// `CSI X` or `CSI 1;m X` for cursor keys.
fn cursor_key(letter: char, mods: KeyModifiers) -> String {
    match modifier_param(mods) {
        Some(m) => format!("\x1b[1;{m}{letter}"),
        None => format!("\x1b[{letter}"),
    }
}

/// `CSI n~` or `CSI n;m~` for editing and function keys.
fn tilde_key(number: u8, mods: KeyModifiers) -> String {
    match modifier_param(mods) {
        Some(m) => format!("\x1b[{number};{m}~"),
        None => format!("\x1b[{number}~"),
    }
}

/// The control byte of Ctrl+`c`, if it has one.
fn control_byte(c: char) -> Option<char> {
    let byte = match c.to_ascii_lowercase() {
        l @ 'a'..='z' => l as u8 - b'a' + 1,
        ' ' | '@' | '2' => 0,
        '[' | '3' => 0x1b,
        '\\' | '4' => 0x1c,
        ']' | '5' => 0x1d,
        '^' | '6' => 0x1e,
        '_' | '-' | '/' | '7' => 0x1f,
        _ => return None,
    };
    Some(byte as char)
}

/// The bytes a terminal sends for this key press.
pub fn encode_key(key: &KeyEvent) -> String {
    let mods = key.modifiers;
    let alt = mods.contains(KeyModifiers::ALT);
    let ctrl = mods.contains(KeyModifiers::CONTROL);
    let shift = mods.contains(KeyModifiers::SHIFT);
    let meta = |body: String| if alt { format!("\x1b{body}") } else { body };
    match key.code {
        KeyCode::Char(c) => {
            if ctrl && let Some(byte) = control_byte(c) {
                return meta(byte.to_string());
            }
            meta(c.to_string())
        }
        KeyCode::Enter if shift && !alt && !ctrl => "\x1b[13;2u".into(),
        KeyCode::Enter => meta("\r".into()),
        KeyCode::Tab if shift => "\x1b[Z".into(),
        KeyCode::Tab => meta("\t".into()),
        KeyCode::BackTab => "\x1b[Z".into(),
        KeyCode::Backspace if ctrl => meta("\x08".into()),
        KeyCode::Backspace => meta("\x7f".into()),
        KeyCode::Esc => meta("\x1b".into()),
        KeyCode::Up => cursor_key('A', mods),
        KeyCode::Down => cursor_key('B', mods),
        KeyCode::Right => cursor_key('C', mods),
        KeyCode::Left => cursor_key('D', mods),
        KeyCode::Home => cursor_key('H', mods),
        KeyCode::End => cursor_key('F', mods),
        KeyCode::Insert => tilde_key(2, mods),
        KeyCode::Delete => tilde_key(3, mods),
        KeyCode::PageUp => tilde_key(5, mods),
        KeyCode::PageDown => tilde_key(6, mods),
        KeyCode::F(n @ 1..=4) => match modifier_param(mods) {
            Some(m) => format!("\x1b[1;{m}{}", (b'P' + n - 1) as char),
            None => format!("\x1bO{}", (b'P' + n - 1) as char),
        },
        KeyCode::F(n @ 5..=12) => {
            let number = [15, 17, 18, 19, 20, 21, 23, 24][usize::from(n - 5)];
            tilde_key(number, mods)
        }
        _ => String::new(),
    }
}

/// The bytes of a key press or a (bracketed) paste.
pub fn encode_input(input: &Input) -> String {
    match input {
        Input::Key(key) => encode_key(key),
        Input::Paste(text) => format!("{PASTE_START}{text}{PASTE_END}"),
    }
}

/// Sequences with a fixed meaning, longest first where one prefixes another.
const SEQUENCES: &[(&str, KeyCode, KeyModifiers)] = &[
    ("\x1b[13;2u", KeyCode::Enter, KeyModifiers::SHIFT),
    ("\x1b[Z", KeyCode::BackTab, KeyModifiers::SHIFT),
    ("\x1b[A", KeyCode::Up, KeyModifiers::NONE),
    ("\x1b[B", KeyCode::Down, KeyModifiers::NONE),
    ("\x1b[C", KeyCode::Right, KeyModifiers::NONE),
    ("\x1b[D", KeyCode::Left, KeyModifiers::NONE),
    ("\x1b[H", KeyCode::Home, KeyModifiers::NONE),
    ("\x1b[F", KeyCode::End, KeyModifiers::NONE),
    ("\x1bOA", KeyCode::Up, KeyModifiers::NONE),
    ("\x1bOB", KeyCode::Down, KeyModifiers::NONE),
    ("\x1bOC", KeyCode::Right, KeyModifiers::NONE),
    ("\x1bOD", KeyCode::Left, KeyModifiers::NONE),
    ("\x1b[2~", KeyCode::Insert, KeyModifiers::NONE),
    ("\x1b[3~", KeyCode::Delete, KeyModifiers::NONE),
    ("\x1b[5~", KeyCode::PageUp, KeyModifiers::NONE),
    ("\x1b[6~", KeyCode::PageDown, KeyModifiers::NONE),
];

/// Reads bytes (as a `terminal_input` listener may have rewritten them) back into inputs;
/// unknown escape sequences are dropped.
pub fn decode_inputs(data: &str) -> Vec<Input> {
    let mut out = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        if let Some(body) = rest.strip_prefix(PASTE_START) {
            let end = body.find(PASTE_END).unwrap_or(body.len());
            out.push(Input::Paste(body[..end].to_owned()));
            rest = body.get(end + PASTE_END.len()..).unwrap_or("");
            continue;
        }
        if let Some((seq, code, mods)) = SEQUENCES.iter().find(|(s, ..)| rest.starts_with(s)) {
            out.push(Input::key_with(*code, *mods));
            rest = &rest[seq.len()..];
            continue;
        }
        if rest.starts_with("\x1b[") || rest.starts_with("\x1bO") {
            // An unknown CSI / SS3 sequence: skip to its final byte.
            let end = rest[2..]
                .find(|c: char| ('\x40'..='\x7e').contains(&c))
                .map_or(rest.len(), |i| i + 3);
            rest = &rest[end..];
            continue;
        }
        let mut chars = rest.chars();
        let Some(first) = chars.next() else { break };
        let (alt, c, used) = match (first, chars.next()) {
            ('\x1b', Some(next)) if next != '\x1b' => (true, next, 1 + next.len_utf8()),
            _ => (false, first, first.len_utf8()),
        };
        rest = &rest[used..];
        let (code, mut mods) = match c {
            '\r' | '\n' => (KeyCode::Enter, KeyModifiers::NONE),
            '\t' => (KeyCode::Tab, KeyModifiers::NONE),
            '\x7f' => (KeyCode::Backspace, KeyModifiers::NONE),
            '\x08' => (KeyCode::Backspace, KeyModifiers::CONTROL),
            '\x1b' => (KeyCode::Esc, KeyModifiers::NONE),
            '\0' => (KeyCode::Char(' '), KeyModifiers::CONTROL),
            c @ '\x01'..='\x1a' => (
                KeyCode::Char((c as u8 - 1 + b'a') as char),
                KeyModifiers::CONTROL,
            ),
            c @ '\x1c'..='\x1f' => (
                KeyCode::Char((c as u8 - 0x1c + b'4') as char),
                KeyModifiers::CONTROL,
            ),
            c if c.is_ascii_uppercase() => (KeyCode::Char(c), KeyModifiers::SHIFT),
            c => (KeyCode::Char(c), KeyModifiers::NONE),
        };
        if alt {
            mods |= KeyModifiers::ALT;
        }
        out.push(Input::key_with(code, mods));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode, mods: KeyModifiers) -> String {
        encode_key(&KeyEvent::new(code, mods))
    }

    #[test]
    fn keys_encode_like_a_legacy_terminal() {
        assert_eq!(key(KeyCode::Char('a'), KeyModifiers::NONE), "a");
        assert_eq!(key(KeyCode::Char('c'), KeyModifiers::CONTROL), "\x03");
        assert_eq!(key(KeyCode::Char('x'), KeyModifiers::ALT), "\x1bx");
        assert_eq!(key(KeyCode::Enter, KeyModifiers::NONE), "\r");
        assert_eq!(key(KeyCode::Enter, KeyModifiers::SHIFT), "\x1b[13;2u");
        assert_eq!(key(KeyCode::Esc, KeyModifiers::NONE), "\x1b");
        assert_eq!(key(KeyCode::Up, KeyModifiers::NONE), "\x1b[A");
        assert_eq!(key(KeyCode::Left, KeyModifiers::CONTROL), "\x1b[1;5D");
        assert_eq!(key(KeyCode::BackTab, KeyModifiers::SHIFT), "\x1b[Z");
        assert_eq!(key(KeyCode::Delete, KeyModifiers::NONE), "\x1b[3~");
        assert_eq!(key(KeyCode::F(1), KeyModifiers::NONE), "\x1bOP");
        assert_eq!(key(KeyCode::F(5), KeyModifiers::NONE), "\x1b[15~");
        assert_eq!(key(KeyCode::Backspace, KeyModifiers::NONE), "\x7f");
        assert_eq!(
            encode_input(&Input::Paste("hi".into())),
            "\x1b[200~hi\x1b[201~"
        );
    }

    #[test]
    fn bytes_decode_back_to_inputs() {
        let inputs = [
            Input::key(KeyCode::Char('q')),
            Input::key_with(KeyCode::Char('c'), KeyModifiers::CONTROL),
            Input::key(KeyCode::Up),
            Input::key(KeyCode::Enter),
            Input::key_with(KeyCode::Char('x'), KeyModifiers::ALT),
            Input::key(KeyCode::Esc),
            Input::Paste("pasted".into()),
            Input::key(KeyCode::Delete),
        ];
        let bytes: String = inputs.iter().map(encode_input).collect();
        assert_eq!(decode_inputs(&bytes), inputs);
        assert_eq!(
            decode_inputs("\x1b[1;5Dz"),
            vec![Input::key(KeyCode::Char('z'))]
        );
    }
}
