//! The project-trust question at interactive startup as pi 1.6 asks it: its startup
//! selector (the extension selector's look, before the UI starts), answered with the arrows
//! and Enter; "Trust" loads the project's resources and is remembered, Escape leaves them
//! out for this run. Ours and pi 1.6.0 (`PI_TS16`) side by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path, stub_search_tools};

const WAIT: Duration = Duration::from_secs(15);

/// The question's rows from its title to the border under it, the folder named `<HERE>`
/// and its parent `<PARENT>`.
fn question(screen: &str, env: &Env) -> Vec<String> {
    let work = std::fs::canonicalize(&env.work).unwrap();
    let here = work.display().to_string();
    let parent = work.parent().unwrap().display().to_string();
    screen
        .lines()
        .map(str::trim_end)
        .skip_while(|l| !l.contains("Trust project folder?"))
        .take_while(|l| !l.starts_with("────"))
        .filter(|l| !l.is_empty())
        .map(|l| l.replace(&here, "<HERE>").replace(&parent, "<PARENT>"))
        .collect()
}

#[test]
fn the_trust_question_is_a_startup_selector_as_16() {
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
        std::fs::create_dir_all(env.work.join(".pi/prompts")).unwrap();
        std::fs::write(
            env.work.join(".pi/prompts/standup.md"),
            "Summarize the standup.\n",
        )
        .unwrap();
        let pi = program_path(&wrapper);
        let start = || Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 120, 40);

        // Escape: nothing of the project loads, and nothing is remembered.
        let tmux = start();
        let screen = tmux.wait(&format!("{name}: asked"), WAIT, |s| {
            s.contains("Trust project folder?") && s.contains("→ Trust")
        });
        let rows = question(&screen, &env);
        tmux.keys(&["Escape"]);
        let screen = tmux.wait(&format!("{name}: started untrusted"), WAIT, |s| {
            s.contains("mock-model")
        });
        assert!(!screen.contains("standup"), "{name}: {screen}");
        assert!(
            !screen.contains("Trust project folder?"),
            "{name}: {screen}"
        );
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(WAIT), 0, "{name}");

        // Asked again; Enter on "Trust" loads the project's prompt and saves the answer.
        let tmux = start();
        tmux.wait(&format!("{name}: asked again"), WAIT, |s| {
            s.contains("Trust project folder?") && s.contains("→ Trust")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: trusted"), WAIT, |s| {
            s.contains("mock-model") && s.contains("standup")
        });
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(WAIT), 0, "{name}");

        // Remembered: no question the next time.
        let tmux = start();
        let screen = tmux.wait(&format!("{name}: remembered"), WAIT, |s| {
            s.contains("mock-model") && s.contains("standup")
        });
        assert!(
            !screen.contains("Trust project folder?"),
            "{name}: {screen}"
        );
        tmux.keys(&["C-d"]);
        assert_eq!(tmux.wait_exit(WAIT), 0, "{name}");
        seen.push((name, rows));
    }
    if let [(_, ours), (_, theirs)] = &seen[..] {
        assert_eq!(ours, theirs, "the trust question");
    }
}
