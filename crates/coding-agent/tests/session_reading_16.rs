//! Reading prepared session files as pi 1.6.0 does: a message whose `content` is null is
//! read as empty instead of failing (pi 0.80.4), and a session kept in a project folder
//! that is a symlink is found by id (pi 0.84). Our `pi` and pi 1.6.0 (`PI_TS16`) open the
//! same files in print mode against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::entries::{assistant, header, user, write};
use support::rpc::{Env, Rpc, user_texts};
use support::ts16::{pis, program, run};

/// Runs `pi args` (print mode, the mock answering) and returns the request it sent.
fn request(server: &MockServer, env: &Env, pi: Command, args: &[&str], who: &str) -> Value {
    server.clear_requests();
    server.push(Script::text("Ok."));
    let output = run(env, pi, args);
    assert!(
        output.status.success(),
        "{who}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    requests.last().expect("a request").body.clone()
}

/// The messages of a request after the system prompt, each as role and text.
fn conversation(body: &Value) -> Vec<(String, String)> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system" && m["role"] != "developer")
        .map(|m| {
            let text = match &m["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts.iter().filter_map(|p| p["text"].as_str()).collect(),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap_or_default().to_owned(), text)
        })
        .collect()
}

/// The messages `get_messages` gives for the session at `path`, each as role and content.
fn messages(env: &Env, pi: Command, path: &std::path::Path) -> Vec<(Value, Value)> {
    let mut rpc = Rpc::start_program(env, pi, &["--session", path.to_str().unwrap()]);
    let answer = rpc.call("m", json!({"type": "get_messages"}));
    rpc.finish();
    answer["data"]["messages"]
        .as_array()
        .unwrap_or_else(|| panic!("no messages in {answer}"))
        .iter()
        .map(|m| (m["role"].clone(), m["content"].clone()))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn null_message_content_reads_as_empty_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let mut results = Vec::new();
    for (who, wrapper) in pis() {
        let path = env
            .dir
            .path()
            .join(format!("null-{}.jsonl", who.replace(' ', "")));
        let mut first = user("u0000001", None, "unused");
        first["message"]["content"] = Value::Null;
        let mut reply = assistant("a0000001", "u0000001", "unused");
        reply["message"]["content"] = Value::Null;
        write(
            &path,
            &[
                header(&format!("null-{}", results.len()), &env.work),
                first,
                reply,
                user("u0000002", Some("a0000001"), "second"),
                assistant("a0000002", "u0000002", "two"),
            ],
        );
        // The emptied messages are part of the session's messages.
        let listed = messages(&env, program(&wrapper), &path);
        assert_eq!(
            listed[..2],
            [(json!("user"), json!([])), (json!("assistant"), json!([]))],
            "{who}: {listed:?}"
        );
        assert_eq!(listed.len(), 4, "{who}: {listed:?}");
        // A prompt after them goes out with the rest of the conversation.
        let body = request(
            &server,
            &env,
            program(&wrapper),
            &["--session", path.to_str().unwrap(), "-p", "next"],
            who,
        );
        let conversation = conversation(&body);
        assert_eq!(
            conversation[conversation.len() - 3..],
            [
                ("user".to_owned(), "second".to_owned()),
                ("assistant".to_owned(), "two".to_owned()),
                ("user".to_owned(), "next".to_owned())
            ],
            "{who}"
        );
        results.push((listed, conversation));
    }
    if let [ours_result, theirs] = results.as_slice() {
        assert_eq!(ours_result, theirs);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_a_symlinked_project_folder_is_found_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let elsewhere = env.dir.path().join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    // Another project's sessions, kept outside the agent dir behind a symlink.
    let real = env.dir.path().join("kept-sessions");
    std::fs::create_dir_all(&real).unwrap();
    let sessions = env.agent.join("sessions");
    std::fs::create_dir_all(&sessions).unwrap();
    std::os::unix::fs::symlink(&real, sessions.join("--elsewhere--")).unwrap();
    write(
        &real.join("2026-01-01T00-00-00-000Z_linked-session-1.jsonl"),
        &[
            header("linked-session-1", &elsewhere),
            user("u0000001", None, "remembered"),
            assistant("a0000001", "u0000001", "noted"),
        ],
    );
    for (who, wrapper) in pis() {
        let body = request(
            &server,
            &env,
            program(&wrapper),
            &["--fork", "linked-session-1", "-p", "next"],
            who,
        );
        assert_eq!(user_texts(&body), ["remembered", "next"], "{who}");
    }
}

/// A linear session of `pairs` user/assistant exchanges, written at `path`.
fn deep_session(path: &std::path::Path, cwd: &std::path::Path, pairs: usize) {
    let mut lines = vec![header("deep-session", cwd)];
    let mut parent: Option<String> = None;
    for n in 0..pairs {
        let (u, a) = (format!("u{n:07}"), format!("a{n:07}"));
        lines.push(user(&u, parent.as_deref(), "q"));
        lines.push(assistant(&a, &u, "a"));
        parent = Some(a);
    }
    write(path, &lines);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_branch_opens_in_linear_time_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let path = env.dir.path().join("deep.jsonl");
    // 100,000 entries on one branch: a walk that costs the depth for every entry would take
    // minutes here, a linear one well under a second of real work.
    deep_session(&path, &env.work, 50_000);
    for (who, wrapper) in pis() {
        let started = std::time::Instant::now();
        let mut rpc = Rpc::start_program(
            &env,
            program(&wrapper),
            &["--session", path.to_str().unwrap()],
        );
        let state = rpc.call("s", json!({"type": "get_state"}));
        let stats = rpc.call("t", json!({"type": "get_session_stats"}));
        rpc.finish();
        assert_eq!(state["data"]["messageCount"], 100_000, "{who}: {state}");
        assert_eq!(stats["data"]["userMessages"], 50_000, "{who}: {stats}");
        let took = started.elapsed();
        assert!(
            took < std::time::Duration::from_secs(60),
            "{who} took {took:?}"
        );
    }
}
