//! Choosing and replacing sessions as pi 1.6.0 does: `-c` in a custom session dir shared by
//! several folders, `--session` with a file that is not a session, `--session <id>` found
//! from the headers, `--no-session --session-id`, `new_session` after `--no-session`, clone
//! before anything was saved, and a start from a deleted folder. Our `pi` and pi 1.6.0
//! (`PI_TS16`) run the same steps against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc, read_jsonl, user_texts};
use support::ts16::{pis, program, run_in};

/// Runs a print-mode prompt in `dir` that the mock answers with `reply`.
fn print(server: &MockServer, env: &Env, dir: &Path, pi: Command, args: &[&str]) -> Output {
    server.push(Script::text("Ok."));
    let output = run_in(env, dir, pi, args);
    assert!(
        output.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// The user texts of the last request the mock got.
fn last_request_users(server: &MockServer) -> Vec<String> {
    let requests = server.requests();
    user_texts(&requests.last().expect("a request").body)
}

/// The `.jsonl` files directly in `dir`.
fn jsonl_in(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| entries.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|x| x == "jsonl"));
    files.sort();
    files
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn continue_in_a_shared_session_dir_opens_this_folders_newest_session_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (a, b) = (env.work.join("a"), env.work.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    for (who, wrapper) in pis() {
        let shared = env
            .dir
            .path()
            .join(format!("shared-{}", who.replace(' ', "")));
        let shared = shared.to_str().unwrap();
        print(
            &server,
            &env,
            &a,
            program(&wrapper),
            &["--session-dir", shared, "-p", "from a"],
        );
        print(
            &server,
            &env,
            &b,
            program(&wrapper),
            &["--session-dir", shared, "-p", "from b"],
        );
        print(
            &server,
            &env,
            &a,
            program(&wrapper),
            &["--session-dir", shared, "-c", "-p", "again"],
        );
        assert_eq!(last_request_users(&server), ["from a", "again"], "{who}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_refuses_a_file_that_is_not_a_session_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        let folder = env
            .dir
            .path()
            .join(format!("files-{}", who.replace(' ', "")));
        std::fs::create_dir_all(&folder).unwrap();
        let notes = folder.join("notes.jsonl");
        std::fs::write(&notes, "my notes, not a session\n").unwrap();
        let asked = server.requests().len();
        let output = run_in(
            &env,
            &env.work,
            program(&wrapper),
            &["--session", notes.to_str().unwrap(), "-p", "hi"],
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{who}: {stderr}");
        assert!(
            stderr.contains(&format!(
                "Session file is not a valid pi session: {}",
                notes.display()
            )),
            "{who}: {stderr}"
        );
        assert_eq!(server.requests().len(), asked, "{who}");
        assert_eq!(
            std::fs::read_to_string(&notes).unwrap(),
            "my notes, not a session\n"
        );
        assert_eq!(jsonl_in(&folder), std::slice::from_ref(&notes), "{who}");
        // An empty file becomes the session.
        let empty = folder.join("empty.jsonl");
        std::fs::write(&empty, "").unwrap();
        print(
            &server,
            &env,
            &env.work,
            program(&wrapper),
            &["--session", empty.to_str().unwrap(), "-p", "hi"],
        );
        let lines = read_jsonl(&empty);
        assert_eq!(lines[0]["type"], "session", "{who}");
        assert!(
            lines.iter().any(|l| l["message"]["role"] == "assistant"),
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_id_is_found_from_the_header_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        let dir = env.dir.path().join(format!("ids-{}", who.replace(' ', "")));
        let dir_arg = dir.to_str().unwrap();
        print(
            &server,
            &env,
            &env.work,
            program(&wrapper),
            &["--session-dir", dir_arg, "-p", "remember this"],
        );
        let [file] = jsonl_in(&dir).try_into().unwrap();
        let id = read_jsonl(&file)[0]["id"].as_str().unwrap().to_owned();
        // A file name that does not carry the id: only the header names it.
        std::fs::rename(&file, dir.join("renamed.jsonl")).unwrap();
        print(
            &server,
            &env,
            &env.work,
            program(&wrapper),
            &["--session-dir", dir_arg, "--session", &id, "-p", "next"],
        );
        assert_eq!(
            last_request_users(&server),
            ["remember this", "next"],
            "{who}"
        );
        assert_eq!(jsonl_in(&dir), [dir.join("renamed.jsonl")], "{who}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_session_runs_with_the_session_id_given_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        server.push(Script::tool_call(
            "bash",
            json!({"command": "echo id=$PI_SESSION_ID"}),
        ));
        print(
            &server,
            &env,
            &env.work,
            program(&wrapper),
            &["--no-session", "--session-id", "run-42", "-p", "which id?"],
        );
        let requests = server.requests();
        let body = &requests.last().unwrap().body;
        let tool_result = body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .unwrap_or_else(|| panic!("{who}: no tool result in {body}"));
        assert!(
            tool_result["content"].to_string().contains("id=run-42"),
            "{who}: {tool_result}"
        );
        assert!(env.session_files().is_empty(), "{who}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn new_session_after_no_session_stays_in_memory_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        let mut rpc = Rpc::start_program(&env, program(&wrapper), &["--no-session"]);
        server.push(Script::text("one"));
        rpc.call("p1", json!({"type": "prompt", "message": "first"}));
        rpc.event("agent_end");
        let created = rpc.call("n", json!({"type": "new_session"}));
        assert_eq!(created["success"], true, "{who}: {created}");
        server.push(Script::text("two"));
        rpc.call("p2", json!({"type": "prompt", "message": "second"}));
        rpc.event("agent_end");
        let state = rpc.call("s", json!({"type": "get_state"}));
        assert_eq!(state["data"]["sessionFile"], Value::Null, "{who}: {state}");
        assert_eq!(last_request_users(&server), ["second"], "{who}");
        rpc.finish();
        assert!(env.session_files().is_empty(), "{who}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clone_before_anything_was_saved_says_to_send_a_message_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        let mut rpc = Rpc::start_program(&env, program(&wrapper), &[]);
        let set = rpc.call(
            "m",
            json!({"type": "set_model", "provider": "mock", "modelId": "mock-thinker"}),
        );
        assert_eq!(set["success"], true, "{who}: {set}");
        let cloned = rpc.call("c", json!({"type": "clone"}));
        assert_eq!(cloned["success"], false, "{who}: {cloned}");
        assert_eq!(
            cloned["error"],
            "This session has not been saved yet. Send a message before cloning or forking it.",
            "{who}"
        );
        // After a reply the session is on disk and clones.
        server.push(Script::text("saved"));
        rpc.call("p", json!({"type": "prompt", "message": "hello"}));
        rpc.event("agent_end");
        let cloned = rpc.call("c2", json!({"type": "clone"}));
        assert_eq!(cloned["success"], true, "{who}: {cloned}");
        rpc.finish();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deleted_working_directory_is_reported_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for (who, wrapper) in pis() {
        let gone = env.dir.path().join("gone");
        std::fs::create_dir_all(&gone).unwrap();
        let pi = program(&wrapper);
        // The shell enters the folder, removes it, then becomes pi there.
        let mut shell = Command::new("sh");
        shell
            .arg("-c")
            .arg("cd \"$1\" && rmdir \"$1\" && shift && exec \"$@\"")
            .arg("sh")
            .arg(&gone)
            .arg(pi.get_program())
            .args(["-p", "hi"]);
        for (key, value) in pi.get_envs() {
            match value {
                Some(value) => shell.env(key, value),
                None => shell.env_remove(key),
            };
        }
        let output = run_in(&env, &env.work, shell, &[]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(1), "{who}: {stderr}");
        assert!(
            stderr.contains(
                "The current working directory no longer exists. Change to an existing directory and try again."
            ),
            "{who}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{who}: {stderr}");
    }
}
