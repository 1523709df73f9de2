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
    // pi 1.6 counts every entry of the file: all replies (also those a compaction
    // replaced), the cache warming `usage` entry and the compaction's own usage.
    let in_file: u64 = lines
        .iter()
        .filter_map(|l| match l["type"].as_str() {
            Some("message") if l["message"]["role"] == "assistant" => {
                l["message"]["usage"]["input"].as_u64()
            }
            Some("usage" | "compaction" | "branch_summary") => l["usage"]["input"].as_u64(),
            _ => None,
        })
        .sum();
    assert_eq!(in_file, 1337 + 1366 + 1440 + 1336 + 727);
    assert!(in_context < in_file);
    assert_eq!(
        stats["data"]["tokens"]["input"].as_u64().unwrap(),
        in_file,
        "every entry counts in the totals: {stats}"
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

/// The system message of pi 1.5 in our own sessions: written once before the first prompt,
/// checkpointed by a compaction (and first in the context after it), patched when a later
/// run has other tools.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn our_sessions_record_the_system_message_as_15_does() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    server.push_all([
        Script::text("first answer"),
        Script::text("second answer"),
        Script::text("the summary"),
        Script::text("third answer"),
    ]);
    let mut rpc = Rpc::start(&env, &[]);
    for (id, text) in [("p1", "first question"), ("p2", "second question")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.event("agent_end");
    }
    let roles = |rpc: &mut Rpc, id: &str| -> Vec<String> {
        let messages = rpc.call(id, json!({"type": "get_messages"}));
        messages["data"]["messages"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| m["role"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(
        roles(&mut rpc, "m1"),
        ["system", "user", "assistant", "user", "assistant"],
        "one system message for the whole branch"
    );
    let compact = rpc.call("c", json!({"type": "compact"}));
    assert_eq!(compact["success"], true, "{compact}");
    let after = roles(&mut rpc, "m2");
    assert_eq!(after[..2], ["system", "compactionSummary"], "{after:?}");
    assert_eq!(rpc.finish(), Some(0));

    let file = env.session_files().pop().unwrap();
    let lines = read_jsonl(&file);
    let compaction = lines.iter().find(|l| l["type"] == "compaction").unwrap();
    let checkpoint = &compaction["systemMessage"];
    assert_eq!(checkpoint["role"], "system");
    // The prompt's sections under pi 1.6's names, each tagged one with its tags.
    assert!(
        checkpoint["sections"]["tools"]
            .as_str()
            .unwrap()
            .starts_with("<tools>\n- read: "),
        "{checkpoint}"
    );
    let tools: Vec<&str> = checkpoint["toolsAdded"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    // In the agent's order, as pi 1.6 keeps them.
    assert_eq!(tools, ["read", "bash", "edit", "write"]);

    // Resumed with fewer tools: a patch names what went and the prompt that changed.
    let mut resumed = Rpc::start(&env, &["-c", "--tools", "read"]);
    resumed.call("p3", json!({"type": "prompt", "message": "third question"}));
    resumed.event("agent_end");
    assert_eq!(resumed.finish(), Some(0));
    let systems: Vec<Value> = read_jsonl(&file)
        .into_iter()
        .filter(|l| l["type"] == "message" && l["message"]["role"] == "system")
        .map(|l| l["message"].clone())
        .collect();
    assert_eq!(systems.len(), 2, "the first message and one patch");
    let patch = &systems[1];
    assert_eq!(
        patch["toolsRemoved"],
        json!([{"name": "bash"}, {"name": "edit"}, {"name": "write"}])
    );
    // Only the sections that changed: the tool list and the rules, not the preamble.
    assert!(patch["sections"]["tools"].is_string(), "{patch}");
    assert!(patch["sections"].get("preamble").is_none(), "{patch}");
    assert!(patch.get("toolsAdded").is_none(), "{patch}");
    // The model never gets it as a message: the request's messages start with the system
    // prompt, then the conversation.
    let last = server.requests().last().unwrap().body.clone();
    let roles: Vec<&str> = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(
        roles.iter().filter(|r| **r == "system").count(),
        1,
        "{roles:?}"
    );
}
