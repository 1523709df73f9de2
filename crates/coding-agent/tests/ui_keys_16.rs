//! Keys of pi 1.6's interactive UI that report what they did, ours and pi 1.6.0
//! (`PI_TS16`) side by side in tmux: Ctrl+O expands tool output and the startup header
//! (`Tool output: expanded`, then `collapsed` in its place), Ctrl+T hides thinking and saves
//! `hideThinkingBlock`, and in `/tree` Ctrl+X copies the selected entry (OSC 52) and Shift+L
//! saves a label into the session.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, read_jsonl};
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);

/// The header rows: from the logo's first row to the onboarding line.
fn header(screen: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let start = rows.iter().position(|r| r.contains("v1.6.0")).unwrap_or(0);
    let end = rows
        .iter()
        .position(|r| r.contains("Pi can explain its own features"))
        .unwrap_or(start);
    rows[start..=end]
        .iter()
        .map(|r| r.replace("shift+ctrl+", "ctrl+shift+"))
        .collect()
}

/// The file's contents once `check` holds (pi 1.6.0 saves settings after it redraws).
fn file_when(path: &std::path::Path, what: &str, check: impl Fn(&str) -> bool) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        if check(&text) {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{} never showed {what}: {text}",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn expansion_and_thinking_keys_report_and_persist_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut headers = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 110, 40);
        // The tmux keyboard warning comes in the background; the statuses go after it.
        let start = tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-model")
                && s.contains("Pi can explain")
                && s.contains("tmux extended-keys is off")
        });
        let mut seen = vec![header(&start)];
        tmux.keys(&["C-o"]);
        let expanded = tmux.wait(&format!("{name}: expanded"), WAIT, |s| {
            s.contains("Tool output: expanded") && s.contains("drop files to attach")
        });
        seen.push(header(&expanded));
        tmux.keys(&["C-o"]);
        tmux.wait(&format!("{name}: collapsed"), WAIT, |s| {
            s.contains("Tool output: collapsed")
                && !s.contains("Tool output: expanded")
                && !s.contains("drop files to attach")
        });
        tmux.keys(&["C-t"]);
        tmux.wait(&format!("{name}: thinking hidden"), WAIT, |s| {
            s.contains("Thinking blocks: hidden") && !s.contains("Tool output: collapsed")
        });
        let settings = env.agent.join("settings.json");
        file_when(&settings, "hideThinkingBlock", |text| {
            serde_json::from_str::<Value>(text)
                .is_ok_and(|v| v["hideThinkingBlock"] == Value::Bool(true))
        });
        headers.push(seen);
    }
    if let [ours, theirs] = &headers[..] {
        assert_eq!(ours, theirs, "the header, compact and expanded");
    }
}

#[test]
fn tree_copies_an_entry_and_saves_a_label_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        server.push(Script::text("Tree answer to copy."));
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(
            &env,
            &pi,
            &[("PI_OFFLINE", "1")],
            &["First question."],
            110,
            40,
        );
        tmux.accept_clipboard();
        tmux.wait(&format!("{name}: answered"), WAIT, |s| {
            s.contains("Tree answer to copy.") && !s.contains("Working")
        });
        tmux.type_text("/tree");
        tmux.wait(&format!("{name}: /tree typed"), WAIT, |s| {
            s.contains("/tree")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: tree"), WAIT, |s| {
            s.contains("Session Tree") && s.contains("› • assistant: Tree answer to copy.")
        });
        // Ctrl+X copies the selected entry's text.
        tmux.keys(&["C-x"]);
        tmux.wait(&format!("{name}: copied"), WAIT, |s| {
            s.contains("Copied selected message to clipboard")
                && tmux.clipboard().as_deref() == Some("Tree answer to copy.")
        });
        // Shift+L edits the selected entry's label; Enter saves it into the session.
        tmux.keys(&["L"]);
        tmux.wait(&format!("{name}: label editor"), WAIT, |s| {
            s.contains("Label (empty to remove):")
        });
        tmux.type_text("keep");
        tmux.wait(&format!("{name}: label typed"), WAIT, |s| {
            s.contains("> keep")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: labelled"), WAIT, |s| {
            s.contains("[keep] assistant: Tree answer to copy.")
        });
        let file = env.session_files().pop().expect("a session file");
        file_when(&file, "the label entry", |text| {
            text.contains("\"label\":\"keep\"")
        });
        let entries = read_jsonl(&file);
        let answer = entries
            .iter()
            .find(|e| e["message"]["role"] == "assistant")
            .expect("the answer");
        let label = entries
            .iter()
            .find(|e| e["type"] == "label")
            .expect("a label entry");
        assert_eq!(label["targetId"], answer["id"], "{name}: {label}");
        assert_eq!(label["label"], "keep", "{name}");
        tmux.keys(&["Escape"]);
    }
}
