//! A session write that fails, as pi 1.6.0 handles it (pi 1.5.0): an entry that could not
//! be written is not kept in memory, so the entries written after it point to parents the
//! file has, and a resumed session sees everything written. Over RPC, the session file is
//! replaced by a folder (so appending to it fails, also for root) during the second prompt
//! and put back for the third; ours and pi 1.6.0 (`PI_TS16`) must leave the same file. (The
//! run itself differs: pi 1.6.0 fails the run whose prompt could not be written, ours
//! warns and goes on.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::HashSet;
use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program};

/// Sends a prompt and waits for it to end: its run settled, or its answer was a failure.
fn prompt(rpc: &mut Rpc, id: &str, text: &str) -> Value {
    rpc.send(json!({"id": id, "type": "prompt", "message": text}));
    let answer = rpc.response(id);
    if answer["success"] == true {
        rpc.until("the run settled", |l| l["type"] == "agent_settled");
    }
    json!({"success": answer["success"]})
}

/// The texts of the session's user and assistant messages in file order.
fn texts(entries: &[Value]) -> Vec<Value> {
    entries
        .iter()
        .filter(|e| e["type"] == "message")
        .filter(|e| e["message"]["role"] == "user" || e["message"]["role"] == "assistant")
        .map(|e| e["message"]["content"][0]["text"].clone())
        .collect()
}

async fn failed_write(wrapper: &Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    // One answer text for all: pi 1.6.0 fails the run whose prompt could not be written
    // (ours sends it), so the replies land on different prompts.
    for _ in 0..3 {
        server.push(Script::text("An answer."));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let (second, file, resumed) = tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, program(wrapper), &[]);
        prompt(&mut rpc, "p1", "First question.");
        let state = rpc.call("s", json!({"type": "get_state"}));
        let file = PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
        let moved = file.with_extension("moved");
        std::fs::rename(&file, &moved).unwrap();
        std::fs::create_dir(&file).unwrap();
        let second = prompt(&mut rpc, "p2", "Second question.");
        std::fs::remove_dir(&file).unwrap();
        std::fs::rename(&moved, &file).unwrap();
        prompt(&mut rpc, "p3", "Third question.");
        rpc.finish();
        let session = file.display().to_string();
        let mut again = Rpc::start_program(&env, program(wrapper), &["--session", &session]);
        let messages = again.call("m", json!({"type": "get_messages"}));
        again.finish();
        let resumed: Vec<Value> = messages["data"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user" || m["role"] == "assistant")
            .map(|m| m["content"][0]["text"].clone())
            .collect();
        (second, file, resumed)
    });
    let entries = read_jsonl(&file);
    let ids: HashSet<&str> = entries.iter().filter_map(|e| e["id"].as_str()).collect();
    let dangling: Vec<&Value> = entries
        .iter()
        .skip(1)
        .filter(|e| e["parentId"].as_str().is_some_and(|p| !ids.contains(p)))
        .collect();
    json!({"second": second, "written": texts(&entries), "dangling": dangling.len(),
           "resumed": resumed})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_session_write_leaves_no_entry_behind_as_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, failed_write(&wrapper).await));
    }
    let ours = &seen[0].1;
    assert_eq!(ours["dangling"], 0, "{ours:#}");
    assert_eq!(ours["resumed"], ours["written"], "{ours:#}");
    let written = ours["written"].as_array().unwrap();
    assert_eq!(
        written,
        &[
            "First question.",
            "An answer.",
            "Third question.",
            "An answer."
        ],
        "nothing of the second prompt, whose write failed: {ours:#}"
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(
            &seen[0].1, theirs,
            "ours (left) and {who} (right):\nours {:#}\n{who} {theirs:#}",
            seen[0].1
        );
    }
}
