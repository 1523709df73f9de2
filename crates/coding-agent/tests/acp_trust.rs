//! Project trust under `pi --mode acp`: a folder whose protected resources await the
//! user's decision gets pi's trust question in the editor (`session/request_permission`
//! with pi's title and answers); trusted, the session is built again with the project's
//! resources (its prompt templates become commands), the same session id kept; declined
//! or saved, nothing is asked again. pi's RPC mode (and so pi-acp) skips them unasked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

/// A fresh env whose project has a prompt template (a protected resource).
fn project(server: &MockServer) -> support::rpc::Env {
    let env = fresh_env(server);
    let prompts = env.work.join(".pi").join("prompts");
    std::fs::create_dir_all(&prompts).unwrap();
    std::fs::write(
        prompts.join("greet.md"),
        "---\ndescription: Greets\n---\nSay hello to the project.\n",
    )
    .unwrap();
    env
}

fn command_names(list: &Value) -> Vec<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap().to_owned())
        .collect()
}

fn questions(lines: &[Value]) -> Vec<&Value> {
    lines
        .iter()
        .filter(|l| l.get("permission").is_some())
        .collect()
}

fn saved_trust(env: &support::rpc::Env) -> Value {
    std::fs::read_to_string(env.agent.join("trust.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn trusting_the_folder_for_this_session_brings_its_resources() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Hello, project."));
    let env = project(&server);
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "/greet"}]);
    let lines = run_in(&env, steps, json!(["Trust (this session only)"]));
    let asked = questions(&lines);
    assert_eq!(asked.len(), 1, "{lines:#?}");
    let title = asked[0]["permission"]["title"].as_str().unwrap();
    assert!(title.starts_with("Trust project folder?"), "{title}");
    assert_eq!(
        asked[0]["permission"]["options"],
        json!([
            "Trust",
            format!(
                "Trust parent folder ({})",
                env.work.parent().unwrap().canonicalize().unwrap().display()
            ),
            "Trust (this session only)",
            "Do not trust",
            "Do not trust (this session only)"
        ])
    );
    // The session kept its id; its commands were told again, now with the template.
    let id = result(&lines, 2)["result"]["sessionId"].clone();
    let lists = command_lists(&lines);
    assert_eq!(lists.len(), 2, "{lines:#?}");
    assert!(!command_names(lists[0]).contains(&"greet".to_owned()));
    assert!(command_names(lists[1]).contains(&"greet".to_owned()));
    assert_eq!(result(&lines, 3)["result"]["stopReason"], "end_turn");
    let user = server.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "user")
        .unwrap()
        .to_string();
    assert!(user.contains("Say hello to the project."), "{user}");
    // The answer went to the session the editor knows.
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&files[0])
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["id"], id);
    // Nothing saved for a session-only answer.
    let saved = saved_trust(&env);
    assert!(saved.is_null() || saved == json!({}), "{saved}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_decision_saved_in_the_editor_is_not_asked_again() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Plain."));
    server.push(Script::text("Still plain."));
    let env = project(&server);
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "/greet"}]);
    let lines = run_in(&env, steps.clone(), json!(["Do not trust"]));
    assert_eq!(questions(&lines).len(), 1, "{lines:#?}");
    // Declined: the template stays out and "/greet" goes to the model as typed.
    assert_eq!(command_lists(&lines).len(), 1);
    assert!(!command_names(command_lists(&lines)[0]).contains(&"greet".to_owned()));
    let user = server.requests()[0].body.to_string();
    assert!(!user.contains("Say hello to the project."), "{user}");
    let saved = saved_trust(&env).to_string();
    assert!(saved.contains("false"), "{saved}");
    // A new agent in the same folder follows the saved decision without asking.
    let again = run_in(&env, steps, json!([]));
    assert!(questions(&again).is_empty(), "{again:#?}");
    assert_eq!(result(&again, 3)["result"]["stopReason"], "end_turn");
}
