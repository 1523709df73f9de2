//! Session files of pi 1.5.2 continue in ours: the `usage` and `context_edit` entries of
//! `tests/fixtures/pi-1.5-rpc-extras-session.jsonl` (written by 1.5.2 with cache warming,
//! a compaction and three retried failures) are read, usage counts in the totals, and the
//! context sent to the model is the edited one.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_15_session_with_usage_and_context_edits_continues_with_the_edited_context() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let trace = include_str!("fixtures/pi-1.5-rpc-extras-session.jsonl")
        .replace("<ROOT>/work", &env.work.display().to_string());
    // One more edit, as an extension would append it: the last question reads differently.
    let edit = json!({"type": "context_edit", "id": "ed000001", "parentId": "3e0250cd",
        "timestamp": "2026-11-25T09:40:00.000Z", "targetId": "115f7171",
        "replacement": {"content": "edited question"}});
    let file = env.dir.path().join("from-15.jsonl");
    std::fs::write(&file, format!("{trace}{edit}\n")).unwrap();
    let lines = read_jsonl(&file);

    let mut rpc = Rpc::start(
        &env,
        &[
            "--session",
            file.to_str().unwrap(),
            "--model",
            "mock/mock-model",
        ],
    );
    let stats = rpc.call("s", json!({"type": "get_session_stats"}));
    let messages = rpc.call("m", json!({"type": "get_messages"}));
    let in_context: u64 = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "assistant")
        .map(|m| m["usage"]["input"].as_u64().unwrap())
        .sum();
    let usage_entry = lines.iter().find(|l| l["type"] == "usage").unwrap();
    assert_eq!(usage_entry["usage"]["input"], 1336);
    assert_eq!(
        stats["data"]["tokens"]["input"].as_u64().unwrap(),
        in_context + 1336,
        "the usage entry counts in the totals: {stats}"
    );
    // The three retried failures are out of the context; the last one stands.
    let failed: Vec<&Value> = messages["data"]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["stopReason"] == "error")
        .collect();
    assert_eq!(failed.len(), 1);

    server.push(Script::text("continued"));
    rpc.call("p", json!({"type": "prompt", "message": "and now?"}));
    rpc.event("agent_settled");
    let body = server.requests().last().unwrap().body.clone();
    let users: Vec<String> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].to_string())
        .collect();
    assert!(
        users.iter().any(|u| u.contains("edited question")),
        "{users:?}"
    );
    assert!(!users.iter().any(|u| u.contains("hi again")), "{users:?}");
    assert!(users.last().unwrap().contains("and now?"));
    assert_eq!(rpc.finish(), Some(0));

    // Nothing of the 1.5 file was lost: ours appended after it.
    let after = read_jsonl(&file);
    assert_eq!(&after[..lines.len()], &lines[..]);
}
