//! Context edits whose replacement content is a plain string (pi 0.87.0): for assistant and
//! tool-result messages the string becomes one text block, so the next request carries valid
//! messages. Each pi writes its own session (a tool call, its result, an answer), the same
//! two edits are appended to it, and the continued request must be equal in ours and pi
//! 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, read_jsonl};
use support::ts16::{pis, program, run};

/// The messages of the continued request after the edits, without the system prompt.
async fn continued(wrapper: &Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("read", json!({"path": "notes.txt"})));
    server.push(Script::text("The notes say hello."));
    server.push(Script::text("Continued."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    std::fs::write(env.work.join("notes.txt"), "hello from the notes\n").unwrap();
    let first = run(&env, program(wrapper), &["-p", "Read the notes."]);
    assert!(first.status.success(), "{first:?}");

    let file = env.session_files().pop().unwrap();
    let lines = read_jsonl(&file);
    let id_of = |role: &str| {
        lines
            .iter()
            .rfind(|l| l["type"] == "message" && l["message"]["role"] == role)
            .map(|l| l["id"].as_str().unwrap().to_owned())
            .unwrap()
    };
    let (result_id, answer_id) = (id_of("toolResult"), id_of("assistant"));
    let mut parent = lines.last().unwrap()["id"].as_str().unwrap().to_owned();
    let mut text = std::fs::read_to_string(&file).unwrap();
    for (n, (target, replacement)) in [
        (result_id, "[notes elided]"),
        (answer_id, "I read the notes."),
    ]
    .into_iter()
    .enumerate()
    {
        let id = format!("ed00000{n}");
        let edit = json!({"type": "context_edit", "id": id, "parentId": parent,
            "timestamp": "2026-11-30T10:00:00.000Z", "targetId": target,
            "replacement": {"content": replacement}});
        text.push_str(&format!("{edit}\n"));
        parent = id;
    }
    std::fs::write(&file, text).unwrap();

    let second = run(&env, program(wrapper), &["-c", "-p", "Anything else?"]);
    assert!(second.status.success(), "{second:?}");
    let body = server.requests().last().unwrap().body.clone();
    let messages: Vec<Value> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system" && m["role"] != "developer")
        .map(|m| {
            // Tool call ids are each pi's own.
            let mut m = m.clone();
            if let Some(map) = m.as_object_mut() {
                map.remove("tool_call_id");
                if let Some(calls) = map.get_mut("tool_calls").and_then(Value::as_array_mut) {
                    for call in calls {
                        call.as_object_mut().unwrap().remove("id");
                    }
                }
            }
            m
        })
        .collect();
    json!(messages)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn string_replacements_of_answers_and_tool_results_become_text() {
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, continued(&wrapper).await));
    }
    let ours = &seen[0].1;
    let text = ours.to_string();
    assert!(text.contains("[notes elided]"), "{ours:#}");
    assert!(text.contains("I read the notes."), "{ours:#}");
    assert!(!text.contains("hello from the notes"), "{ours:#}");
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}
