//! Clicks in fullscreen's dock, as pi 1.6 routes them to the component under the pointer:
//! the editor puts its cursor on the clicked character. Ours and pi 1.6.0 (`PI_TS16`) side
//! by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(15);

/// SGR reports of a left press and release at 1-based column `x`, row `y`.
fn click(x: usize, y: usize) -> String {
    format!("\x1b[<0;{x};{y}M\x1b[<0;{x};{y}m")
}

/// The 1-based row and column where `text` is shown.
fn position(screen: &str, text: &str) -> Option<(usize, usize)> {
    screen.lines().enumerate().find_map(|(row, line)| {
        line.find(text)
            .map(|byte| (row + 1, line[..byte].chars().count() + 1))
    })
}

#[test]
fn a_click_in_the_editor_moves_its_cursor_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 30);
        // pi 1.6.0 draws its tmux warning last; keys sent before may be lost.
        tmux.wait_for("extended-keys");
        tmux.type_text("hello world");
        let screen = tmux.wait(&format!("{name}: typed"), WAIT, |s| {
            s.contains("hello world")
        });
        let (row, column) = position(&screen, "world").unwrap();
        // On the `w`: typing goes in before it.
        tmux.type_text(&click(column, row));
        tmux.type_text("X");
        let screen = tmux.wait(&format!("{name}: inserted"), WAIT, |s| {
            s.contains("hello Xworld")
        });
        // Past the end of the row: the cursor goes to the line's end.
        tmux.type_text(&click(90, row));
        tmux.type_text("!");
        tmux.wait(&format!("{name}: appended"), WAIT, |s| {
            s.contains("hello Xworld!")
        });
        // A click on the border changes nothing.
        tmux.type_text(&click(3, row - 1));
        tmux.type_text("?");
        let last = tmux.wait(&format!("{name}: still at the end"), WAIT, |s| {
            s.contains("hello Xworld!?")
        });
        assert!(server.requests().is_empty(), "{name}: nothing sent");
        seen.push((position(&screen, "hello"), position(&last, "hello")));
        tmux.keys(&["C-c"]);
    }
    if let [ours, theirs] = &seen[..] {
        assert_eq!(ours, theirs, "the editor's row and column");
    }
}

/// The words of the row the selection arrow `→` marks.
fn selected(screen: &str) -> Option<String> {
    screen.lines().find_map(|l| {
        l.trim()
            .strip_prefix("→ ")
            .map(|rest| rest.split_whitespace().collect::<Vec<_>>().join(" "))
    })
}

#[test]
fn settings_rows_take_clicks_and_the_wheel_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 30);
        tmux.wait_for("extended-keys");
        tmux.type_text("/settings");
        tmux.wait(&format!("{name}: typed"), WAIT, |s| s.contains("/settings"));
        tmux.keys(&["Enter"]);
        let menu = tmux.wait(&format!("{name}: menu"), WAIT, |s| {
            s.contains("Type to search") && selected(s).is_some()
        });
        let first = selected(&menu).unwrap();
        // Up at the top stays there; two notches down move two rows.
        let (row, _) = position(&menu, "Auto-resize images").unwrap();
        tmux.type_text(&format!("\x1b[<64;10;{row}M"));
        tmux.type_text(&format!("\x1b[<65;10;{row}M\x1b[<65;10;{row}M"));
        let moved = tmux.wait(&format!("{name}: wheeled"), WAIT, |s| {
            selected(s).is_some_and(|r| r.starts_with("Block images"))
        });
        // A click on Auto-compact's row turns it off, as Enter on it would.
        let (row, column) = position(&moved, "Auto-compact").unwrap();
        tmux.type_text(&click(column + 2, row));
        env.settings_when("compaction off", |v| v["compaction"]["enabled"] == false);
        let clicked = tmux.wait(&format!("{name}: clicked"), WAIT, |s| {
            selected(s).is_some_and(|r| r.starts_with("Auto-compact false"))
        });
        seen.push((first, selected(&moved), selected(&clicked)));
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: closed"), WAIT, |s| {
            !s.contains("Type to search")
        });
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(WAIT), 0, "{name}");
    }
    if let [ours, theirs] = &seen[..] {
        assert_eq!(ours, theirs, "the selected rows");
    }
}
