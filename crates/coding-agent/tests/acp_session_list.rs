//! The session lifecycle requests of ACP's stable schema besides new and load, through
//! `pi --mode acp` and the protocol's official TypeScript SDK client: `session/list` (pi's
//! saved sessions for the editor's picker, by folder, newest first), `session/resume` (a
//! saved session continued without its history sent again), `session/close` and
//! `session/delete` (as pi's resume picker deletes).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

fn listed(lines: &[Value], step: u64) -> Vec<(String, String)> {
    result(lines, step)["result"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("no sessions at step {step}: {lines:#?}"))
        .iter()
        .map(|s| {
            (
                s["sessionId"].as_str().unwrap().to_owned(),
                s["title"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_are_listed_resumed_closed_and_deleted() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("answer one"));
    server.push(Script::text("answer two"));
    server.push(Script::text("answer three"));
    let env = fresh_env(&server);
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let steps = json!([
        {"op": "initialize"},
        {"op": "new"},
        {"op": "prompt", "text": "first question\nwith a second line"},
        {"op": "new"},
        {"op": "prompt", "text": "second question"},
        {"op": "list", "cwd": env.work},
        {"op": "list", "cwd": elsewhere},
        {"op": "resume", "sessionOfStep": 2},
        {"op": "prompt", "text": "third question"},
        {"op": "delete", "sessionOfStep": 2},
        {"op": "close"},
        {"op": "prompt", "text": "after close"},
        {"op": "delete", "sessionOfStep": 4},
        {"op": "list"},
    ]);
    let lines = run_in(&env, steps, json!([]));
    let (first, second) = (
        result(&lines, 2)["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_owned(),
        result(&lines, 4)["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_owned(),
    );
    let capabilities = &result(&lines, 1)["result"]["agentCapabilities"]["sessionCapabilities"];
    assert_eq!(
        *capabilities,
        json!({"list": {}, "delete": {}, "resume": {}, "close": {}})
    );

    // Newest first, titled by their first lines; another folder has none.
    assert_eq!(
        listed(&lines, 6),
        [
            (second.clone(), "second question".to_owned()),
            (first.clone(), "first question".to_owned())
        ]
    );
    let entry = &result(&lines, 6)["result"]["sessions"][0];
    assert_eq!(entry["cwd"], json!(env.work));
    assert!(
        entry["updatedAt"].as_str().unwrap().ends_with('Z'),
        "{entry}"
    );
    assert!(
        result(&lines, 6)["result"]
            .get("nextCursor")
            .is_none_or(Value::is_null)
    );
    assert_eq!(listed(&lines, 7), []);

    // Resumed: no history sent again, and the next prompt continues the first session.
    assert!(
        result(&lines, 8)["result"]["configOptions"].is_array(),
        "{lines:#?}"
    );
    assert!(updates(&lines, 8).is_empty(), "{:#?}", updates(&lines, 8));
    assert_eq!(result(&lines, 9)["result"]["stopReason"], "end_turn");
    let third = &server.requests()[2].body;
    let history = third["messages"].to_string();
    assert!(
        history.contains("first question") && !history.contains("second question"),
        "{history}"
    );
    let files = env.session_files();
    let first_file = files
        .iter()
        .find(|f| f.to_string_lossy().contains(&first))
        .unwrap();
    assert!(
        std::fs::read_to_string(first_file)
            .unwrap()
            .contains("third question")
    );

    // The open session is not deleted; once closed, prompts to it are refused.
    assert_eq!(result(&lines, 10)["error"]["code"], -32602, "{lines:#?}");
    assert_eq!(result(&lines, 11)["result"], json!({}), "{lines:#?}");
    assert!(result(&lines, 12).get("error").is_some(), "{lines:#?}");
    // Another session is deleted: its file is gone and the list no longer holds it.
    assert_eq!(result(&lines, 13)["result"], json!({}), "{lines:#?}");
    assert_eq!(
        listed(&lines, 14),
        [(first.clone(), "first question".to_owned())]
    );
    assert!(
        env.session_files()
            .iter()
            .all(|f| !f.to_string_lossy().contains(&second))
    );
}
