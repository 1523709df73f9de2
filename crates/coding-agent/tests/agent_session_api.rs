//! The AgentSession library API against mock-llm: tree navigation with branch summaries,
//! navigation refused during a compaction, and model / thinking level restored on resume.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use mock_llm::{Fault, MockServer, Script};
use pi_coding_agent::agent_session::{AgentSession, NavigateOptions, PromptOptions};
use pi_coding_agent::session::{EntryKind, SessionManager};
use support::rpc::{Env, Rpc, read_jsonl};

fn session(env: &Env, manager: SessionManager) -> AgentSession {
    support::session::session(env, manager, Vec::new())
}

async fn ask(session: &AgentSession, text: &str) {
    session
        .prompt(text, PromptOptions::default(), None)
        .await
        .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigating_the_tree_summarizes_the_branch_left_behind() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let dir = env.agent.join("sessions");
    let agent = session(&env, SessionManager::create(&env.work, &dir));
    let events = Arc::new(Mutex::new(Vec::<Value>::new()));
    {
        let events = Arc::clone(&events);
        agent.subscribe(move |e| {
            events
                .lock()
                .unwrap()
                .push(serde_json::to_value(e).unwrap())
        });
    }
    ask(&agent, "first question").await;
    ask(&agent, "second question").await;
    let (first_user, first_reply, second_reply) = agent.with_session(|s| {
        let ids: Vec<String> = s
            .entries()
            .iter()
            // The session's system record (pi 1.5) comes first; the exchange follows.
            .filter(|e| e.message().is_some_and(|m| m.role() != "system"))
            .map(|e| e.id.clone())
            .collect();
        (ids[0].clone(), ids[1].clone(), ids[3].clone())
    });

    // Back to the first reply, summarizing the second exchange.
    server.push(Script::text("The user asked a second question."));
    let result = agent
        .navigate_tree(
            &first_reply,
            NavigateOptions {
                summarize: true,
                label: Some("retry".into()),
                ..NavigateOptions::default()
            },
        )
        .await
        .unwrap();
    assert!(!result.cancelled);
    assert_eq!(result.editor_text, None);
    let summary_id = result.summary_entry_id.unwrap();
    agent.with_session(|s| {
        let entry = s.entry(&summary_id).unwrap();
        assert_eq!(entry.parent_id.as_deref(), Some(first_reply.as_str()));
        match &entry.kind {
            EntryKind::BranchSummary {
                from_id,
                summary,
                details,
                ..
            } => {
                // pi 1.6: `fromId` is the leaf the navigation left, not its target.
                assert_eq!(from_id, &second_reply);
                assert!(summary.contains("The user asked a second question."));
                assert!(details.as_ref().unwrap()["readFiles"].is_array());
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(s.label(&summary_id), Some("retry"));
    });
    // The summary request saw the abandoned branch.
    let request = server.requests().last().unwrap().body.to_string();
    assert!(request.contains("second question"));
    // The context is the first exchange plus the summary.
    let roles: Vec<String> = agent
        .messages()
        .iter()
        .map(|m| {
            serde_json::to_value(m).unwrap()["role"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert_eq!(roles, ["system", "user", "assistant", "branchSummary"]);

    // A user message as target: its text comes back for editing, the leaf is its parent.
    let back = agent
        .navigate_tree(&first_user, NavigateOptions::default())
        .await
        .unwrap();
    assert_eq!(back.editor_text.as_deref(), Some("first question"));
    // Only the session's system record (pi 1.5) is left before it.
    assert_eq!(agent.message_count(), 1);
    ask(&agent, "a new first question").await;
    let file = agent.session_file().unwrap();
    let lines = read_jsonl(&file);
    let roots = lines
        .iter()
        .filter(|l| l["type"] == "message" && l["message"]["role"] == "user")
        .filter(|l| {
            let parent = l["parentId"].as_str();
            parent.is_none()
                || lines.iter().any(|p| {
                    Some(p["id"].as_str().unwrap_or_default()) == parent
                        && (p["type"] != "message" || p["message"]["role"] == "system")
                })
        })
        .count();
    assert_eq!(roots, 2, "two user messages start from the session's start");
    let systems = lines
        .iter()
        .filter(|l| l["type"] == "message" && l["message"]["role"] == "system")
        .count();
    assert_eq!(systems, 1, "the branch already had its system message");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navigation_is_refused_while_a_compaction_runs() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    server.push_all([
        Script::text("first answer"),
        Script::text("second answer"),
        Script::text("slow summary").with_fault(Fault::stall(1, 3000)),
        Script::text("slow summary").with_fault(Fault::stall(1, 3000)),
    ]);
    let mut rpc = Rpc::start(&env, &[]);
    for (id, text) in [("p1", "first question"), ("p2", "second question")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.event("agent_end");
    }
    let forks = rpc.call("f", json!({"type": "get_fork_messages"}));
    let entry = forks["data"]["messages"][0]["entryId"].clone();
    rpc.send(json!({"id": "c", "type": "compact"}));
    rpc.event("compaction_start");
    let state = rpc.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["isCompacting"], true);
    for (id, command) in [
        ("fk", json!({"type": "fork", "entryId": entry})),
        ("n", json!({"type": "new_session"})),
        ("cl", json!({"type": "clone"})),
    ] {
        let refused = rpc.call(id, command);
        assert_eq!(refused["success"], false);
        assert_eq!(
            refused["error"],
            "Cannot change the session while a compaction is running"
        );
    }
    let done = rpc.response("c");
    assert_eq!(done["success"], true, "{done}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_and_thinking_level_are_restored_on_resume() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call(
        "m",
        json!({"type": "set_model", "provider": "mock", "modelId": "mock-thinker"}),
    );
    rpc.call(
        "t",
        json!({"type": "set_thinking_level", "level": "medium"}),
    );
    rpc.call("p", json!({"type": "prompt", "message": "hello"}));
    rpc.event("agent_end");
    assert_eq!(rpc.finish(), Some(0));
    // The defaults in settings move elsewhere; the session's own choice wins on resume.
    std::fs::write(
        env.agent.join("settings.json"),
        r#"{"defaultProvider":"mock","defaultModel":"mock-model","defaultThinkingLevel":"off"}"#,
    )
    .unwrap();
    let mut resumed = Rpc::start(&env, &["-c"]);
    let state = resumed.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["model"]["id"], "mock-thinker");
    assert_eq!(state["data"]["thinkingLevel"], "medium");
    // The system message, the prompt and the reply (pi 1.5 counts the system message).
    assert_eq!(state["data"]["messageCount"], 3);
    // A fresh session takes the defaults.
    let mut fresh = Rpc::start(&env, &[]);
    let state = fresh.call("s", json!({"type": "get_state"}));
    assert_eq!(state["data"]["model"]["id"], "mock-model");
    assert_eq!(state["data"]["thinkingLevel"], "off");
}
