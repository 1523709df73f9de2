//! The live thinking level after the tree went back before a `/thinking` change (pi 1.5.1):
//! it stays what it is, and, like the model, is recorded on the new branch with the next
//! prompt, so resuming the session restores it. An extension command navigates the tree
//! over RPC; ours and pi 1.6.0 (`PI_TS16`) run the same session on one mock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program_with_host};

/// The thinking level after resuming, and the entry kinds of the resumed branch.
async fn resumed(wrapper: &Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    for answer in ["First answer.", "Second answer.", "Third answer."] {
        server.push(Script::text(answer));
    }
    let env = Env::new(
        &server,
        128_000,
        json!({"retry": {"enabled": false}, "defaultModel": "mock-thinker",
               "defaultThinkingLevel": "low"}),
    );
    let extension = support::nav::install(&env.work, false);
    let wrapper = wrapper.clone();
    tokio::task::spawn_blocking(move || {
        let args = ["-e", extension.as_str()];
        let mut rpc = Rpc::start_program(&env, program_with_host(&wrapper), &args);
        rpc.call(
            "p1",
            json!({"type": "prompt", "message": "First question."}),
        );
        rpc.event("agent_settled");
        let file = rpc.call("s", json!({"type": "get_state"}))["data"]["sessionFile"]
            .as_str()
            .map(PathBuf::from)
            .unwrap();
        let first_answer = read_jsonl(&file)
            .into_iter()
            .find(|e| e["message"]["role"] == "assistant")
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .unwrap();
        rpc.call("t", json!({"type": "set_thinking_level", "level": "high"}));
        rpc.call(
            "p2",
            json!({"type": "prompt", "message": "Second question."}),
        );
        rpc.event("agent_settled");
        // Back to before the change; the live level stays high.
        support::nav::go(&mut rpc, "n", &first_answer);
        let live = rpc.call("s2", json!({"type": "get_state"}))["data"]["thinkingLevel"].clone();
        rpc.call(
            "p3",
            json!({"type": "prompt", "message": "Third question."}),
        );
        rpc.event("agent_settled");
        rpc.finish();

        let mut again = Rpc::start_program(&env, program_with_host(&wrapper), &["-c"]);
        let state = again.call("s", json!({"type": "get_state"}));
        again.finish();
        // The resumed branch: from the last entry back to the root.
        let entries = read_jsonl(&file);
        let mut branch = Vec::new();
        let mut at = entries.last().map(|e| e["id"].clone());
        while let Some(id) = at.filter(|id| !id.is_null()) {
            let entry = entries.iter().find(|e| e["id"] == id).unwrap();
            branch.push(match entry["type"].as_str().unwrap() {
                "message" => entry["message"]["role"].as_str().unwrap().to_owned(),
                "thinking_level_change" => {
                    format!("thinking {}", entry["thinkingLevel"].as_str().unwrap())
                }
                other => other.to_owned(),
            });
            at = Some(entry["parentId"].clone());
        }
        branch.reverse();
        branch.retain(|kind| kind != "system");
        json!({"live": live, "resumed": state["data"]["thinkingLevel"], "branch": branch})
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_thinking_level_is_recorded_on_the_new_branch() {
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, resumed(&wrapper).await));
    }
    let ours = &seen[0].1;
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
    assert_eq!(ours["live"], "high", "{ours:#}");
    assert_eq!(ours["resumed"], "high", "{ours:#}");
}
