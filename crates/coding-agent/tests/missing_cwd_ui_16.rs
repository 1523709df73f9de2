//! `/import` of a session whose working directory is gone: pi 1.6 asks "Session cwd does
//! not exist: <dir>" with "Continue in <here> (asks again next time)", "Fork into <here>
//! (new session ID, original kept)" and "Cancel". Continue resumes the copied file as it
//! is (it keeps its folder); fork writes a new session in this folder from the file named.
//! Ours and pi 1.6.0 (`PI_TS16`) side by side in tmux, on the same session file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::{Env, read_jsonl};
use support::tmux::{self, Tmux};
use support::ts16::{ours, pis, program_path, run_in};

const WAIT: Duration = Duration::from_secs(20);
const ANSWER: &str = "An answer from a folder that is gone.";

fn command(tmux: &Tmux, name: &str, text: &str) {
    tmux.type_text(text);
    tmux.wait(&format!("{name}: {text} typed"), WAIT, |s| s.contains(text));
    tmux.keys(&["Enter"]);
}

/// A session file written in a folder that is then removed.
fn orphaned_session(server: &MockServer) -> (Env, PathBuf, PathBuf) {
    server.push(Script::text(ANSWER));
    let env = Env::new(server, 128_000, json!({}));
    let gone = env.dir.path().join("gone");
    std::fs::create_dir_all(&gone).unwrap();
    let out = run_in(&env, &gone, ours(), &["-p", "A question"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::remove_dir_all(&gone).unwrap();
    // A short path: the command line must fit on one row.
    let file = env.dir.path().join("s.jsonl");
    std::fs::copy(env.session_files().pop().expect("a session file"), &file).unwrap();
    (env, file, gone)
}

/// The question's rows, from its title to its last option, with the folders named.
fn question(screen: &str, gone: &Path, here: &Path) -> Vec<String> {
    let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
    let start = rows
        .iter()
        .position(|r| r.contains("Session cwd does not exist:"))
        .unwrap();
    let end = start
        + rows[start..]
            .iter()
            .position(|r| r.contains("Cancel"))
            .unwrap();
    rows[start..=end]
        .iter()
        .map(|r| {
            r.replace(&gone.display().to_string(), "<gone>")
                .replace(&here.display().to_string(), "<here>")
        })
        .collect()
}

/// Starts pi in `env` and runs `/import <file>`, answering Yes to the first question;
/// returns the screen with the missing-folder question.
fn import(env: &Env, name: &str, wrapper: &Option<PathBuf>, file: &Path) -> (Tmux, String) {
    let pi = program_path(wrapper);
    let tmux = Tmux::start_program(env, &pi, &[("PI_OFFLINE", "1")], &[], 120, 40);
    tmux.wait(&format!("{name}: started"), WAIT, |s| {
        s.contains("mock-model")
    });
    command(&tmux, name, &format!("/import {}", file.display()));
    tmux.wait(&format!("{name}: replace?"), WAIT, |s| {
        s.contains("Replace current session with") && s.contains("→ Yes")
    });
    tmux.keys(&["Enter"]);
    let shown = tmux.wait(&format!("{name}: the folder question"), WAIT, |s| {
        s.contains("Session cwd does not exist:") && s.contains("→ Continue in")
    });
    (tmux, shown)
}

#[test]
fn importing_a_session_whose_folder_is_gone_asks_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let (_source_env, file, gone) = orphaned_session(&server);
    let source_id = read_jsonl(&file)[0]["id"].clone();
    let mut questions = Vec::new();
    let mut statuses = Vec::new();
    for (name, wrapper) in pis() {
        // Fork: a new session in this folder, the file named left as it was.
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let (tmux, shown) = import(&env, name, &wrapper, &file);
        questions.push(question(&shown, &gone, &env.work));
        tmux.keys(&["Down"]);
        tmux.wait(&format!("{name}: fork chosen"), WAIT, |s| {
            s.contains("→ Fork into")
        });
        tmux.keys(&["Enter"]);
        let screen = tmux.wait(&format!("{name}: forked"), WAIT, |s| {
            s.contains("Forked into new session") && s.contains(ANSWER)
        });
        let files = env.session_files();
        assert_eq!(files.len(), 1, "{name}: only the fork is stored: {files:?}");
        let fork = read_jsonl(&files[0]);
        assert_eq!(fork[0]["cwd"], env.work.display().to_string(), "{name}");
        assert_ne!(fork[0]["id"], source_id, "{name}: a new id");
        let fork_id = fork[0]["id"].as_str().unwrap();
        let status = screen
            .lines()
            .find(|l| l.contains("Forked into new session"))
            .unwrap()
            .trim()
            .replace(fork_id, "<id>")
            .replace(&env.work.display().to_string(), "<here>");
        drop(tmux);

        // Continue: the copy keeps its folder, and the session runs here.
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let (tmux, _) = import(&env, name, &wrapper, &file);
        tmux.keys(&["Enter"]);
        tmux.wait(&format!("{name}: continued"), WAIT, |s| {
            s.contains(&format!("Session imported from: {}", file.display())) && s.contains(ANSWER)
        });
        let files = env.session_files();
        assert_eq!(files.len(), 1, "{name}: {files:?}");
        let copy = read_jsonl(&files[0]);
        assert_eq!(copy[0]["cwd"], gone.display().to_string(), "{name}");
        assert_eq!(copy[0]["id"], source_id, "{name}");
        drop(tmux);

        // Cancel: nothing is kept.
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        let (tmux, _) = import(&env, name, &wrapper, &file);
        tmux.keys(&["Escape"]);
        tmux.wait(&format!("{name}: cancelled"), WAIT, |s| {
            s.contains("Import cancelled") && !s.contains("Session cwd does not exist:")
        });
        assert!(
            env.session_files()
                .iter()
                .all(|f| read_jsonl(f)[0]["id"] != source_id),
            "{name}: no copy left"
        );
        statuses.push(status);
    }
    if let [ours, ts] = &questions[..] {
        assert_eq!(ours, ts, "the question");
    }
    if let [ours, ts] = &statuses[..] {
        assert_eq!(ours, ts, "the fork's status");
    }
}

#[test]
fn resuming_a_session_whose_folder_is_gone_asks_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut statuses = Vec::new();
    for (name, wrapper) in pis() {
        // The session was written in a folder that is gone; this folder has none, so Tab
        // shows every project's.
        let (env, _, gone) = orphaned_session(&server);
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 120, 40);
        tmux.wait(&format!("{name}: started"), WAIT, |s| {
            s.contains("mock-model")
        });
        command(&tmux, name, "/resume");
        tmux.wait(&format!("{name}: the picker"), WAIT, |s| {
            s.contains("No sessions in current folder. Press Tab to view all.")
        });
        tmux.keys(&["Tab"]);
        tmux.wait(&format!("{name}: every project's"), WAIT, |s| {
            s.contains("Resume Session (All)") && s.contains("A question")
        });
        tmux.keys(&["Enter"]);
        let shown = tmux.wait(&format!("{name}: the folder question"), WAIT, |s| {
            s.contains("Session cwd does not exist:") && s.contains("→ Continue in")
        });
        assert!(
            shown.contains(&format!("Session cwd does not exist: {}", gone.display())),
            "{name}: {shown}"
        );
        tmux.keys(&["Enter"]);
        let screen = tmux.wait(&format!("{name}: resumed"), WAIT, |s| {
            s.contains("Resumed session in") && s.contains(ANSWER)
        });
        let status = screen
            .lines()
            .find(|l| l.contains("Resumed session in"))
            .unwrap()
            .trim()
            .replace(&env.work.display().to_string(), "<here>");
        statuses.push(status);
        // The file keeps its folder: the next resume asks again.
        let files = env.session_files();
        assert_eq!(files.len(), 1, "{name}: {files:?}");
        assert_eq!(
            read_jsonl(&files[0])[0]["cwd"],
            gone.display().to_string(),
            "{name}"
        );
    }
    if let [ours, ts] = &statuses[..] {
        assert_eq!(ours, ts, "the status");
    }
}
