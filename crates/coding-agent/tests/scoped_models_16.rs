//! `/scoped-models`: the models Ctrl+P cycles through, changed for the session at once and
//! saved as `enabledModels` with Ctrl+S. Ours and pi 1.6.0 (`PI_TS16`) side by side in
//! tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);

/// The selector from its title to the footer's count. pi 1.6.0 also refreshes the hosted
/// model catalogs and says so in a line of its own; ours has none to refresh.
fn panel(screen: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let start = rows
        .iter()
        .position(|r| *r == "Model Configuration")
        .unwrap();
    let end = start
        + rows[start..]
            .iter()
            .position(|r| r.contains("enabled"))
            .unwrap();
    rows[start..=end]
        .iter()
        .filter(|r| {
            !r.contains("Model catalogs refreshed.") && !r.contains("Refreshing model catalogs")
        })
        .map(|r| (*r).to_owned())
        .collect()
}

#[test]
fn scoped_models_change_cycling_and_save_as_16() {
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
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 150, 40);
        tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-model")
        });
        tmux.type_text("/scoped-models");
        tmux.wait(&format!("{name}: typed"), WAIT, |s| {
            s.contains("/scoped-models")
        });
        tmux.keys(&["Enter"]);
        let mut seen = Vec::new();
        let screen = tmux.wait(&format!("{name}: selector"), WAIT, |s| {
            s.contains("Model Configuration") && s.contains("all enabled")
        });
        seen.push(panel(&screen));
        // Enter turns the selected model off: the other one moves to the top.
        tmux.keys(&["Enter"]);
        let screen = tmux.wait(&format!("{name}: toggled"), WAIT, |s| {
            s.contains("1/2 enabled (unsaved)")
        });
        seen.push(panel(&screen));
        tmux.keys(&["C-s"]);
        let screen = tmux.wait(&format!("{name}: saved"), WAIT, |s| {
            s.contains("1/2 enabled") && !s.contains("(unsaved)")
        });
        seen.push(panel(&screen));
        env.settings_when("the saved scope", |v| {
            v["enabledModels"] == json!(["mock/mock-thinker"])
        });
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: closed"), WAIT, |s| {
            !s.contains("Model Configuration") && s.contains("Model selection saved to settings")
        });
        // Ctrl+P now cycles within the scope: the one enabled model.
        tmux.keys(&["C-p"]);
        tmux.wait(&format!("{name}: cycled"), WAIT, |s| {
            s.contains("mock-thinker")
        });
        // Back in the selector, Ctrl+A enables every model again; saved, the setting goes.
        tmux.type_text("/scoped-models");
        tmux.wait(&format!("{name}: typed again"), WAIT, |s| {
            s.contains("/scoped-models")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: reopened"), WAIT, |s| {
            s.contains("1/2 enabled")
        });
        tmux.keys(&["C-a"]);
        tmux.wait(&format!("{name}: all"), WAIT, |s| {
            s.contains("all enabled (unsaved)")
        });
        tmux.keys(&["C-s"]);
        env.settings_when("no scope", |v| v.get("enabledModels").is_none());
        panels.push(seen);
    }
    if let [ours, theirs] = &panels[..] {
        assert_eq!(
            ours, theirs,
            "the selector as drawn by ours and by pi 1.6.0"
        );
    }
}
