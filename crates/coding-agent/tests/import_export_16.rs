//! `/export <file>.jsonl` and `/import <file>`: the current branch written as a session
//! file of its own, and a session file taken in (copied into the session folder, resumed)
//! after a yes/no question. Ours and pi 1.6.0 (`PI_TS16`) side by side in tmux.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, read_jsonl};
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path};

const WAIT: Duration = Duration::from_secs(20);

fn command(tmux: &Tmux, name: &str, text: &str) {
    tmux.type_text(text);
    tmux.wait(&format!("{name}: {text} typed"), WAIT, |s| s.contains(text));
    tmux.keys(&["Enter"]);
}

/// What an exported line is, for comparing two pis' files: the entry type, a message's
/// role, and whether its parent is the line before.
fn shape(lines: &[Value]) -> Vec<String> {
    let mut previous: Option<Value> = None;
    lines
        .iter()
        .map(|line| {
            let kind = line["type"].as_str().unwrap_or("?").to_owned();
            let role = line["message"]["role"].as_str().unwrap_or("");
            let chained = match &previous {
                Some(p) if p["type"] != "session" => line["parentId"] == p["id"],
                _ => line["parentId"].is_null(),
            };
            previous = Some(line.clone());
            format!("{kind}:{role}:{chained}")
        })
        .collect()
}

/// The confirm dialog's rows, from its title to its key hint, with the path named `<file>`.
fn dialog(screen: &str, file: &str) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let start = rows.iter().position(|r| *r == " Import session").unwrap();
    let end = start
        + rows[start..]
            .iter()
            .position(|r| r.contains("navigate"))
            .unwrap();
    rows[start..=end]
        .iter()
        .map(|r| r.replace(file, "<file>"))
        .collect()
}

#[test]
fn export_jsonl_then_import_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut shapes = Vec::new();
    let mut dialogs = Vec::new();
    for (name, wrapper) in pis() {
        server.push(Script::text("An answer to export."));
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(
            &env,
            &pi,
            &[("PI_OFFLINE", "1")],
            &["A question to export."],
            110,
            40,
        );
        tmux.wait(&format!("{name}: answered"), WAIT, |s| {
            s.contains("An answer to export.") && !s.contains("Working")
        });
        command(&tmux, name, "/export out/branch.jsonl");
        let file = env.work.join("out/branch.jsonl");
        tmux.wait(&format!("{name}: exported"), WAIT, |s| {
            s.contains(&format!("Session exported to: {}", file.display()))
        });
        let lines = read_jsonl(&file);
        let keys: Vec<&String> = lines[0].as_object().unwrap().keys().collect();
        assert_eq!(
            keys,
            ["type", "version", "id", "timestamp", "cwd"],
            "{name}"
        );
        assert_eq!(lines[0]["cwd"], env.work.display().to_string(), "{name}");
        let session = read_jsonl(&env.session_files()[0]);
        assert_eq!(lines[0]["id"], session[0]["id"], "{name}: the session's id");
        shapes.push(shape(&lines));

        // A second pi in another folder imports the file.
        let other = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let tmux = Tmux::start_program(&other, &pi, &[("PI_OFFLINE", "1")], &[], 110, 40);
        tmux.wait(&format!("{name}: second started"), WAIT, |s| {
            s.contains("mock-model")
        });
        command(&tmux, name, "/import");
        tmux.wait(&format!("{name}: usage"), WAIT, |s| {
            s.contains("Usage: /import <path.jsonl>")
        });
        let typed = file.display().to_string();
        command(&tmux, name, &format!("/import {typed}"));
        let shown = tmux.wait(&format!("{name}: the question"), WAIT, |s| {
            s.contains("Replace current session with") && s.contains("→ Yes")
        });
        dialogs.push(dialog(&shown, &typed));
        // No: nothing changes.
        tmux.keys(&["Down"]);
        tmux.wait(&format!("{name}: no"), WAIT, |s| s.contains("→ No"));
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: cancelled"), WAIT, |s| {
            s.contains("Import cancelled") && !s.contains("→ No")
        });
        // Yes: the file is copied into this folder's session directory and resumed.
        command(&tmux, name, &format!("/import {typed}"));
        tmux.wait(&format!("{name}: asked again"), WAIT, |s| {
            s.contains("→ Yes")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: imported"), WAIT, |s| {
            s.contains(&format!("Session imported from: {typed}"))
                && s.contains("An answer to export.")
        });
        let stored: Vec<String> = other
            .session_files()
            .iter()
            .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
            .collect();
        assert!(
            stored.contains(&"branch.jsonl".to_owned()),
            "{name}: {stored:?}"
        );
        // A file of the same name from another folder: the name is taken, so the copy
        // gets a suffix.
        let again = env.work.join("out2/branch.jsonl");
        std::fs::create_dir_all(again.parent().unwrap()).unwrap();
        std::fs::copy(&file, &again).unwrap();
        let typed_again = again.display().to_string();
        command(&tmux, name, &format!("/import {typed_again}"));
        tmux.wait(&format!("{name}: asked a third time"), WAIT, |s| {
            s.contains("→ Yes")
        });
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: imported again"), WAIT, |s| {
            s.contains(&format!("Session imported from: {typed_again}"))
        });
        assert!(
            other
                .session_files()
                .iter()
                .any(|p| p.ends_with("branch-1.jsonl")),
            "{name}: {:?}",
            other.session_files()
        );
        // A missing file is named after the question.
        command(&tmux, name, "/import nowhere.jsonl");
        tmux.wait(&format!("{name}: asked about a missing file"), WAIT, |s| {
            s.contains("→ Yes")
        });
        tmux.keys(&["Enter"]);
        let missing = other.work.join("nowhere.jsonl");
        tmux.wait(&format!("{name}: not found"), WAIT, |s| {
            s.contains(&format!(
                "Failed to import session: File not found: {}",
                missing.display()
            ))
        });
    }
    if let [ours, theirs] = &shapes[..] {
        assert_eq!(ours, theirs, "the exported lines");
    }
    if let [ours, theirs] = &dialogs[..] {
        assert_eq!(ours, theirs, "the import question");
    }
}
