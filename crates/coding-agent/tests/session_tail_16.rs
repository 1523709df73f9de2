//! A session file whose last line lacks its newline (another program wrote it so, or a
//! crash cut the last write short) is continued without gluing the next entry onto that
//! line, as in pi 1.6.0: after `pi -c`, every entry written since reads back, for ours and
//! for 1.6.0 (`PI_TS16`) alike.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// How the file is left between the two runs.
#[derive(Clone, Copy, Debug)]
enum Tail {
    /// The last entry without its newline.
    NoNewline,
    /// A line cut off mid-entry (a crash during a write), without a newline.
    Torn,
}

/// What the file holds after a first prompt, `tail`, and a continued prompt: per line,
/// the entry's type and role, or `"unreadable"`.
async fn lines_after(program: fn() -> Command, tail: Tail) -> Vec<String> {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("first answer"));
    server.push(Script::text("second answer"));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let (out, env) = tokio::task::spawn_blocking(move || {
        let out = run(&env, program(), &["-p", "first"]);
        (out, env)
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let files = env.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let file = files[0].clone();
    let mut text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with('\n'));
    text.pop();
    if let Tail::Torn = tail {
        text.push_str("\n{\"type\":\"message\",\"id\":\"cut\",\"message\":{\"ro");
    }
    std::fs::write(&file, &text).unwrap();

    let (out, env) = tokio::task::spawn_blocking(move || {
        let out = run(&env, program(), &["-c", "-p", "second"]);
        (out, env)
    })
    .await
    .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        env.session_files(),
        vec![file.clone()],
        "-c continued the same file"
    );
    let after = std::fs::read_to_string(&file).unwrap();
    assert!(after.starts_with(&text), "what was there is kept as it was");
    after
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| match serde_json::from_str::<Value>(line) {
            Ok(entry) => {
                let role = entry["message"]["role"].as_str().unwrap_or("-");
                format!("{} {role}", entry["type"].as_str().unwrap_or("?"))
            }
            Err(_) => "unreadable".to_owned(),
        })
        .collect()
}

async fn compare(tail: Tail) -> Vec<String> {
    let our = lines_after(ours, tail).await;
    if ts16().is_some() {
        // A fn pointer cannot capture the wrapper's path: each run looks it up again.
        let their = lines_after(|| ts16_pi(&ts16().unwrap()), tail).await;
        assert_eq!(
            our, their,
            "{tail:?}: ours (left) and pi 1.6.0 (right) differ"
        );
    }
    our
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_last_line_without_its_newline_is_continued_on_a_new_line() {
    let lines = compare(Tail::NoNewline).await;
    let tail: Vec<&str> = lines
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(tail, ["message user", "message assistant"], "{lines:#?}");
    assert!(!lines.iter().any(|l| l == "unreadable"), "{lines:#?}");
    for turn in ["message user", "message assistant"] {
        assert_eq!(lines.iter().filter(|l| *l == turn).count(), 2, "{lines:#?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_line_cut_off_by_a_crash_stays_alone_and_the_next_entries_read_back() {
    let lines = compare(Tail::Torn).await;
    assert_eq!(
        lines.iter().filter(|l| *l == "unreadable").count(),
        1,
        "{lines:#?}"
    );
    let tail: Vec<&str> = lines
        .iter()
        .rev()
        .take(2)
        .rev()
        .map(String::as_str)
        .collect();
    assert_eq!(tail, ["message user", "message assistant"], "{lines:#?}");
}
