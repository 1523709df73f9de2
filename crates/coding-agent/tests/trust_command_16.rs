//! `/trust`: the project trust selector of pi 1.6, saving a decision for the session's folder
//! (or its parent) in `<agentDir>/trust.json` for the next start. Ours and pi 1.6.0
//! (`PI_TS16`) side by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(15);

/// The selector, from the border above `Project trust` to the border below its hint, with
/// the folders named `<cwd>` and `<parent>`.
fn panel(screen: &str, cwd: &str, parent: &str) -> Option<Vec<String>> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let title = rows.iter().position(|r| *r == " Project trust")?;
    let start = title.checked_sub(2)?;
    let end = title + rows[title..].iter().position(|r| r.starts_with("────"))?;
    Some(
        rows[start..=end]
            .iter()
            .map(|r| r.replace(cwd, "<cwd>").replace(parent, "<parent>"))
            .collect(),
    )
}

/// trust.json once it holds `expected` (pi 1.6.0 writes it under a lock, after redrawing).
fn trust_when(env: &Env, expected: &Value) -> Value {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let text = std::fs::read_to_string(env.agent.join("trust.json")).unwrap_or_default();
        if let Ok(value) = serde_json::from_str::<Value>(&text)
            && value == *expected
        {
            assert!(
                text.ends_with("}\n"),
                "trust.json ends with a newline: {text:?}"
            );
            return value;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "trust.json never became {expected}: {text}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn open(tmux: &Tmux, name: &str) -> String {
    tmux.type_text("/trust");
    tmux.wait(&format!("{name}: typed"), WAIT, |s| s.contains("/trust"));
    tmux.keys(&["Enter"]);
    tmux.wait(&format!("{name}: selector"), WAIT, |s| {
        s.contains(" Project trust") && s.contains("Do not trust")
    })
}

#[test]
fn trust_saves_decisions_for_the_next_start_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut panels = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let cwd = std::fs::canonicalize(&env.work).unwrap();
        let parent = cwd.parent().unwrap().to_path_buf();
        let (cwd_text, parent_text) = (cwd.display().to_string(), parent.display().to_string());
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 34);
        tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-model")
        });
        let mut seen = Vec::new();
        let screen = open(&tmux, name);
        seen.push(panel(&screen, &cwd_text, &parent_text).unwrap());
        // Trust the parent folder: saved for the parent, the folder's own entry forgotten.
        tmux.keys(&["Down"]);
        let screen = tmux.wait(&format!("{name}: parent selected"), WAIT, |s| {
            s.contains("→   Trust parent folder")
        });
        seen.push(panel(&screen, &cwd_text, &parent_text).unwrap());
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: saved"), WAIT, |s| {
            s.contains("Saved trust decision: trusted. Restart pi for this to take effect.")
                && !s.contains(" Project trust")
        });
        trust_when(&env, &json!({ parent_text.clone(): true }));
        // Reopened: the inherited decision, its option marked and selected.
        let screen = open(&tmux, name);
        assert!(
            screen.contains(&format!(
                "Saved decision: trusted (inherited from {parent_text})"
            )),
            "{name}: {screen}"
        );
        seen.push(panel(&screen, &cwd_text, &parent_text).unwrap());
        tmux.keys(&["j"]);
        tmux.wait(&format!("{name}: j moves down"), WAIT, |s| {
            s.contains("→   Do not trust")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: untrusted"), WAIT, |s| {
            s.contains("Saved trust decision: untrusted. Restart pi for this to take effect.")
        });
        trust_when(
            &env,
            &json!({ parent_text.clone(): true, cwd_text.clone(): false }),
        );
        // The running session keeps its trust; Esc leaves without saving.
        let screen = open(&tmux, name);
        assert!(
            screen.contains(&format!("Saved decision: untrusted ({cwd_text})"))
                && screen.contains("Current session: trusted"),
            "{name}: {screen}"
        );
        seen.push(panel(&screen, &cwd_text, &parent_text).unwrap());
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: closed"), WAIT, |s| {
            !s.contains(" Project trust")
        });
        panels.push(seen);
    }
    if let [ours, theirs] = &panels[..] {
        assert_eq!(
            ours, theirs,
            "the selector as drawn by ours and by pi 1.6.0"
        );
    }
}
