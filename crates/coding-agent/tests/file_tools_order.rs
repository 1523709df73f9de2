//! A listener of `tool_execution_start` sees the file as it was before the tool changes it
//! (issue 36, item 2: pi-acp reads the file then, for its diff and line). In one reply the
//! starts of all calls come before any of them runs, as in pi 1.6.0; across replies each
//! start comes before its own change. Checked through the AgentSession API, whose
//! listeners run before the tool does, so nothing here depends on timing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use mock_llm::{Item, MockServer, Script};
use pi_coding_agent::agent_session::{AgentSession, PromptOptions};
use pi_coding_agent::session::SessionManager;
use pi_coding_agent::tools::{edit::edit_tool, write::write_tool};
use support::rpc::Env;

fn session(env: &Env) -> AgentSession {
    support::session::session(
        env,
        SessionManager::in_memory(&env.work),
        vec![edit_tool(env.work.clone()), write_tool(env.work.clone())],
    )
}

fn edit(old: &str, new: &str) -> Item {
    Item::tool_call(
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": old, "newText": new}]}),
    )
}

/// Each start's tool call id and its file's content then (`None`: no file yet).
type Starts = Arc<Mutex<Vec<(String, Option<String>)>>>;

/// Records, at each `tool_execution_start`, the tool call and its file's content then.
fn record_starts(session: &AgentSession, work: &Path) -> Starts {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let (record, work) = (Arc::clone(&seen), work.to_path_buf());
    session.subscribe(move |event| {
        let event = serde_json::to_value(event).unwrap();
        if event["type"] == "tool_execution_start" {
            let path = event["args"]["path"].as_str().unwrap_or_default();
            let content = std::fs::read_to_string(work.join(path)).ok();
            let id = event["toolCallId"].as_str().unwrap_or_default().to_owned();
            record.lock().unwrap().push((id, content));
        }
    });
    seen
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_start_is_seen_before_its_file_changes() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        // One reply, three calls: all starts before any change.
        Script::new(vec![
            edit("two", "TWO"),
            edit("three", "THREE"),
            Item::tool_call("write", json!({"path": "b.txt", "content": "new\n"})),
        ]),
        Script::text("batch done"),
        // Two replies, one edit each: each start before its own change.
        Script::new(vec![edit("one", "ONE")]),
        Script::new(vec![edit("TWO", "2")]),
        Script::text("done"),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(env.work.join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let agent = session(&env);
    let seen = record_starts(&agent, &env.work);
    agent
        .prompt("edit in one go", PromptOptions::default(), None)
        .await
        .unwrap();
    agent
        .prompt("edit one by one", PromptOptions::default(), None)
        .await
        .unwrap();
    let seen: Vec<Value> = seen
        .lock()
        .unwrap()
        .iter()
        .map(|(id, content)| json!([id, content]))
        .collect();
    assert_eq!(
        seen,
        [
            json!(["call_1", "one\ntwo\nthree\n"]),
            json!(["call_2", "one\ntwo\nthree\n"]),
            json!(["call_3", null]),
            json!(["call_4", "one\nTWO\nTHREE\n"]),
            json!(["call_5", "ONE\nTWO\nTHREE\n"]),
        ]
    );
    assert_eq!(
        std::fs::read_to_string(env.work.join("a.txt")).unwrap(),
        "ONE\n2\nTHREE\n"
    );
    assert_eq!(
        std::fs::read_to_string(env.work.join("b.txt")).unwrap(),
        "new\n"
    );
}
