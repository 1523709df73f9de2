//! Forking a session whose path holds a label and a compaction, as pi 1.6.0 does: the new
//! file's entries form one chain (the label left out and written again at the end), the
//! compaction stays with its kept boundary moved off the label, and the forked session's
//! next request carries the summary and the kept messages, and the running session's id
//! is the new file's. Our `pi` and pi 1.6.0
//! (`PI_TS16`) fork the same file over RPC against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::entries::{assistant, header, user, write};
use support::rpc::{Env, Rpc, read_jsonl, user_texts};
use support::ts16::{ours, ts16, ts16_pi};

/// A session of `cwd`: a first exchange, a label on its user message, a second exchange
/// under the label, a compaction keeping from the label on, and a third user message.
fn session_file(dir: &Path, cwd: &Path) -> PathBuf {
    let lines = [
        header("fork-source", cwd),
        user("u0000001", None, "first"),
        assistant("a0000001", "u0000001", "one"),
        json!({"type": "label", "id": "l0000001", "parentId": "a0000001", "timestamp": "2026-01-01T00:00:02.000Z",
               "targetId": "u0000001", "label": "start"}),
        user("u0000002", Some("l0000001"), "second"),
        assistant("a0000002", "u0000002", "two"),
        json!({"type": "compaction", "id": "c0000001", "parentId": "a0000002", "timestamp": "2026-01-01T00:00:03.000Z",
               "summary": "They said first and second.", "firstKeptEntryId": "l0000001", "tokensBefore": 1000}),
        user("u0000003", Some("c0000001"), "third"),
    ];
    let path = dir.join("source.jsonl");
    write(&path, &lines);
    path
}

/// What one pi's fork gave: the new file's lines and the next request's user texts.
fn fork(server: &MockServer, program: Command, who: &str) -> (Vec<Value>, Vec<String>) {
    let env = Env::new(server, 128_000, json!({}));
    let source = session_file(env.dir.path(), &env.work);
    let mut rpc = Rpc::start_program(&env, program, &["--session", source.to_str().unwrap()]);
    let forked = rpc.call("f", json!({"type": "fork", "entryId": "u0000003"}));
    assert_eq!(forked["success"], true, "{who}: {forked}");
    assert_eq!(forked["data"]["text"], "third", "{who}");
    server.clear_requests();
    server.push(Script::text("four"));
    rpc.call("p", json!({"type": "prompt", "message": "fourth"}));
    rpc.event("agent_end");
    let state = rpc.call("s", json!({"type": "get_state"}));
    let file = PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
    assert_ne!(file, source, "{who}");
    rpc.finish();
    let requests = server.requests();
    let lines = read_jsonl(&file);
    // The running session's id follows the fork (pi 0.75.4): the new file's header id.
    assert_eq!(state["data"]["sessionId"], lines[0]["id"], "{who}: {state}");
    assert_ne!(state["data"]["sessionId"], "fork-source", "{who}");
    (lines, user_texts(&requests[0].body))
}

/// Checks the forked file: one chain from one root, the compaction kept with its boundary
/// on an entry of the file, the label written again for its target.
fn check(lines: &[Value], who: &str) {
    let entries = &lines[1..];
    let ids: HashSet<&str> = entries.iter().filter_map(|e| e["id"].as_str()).collect();
    let roots = entries.iter().filter(|e| e["parentId"].is_null()).count();
    assert_eq!(roots, 1, "{who}: {lines:#?}");
    for entry in entries {
        if let Some(parent) = entry["parentId"].as_str() {
            assert!(ids.contains(parent), "{who}: {entry} has a missing parent");
        }
    }
    let compaction = entries
        .iter()
        .find(|e| e["type"] == "compaction")
        .unwrap_or_else(|| panic!("{who}: no compaction in {lines:#?}"));
    assert_eq!(compaction["firstKeptEntryId"], "u0000002", "{who}");
    let label = entries
        .iter()
        .find(|e| e["type"] == "label")
        .unwrap_or_else(|| panic!("{who}: no label in {lines:#?}"));
    assert_eq!(
        (&label["targetId"], &label["label"]),
        (&json!("u0000001"), &json!("start")),
        "{who}"
    );
    assert!(
        !ids.contains("l0000001"),
        "{who}: the old label entry was copied"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_through_a_label_keeps_one_chain_and_its_compaction_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let (lines, users) = fork(&server, ours(), "ours");
    check(&lines, "ours");
    // The summary (a user message), then what was kept, then the new prompt.
    assert_eq!(users.len(), 3, "{users:?}");
    assert!(
        users[0].contains("They said first and second."),
        "{users:?}"
    );
    assert_eq!(&users[1..], ["second", "fourth"]);
    if let Some(wrapper) = ts16() {
        let (their_lines, their_users) = fork(&server, ts16_pi(&wrapper), "pi 1.6.0");
        check(&their_lines, "pi 1.6.0");
        assert_eq!(their_users, users);
    }
}
