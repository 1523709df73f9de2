//! `quietStartup`: `false` shows the header with its hints and the loaded resources
//! (APPEND_SYSTEM.md and AGENTS.md, a skill, a prompt template, an extension),
//! `"header"` keeps only the header, `true` shows neither; warnings show in every case.
//! Ours and pi 1.6.0 (`PI_TS16`) side by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(15);

/// The rows above the editor.
fn above_editor(screen: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let editor = rows
        .iter()
        .rposition(|r| r.starts_with("────"))
        .and_then(|bottom| rows[..bottom].iter().rposition(|r| r.starts_with("────")))
        .unwrap_or(rows.len());
    rows[..editor].iter().map(|r| (*r).to_owned()).collect()
}

#[test]
fn quiet_startup_values_show_what_16_shows() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let host = support::ext_host::host_dir();
    for quiet in [Value::Bool(false), json!("header"), Value::Bool(true)] {
        let mut screens = Vec::new();
        for (name, wrapper) in pis() {
            let env = Env::new(
                &server,
                128_000,
                json!({"tuiMode": "regular", "quietStartup": quiet}),
            );
            if wrapper.is_some() {
                support::ts16::stub_search_tools(&env.agent);
            }
            std::fs::write(env.work.join("AGENTS.md"), "Be brief.\n").unwrap();
            // A file-backed system prompt is listed first in [Context].
            std::fs::write(env.agent.join("APPEND_SYSTEM.md"), "Answer in English.\n").unwrap();
            let skill = env.agent.join("skills/greet/SKILL.md");
            std::fs::create_dir_all(skill.parent().unwrap()).unwrap();
            std::fs::write(
                &skill,
                "---\nname: greet\ndescription: Greets people\n---\nSay hello.\n",
            )
            .unwrap();
            let prompts = env.agent.join("prompts");
            std::fs::create_dir_all(&prompts).unwrap();
            std::fs::write(prompts.join("review.md"), "Review the code.\n").unwrap();
            let extension = env.dir.path().join("tools/index.ts");
            std::fs::create_dir_all(extension.parent().unwrap()).unwrap();
            std::fs::write(&extension, "export default function (pi) {}\n").unwrap();
            let extension = extension.display().to_string();
            let host_dir = host.as_ref().map(|h| h.display().to_string());
            let mut vars = vec![("PI_OFFLINE", "1")];
            if wrapper.is_none()
                && let Some(dir) = host_dir.as_deref()
            {
                vars.push(("PI_EXTENSION_HOST_DIR", dir));
            }
            let pi = program_path(&wrapper);
            let tmux = Tmux::start_program(&env, &pi, &vars, &["-e", &extension], 100, 40);
            let screen = tmux.wait(&format!("{name} {quiet}: started"), WAIT, |s| {
                s.contains("mock-model") && s.contains("Warning: tmux extended-keys")
            });
            let mut seen = above_editor(&screen);
            if quiet == Value::Bool(false) {
                // Ctrl+O expands the listing to paths grouped by scope.
                tmux.keys(&["C-o"]);
                let screen = tmux.wait(&format!("{name}: expanded"), WAIT, |s| {
                    s.contains("Tool output: expanded")
                });
                seen.extend(above_editor(&screen));
                for section in ["[Context]", "[Skills]", "[Prompts]", "[Extensions]"] {
                    assert!(seen.iter().any(|r| r == section), "{name}: {seen:#?}");
                }
                assert!(
                    seen.iter().any(|r| r.contains("APPEND_SYSTEM.md")),
                    "{name}: {seen:#?}"
                );
            }
            screens.push((name, seen));
        }
        if let [(_, ours), (_, theirs)] = &screens[..] {
            assert_eq!(ours, theirs, "quietStartup {quiet}");
        }
    }
}
