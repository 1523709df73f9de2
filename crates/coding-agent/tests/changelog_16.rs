//! `/changelog`, the release notes shown once after an update (with `lastChangelogVersion`
//! and `collapseChangelog`), and the hidden `/debug`: ours and pi 1.6.0 (`PI_TS16`) side by
//! side in tmux. The notes differ (each shows its own CHANGELOG.md); where they are drawn,
//! the frame around them, the statuses and the files written are compared.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(15);

fn start(env: &Env, name: &str, wrapper: &Option<std::path::PathBuf>) -> (Tmux, String) {
    let pi = program_path(wrapper);
    let tmux = Tmux::start_program(env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 40);
    // Started once the startup notes are up: both pis check tmux's keyboard setup in the
    // background and add the extended-keys warning when that ends, which a command typed
    // earlier would find below its output.
    let screen = tmux.wait(&format!("{name}: started"), WAIT, |s| {
        s.contains("mock-model") && s.contains("escape") && s.contains("extended-keys")
    });
    (tmux, screen)
}

/// The rows from `first` (a row equal to it, trimmed) on, for `count` rows.
fn rows_from(screen: &str, first: &str, count: usize) -> Option<Vec<String>> {
    let rows: Vec<String> = screen.lines().map(|r| r.trim_end().to_owned()).collect();
    let at = rows.iter().position(|r| r == first)?;
    Some(rows.iter().skip(at).take(count).cloned().collect())
}

/// The screen's last rows once a block closed by a border sits above the editor: the
/// block's last text row (as `<text>`), its blank, the border, and the dock below.
fn tail(screen: &str) -> Option<Vec<String>> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let n = rows.len();
    let border = |r: &str| r.starts_with("────");
    let shaped = n >= 9
        && !rows[n - 9].is_empty()
        && rows[n - 8].is_empty()
        && border(rows[n - 7])
        && rows[n - 6].is_empty()
        && border(rows[n - 5])
        && rows[n - 4].is_empty()
        && border(rows[n - 3]);
    shaped.then(|| {
        let mut out = vec!["<text>".to_owned()];
        out.extend(rows[n - 8..].iter().map(|r| (*r).to_owned()));
        out
    })
}

/// The row above the first row equal to `row`.
fn above(screen: &str, row: &str) -> Option<String> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let at = rows.iter().position(|r| *r == row)?;
    Some(rows.get(at.checked_sub(1)?)?.to_string())
}

#[test]
fn first_start_records_the_version_and_shows_no_notes_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let (tmux, screen) = start(&env, name, &wrapper);
        let settings = env.settings_when("lastChangelogVersion", |v| {
            v["lastChangelogVersion"].is_string()
        });
        assert_eq!(settings["lastChangelogVersion"], "1.6.0", "{name}");
        assert!(!screen.contains("What's New"), "{name}: {screen}");
        drop(tmux);
    }
}

#[test]
fn an_update_shows_the_new_notes_once_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut frames = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(
            &server,
            128_000,
            json!({"tuiMode": "regular", "lastChangelogVersion": "1.5.2"}),
        );
        let (screen, tmux) = {
            let pi = program_path(&wrapper);
            let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 40);
            tmux.wait(&format!("{name}: started"), WAIT, |s| {
                s.contains("mock-model")
            });
            (tmux.wait_history(" What's New"), tmux)
        };
        // Border, title, blank, the newest release's heading (drawn without `## `).
        let frame = rows_from(&screen, " What's New", 3).unwrap();
        assert!(frame[2].starts_with(" [1.6.0]"), "{name}: {screen}");
        let mut seen = vec![above(&screen, " What's New").unwrap()];
        seen.extend(frame[..2].iter().cloned());
        frames.push(seen);
        env.settings_when("the recorded version", |v| {
            v["lastChangelogVersion"] == "1.6.0"
        });
        drop(tmux);
        // Shown once: the next start has nothing new.
        let (tmux, screen) = start(&env, name, &wrapper);
        assert!(!screen.contains("What's New"), "{name}: {screen}");
        drop(tmux);
        // Collapsed: one line naming the version and the command.
        std::fs::write(
            env.agent.join("settings.json"),
            json!({"tuiMode": "regular", "defaultProvider": "mock", "defaultModel": "mock-model",
                   "lastChangelogVersion": "1.5.2", "collapseChangelog": true})
            .to_string(),
        )
        .unwrap();
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 40);
        let screen = tmux.wait(&format!("{name}: collapsed"), WAIT, |s| {
            s.contains("Updated to v1.6.0") && s.contains("mock-model")
        });
        let line = " Updated to v1.6.0. Use /changelog to view full changelog.";
        let border = above(&screen, line).unwrap();
        assert!(border.starts_with("────"), "{name}: {screen}");
        let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
        let at = rows.iter().position(|r| *r == line).unwrap();
        assert!(rows[at + 1].starts_with("────"), "{name}: {screen}");
        drop(tmux);
    }
    if let [ours, theirs] = &frames[..] {
        assert_eq!(ours, theirs, "the frame above the notes");
    }
}

#[test]
fn changelog_command_and_debug_log_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut frames = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(
            &server,
            128_000,
            json!({"tuiMode": "regular", "lastChangelogVersion": "1.6.0"}),
        );
        let (tmux, _) = start(&env, name, &wrapper);
        tmux.type_text("/changelog");
        tmux.wait(&format!("{name}: typed"), WAIT, |s| {
            s.contains("/changelog")
        });
        tmux.keys(&["Enter"]);
        // The newest release is last, by the editor: its notes end with a blank row and
        // the closing border. (pi's notes run to ~12,000 rows, beyond tmux's scrollback, so
        // only this end is compared.)
        let screen = tmux.wait(&format!("{name}: changelog"), WAIT, |s| tail(s).is_some());
        frames.push(tail(&screen).unwrap());
        if name == "ours" {
            let history = tmux.history();
            let rows: Vec<&str> = history.lines().map(str::trim_end).collect();
            let title = rows.iter().position(|r| *r == " What's New").unwrap();
            assert!(rows[title - 1].starts_with("────"), "{history}");
            assert_eq!(rows[title + 1..title + 3], ["", ""], "{history}");
            assert!(rows[title + 3].starts_with(" [1.6.0] - "), "{history}");
        }

        tmux.type_text("/debug");
        tmux.wait(&format!("{name}: typed debug"), WAIT, |s| {
            s.contains("/debug")
        });
        tmux.keys(&["Enter"]);
        let path = env.agent.join("pi-debug.log");
        let screen = tmux.wait(&format!("{name}: debug"), WAIT, |s| {
            s.contains("✓ Debug log written")
        });
        let shown = rows_from(&screen, " ✓ Debug log written", 2).unwrap();
        assert_eq!(shown[1], format!(" {}", path.display()), "{name}");
        assert_eq!(
            above(&screen, " ✓ Debug log written").as_deref(),
            Some(""),
            "{name}"
        );
        let log = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = log.split('\n').collect();
        assert!(lines[0].starts_with("Debug output at 20"), "{name}: {log}");
        assert_eq!(lines[1], "Terminal: 100x40", "{name}");
        assert!(lines[2].starts_with("Total lines: "), "{name}");
        assert_eq!(lines[3], "", "{name}");
        assert_eq!(lines[4], "=== All rendered lines with visible widths ===");
        assert!(lines[5].starts_with("[0] (w="), "{name}: {log}");
        assert!(log.contains(") \"\\u001b["), "{name}: escapes kept as JSON");
        assert!(
            log.ends_with("=== Agent messages (JSONL) ===\n"),
            "{name}: {log}"
        );
        drop(tmux);
    }
    if let [ours, theirs] = &frames[..] {
        assert_eq!(ours, theirs, "the frame of /changelog");
    }
}
