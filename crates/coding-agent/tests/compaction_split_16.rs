//! A manual compaction that cuts inside a turn, as pi 1.6.0 runs it: the history before the
//! turn and the turn's opening part are summarized by two calls; the second frames the
//! opening as a conversation that goes on (`# Conversation`, then `# Instructions` asking
//! for a checkpoint, pi 0.87.1) and carries the `/compact` instructions too (pi 1.4.0);
//! the summary joins both under `**Turn Context (split turn):**`. Our `pi` and pi 1.6.0
//! (`PI_TS16`) compact the same prepared session over RPC against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::entries::{assistant, header, user, write};
use support::rpc::{Env, Rpc, last_user_text};
use support::ts16::{pis, program};

/// `n` characters of text starting with `tag`.
fn text(tag: &str, n: usize) -> String {
    format!("{tag} {}", "x".repeat(n.saturating_sub(tag.len() + 1)))
}

/// Compacts a session whose last turn (`q2`, then two long replies) is cut after its first
/// reply, with instructions; returns what each summary call was asked and the summary.
fn split_compaction(program: Command, server: &MockServer) -> Value {
    server.clear_queue();
    server.clear_requests();
    server.push_all([
        Script::text("## Goal\nHistory summary."),
        Script::text("## Original Request\nThe turn began."),
    ]);
    let env = Env::new(
        server,
        128_000,
        json!({"retry": {"enabled": false}, "compaction": {"keepRecentTokens": 300}}),
    );
    let path = env.dir.path().join("split.jsonl");
    write(
        &path,
        &[
            header("split-source", &env.work),
            user("u0000001", None, &text("q1", 400)),
            assistant("a0000001", "u0000001", &text("a1", 400)),
            user("u0000002", Some("a0000001"), &text("q2", 40)),
            assistant("a0000002", "u0000002", &text("a2", 1600)),
            assistant("a0000003", "a0000002", &text("a3", 1600)),
        ],
    );
    let mut rpc = Rpc::start_program(&env, program, &["--session", path.to_str().unwrap()]);
    let answer = rpc.call(
        "c",
        json!({"type": "compact", "customInstructions": "Mind the migration plan."}),
    );
    rpc.finish();
    assert_eq!(answer["success"], true, "{answer}");
    let asked: Vec<String> = server
        .requests()
        .iter()
        .map(|r| last_user_text(&r.body))
        .collect();
    assert_eq!(asked.len(), 2, "{asked:#?}");
    let prefix = &asked[1];
    let (conversation, instructions) = prefix
        .split_once("\n\n# Instructions\n")
        .unwrap_or_else(|| panic!("no instructions in {prefix}"));
    json!({
        "firstKept": answer["data"]["firstKeptEntryId"],
        "historyHasQ1": asked[0].contains("q1 x"),
        "prefixStartsWithConversation": conversation.starts_with("# Conversation\n"),
        "prefixHasQ2": conversation.contains("q2 x"),
        "prefixHasA2": conversation.contains("a2 x"),
        "prefixHasA3": prefix.contains("a3 x"),
        "instructionsKeepFocus": instructions.contains("Mind the migration plan."),
        "summary": answer["data"]["summary"].as_str().unwrap_or_default()
            .split("\n\n<read-files>").next().unwrap_or_default(),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_split_turn_is_summarized_as_a_continuing_conversation_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        let server = &server;
        let wrapper = wrapper.clone();
        let result = tokio::task::block_in_place(|| split_compaction(program(&wrapper), server));
        seen.push((who, result));
    }
    assert_eq!(
        seen[0].1,
        json!({
            "firstKept": "a0000003",
            "historyHasQ1": true,
            "prefixStartsWithConversation": true,
            "prefixHasQ2": true,
            "prefixHasA2": true,
            "prefixHasA3": false,
            "instructionsKeepFocus": true,
            "summary": "## Goal\nHistory summary.\n\n---\n\n**Turn Context (split turn):**\n\n## Original Request\nThe turn began.",
        })
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
}
