//! The prompt editor driven by input events.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;

use pi_tui::keybindings::{Keybindings, TUI_KEYBINDINGS};
use pi_tui::{
    CURSOR_MARKER, CombinedAutocompleteProvider, Component, Editor, EditorAction, EditorTheme,
    Input, KeyCode, KeyModifiers, SlashCommand, visible_width,
};

fn keybindings() -> Arc<Keybindings> {
    Arc::new(Keybindings::new(
        TUI_KEYBINDINGS.to_vec(),
        &serde_json::Map::new(),
    ))
}

fn editor() -> Editor {
    Editor::new(EditorTheme::default(), keybindings())
}

fn key(code: KeyCode) -> Input {
    Input::key(code)
}

fn ctrl(c: char) -> Input {
    Input::key_with(KeyCode::Char(c), KeyModifiers::CONTROL)
}

fn alt(c: char) -> Input {
    Input::key_with(KeyCode::Char(c), KeyModifiers::ALT)
}

fn typ(e: &mut Editor, text: &str) {
    for c in text.chars() {
        e.handle(&key(KeyCode::Char(c)));
    }
}

fn strip(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            match chars.next() {
                Some('[') => {
                    for c in chars.by_ref() {
                        if ('@'..='~').contains(&c) {
                            break;
                        }
                    }
                }
                Some('_') => {
                    for c in chars.by_ref() {
                        if c == '\x07' {
                            break;
                        }
                    }
                }
                _ => {}
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn provider(dir: &Path) -> Box<CombinedAutocompleteProvider> {
    Box::new(CombinedAutocompleteProvider::new(
        vec![
            SlashCommand::new("model", "Select model"),
            SlashCommand::new("settings", "Open settings"),
            SlashCommand::new("session", "Session info"),
        ],
        dir.to_path_buf(),
    ))
}

#[test]
fn typing_inserts_text_and_reports_changes() {
    let mut e = editor();
    assert!(e.is_empty());
    assert_eq!(e.handle(&key(KeyCode::Char('h'))), EditorAction::Changed);
    typ(&mut e, "ello wörld");
    assert_eq!(e.text(), "hello wörld");
    assert_eq!(e.cursor(), (0, "hello wörld".len()));
    assert_eq!(e.handle(&key(KeyCode::Left)), EditorAction::Consumed);
    assert_eq!(e.handle(&key(KeyCode::Backspace)), EditorAction::Changed);
    assert_eq!(e.text(), "hello wörd");
    e.handle(&key(KeyCode::Left));
    e.handle(&key(KeyCode::Left));
    e.handle(&key(KeyCode::Backspace));
    assert_eq!(e.text(), "hello örd");
    e.handle(&key(KeyCode::Home));
    e.handle(&key(KeyCode::Delete));
    assert_eq!(e.text(), "ello örd");
    e.handle(&key(KeyCode::Char('H')));
    assert_eq!(e.text(), "Hello örd");
}

#[test]
fn word_motions_stop_at_words_and_punctuation() {
    let mut e = editor();
    typ(&mut e, "foo bar-baz qux");
    let left = Input::key_with(KeyCode::Left, KeyModifiers::ALT);
    e.handle(&left);
    assert_eq!(e.cursor().1, 12);
    e.handle(&Input::key_with(KeyCode::Left, KeyModifiers::CONTROL));
    assert_eq!(e.cursor().1, 8);
    e.handle(&left);
    assert_eq!(e.cursor().1, 7);
    e.handle(&alt('b'));
    assert_eq!(e.cursor().1, 4);
    e.handle(&alt('b'));
    assert_eq!(e.cursor().1, 0);
    e.handle(&alt('f'));
    assert_eq!(e.cursor().1, 3);
    e.handle(&Input::key_with(KeyCode::Right, KeyModifiers::ALT));
    assert_eq!(e.cursor().1, 7);
    e.handle(&ctrl('e'));
    assert_eq!(e.cursor().1, 15);
    e.handle(&ctrl('a'));
    assert_eq!(e.cursor().1, 0);
}

#[test]
fn kills_go_to_the_ring_and_yank_pop_cycles() {
    let mut e = editor();
    typ(&mut e, "one two three");
    e.handle(&ctrl('w'));
    e.handle(&ctrl('w'));
    assert_eq!(e.text(), "one ");
    // Consecutive kills accumulate into one entry.
    e.handle(&ctrl('y'));
    assert_eq!(e.text(), "one two three");

    let mut e = editor();
    typ(&mut e, "hello world");
    e.handle(&ctrl('w'));
    assert_eq!(e.text(), "hello ");
    e.handle(&ctrl('a'));
    e.handle(&ctrl('k'));
    assert_eq!(e.text(), "");
    e.handle(&ctrl('y'));
    assert_eq!(e.text(), "hello ");
    e.handle(&alt('y'));
    assert_eq!(e.text(), "world");
    e.handle(&alt('y'));
    assert_eq!(e.text(), "hello ");

    let mut e = editor();
    typ(&mut e, "abc def");
    e.handle(&ctrl('u'));
    assert_eq!(e.text(), "");
    e.handle(&ctrl('y'));
    e.handle(&ctrl('y'));
    assert_eq!(e.text(), "abc defabc def");
    e.handle(&ctrl('a'));
    e.handle(&alt('d'));
    assert_eq!(e.text(), " defabc def");
}

#[test]
fn undo_restores_coalesced_word_runs() {
    let mut e = editor();
    typ(&mut e, "hello world");
    let undo = ctrl('-');
    assert_eq!(e.handle(&undo), EditorAction::Changed);
    assert_eq!(e.text(), "hello");
    e.handle(&undo);
    assert_eq!(e.text(), "");
    assert_eq!(e.handle(&undo), EditorAction::Consumed);

    typ(&mut e, "abc");
    e.handle(&ctrl('w'));
    assert_eq!(e.text(), "");
    e.handle(&undo);
    assert_eq!(e.text(), "abc");
    assert_eq!(e.cursor(), (0, 3));
}

#[test]
fn history_walks_previous_submissions() {
    let mut e = editor();
    for prompt in ["first", "second"] {
        typ(&mut e, prompt);
        let action = e.handle(&key(KeyCode::Enter));
        assert_eq!(action, EditorAction::Submit(prompt.to_string()));
        e.add_to_history(prompt);
    }
    assert!(e.is_empty());
    e.handle(&key(KeyCode::Up));
    assert_eq!(e.text(), "second");
    e.handle(&key(KeyCode::Up));
    assert_eq!(e.text(), "first");
    e.handle(&key(KeyCode::Up));
    assert_eq!(e.text(), "first");
    e.handle(&key(KeyCode::Down));
    assert_eq!(e.text(), "second");
    e.handle(&key(KeyCode::Down));
    assert_eq!(e.text(), "");
}

#[test]
fn shift_enter_and_backslash_enter_insert_newlines() {
    let mut e = editor();
    typ(&mut e, "a");
    e.handle(&Input::key_with(KeyCode::Enter, KeyModifiers::SHIFT));
    typ(&mut e, "b\\");
    assert_eq!(e.handle(&key(KeyCode::Enter)), EditorAction::Changed);
    typ(&mut e, "c");
    assert_eq!(e.text(), "a\nb\nc");
    assert_eq!(e.lines().len(), 3);
    e.handle(&key(KeyCode::Up));
    assert_eq!(e.cursor(), (1, 1));
    e.handle(&key(KeyCode::Up));
    assert_eq!(e.cursor(), (0, 1));
    // Up on the first line goes to its start, then history (none here).
    e.handle(&key(KeyCode::Up));
    assert_eq!(e.cursor(), (0, 0));
    e.handle(&key(KeyCode::Left));
    assert_eq!(e.cursor(), (0, 0));
    e.handle(&ctrl('e'));
    e.handle(&key(KeyCode::Right));
    assert_eq!(e.cursor(), (1, 0));
    e.handle(&key(KeyCode::Backspace));
    assert_eq!(e.text(), "ab\nc");
    assert_eq!(
        e.handle(&key(KeyCode::Enter)),
        EditorAction::Submit("ab\nc".into())
    );
    assert!(e.is_empty());
}

#[test]
fn renders_wrapped_text_within_the_width() {
    let mut e = editor();
    typ(
        &mut e,
        "the quick brown fox jumps over the lazy dog and keeps running far away",
    );
    let lines = e.render(20);
    for line in &lines {
        assert_eq!(visible_width(line), 20, "{line:?}");
    }
    assert_eq!(strip(&lines[0]), "─".repeat(20));
    assert_eq!(strip(lines.last().unwrap()), "─".repeat(20));
    let text: Vec<String> = lines[1..lines.len() - 1].iter().map(|l| strip(l)).collect();
    // One column stays free for the cursor, so 19 columns of text.
    assert_eq!(text[0].trim_end(), "the quick brown");
    assert_eq!(text[1].trim_end(), "fox jumps over the");
    assert!(text.len() >= 4);
    // The cursor is an inverse cell at the end of the text.
    assert!(lines.iter().any(|l| l.contains("\x1b[7m \x1b[27m")));

    // Up moves between wrapped rows of one logical line.
    let before = e.cursor();
    e.handle(&key(KeyCode::Up));
    assert_eq!(e.cursor().0, 0);
    assert!(e.cursor().1 < before.1);
}

#[test]
fn scrolls_long_text_and_shows_indicators() {
    let mut e = editor();
    e.set_max_visible_lines(3);
    for i in 0..8 {
        if i > 0 {
            e.handle(&Input::key_with(KeyCode::Enter, KeyModifiers::SHIFT));
        }
        typ(&mut e, &format!("line {i}"));
    }
    let lines = e.render(30);
    assert_eq!(lines.len(), 5);
    assert!(strip(&lines[0]).contains("↑ 5 more"), "{:?}", lines[0]);
    assert!(strip(&lines[3]).starts_with("line 7"));
    for line in &lines {
        assert_eq!(visible_width(line), 30);
    }
    for _ in 0..7 {
        e.handle(&key(KeyCode::Up));
    }
    let lines = e.render(30);
    assert!(strip(&lines[1]).starts_with("line 0"));
    assert!(strip(&lines[4]).contains("↓ 5 more"), "{:?}", lines[4]);
}

#[test]
fn cursor_marker_only_when_focused() {
    let mut e = editor();
    typ(&mut e, "hi");
    assert!(!e.render(20).concat().contains(CURSOR_MARKER));
    e.set_focused(true);
    let rendered = e.render(20).concat();
    assert!(rendered.contains(&format!("hi{CURSOR_MARKER}\x1b[7m")));
    e.handle(&key(KeyCode::Left));
    let rendered = e.render(20).concat();
    assert!(rendered.contains(&format!("h{CURSOR_MARKER}\x1b[7mi\x1b[27m")));
}

#[test]
fn large_pastes_collapse_and_expand_on_submit() {
    let mut e = editor();
    typ(&mut e, "see ");
    let big: String = (1..=15).map(|i| format!("row {i}\n")).collect();
    let big = big.trim_end().to_string();
    assert_eq!(e.handle(&Input::Paste(big.clone())), EditorAction::Changed);
    assert_eq!(e.text(), "see [paste #1 +15 lines]");
    assert_eq!(e.expanded_text(), format!("see {big}"));
    // The marker is one unit for motions and deletion.
    e.handle(&key(KeyCode::Left));
    assert_eq!(e.cursor().1, 4);
    e.handle(&ctrl('e'));
    let long = "x".repeat(1200);
    e.handle(&Input::Paste(long.clone()));
    assert_eq!(e.text(), "see [paste #1 +15 lines][paste #2 1200 chars]");
    e.handle(&key(KeyCode::Backspace));
    assert_eq!(e.text(), "see [paste #1 +15 lines]");
    let action = e.handle(&key(KeyCode::Enter));
    assert_eq!(action, EditorAction::Submit(format!("see {big}")));
}

#[test]
fn small_pastes_are_normalized_text() {
    let mut e = editor();
    e.handle(&Input::Paste("a\r\n\tb\rc".into()));
    assert_eq!(e.text(), "a\n    b\nc");
    assert_eq!(e.cursor(), (2, 1));
    e.handle(&ctrl('-'));
    assert!(e.is_empty());
}

#[test]
fn slash_commands_complete_fuzzily() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = editor();
    e.set_autocomplete(provider(dir.path()));
    typ(&mut e, "/");
    assert!(e.is_showing_autocomplete());
    let list = e.render(60).iter().map(|l| strip(l)).collect::<Vec<_>>();
    assert!(list.iter().any(|l| l.starts_with("→ model")), "{list:?}");
    typ(&mut e, "stg");
    assert!(e.is_showing_autocomplete());
    e.handle(&key(KeyCode::Tab));
    assert_eq!(e.text(), "/settings ");
    assert!(!e.is_showing_autocomplete());

    let mut e = editor();
    e.set_autocomplete(provider(dir.path()));
    typ(&mut e, "/se");
    e.handle(&key(KeyCode::Down));
    let list = e.render(60).iter().map(|l| strip(l)).collect::<Vec<_>>();
    let selected = list.iter().find(|l| l.starts_with("→ ")).unwrap().clone();
    // Enter applies the command and submits it.
    let action = e.handle(&key(KeyCode::Enter));
    let name = selected[4..].split_whitespace().next().unwrap().to_string();
    assert_eq!(action, EditorAction::Submit(format!("/{name}")));
}

#[test]
fn escape_closes_suggestions_then_belongs_to_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let mut e = editor();
    e.set_autocomplete(provider(dir.path()));
    typ(&mut e, "/m");
    assert!(e.is_showing_autocomplete());
    assert_eq!(e.handle(&key(KeyCode::Esc)), EditorAction::Consumed);
    assert!(!e.is_showing_autocomplete());
    assert_eq!(e.handle(&key(KeyCode::Esc)), EditorAction::NotConsumed);
    assert_eq!(e.text(), "/m");
}

#[test]
fn at_completes_files_fuzzily_respecting_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("src/components")).unwrap();
    std::fs::create_dir_all(root.join("target/debug")).unwrap();
    std::fs::write(root.join("src/main.rs"), "").unwrap();
    std::fs::write(root.join("src/components/editor.rs"), "").unwrap();
    std::fs::write(root.join("README.md"), "").unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    std::fs::write(root.join("target/debug/built.bin"), "").unwrap();

    let mut e = editor();
    e.set_autocomplete(provider(root));
    typ(&mut e, "look at @");
    assert!(e.is_showing_autocomplete());
    typ(&mut e, "edtr");
    assert!(e.is_showing_autocomplete());
    let rows = e.render(80).iter().map(|l| strip(l)).collect::<Vec<_>>();
    assert!(
        rows.iter()
            .any(|l| l.starts_with("→ editor.rs") && l.contains("src/components/editor.rs")),
        "{rows:?}"
    );
    e.handle(&key(KeyCode::Tab));
    assert_eq!(e.text(), "look at @src/components/editor.rs ");

    // Ignored files are not offered.
    typ(&mut e, "@built");
    assert!(!e.is_showing_autocomplete());

    // Directories complete without a trailing space so completion can go on.
    let mut e = editor();
    e.set_autocomplete(provider(root));
    typ(&mut e, "@compo");
    e.handle(&key(KeyCode::Enter));
    assert_eq!(e.text(), "@src/components/");
    assert!(!e.is_showing_autocomplete());
}

#[test]
fn tab_completes_paths_without_at() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
    std::fs::write(dir.path().join("src/mod.rs"), "").unwrap();
    let mut e = editor();
    e.set_autocomplete(provider(dir.path()));
    typ(&mut e, "cat sr");
    assert!(!e.is_showing_autocomplete());
    e.handle(&key(KeyCode::Tab));
    assert_eq!(e.text(), "cat src/");
    e.handle(&key(KeyCode::Tab));
    assert!(e.is_showing_autocomplete());
    typ(&mut e, "ma");
    e.handle(&key(KeyCode::Tab));
    assert_eq!(e.text(), "cat src/main.rs");
}

#[test]
fn app_keys_are_not_consumed() {
    let mut e = editor();
    for input in [
        ctrl('c'),
        ctrl('d'),
        ctrl('p'),
        ctrl('l'),
        ctrl('o'),
        ctrl('t'),
        key(KeyCode::Esc),
        Input::key_with(KeyCode::BackTab, KeyModifiers::SHIFT),
        Input::key_with(KeyCode::Enter, KeyModifiers::ALT),
    ] {
        assert_eq!(e.handle(&input), EditorAction::NotConsumed, "{input:?}");
    }
    typ(&mut e, "ab");
    e.handle(&key(KeyCode::Home));
    assert_eq!(e.handle(&ctrl('d')), EditorAction::Changed);
    assert_eq!(e.text(), "b");
    assert_eq!(e.handle(&ctrl('c')), EditorAction::NotConsumed);
}

#[test]
fn jump_to_character() {
    let mut e = editor();
    typ(&mut e, "hello world");
    e.handle(&ctrl('a'));
    e.handle(&ctrl(']'));
    assert_eq!(e.handle(&key(KeyCode::Char('o'))), EditorAction::Consumed);
    assert_eq!(e.cursor().1, 4);
    e.handle(&ctrl(']'));
    e.handle(&key(KeyCode::Char('o')));
    assert_eq!(e.cursor().1, 7);
    e.handle(&Input::key_with(
        KeyCode::Char(']'),
        KeyModifiers::CONTROL | KeyModifiers::ALT,
    ));
    e.handle(&key(KeyCode::Char('h')));
    assert_eq!(e.cursor().1, 0);
    assert_eq!(e.text(), "hello world");
}

#[test]
fn component_handle_input_keeps_the_submission() {
    let mut e = editor();
    typ(&mut e, "  hi  ");
    assert!(e.handle_input(&key(KeyCode::Enter)));
    assert_eq!(e.take_submitted(), Some("hi".to_string()));
    assert_eq!(e.take_submitted(), None);
    assert!(!e.handle_input(&ctrl('c')));
}

#[test]
fn random_editing_never_panics_and_rows_fit() {
    let inputs = [
        key(KeyCode::Char('a')),
        key(KeyCode::Char('é')),
        key(KeyCode::Char('漢')),
        key(KeyCode::Char('😀')),
        key(KeyCode::Char(' ')),
        key(KeyCode::Char('-')),
        key(KeyCode::Char('@')),
        key(KeyCode::Backspace),
        key(KeyCode::Delete),
        key(KeyCode::Left),
        key(KeyCode::Right),
        key(KeyCode::Up),
        key(KeyCode::Down),
        key(KeyCode::Home),
        key(KeyCode::End),
        key(KeyCode::PageUp),
        key(KeyCode::PageDown),
        key(KeyCode::Tab),
        key(KeyCode::Esc),
        Input::key_with(KeyCode::Enter, KeyModifiers::SHIFT),
        Input::key_with(KeyCode::Left, KeyModifiers::ALT),
        Input::key_with(KeyCode::Right, KeyModifiers::ALT),
        ctrl('w'),
        ctrl('k'),
        ctrl('u'),
        ctrl('y'),
        alt('y'),
        alt('d'),
        ctrl('-'),
        ctrl(']'),
        Input::Paste("x漢\ty\r\nz".into()),
        Input::Paste("long line ".repeat(120)),
        Input::Paste("r\n".repeat(12)),
    ];
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.txt"), "").unwrap();
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    for round in 0..16 {
        let mut e = editor();
        e.set_autocomplete(provider(dir.path()));
        e.set_padding_x(round % 3);
        e.set_focused(true);
        let width = 1 + round * 3 % 40;
        for _ in 0..150 {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let input = &inputs[(seed % inputs.len() as u64) as usize];
            e.handle(input);
            let (line, col) = e.cursor();
            assert!(line < e.lines().len());
            assert!(e.lines()[line].is_char_boundary(col));
            for row in e.render(width) {
                assert!(visible_width(&row) <= width, "{row:?} at {width}");
            }
        }
    }
}

#[test]
fn a_status_is_drawn_into_the_top_border() {
    let mut e = editor();
    e.set_top_status(Some(("⠋ Working".into(), "⠋".into())));
    let top = strip(&e.render(30)[0]);
    assert_eq!(top, format!("── ⠋ Working {}", "─".repeat(17)));
    // The status is cut to leave the border's ends; narrower still, the spinner alone.
    let narrow = strip(&e.render(12)[0]);
    assert_eq!(narrow, "── ⠋ Worki ─");
    let tiny = strip(&e.render(6)[0]);
    assert_eq!(tiny, "── ⠋ ─");
    e.set_top_status(None);
    assert_eq!(strip(&e.render(10)[0]), "─".repeat(10));
}
