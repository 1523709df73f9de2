//! Fullscreen mode, pi 1.6's default (`tuiMode`, `--tui-mode`): the alternate screen with
//! the mouse reported, the transcript scrolling by wheel and page keys under a fixed dock
//! (editor and footer), the jump-to-latest label, and on exit the main screen back with
//! the transcript and the resume hint printed. Ours and pi 1.6.0 (`PI_TS16`) side by side
//! in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const ROWS: u16 = 30;
/// The dock at 100x30 with an empty editor: spacer, editor border, editor line, border,
/// two footer lines.
const DOCK_ROWS: usize = 6;
const JUMP_LABEL: &str = "↓ Jump to latest message · Ctrl+End";

/// Sixty numbered lines, far more than the viewport holds.
fn long_answer() -> String {
    (1..=60)
        .map(|n| format!("Line {n} of the long answer."))
        .collect::<Vec<_>>()
        .join("\n\n")
}

/// The screen's rows without the scrollbar's column (it comes and goes with scrolling).
fn rows(screen: &str) -> Vec<String> {
    let mut rows: Vec<String> = screen
        .lines()
        .map(|row| row.trim_end_matches(['│', '┃', '█']).trim_end().to_owned())
        .collect();
    rows.resize(usize::from(ROWS), String::new());
    rows
}

fn dock(screen: &str) -> Vec<String> {
    rows(screen)[usize::from(ROWS) - DOCK_ROWS..].to_vec()
}

/// Waits until the long answer has ended: its last line shown, the footer showing the
/// reply's usage, no working indicator (ours draws it above the editor, pi 1.6.0 in the
/// editor's top border) and the dock back to its idle rows.
/// Starts `pi` and sends `prompt` once its startup notes are up: the tmux keyboard warning
/// (extended-keys is off on the test server) is checked in the background by both pis, and
/// an answer given on the command line could come before it or after it.
fn start_prompted(env: &Env, pi: &str, vars: &[(&str, &str)], prompt: &str) -> Tmux {
    let tmux = Tmux::start_program(env, pi, vars, &[], 100, ROWS);
    tmux.wait_for("extended-keys");
    tmux.type_text(prompt);
    tmux.keys(&["Enter"]);
    tmux
}

fn wait_settled(tmux: &Tmux, name: &str) -> String {
    let border = "─".repeat(100);
    tmux.wait_steady(
        &format!("{name}: the answer settled"),
        Duration::from_secs(15),
        |s| {
            let rows = rows(s);
            s.contains("Line 60 of the long answer.")
                && !s.contains("Working")
                && rows[usize::from(ROWS) - 6].is_empty()
                && rows[usize::from(ROWS) - 5] == border
                && rows[usize::from(ROWS) - 1].starts_with('↑')
        },
    )
}

/// An SGR wheel report at column 10, row 10 (`up`: button 64, else 65).
fn wheel(tmux: &Tmux, up: bool) {
    let button = if up { 64 } else { 65 };
    tmux.type_text(&format!("\x1b[<{button};10;10M"));
}

#[test]
fn fullscreen_scrolls_the_transcript_under_a_fixed_dock_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        server.push(Script::text(long_answer()));
        // A fixed wheel step, so that a notch moves the same in both.
        let env = Env::new(&server, 128_000, json!({"fullscreenWheelScrollLines": 3}));
        let pi = program_path(&wrapper);
        let tmux = start_prompted(&env, &pi, &[("PI_OFFLINE", "1")], "Count.");
        let end = wait_settled(&tmux, name);
        assert_eq!(tmux.display("#{alternate_on}"), "1", "{name}: {end}");
        assert_eq!(tmux.display("#{mouse_sgr_flag}"), "1", "{name}");
        // Under tmux: button-motion tracking, not every pointer motion.
        assert_eq!(tmux.display("#{mouse_button_flag}"), "1", "{name}");
        assert_eq!(tmux.display("#{mouse_all_flag}"), "0", "{name}");
        assert!(!end.contains(JUMP_LABEL), "{name}: {end}");
        let fixed = dock(&end);
        let viewport = usize::from(ROWS) - DOCK_ROWS;
        // Each step waits for the whole expected screen (a capture may catch a frame half
        // drawn): the transcript moved by exactly so many rows, the dock where it was.
        let until = |what: &str, check: &dyn Fn(&[String]) -> bool| -> Vec<String> {
            let screen = tmux.wait(&format!("{name}: {what}"), Duration::from_secs(10), |s| {
                let rows = rows(s);
                rows[viewport..] == fixed[..] && check(&rows)
            });
            rows(&screen)
        };
        // `shifted(screen, by)`: the end screen moved down `by` rows (the label covers the
        // last transcript row).
        let end_rows = rows(&end);
        let shifted = |screen: &[String], by: usize| {
            screen[by..viewport - 1] == end_rows[..viewport - 1 - by]
                && screen[viewport - 1].contains(JUMP_LABEL)
        };

        // Alt+wheel moves five times the step: fifteen rows; Ctrl+End goes back.
        tmux.type_text("\x1b[<72;10;10M");
        until("alt+wheel", &|r| shifted(r, 15));
        tmux.keys(&["C-End"]);
        until("back at the end", &|r| {
            r[..viewport] == end_rows[..viewport]
        });
        // Five notches up at three rows a notch: fifteen rows.
        for _ in 0..5 {
            wheel(&tmux, true);
        }
        until("five notches up", &|r| shifted(r, 15));
        // Two notches back down: nine rows.
        wheel(&tmux, false);
        wheel(&tmux, false);
        until("two notches down", &|r| shifted(r, 9));
        // A click on the label goes back to the latest message.
        tmux.type_text(&click(50, viewport));
        until("label clicked", &|r| r[..viewport] == end_rows[..viewport]);
        wheel(&tmux, true);
        until("one notch up", &|r| shifted(r, 3));
        // Ctrl+End follows the end again; a page is the viewport less four rows.
        tmux.keys(&["C-End"]);
        until("back at the end", &|r| {
            r[..viewport] == end_rows[..viewport]
        });
        tmux.keys(&["PageUp"]);
        until("a page up", &|r| shifted(r, viewport - 4));
        tmux.keys(&["PageDown"]);
        until("a page down", &|r| r[..viewport] == end_rows[..viewport]);

        // Ctrl+D: the main screen is back, with the transcript and the resume hint.
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");
        assert_eq!(tmux.display("#{alternate_on}"), "0", "{name}");
        assert_eq!(tmux.display("#{mouse_any_flag}"), "0", "{name}");
        let after = tmux.wait_history("To resume this session:");
        assert!(
            after.contains("Line 1 of the long answer."),
            "{name}: {after}"
        );
        assert!(
            after.contains("Line 60 of the long answer."),
            "{name}: {after}"
        );
        assert!(after.contains("To resume this session:"), "{name}: {after}");
        assert!(after.contains("pi --session "), "{name}: {after}");
    }
}

#[test]
fn regular_mode_and_the_resume_hint_setting_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        let pi = program_path(&wrapper);
        // `--tui-mode regular` keeps the main screen and its scrollback.
        server.push(Script::text("Regular answer."));
        let env = Env::new(&server, 128_000, json!({}));
        let tmux = Tmux::start_program(
            &env,
            &pi,
            &[("PI_OFFLINE", "1")],
            &["--tui-mode", "regular", "Hello."],
            100,
            ROWS,
        );
        tmux.wait_for("Regular answer.");
        assert_eq!(tmux.display("#{alternate_on}"), "0", "{name}");
        assert_eq!(tmux.display("#{mouse_any_flag}"), "0", "{name}");
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");
        let history = tmux.wait_history("To resume this session:");
        // The command has a line of its own (a triple-click selects it).
        let lines: Vec<&str> = history.lines().map(str::trim).collect();
        let hint = lines
            .iter()
            .position(|l| *l == "To resume this session:")
            .unwrap_or_else(|| panic!("{name}: {history}"));
        assert!(
            lines
                .get(hint + 1)
                .is_some_and(|l| l.starts_with("pi --session ")),
            "{name}: {history}"
        );

        // `fullscreenExitOutput: "resume-hint"`: only the hint is left behind.
        server.push(Script::text("Hinted answer."));
        let env = Env::new(
            &server,
            128_000,
            json!({"fullscreenExitOutput": "resume-hint"}),
        );
        let tmux = start_prompted(&env, &pi, &[("PI_OFFLINE", "1")], "Hello.");
        tmux.wait_for("Hinted answer.");
        assert_eq!(tmux.display("#{alternate_on}"), "1", "{name}");
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");
        let after = tmux.wait_history("To resume this session:");
        assert!(!after.contains("Hinted answer."), "{name}: {after}");
        assert!(after.contains("To resume this session:"), "{name}: {after}");
    }
}

#[test]
fn bad_tui_mode_flags_are_refused_as_16() {
    for (name, wrapper) in pis() {
        let run = |args: &[&str]| {
            let mut command = match &wrapper {
                Some(w) => std::process::Command::new(w),
                None => std::process::Command::new(env!("CARGO_BIN_EXE_pi")),
            };
            let out = command
                .args(args)
                .env("PI_OFFLINE", "1")
                .stdin(std::process::Stdio::null())
                .output()
                .unwrap();
            (
                out.status.code(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        };
        let (code, err) = run(&["--tui-mode", "bogus", "-p", "hi"]);
        assert_eq!(code, Some(1), "{name}");
        assert!(
            err.contains("Error: Invalid TUI mode \"bogus\". Valid values: regular, fullscreen"),
            "{name}: {err}"
        );
        let (code, err) = run(&["--tui-mode", "-p", "hi"]);
        assert_eq!(code, Some(1), "{name}");
        assert!(
            err.contains("Error: --tui-mode requires regular or fullscreen"),
            "{name}: {err}"
        );
        let (code, err) = run(&["-p", "hi", "--use-theme"]);
        assert_eq!(code, Some(1), "{name}");
        assert!(
            err.contains("Error: --use-theme requires a theme name"),
            "{name}: {err}"
        );
    }
}

/// Ctrl+Shift+F and Shift+Enter as a terminal with the kitty keyboard protocol sends them.
const SEARCH_KEY: &str = "\x1b[102;6u";
const SHIFT_ENTER: &str = "\x1b[13;2u";

#[test]
fn transcript_search_finds_counts_and_jumps_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut highlights = Vec::new();
    for (name, wrapper) in pis() {
        server.push(Script::text(long_answer()));
        let env = Env::new(&server, 128_000, json!({}));
        let pi = program_path(&wrapper);
        let tmux = start_prompted(&env, &pi, &[("PI_OFFLINE", "1")], "Count.");
        let end = wait_settled(&tmux, name);
        tmux.type_text(SEARCH_KEY);
        let opened = tmux.wait_steady(
            &format!("{name}: the search box"),
            Duration::from_secs(10),
            |s| s.contains("Find in transcript"),
        );
        let mut boxes = vec![search_box(&opened)];
        // "line 5" is Line 5 and Line 50 to 59: the first at or below the top row is
        // Line 50, the second of eleven.
        tmux.type_text("line 5");
        // In view already: nothing moves (the box covers rows 1 to 3), but the view stops
        // following the end.
        let viewport = usize::from(ROWS) - DOCK_ROWS;
        let end_rows = rows(&end);
        tmux.wait(
            &format!("{name}: 2/11 in place"),
            Duration::from_secs(10),
            |s| {
                let r = rows(s);
                s.contains("2/11")
                    && r[4..viewport - 1] == end_rows[4..viewport - 1]
                    && r[viewport - 1].contains(JUMP_LABEL)
            },
        );
        // The current match and the others in the theme's search colors.
        // (Captured until two captures agree: a frame may be caught half drawn.)
        let match_rows = || -> Vec<String> {
            tmux.colored_screen()
                .lines()
                .filter(|l| strip_sgr(l).trim_start().starts_with("Line 5"))
                .map(str::to_owned)
                .collect()
        };
        let mut colored = match_rows();
        for _ in 0..50 {
            std::thread::sleep(Duration::from_millis(100));
            let again = match_rows();
            if again == colored {
                break;
            }
            colored = again;
        }
        boxes.push(search_box(&tmux.screen()));
        highlights.push((colored, boxes, end.clone()));
        // Back to Line 5: it comes into view a third of the way down, away from the end.
        tmux.type_text(SHIFT_ENTER);
        tmux.wait(
            &format!("{name}: Line 5 shown"),
            Duration::from_secs(10),
            |s| {
                let r = rows(s);
                s.contains("1/11")
                    && r[viewport / 3].starts_with(" Line 5 of")
                    && r[viewport - 1].contains(JUMP_LABEL)
            },
        );
        // Forward wraps around. (Each count is matched with the space before it: "1/11"
        // alone is also in "11/11", and a click sent before pi 1.6 has drawn the step
        // before it is folded into that step.)
        for k in (2..=11).chain([1]) {
            tmux.keys(&["Enter"]);
            let count = format!(" {k}/11");
            tmux.wait(&format!("{name}: {count}"), Duration::from_secs(10), |s| {
                s.contains(&count)
            });
        }
        // The buttons in the box's border: a press on ↓ goes to the next match, on ↑
        // back.
        let border_row = tmux.screen().lines().nth(3).unwrap_or_default().to_owned();
        let column_of = |text: &str| {
            let byte = border_row
                .find(text)
                .unwrap_or_else(|| panic!("{name}: {border_row}"));
            border_row[..byte].chars().count() + 1
        };
        let (down, up) = (column_of("↓ Enter"), column_of("↑ Shift+Enter"));
        let wait_text = |text: &str| {
            let step = format!("{name}: {text}");
            tmux.wait(&step, Duration::from_secs(10), |s| s.contains(text));
        };
        tmux.type_text(&click(down + 2, 4));
        wait_text(" 2/11");
        tmux.type_text(&click(up + 2, 4));
        wait_text(" 1/11");
        // A query with no match says so; Esc closes the box and leaves the view.
        tmux.type_text("zz");
        wait_text("No matches");
        let before = rows(&tmux.screen());
        tmux.keys(&["Escape"]);
        tmux.wait(
            &format!("{name}: closed in place"),
            Duration::from_secs(10),
            |s| !s.contains("No matches") && rows(s)[5..] == before[5..],
        );
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");
    }
    if let [ours, theirs] = &highlights[..] {
        assert!(ours.0.len() > 1, "{ours:?}");
        assert_eq!(
            ours.0, theirs.0,
            "the matches' colors; ends:\n{}\n----\n{}",
            ours.2, theirs.2
        );
        assert_eq!(ours.1, theirs.1, "the search box");
    }
}

/// The search box's three rows (screen rows 2 to 4, from column 60), as text.
fn search_box(screen: &str) -> Vec<String> {
    screen
        .lines()
        .skip(1)
        .take(3)
        .map(|row| {
            row.chars()
                .skip(59)
                .collect::<String>()
                .trim_end()
                .to_owned()
        })
        .collect()
}

/// `line` without its SGR sequences (`ESC [ … m`).
fn strip_sgr(line: &str) -> String {
    let mut out = String::new();
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// SGR reports of a left press and release at 1-based column `x`, row `y`.
fn click(x: usize, y: usize) -> String {
    format!("\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m")
}

#[test]
fn mouse_selections_are_copied_with_osc_52_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        server.push(Script::text(long_answer()));
        let env = Env::new(&server, 128_000, json!({}));
        let pi = program_path(&wrapper);
        // No display: both copy through the terminal (OSC 52), which tmux keeps.
        let vars = [
            ("PI_OFFLINE", "1"),
            ("DISPLAY", ""),
            ("WAYLAND_DISPLAY", ""),
            ("PI_CLIPBOARD_OSC52", "1"),
        ];
        let tmux = start_prompted(&env, &pi, &vars, "Count.");
        tmux.accept_clipboard();
        let end = wait_settled(&tmux, name);
        let row_of = |text: &str| {
            rows(&end)
                .iter()
                .position(|r| r.starts_with(text))
                .unwrap_or_else(|| panic!("{name}: {text} not shown:\n{end}"))
                + 1
        };
        // A triple click copies the whole row, its leading pad included.
        let y55 = row_of(" Line 55 of");
        tmux.type_text(&click(5, y55).repeat(3));
        let copied = tmux.wait(&format!("{name}: Copied!"), Duration::from_secs(10), |s| {
            s.contains("Copied!")
        });
        assert!(rows(&copied)[0].ends_with("Copied!"), "{name}:\n{copied}");
        let wait_clipboard = |want: &str| {
            let start = std::time::Instant::now();
            loop {
                let got = tmux.clipboard();
                if got.as_deref() == Some(want) {
                    return;
                }
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "{name}: clipboard {got:?}, expected {want:?}"
                );
                std::thread::sleep(Duration::from_millis(50));
            }
        };
        wait_clipboard(" Line 55 of the long answer.");
        // A drag from Line 55's text to the eighth column of Line 57's row.
        let y57 = row_of(" Line 57 of");
        tmux.type_text(&format!(
            "\x1b[<0;2;{y55}M\x1b[<32;5;{}M\x1b[<32;8;{y57}M\x1b[<0;8;{y57}m",
            y55 + 1
        ));
        wait_clipboard("Line 55 of the long answer.\n\n Line 56 of the long answer.\n\n Line 57");
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");

        // `fullscreenCopyOnSelect: false`: a release copies nothing, Ctrl+X copies the
        // selection, and with none the last answer.
        server.push(Script::text(long_answer()));
        let env = Env::new(&server, 128_000, json!({"fullscreenCopyOnSelect": false}));
        let tmux = start_prompted(&env, &pi, &vars, "Count.");
        tmux.accept_clipboard();
        let end = wait_settled(&tmux, name);
        let y55 = rows(&end)
            .iter()
            .position(|r| r.starts_with(" Line 55 of"))
            .unwrap()
            + 1;
        tmux.type_text(&format!(
            "\x1b[<0;2;{y55}M\x1b[<32;9;{y55}M\x1b[<0;9;{y55}m"
        ));
        // Twice at once: two flashes, one under the other.
        tmux.keys(&["C-x", "C-x"]);
        let wait_buffers = |count: usize, want: &str| {
            let start = std::time::Instant::now();
            while tmux.buffer_count() < count || tmux.clipboard().as_deref() != Some(want) {
                assert!(
                    start.elapsed() < Duration::from_secs(10),
                    "{name}: clipboard {:?} in {} buffers, expected {want:?}",
                    tmux.clipboard(),
                    tmux.buffer_count()
                );
                std::thread::sleep(Duration::from_millis(50));
            }
            // Only the Ctrl+X copies reached the terminal.
            assert_eq!(tmux.buffer_count(), count, "{name}");
        };
        wait_buffers(2, "Line 55");
        tmux.wait(
            &format!("{name}: two flashes"),
            Duration::from_secs(10),
            |s| {
                let rows = rows(s);
                rows[0].ends_with("Copied!") && rows[1].ends_with("Copied!")
            },
        );
        // A click clears the selection: Ctrl+X copies the last answer.
        tmux.type_text(&click(5, 3));
        tmux.keys(&["C-x"]);
        wait_buffers(3, &long_answer());
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");
    }
}

/// The last column of each screen row: the scrollbar's glyph, or `None` with no bar there.
fn bar_column(screen: &str) -> Vec<Option<char>> {
    let mut column: Vec<Option<char>> = screen
        .lines()
        .map(|row| {
            (row.chars().count() == 100)
                .then(|| row.chars().last())
                .flatten()
                .filter(|c| ['│', '┃', '█'].contains(c))
        })
        .collect();
    column.resize(usize::from(ROWS), None);
    column
}

/// The number of the first `Line N` row at the top of the transcript.
fn first_line_number(screen: &str) -> Option<usize> {
    rows(screen).iter().find_map(|row| {
        row.trim_start()
            .strip_prefix("Line ")
            .and_then(|rest| rest.split(' ').next())
            .and_then(|n| n.parse().ok())
    })
}

#[test]
fn the_scrollbar_is_revealed_by_the_pointer_and_dragged_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let viewport = usize::from(ROWS) - DOCK_ROWS;
    let mut tops = Vec::new();
    for (name, wrapper) in pis() {
        let pi = program_path(&wrapper);
        // `always`: the bar is drawn from the start, its thumb at the bottom.
        server.push(Script::text(long_answer()));
        let env = Env::new(&server, 128_000, json!({"fullscreenScrollbar": "always"}));
        let tmux = start_prompted(&env, &pi, &[("PI_OFFLINE", "1")], "Count.");
        let end = wait_settled(&tmux, name);
        let bar = bar_column(&end);
        assert_eq!(bar[0], Some('│'), "{name}:\n{end}");
        assert_eq!(bar[viewport - 1], Some('┃'), "{name}:\n{end}");
        // A press on the track's first row moves the thumb there: the transcript's start,
        // the thumb drawn solid while the pointer holds it.
        tmux.type_text("\x1b[<0;100;1M");
        let top = tmux.wait_steady(
            &format!("{name}: at the start"),
            Duration::from_secs(10),
            |s| bar_column(s)[0] == Some('█') && s.contains(JUMP_LABEL),
        );
        // Dragging to the middle row scrolls to the middle.
        tmux.type_text(&format!("\x1b[<32;100;{}M", viewport / 2));
        let middle = tmux.wait_steady(&format!("{name}: dragged"), Duration::from_secs(10), |s| {
            bar_column(s)[viewport / 2 - 1] == Some('█')
                && first_line_number(s) != first_line_number(&top)
        });
        // Dragging past the bottom reaches the end, which follows new rows again.
        tmux.type_text(&format!(
            "\x1b[<32;100;{}M\x1b[<0;100;{}m",
            viewport + 3,
            viewport + 3
        ));
        tmux.wait(
            &format!("{name}: back at the end"),
            Duration::from_secs(10),
            |s| s.contains("Line 60 of the long answer.") && !s.contains(JUMP_LABEL),
        );
        // A click in the transcript lets go of the bar: the thumb is thin again.
        tmux.type_text(&click(10, 5));
        let released = tmux.wait_steady(&format!("{name}: let go"), Duration::from_secs(10), |s| {
            bar_column(s)[viewport - 1] == Some('┃')
        });
        assert_eq!(
            rows(&released)[..viewport],
            rows(&end)[..viewport],
            "{name}"
        );
        tops.push((bar_column(&top), bar_column(&middle)));
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");

        // `auto`: no bar until scrolling; pointing at its column brings it up.
        server.push(Script::text(long_answer()));
        let env = Env::new(&server, 128_000, json!({}));
        let tmux = start_prompted(&env, &pi, &[("PI_OFFLINE", "1")], "Count.");
        let end = wait_settled(&tmux, name);
        assert!(
            bar_column(&end).iter().all(Option::is_none),
            "{name}:\n{end}"
        );
        tmux.type_text("\x1b[<0;100;3M\x1b[<0;100;3m");
        tmux.wait(&format!("{name}: revealed"), Duration::from_secs(10), |s| {
            bar_column(s)[viewport - 1] == Some('█') && bar_column(s)[0] == Some('│')
        });
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(Duration::from_secs(15)), 0, "{name}");
    }
    // The thumb in the same rows after the press and after the drag, in ours and in pi
    // 1.6.0 (their transcripts differ by a few warning rows, which moves no thumb here).
    if let [ours, theirs] = &tops[..] {
        assert_eq!(ours, theirs);
    }
}
