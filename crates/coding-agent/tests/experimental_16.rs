//! The opt-in to early features (`PI_EXPERIMENTAL=1`, pi 1.6's
//! `areExperimentalFeaturesEnabled`): the footer's token stats end with ` • xp` while it is
//! on and show nothing without it, in ours and in pi 1.6.0 (`PI_TS16`) side by side.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::pis;

/// The footer's stats line of `pi` started with `vars`, once the UI is up.
fn stats_line(env: &Env, pi: &str, vars: &[(&str, &str)]) -> String {
    let tmux = Tmux::start_program(env, pi, vars, &[], 120, 30);
    let screen = tmux.wait("the footer", Duration::from_secs(30), |s| {
        s.contains("(auto)") && s.contains("mock-model")
    });
    tmux.keys(&["C-d"]);
    tmux.wait_exit(Duration::from_secs(20));
    screen
        .lines()
        .find(|l| l.contains("(auto)"))
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn the_footer_marks_experimental_features_as_pi_16_does() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        // 1.6.0 keeps the regular (scrollback) screen with this setting, as ours has.
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let pi = wrapper
            .as_ref()
            .map_or(env!("CARGO_BIN_EXE_pi").to_owned(), |w| {
                w.display().to_string()
            });
        let on = stats_line(&env, &pi, &[("PI_OFFLINE", "1"), ("PI_EXPERIMENTAL", "1")]);
        assert!(on.contains("(auto) • xp "), "{name}: {on}");
        let off = stats_line(&env, &pi, &[("PI_OFFLINE", "1"), ("PI_EXPERIMENTAL", "0")]);
        assert!(!off.contains("xp"), "{name}: {off}");
        assert!(off.contains("(auto) "), "{name}: {off}");
    }
}
