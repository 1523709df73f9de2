//! Trying to get out of the sandbox through the running gateway, each attempt a tool call
//! the model (mock-llm) makes: `write`, `edit`, `read`, `ls`, `grep` and `find` outside the
//! allowed paths directly, through `..`, through a symlink made inside, through a hard
//! link, and through bash; and sessions opened in another principal's workspace. Every
//! attempt must fail with a clear tool error and leave the outside untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use mock_llm::Script;
use serde_json::{Value, json};
use support::*;

/// A gateway with the sandbox on: writes in the work dir only, reads in the work dir and
/// the system folders bash needs; `outside` is a sibling of the work dir.
async fn sandboxed() -> Option<(Env, PathBuf)> {
    if pi_gateway::sandbox::landlock_available().is_err() {
        eprintln!(
            "no Landlock here: skipped (sessions refuse to open; gateway_pipeline tests that)"
        );
        return None;
    }
    let env = Env::start(relaxed()).await;
    let outside = env.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret.txt"), "the secret\n").unwrap();
    std::fs::write(outside.join("target.txt"), "untouched\n").unwrap();
    let mut reads: Vec<Value> = ["/usr", "/bin", "/lib", "/lib64", "/etc", "/proc", "/dev"]
        .iter()
        .filter(|p| Path::new(p).exists())
        .map(|p| json!(p))
        .collect();
    reads.push(json!(env.work));
    let file = with_workspaces(
        &env.agent,
        json!({"sandbox": {"enabled": true, "allowTemp": false, "readPaths": reads, "timeoutSeconds": 20}}),
    );
    std::fs::write(env.agent.join("gateway.json"), file.to_string()).unwrap();
    env.gateway.as_ref().unwrap().gateway().reload().unwrap();
    Some((env, outside))
}

/// Runs one tool call through a fresh session; the `tool_execution_end` payload.
async fn attempt(env: &Env, tool: &str, args: Value) -> Value {
    let mut client = env.client(ALICE).await;
    let tools = ["read", "bash", "edit", "write", "ls", "grep", "find"];
    let id = env.create(&mut client, json!({"tools": tools})).await;
    env.mock.push(Script::tool_call(tool, args));
    env.mock.push(Script::text("tried"));
    client
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "try", "wait": true}),
        )
        .await
        .unwrap();
    let (_, frames) = until_agent_end(&mut client, &id).await;
    frames
        .iter()
        .find(|f| is_event(f, "tool_execution_end", &id))
        .unwrap()["payload"]
        .clone()
}

fn refused(end: &Value, words: &str) {
    assert_eq!(end["success"], false, "{end}");
    let output = end["output"].as_str().unwrap_or_default();
    assert!(output.contains(words), "expected {words:?} in {end}");
}

fn untouched(outside: &Path) {
    assert_eq!(
        std::fs::read_to_string(outside.join("target.txt")).unwrap(),
        "untouched\n"
    );
    assert_eq!(
        std::fs::read_dir(outside).unwrap().count(),
        2,
        "nothing was added outside"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_cannot_write_outside_directly_by_dots_or_links() {
    let Some((env, outside)) = sandboxed().await else {
        return;
    };
    let target = outside.join("target.txt").display().to_string();
    let new = outside.join("new.txt").display().to_string();

    refused(
        &attempt(&env, "write", json!({"path": new, "content": "x"})).await,
        "outside the allowed paths",
    );
    refused(
        &attempt(&env, "write", json!({"path": target, "content": "x"})).await,
        "outside the allowed paths",
    );
    refused(
        &attempt(
            &env,
            "write",
            json!({"path": "../outside/new.txt", "content": "x"}),
        )
        .await,
        "outside the allowed paths",
    );
    refused(
        &attempt(
            &env,
            "write",
            json!({"path": "nothere/../../outside/new.txt", "content": "x"}),
        )
        .await,
        "Sandbox:",
    );
    refused(
        &attempt(
            &env,
            "edit",
            json!({"path": target, "edits": [{"oldText": "untouched", "newText": "changed"}]}),
        )
        .await,
        "outside the allowed paths",
    );
    // A symlink the model made inside with bash, then written through.
    let made = attempt(
        &env,
        "bash",
        json!({"command": format!("ln -s {} link && echo made", outside.display())}),
    )
    .await;
    assert_eq!(made["success"], true, "{made}");
    refused(
        &attempt(
            &env,
            "write",
            json!({"path": "link/new.txt", "content": "x"}),
        )
        .await,
        "outside the allowed paths",
    );
    refused(
        &attempt(&env, "edit", json!({"path": "link/target.txt", "edits": [{"oldText": "untouched", "newText": "changed"}]})).await,
        "outside the allowed paths",
    );
    // A hard link inside to a file outside (made by someone else: Landlock stops bash).
    std::fs::hard_link(outside.join("target.txt"), env.work.join("hard.txt")).unwrap();
    refused(
        &attempt(&env, "write", json!({"path": "hard.txt", "content": "x"})).await,
        "hard links",
    );
    refused(
        &attempt(
            &env,
            "edit",
            json!({"path": "hard.txt", "edits": [{"oldText": "untouched", "newText": "changed"}]}),
        )
        .await,
        "hard links",
    );
    // Bash itself, directly and through the link.
    refused(
        &attempt(&env, "bash", json!({"command": format!("echo x > {new}")})).await,
        "ermission denied",
    );
    refused(
        &attempt(&env, "bash", json!({"command": "echo x > link/new.txt"})).await,
        "ermission denied",
    );
    untouched(&outside);
    // Inside, every tool works.
    let wrote = attempt(
        &env,
        "write",
        json!({"path": "sub/ok.txt", "content": "fine"}),
    )
    .await;
    assert_eq!(wrote["success"], true, "{wrote}");
    assert_eq!(
        std::fs::read_to_string(env.work.join("sub/ok.txt")).unwrap(),
        "fine"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn file_tools_cannot_read_outside_the_read_paths() {
    let Some((env, outside)) = sandboxed().await else {
        return;
    };
    let secret = outside.join("secret.txt").display().to_string();
    refused(
        &attempt(&env, "read", json!({"path": secret})).await,
        "outside the allowed paths",
    );
    refused(
        &attempt(&env, "read", json!({"path": "../outside/secret.txt"})).await,
        "outside the allowed paths",
    );
    for tool in ["ls", "find", "grep"] {
        let mut args = json!({"path": outside.display().to_string()});
        if tool == "grep" {
            args["pattern"] = json!("secret");
        }
        if tool == "find" {
            args["pattern"] = json!("*");
        }
        refused(
            &attempt(&env, tool, args).await,
            "outside the allowed paths",
        );
    }
    std::os::unix::fs::symlink(outside.join("secret.txt"), env.work.join("alias.txt")).unwrap();
    refused(
        &attempt(&env, "read", json!({"path": "alias.txt"})).await,
        "outside the allowed paths",
    );
    refused(
        &attempt(&env, "bash", json!({"command": format!("cat {secret}")})).await,
        "ermission denied",
    );
    std::fs::write(env.work.join("mine.txt"), "readable\n").unwrap();
    let read = attempt(&env, "read", json!({"path": "mine.txt"})).await;
    assert_eq!(read["success"], true, "{read}");
    assert!(read["output"].as_str().unwrap().contains("readable"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_open_only_in_the_principals_own_workspaces() {
    let env = Env::start(relaxed()).await;
    let bobs = env.dir.path().join("bobs-project");
    std::fs::create_dir_all(&bobs).unwrap();
    let mut file = with_workspaces(&env.agent, json!({}));
    file["principals"]["bob"]["workspaces"] = json!([bobs]);
    std::fs::write(env.agent.join("gateway.json"), file.to_string()).unwrap();
    env.gateway.as_ref().unwrap().gateway().reload().unwrap();
    let mut alice = env.client(ALICE).await;
    for cwd in [bobs.clone(), PathBuf::from("/"), env.work.join("..")] {
        let error = alice
            .call("session.create", json!({"cwd": cwd}))
            .await
            .unwrap_err()
            .to_string();
        assert!(
            error.contains("outside the workspaces of principal alice"),
            "{error}"
        );
    }
    // A symlink inside alice's workspace to bob's does not lead in either.
    std::os::unix::fs::symlink(&bobs, env.work.join("to-bob")).unwrap();
    let error = alice
        .call("session.create", json!({"cwd": env.work.join("to-bob")}))
        .await
        .unwrap_err()
        .to_string();
    assert!(error.contains("outside the workspaces"), "{error}");
    let mut bob = env.client(BOB).await;
    let created = bob
        .call("session.create", json!({"cwd": bobs}))
        .await
        .unwrap();
    assert!(created["sessionId"].is_string());
}
