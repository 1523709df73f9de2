//! Where a manual compaction cuts, as pi 1.6.0 decides it: the kept budget counts the
//! custom messages the model sees (pi 0.80.4), so a large one near the end moves the cut
//! up to it. Our `pi` and pi 1.6.0 (`PI_TS16`) compact the same prepared session over RPC
//! against the mock model and must keep from the same entry.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::entries::{assistant, header, user, write};
use support::rpc::{Env, Rpc};
use support::ts16::{ours, ts16, ts16_pi};

/// `n` characters of text starting with `tag` (about n/4 estimated tokens).
fn text(tag: &str, n: usize) -> String {
    format!("{tag} {}", "x".repeat(n.saturating_sub(tag.len() + 1)))
}

/// A session where a 2000-character custom message sits between two exchanges and the
/// newest short one: about 330 tokens before it, 520 from it on.
fn session(env: &Env) -> PathBuf {
    let path = env.dir.path().join("cut.jsonl");
    write(
        &path,
        &[
            header("cut-source", &env.work),
            user("u0000001", None, &text("q1", 400)),
            assistant("a0000001", "u0000001", &text("a1", 400)),
            user("u0000002", Some("a0000001"), &text("q2", 400)),
            assistant("a0000002", "u0000002", &text("a2", 40)),
            json!({"type": "custom_message", "id": "m0000001", "parentId": "a0000002",
                   "timestamp": "2026-01-01T00:00:02.000Z", "customType": "note",
                   "content": text("note", 2000), "display": true}),
            user("u0000003", Some("m0000001"), &text("q3", 40)),
            assistant("a0000003", "u0000003", &text("a3", 40)),
        ],
    );
    path
}

/// The `compact` answer of `program` on the prepared session.
fn compact(server: &MockServer, program: Command, who: &str) -> Value {
    server.clear_queue();
    server.push_all([
        Script::text("## Goal\nA summary."),
        Script::text("The turn began."),
    ]);
    let env = Env::new(
        server,
        128_000,
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 300}}),
    );
    let path = session(&env);
    let mut rpc = Rpc::start_program(&env, program, &["--session", path.to_str().unwrap()]);
    let answer = rpc.call("c", json!({"type": "compact"}));
    rpc.finish();
    assert_eq!(answer["success"], true, "{who}: {answer}");
    answer
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kept_budget_counts_custom_messages_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let ours_answer = compact(&server, ours(), "ours");
    assert_eq!(ours_answer["data"]["firstKeptEntryId"], "m0000001");
    if let Some(wrapper) = ts16() {
        let theirs = compact(&server, ts16_pi(&wrapper), "pi 1.6.0");
        assert_eq!(
            theirs["data"]["firstKeptEntryId"],
            ours_answer["data"]["firstKeptEntryId"]
        );
        assert_eq!(
            theirs["data"]["tokensBefore"],
            ours_answer["data"]["tokensBefore"]
        );
    }
}

/// The roles `get_messages` lists for a session whose compaction keeps nothing before it:
/// its kept boundary is its own id (pi 0.87's retain-none compaction).
fn retain_none_roles(program: Command, server: &MockServer) -> Vec<Value> {
    let env = Env::new(server, 128_000, json!({}));
    let path = env.dir.path().join("retain-none.jsonl");
    write(
        &path,
        &[
            header("retain-none", &env.work),
            user("u0000001", None, "first"),
            assistant("a0000001", "u0000001", "one"),
            json!({"type": "compaction", "id": "c0000001", "parentId": "a0000001",
                   "timestamp": "2026-01-01T00:00:03.000Z", "summary": "They said first.",
                   "firstKeptEntryId": "c0000001", "tokensBefore": 100}),
            user("u0000002", Some("c0000001"), "second"),
            assistant("a0000002", "u0000002", "two"),
        ],
    );
    let mut rpc = Rpc::start_program(&env, program, &["--session", path.to_str().unwrap()]);
    let answer = rpc.call("m", json!({"type": "get_messages"}));
    rpc.finish();
    answer["data"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages in {answer}"))
        .iter()
        .map(|m| json!([m["role"], m["summary"], m["content"]]))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_kept_from_itself_keeps_nothing_before_it_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let ours_roles = retain_none_roles(ours(), &server);
    assert_eq!(
        ours_roles,
        [
            json!(["compactionSummary", "They said first.", null]),
            json!(["user", null, "second"]),
            json!(["assistant", null, [{"type": "text", "text": "two"}]]),
        ]
    );
    if let Some(wrapper) = ts16() {
        assert_eq!(retain_none_roles(ts16_pi(&wrapper), &server), ours_roles);
    }
}
