//! Choosing a theme in `/settings`: the Theme submenu lists pi 1.6's `system` theme first,
//! the choice is written to settings.json, and the startup header, the loaded-resource
//! listing and the chat are drawn in the new theme's colors at once. Ours and pi 1.6.0
//! (`PI_TS16`) side by side in tmux, colors compared (`capture-pane -e`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path, stub_search_tools};

const WAIT: Duration = Duration::from_secs(15);

#[test]
fn a_theme_chosen_in_settings_recolors_the_header_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        if wrapper.is_some() {
            stub_search_tools(&env.agent);
        }
        std::fs::write(env.work.join("AGENTS.md"), "Be brief.\n").unwrap();
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 40);
        tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-model") && s.contains("Warning: tmux extended-keys")
        });
        let before = tmux.colored_top();
        tmux.type_text("/settings");
        tmux.wait(&format!("{name}: typed"), WAIT, |s| s.contains("/settings"));
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: menu"), WAIT, |s| {
            s.contains("Type to search")
        });
        tmux.type_text("theme");
        tmux.wait(&format!("{name}: theme row"), WAIT, |s| {
            s.contains("> theme") && s.contains("→ Theme")
        });
        tmux.keys(&["Enter"]);
        let menu = tmux.wait(&format!("{name}: theme menu"), WAIT, |s| {
            s.contains("light") && s.contains("dark") && !s.contains("> theme")
        });
        let rows: Vec<String> = menu
            .lines()
            .map(str::trim_end)
            .filter(|r| r.contains("system") || r.contains("dark") || r.contains("light"))
            .map(str::to_owned)
            .collect();
        // Down to `light` one row at a time (each move awaited), then Enter.
        let arrow = |s: &str| {
            s.lines()
                .find(|l| l.split_whitespace().next() == Some("→"))
                .map(str::to_owned)
        };
        let on_light = |row: &Option<String>| {
            row.as_deref().and_then(|r| r.split_whitespace().nth(1)) == Some("light")
        };
        let mut current = arrow(&menu);
        for _ in 0..6 {
            if on_light(&current) {
                break;
            }
            tmux.keys(&["Down"]);
            let before = current.clone();
            let screen = tmux.wait(&format!("{name}: moved"), WAIT, |s| {
                arrow(s).is_some() && arrow(s) != before
            });
            current = arrow(&screen);
        }
        assert!(on_light(&current), "{name}: {current:?}");
        tmux.keys(&["Enter"]);
        env.settings_when("theme light", |v| v["theme"] == "light");
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: closed"), WAIT, |s| {
            !s.contains("Type to search")
        });
        let after = tmux.wait(&format!("{name}: recolored"), WAIT, |_| {
            tmux.colored_top() != before
        });
        drop(after);
        let after = tmux.colored_top();
        assert_ne!(before, after, "{name}: the header changed color");
        seen.push((name, rows, before, after));
    }
    if let [(_, rows, before, after), (_, rows16, before16, after16)] = &seen[..] {
        assert_eq!(rows, rows16, "the Theme submenu's rows");
        assert_eq!(before, before16, "the system theme's colors");
        assert_eq!(after, after16, "the light theme's colors");
    }
}
