//! `/settings`, pi 1.6's settings menu: the same rows, values, search and submenus as pi
//! 1.6.0, each change written to the global settings.json as 1.6.0 writes it, and the TUI
//! mode switched at once and kept for the next start. Ours and pi 1.6.0 (`PI_TS16`) side
//! by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(15);

/// The menu: from the border above the search line to the border below the key hint.
fn panel(screen: &str) -> Option<Vec<String>> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let start = rows
        .windows(2)
        .position(|w| w[0].starts_with("────") && w[1].starts_with('>'))
        .or_else(|| {
            rows.windows(2).position(|w| {
                w[0].starts_with("────") && !w[1].is_empty() && !w[1].starts_with('─')
            })
        })?;
    let end = start
        + 1
        + rows[start + 1..]
            .iter()
            .position(|r| r.starts_with("────"))?;
    Some(rows[start..=end].iter().map(|r| (*r).to_owned()).collect())
}

/// The global settings file once `check` holds for it, without `lastChangelogVersion`
/// (written at first start).
fn settings_when(env: &Env, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let strip = |value: &Value| {
        let mut value = value.clone();
        if let Some(map) = value.as_object_mut() {
            map.shift_remove("lastChangelogVersion");
        }
        value
    };
    strip(&env.settings_when(what, |v| check(&strip(v))))
}

/// Types `text` and waits for the screen to show `expect`.
fn step(tmux: &Tmux, name: &str, keys: &[&str], expect: &str) -> String {
    for key in keys {
        tmux.keys(&[key]);
    }
    tmux.wait(&format!("{name}: {expect}"), WAIT, |s| s.contains(expect))
}

fn open_settings(tmux: &Tmux, name: &str) -> String {
    tmux.wait(&format!("{name}: started"), WAIT, |s| {
        s.contains("mock-model")
    });
    tmux.type_text("/settings");
    tmux.wait(&format!("{name}: typed"), WAIT, |s| s.contains("/settings"));
    step(
        tmux,
        name,
        &["Enter"],
        "Type to search · Enter/Space to change",
    )
}

#[test]
fn settings_menu_shows_and_writes_what_16_does() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut panels = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 34);
        let mut seen = Vec::new();
        let first = open_settings(&tmux, name);
        assert!(first.contains("(1/33)"), "{name}: {first}");
        seen.push(panel(&first).unwrap());
        // Enter cycles Auto-compact at once; the footer drops its `(auto)` marker.
        tmux.keys(&["Enter"]);
        let screen = tmux.wait(&format!("{name}: auto-compact off"), WAIT, |s| {
            s.contains("→ Auto-compact                      false") && !s.contains("(auto)")
        });
        seen.push(panel(&screen).unwrap());
        // Up wraps to the last row.
        let screen = step(&tmux, name, &["Up"], "(33/33)");
        seen.push(panel(&screen).unwrap());
        // Typing searches the labels; Space cycles only with an empty search.
        tmux.type_text("tree filter");
        let screen = tmux.wait(&format!("{name}: searched"), WAIT, |s| {
            s.contains("> tree filter") && s.contains("→ Tree filter mode")
        });
        seen.push(panel(&screen).unwrap());
        let screen = step(
            &tmux,
            name,
            &["Enter"],
            "→ Tree filter mode                  no-tools",
        );
        seen.push(panel(&screen).unwrap());
        // The Warnings submenu writes the whole `warnings` object.
        for _ in 0..11 {
            tmux.keys(&["BSpace"]);
        }
        tmux.type_text("warn");
        tmux.wait(&format!("{name}: warnings found"), WAIT, |s| {
            s.contains("> warn") && s.contains("→ Warnings")
        });
        let screen = step(&tmux, name, &["Enter"], "Anthropic extra usage");
        seen.push(panel(&screen).unwrap());
        let screen = step(&tmux, name, &["Enter"], "→ Anthropic extra usage  false");
        seen.push(panel(&screen).unwrap());
        let screen = step(&tmux, name, &["Escape"], "> warn");
        seen.push(panel(&screen).unwrap());
        // Esc closes the menu even with a search typed.
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: closed"), WAIT, |s| {
            !s.contains("Type to search")
        });
        panels.push((name, seen));
        let expected = json!({
            "defaultProvider": "mock", "defaultModel": "mock-model", "tuiMode": "regular",
            "compaction": {"enabled": false}, "treeFilterMode": "no-tools",
            "warnings": {"anthropicExtraUsage": false}
        });
        let file = settings_when(&env, "every change", |v| *v == expected);
        if name == "ours" {
            // New keys in the order of their first write, as pi 1.6.0 appends them (its
            // queued saves may land out of order when changes come this fast).
            let keys: Vec<&str> = file
                .as_object()
                .unwrap()
                .keys()
                .map(String::as_str)
                .collect();
            assert_eq!(
                keys,
                [
                    "defaultProvider",
                    "defaultModel",
                    "tuiMode",
                    "compaction",
                    "treeFilterMode",
                    "warnings"
                ]
            );
        }
    }
    if let [(_, ours), (_, theirs)] = &panels[..] {
        assert_eq!(ours, theirs, "the menu as drawn by ours and by pi 1.6.0");
    }
}

#[test]
fn thinking_per_model_is_written_and_applied_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut panels = Vec::new();
    for (name, wrapper) in pis() {
        let settings = json!({"tuiMode": "regular", "defaultModel": "mock-thinker"});
        let env = Env::new(&server, 128_000, settings);
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 34);
        tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-thinker • medium")
        });
        tmux.type_text("/settings");
        tmux.wait(&format!("{name}: typed"), WAIT, |s| s.contains("/settings"));
        step(&tmux, name, &["Enter"], "(1/33)");
        tmux.type_text("per model");
        tmux.wait(&format!("{name}: found"), WAIT, |s| {
            s.contains("→ Default thinking level per model  none")
        });
        let mut seen = Vec::new();
        let screen = step(&tmux, name, &["Enter"], "Step 1/2");
        seen.push(panel(&screen).unwrap());
        let screen = step(&tmux, name, &["Enter"], "Step 2/2");
        seen.push(panel(&screen).unwrap());
        // Four down from `off`: high. The current model takes it at once.
        for _ in 0..4 {
            tmux.keys(&["Down"]);
        }
        tmux.wait(&format!("{name}: high"), WAIT, |s| s.contains("→   high"));
        tmux.keys(&["Enter"]);
        let screen = tmux.wait(&format!("{name}: back at step 1"), WAIT, |s| {
            s.contains("Step 1/2") && s.contains("mock-thinker • high")
        });
        seen.push(panel(&screen).unwrap());
        // The override can be cleared again: the level reverts to the default.
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: step 2 again"), WAIT, |s| {
            s.contains("(clear override)")
        });
        let screen = step(&tmux, name, &["Down"], "→   (clear override)");
        seen.push(panel(&screen).unwrap());
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: cleared"), WAIT, |s| {
            s.contains("Step 1/2") && s.contains("mock-thinker • medium")
        });
        settings_when(&env, "the override cleared", |v| {
            v.get("modelThinkingLevels").is_none()
        });
        // Set it once more, then leave: the row sums the overrides up.
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: step 2, third time"), WAIT, |s| {
            s.contains("Step 2/2")
        });
        tmux.keys(&["Down"]);
        tmux.wait(&format!("{name}: minimal"), WAIT, |s| {
            s.contains("→   minimal")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: step 1"), WAIT, |s| s.contains("Step 1/2"));
        let screen = step(
            &tmux,
            name,
            &["Escape"],
            "→ Default thinking level per model  1 configured",
        );
        seen.push(panel(&screen).unwrap());
        settings_when(&env, "the override set", |v| {
            v["modelThinkingLevels"] == json!({"mock/mock-thinker": "minimal"})
        });
        panels.push((name, seen));
    }
    if let [(_, ours), (_, theirs)] = &panels[..] {
        assert_eq!(ours, theirs, "the submenu as drawn by ours and by pi 1.6.0");
    }
}

#[test]
fn tui_mode_switches_now_and_at_the_next_start_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 34);
        open_settings(&tmux, name);
        assert_eq!(tmux.display("#{alternate_on}"), "0", "{name}");
        tmux.type_text("tui mode");
        tmux.wait(&format!("{name}: found"), WAIT, |s| {
            s.contains("→ TUI mode                          regular")
        });
        tmux.keys(&["Enter"]);
        // The menu stays open on the alternate screen, with the status line above it.
        let screen = tmux.wait(&format!("{name}: fullscreen now"), WAIT, |s| {
            s.contains("→ TUI mode                          fullscreen")
                && s.contains("TUI mode: fullscreen")
                && tmux.display("#{alternate_on}") == "1"
        });
        assert_eq!(tmux.display("#{mouse_sgr_flag}"), "1", "{name}: {screen}");
        settings_when(&env, "tuiMode fullscreen", |v| v["tuiMode"] == "fullscreen");
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: regular again"), WAIT, |s| {
            s.contains("→ TUI mode                          regular")
                && s.contains("TUI mode: regular")
                && !s.contains("TUI mode: fullscreen")
                && tmux.display("#{alternate_on}") == "0"
        });
        assert_eq!(tmux.display("#{mouse_sgr_flag}"), "0", "{name}");
        settings_when(&env, "tuiMode regular", |v| v["tuiMode"] == "regular");
        // Back to fullscreen, then quit: the next start uses the saved layout.
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: fullscreen once more"), WAIT, |s| {
            s.contains("→ TUI mode                          fullscreen")
                && tmux.display("#{alternate_on}") == "1"
        });
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: menu closed"), WAIT, |s| {
            !s.contains("Type to search")
        });
        tmux.type_text("/quit");
        tmux.wait(&format!("{name}: /quit typed"), WAIT, |s| {
            s.contains("/quit")
        });
        tmux.keys(&["Enter"]);
        tmux.wait_exit(WAIT);
        settings_when(&env, "tuiMode fullscreen", |v| v["tuiMode"] == "fullscreen");
        let again = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 34);
        again.wait(&format!("{name}: restarted"), WAIT, |s| {
            s.contains("mock-model") && again.display("#{alternate_on}") == "1"
        });
    }
}
