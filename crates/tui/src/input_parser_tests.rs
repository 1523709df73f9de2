use super::*;

fn all(bytes: &[u8]) -> Vec<Parsed> {
    let mut parser = InputParser::new();
    parser.feed(bytes);
    let mut out = Vec::new();
    while let Some(item) = parser.next(true) {
        out.push(item);
    }
    out
}

fn keys(bytes: &[u8]) -> Vec<(KeyCode, KeyModifiers)> {
    all(bytes)
        .into_iter()
        .filter_map(|p| match p {
            Parsed::Event(Event::Key(k)) if k.kind != KeyEventKind::Release => {
                Some((k.code, k.modifiers))
            }
            _ => None,
        })
        .collect()
}

const NONE: KeyModifiers = KeyModifiers::NONE;
const CTRL: KeyModifiers = KeyModifiers::CONTROL;
const ALT: KeyModifiers = KeyModifiers::ALT;
const SHIFT: KeyModifiers = KeyModifiers::SHIFT;

#[test]
fn legacy_keys_read_as_crossterm_read_them() {
    assert_eq!(
        keys(b"aA\r\t\x7f\x03\x00\x1f\x08"),
        [
            (KeyCode::Char('a'), NONE),
            (KeyCode::Char('A'), SHIFT),
            (KeyCode::Enter, NONE),
            (KeyCode::Tab, NONE),
            (KeyCode::Backspace, NONE),
            (KeyCode::Char('c'), CTRL),
            (KeyCode::Char(' '), CTRL),
            (KeyCode::Char('7'), CTRL),
            (KeyCode::Char('h'), CTRL),
        ]
    );
    assert_eq!(
        keys("é→".as_bytes()),
        [(KeyCode::Char('é'), NONE), (KeyCode::Char('→'), NONE)]
    );
    assert_eq!(
        keys(b"\x1b[A\x1b[1;5C\x1bOH\x1b[3~\x1b[5;2~\x1b[Z\x1b[15~\x1bOP"),
        [
            (KeyCode::Up, NONE),
            (KeyCode::Right, CTRL),
            (KeyCode::Home, NONE),
            (KeyCode::Delete, NONE),
            (KeyCode::PageUp, SHIFT),
            (KeyCode::BackTab, SHIFT),
            (KeyCode::F(5), NONE),
            (KeyCode::F(1), NONE),
        ]
    );
}

#[test]
fn escape_prefixes_alt_and_stands_alone_when_nothing_follows() {
    assert_eq!(
        keys(b"\x1bb\x1b\r\x1b\x7f"),
        [
            (KeyCode::Char('b'), ALT),
            (KeyCode::Enter, ALT),
            (KeyCode::Backspace, ALT),
        ]
    );
    let mut parser = InputParser::new();
    parser.feed(b"\x1b");
    assert!(parser.pending_is_lone_escape());
    assert_eq!(parser.next(false), None, "waits for what may follow");
    assert_eq!(parser.next(true), key(KeyCode::Esc, NONE));
    // An unfinished sequence given up on reads as Alt and its first byte.
    assert_eq!(keys(b"\x1b["), [(KeyCode::Char('['), ALT)]);
    assert_eq!(keys(b"\x1bO"), [(KeyCode::Char('O'), ALT | SHIFT)]);
}

#[test]
fn sequences_split_across_reads_are_joined() {
    let mut parser = InputParser::new();
    let mut got = Vec::new();
    for byte in b"\x1b[1;2A\xc3\xa9\x1b]11;rgb:0/0/0\x07" {
        parser.feed(&[*byte]);
        while let Some(item) = parser.next(false) {
            got.push(item);
        }
    }
    assert_eq!(
        got,
        [
            key(KeyCode::Up, SHIFT).unwrap(),
            key(KeyCode::Char('é'), NONE).unwrap(),
            Parsed::Reply(Reply::Osc("11;rgb:0/0/0".into())),
        ]
    );
}

#[test]
fn modified_keys_of_modify_other_keys_and_kitty() {
    // xterm modifyOtherKeys (tmux with extended-keys): Shift+Enter, Ctrl+Shift+A.
    assert_eq!(
        keys(b"\x1b[27;2;13~\x1b[27;6;65~"),
        [(KeyCode::Enter, SHIFT), (KeyCode::Char('A'), CTRL | SHIFT)]
    );
    // kitty: Shift+Enter, Ctrl+C, Escape, Alt+x, Shift+a with its shifted key, a release.
    let parsed = all(b"\x1b[13;2u\x1b[99;5u\x1b[27u\x1b[120;3u\x1b[97:65;2u\x1b[99;5:3u");
    let codes: Vec<_> = parsed
        .iter()
        .map(|p| match p {
            Parsed::Event(Event::Key(k)) => (k.code, k.modifiers, k.kind),
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        codes,
        [
            (KeyCode::Enter, SHIFT, KeyEventKind::Press),
            (KeyCode::Char('c'), CTRL, KeyEventKind::Press),
            (KeyCode::Esc, NONE, KeyEventKind::Press),
            (KeyCode::Char('x'), ALT, KeyEventKind::Press),
            (KeyCode::Char('A'), SHIFT, KeyEventKind::Press),
            (KeyCode::Char('c'), CTRL, KeyEventKind::Release),
        ]
    );
    // Keypad digits and Enter; a modifier key alone is nothing.
    assert_eq!(
        keys(b"\x1b[57400u\x1b[57414u\x1b[57441;2u"),
        [(KeyCode::Char('1'), NONE), (KeyCode::Enter, NONE)]
    );
}

#[test]
fn replies_never_read_as_keys() {
    let parsed = all(
        b"\x1b]10;rgb:ffff/ffff/ffff\x1b\\\x1b[?997;2n\x1b[?997;1n\x1b[?1u\x1b[?64;1;2c\x1b[6;18;9t\x1bP>|tmux\x1b\\x",
    );
    assert_eq!(
        parsed,
        [
            Parsed::Reply(Reply::Osc("10;rgb:ffff/ffff/ffff".into())),
            Parsed::Reply(Reply::ColorScheme(ColorScheme::Light)),
            Parsed::Reply(Reply::ColorScheme(ColorScheme::Dark)),
            Parsed::Reply(Reply::KeyboardFlags(1)),
            Parsed::Reply(Reply::DeviceAttributes),
            Parsed::Reply(Reply::Other("6;18;9t".into())),
            Parsed::Reply(Reply::Other(">|tmux".into())),
            key(KeyCode::Char('x'), NONE).unwrap(),
        ]
    );
}

#[test]
fn pastes_and_mouse_reports() {
    assert_eq!(
        all(b"\x1b[200~a\x1b[Bb\r\n\x1b[201~z"),
        [
            Parsed::Event(Event::Paste("a\x1b[Bb\r\n".into())),
            key(KeyCode::Char('z'), NONE).unwrap(),
        ]
    );
    let mut parser = InputParser::new();
    parser.feed(b"\x1b[200~half");
    assert_eq!(parser.next(true), None, "a paste waits for its end");
    parser.feed(b" done\x1b[201~");
    assert_eq!(
        parser.next(false),
        Some(Parsed::Event(Event::Paste("half done".into())))
    );
    let mouse = |kind, column, row| {
        Parsed::Event(Event::Mouse(MouseEvent {
            kind,
            column,
            row,
            modifiers: NONE,
        }))
    };
    assert_eq!(
        all(b"\x1b[<64;10;5M\x1b[<65;1;1M\x1b[<0;3;4M\x1b[<32;4;4M\x1b[<0;4;4m\x1b[<35;9;9M"),
        [
            mouse(MouseEventKind::ScrollUp, 9, 4),
            mouse(MouseEventKind::ScrollDown, 0, 0),
            mouse(MouseEventKind::Down(MouseButton::Left), 2, 3),
            mouse(MouseEventKind::Drag(MouseButton::Left), 3, 3),
            mouse(MouseEventKind::Up(MouseButton::Left), 3, 3),
            mouse(MouseEventKind::Moved, 8, 8),
        ]
    );
}

#[test]
fn malformed_input_is_dropped_without_losing_what_follows() {
    assert_eq!(
        keys(b"\x1b[12\x01q\xff\xfeok"),
        [
            (KeyCode::Char('a'), CTRL),
            (KeyCode::Char('q'), NONE),
            (KeyCode::Char('o'), NONE),
            (KeyCode::Char('k'), NONE),
        ]
    );
}

#[test]
fn kitty_function_keys_and_private_use_codes() {
    // F1 with Ctrl, F3 as `CSI 13 ~` with Shift, F5, F12, F13 and a lock key (nothing).
    assert_eq!(
        keys(b"\x1b[1;5P\x1b[13;2~\x1b[15~\x1b[24;3~\x1b[57376u\x1b[57358u"),
        [
            (KeyCode::F(1), CTRL),
            (KeyCode::F(3), SHIFT),
            (KeyCode::F(5), NONE),
            (KeyCode::F(12), ALT),
            (KeyCode::F(13), NONE),
        ]
    );
}

#[test]
fn shifted_symbols_match_the_bindings_that_name_them() {
    use crate::input::key_id;
    let ids = |bytes: &[u8]| -> Vec<String> {
        all(bytes)
            .into_iter()
            .filter_map(|p| match p {
                Parsed::Event(Event::Key(k)) => key_id(&k),
                _ => None,
            })
            .collect()
    };
    // Ctrl+Shift+= under kitty (with its shifted key) and under modifyOtherKeys, then a
    // typed `+`: the binding `ctrl++` and the key `+`.
    assert_eq!(
        ids(b"\x1b[61:43;6u\x1b[27;6;43~+"),
        ["ctrl++", "ctrl++", "+"]
    );
}
