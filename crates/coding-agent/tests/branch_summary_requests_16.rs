//! The request of a `/tree` branch summary on a reasoning model (pi 1.5.0, 0.85.0): it runs
//! at the session's thinking level, without a small fixed output cap, and summarizes what
//! the model saw of the abandoned branch (a failed reply left out, a context edit applied,
//! pi 1.5.0). An extension command
//! navigates with a summary over RPC; the summary request of ours and pi 1.6.0 (`PI_TS16`)
//! must agree in its output cap, its reasoning effort and the conversation it carries (the
//! instructions around it are each pi's own words).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl, user_texts};
use support::ts16::{pis, program_with_host};

/// The lines of a serialized conversation (`[User]: …`, `[Assistant]: …` and their
/// continuations) in a summary request's text.
fn conversation_lines(text: &str) -> Vec<String> {
    let start = text.find("[User]").unwrap_or(text.len());
    let end = text
        .find("</conversation>")
        .unwrap_or(text.len())
        .max(start);
    text[start..end]
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

async fn summary_request(wrapper: &Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First answer."));
    server.push(Script::http_error(500));
    server.push(Script::text("Third answer."));
    server.push(Script::text("The branch tried two more questions."));
    let env = Env::new(
        &server,
        128_000,
        json!({"retry": {"enabled": false}, "defaultModel": "mock-thinker",
               "defaultThinkingLevel": "high"}),
    );
    let extension = support::nav::install(&env.work, true);
    let wrapper = wrapper.clone();
    tokio::task::spawn_blocking(move || {
        let args = ["-e", extension.as_str()];
        let mut rpc = Rpc::start_program(&env, program_with_host(&wrapper), &args);
        for (id, text) in [
            ("p1", "First question."),
            ("p2", "Second question."),
            ("p3", "Third question."),
        ] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.event("agent_settled");
        }
        let file = rpc.call("s", json!({"type": "get_state"}))["data"]["sessionFile"]
            .as_str()
            .map(PathBuf::from)
            .unwrap();
        let entries = read_jsonl(&file);
        let id_where = |test: &dyn Fn(&Value) -> bool| {
            entries.iter().find(|e| test(e)).map(|e| e["id"].clone()).unwrap()
        };
        let first_answer = id_where(&|e| e["message"]["role"] == "assistant");
        let third_question = id_where(&|e| {
            e["message"]["role"] == "user" && e["message"].to_string().contains("Third question.")
        });
        rpc.finish();
        // A context edit, as an extension would append it: the model saw the third question
        // reworded.
        let edit = json!({"type": "context_edit", "id": "ed000001",
            "parentId": entries.last().unwrap()["id"], "timestamp": "2026-11-30T10:00:00.000Z",
            "targetId": third_question, "replacement": {"content": "Edited third question."}});
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.push_str(&format!("{edit}\n"));
        std::fs::write(&file, text).unwrap();
        let args = ["-e", extension.as_str(), "-c"];
        let mut rpc = Rpc::start_program(&env, program_with_host(&wrapper), &args);
        let first_answer = first_answer.as_str().unwrap();
        support::nav::go(&mut rpc, "n", first_answer);
        let summary = read_jsonl(&file)
            .into_iter()
            .find(|e| e["type"] == "branch_summary");
        rpc.finish();
        let requests = server.requests();
        let body = &requests.last().unwrap().body;
        let text = user_texts(body).join("\n");
        json!({
            "requests": requests.len(),
            "maxTokens": body.get("max_completion_tokens").or_else(|| body.get("max_tokens")),
            "reasoningEffort": body["reasoning_effort"],
            "conversation": conversation_lines(&text),
            "summarized": summary.is_some_and(|s| s["summary"].as_str().unwrap_or("").contains("two more questions")),
        })
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_summary_request_is_pi_16s() {
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, summary_request(&wrapper).await));
    }
    let ours = &seen[0].1;
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
    eprintln!("SEEN {ours:#}");
    assert_eq!(ours["requests"], 4, "{ours:#}");
    assert_eq!(ours["summarized"], true, "{ours:#}");
    assert_eq!(ours["reasoningEffort"], "high", "{ours:#}");
    // The failed reply is left out and the edited question summarized as edited.
    assert_eq!(
        ours["conversation"],
        json!([
            "[User]: Second question.",
            "[User]: Edited third question.",
            "[Assistant]: Third answer."
        ]),
        "{ours:#}"
    );
}
