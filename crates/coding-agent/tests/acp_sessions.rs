//! `pi --mode acp` and the folders an editor opens sessions in: a `session/new` or
//! `session/load` in another folder than pi's gets a session built there (its project
//! files, its session directory, its tools working there), one session at a time as
//! pi-acp keeps, and the first folder's sessions still open afterwards. Driven by the
//! protocol's official TypeScript SDK client (tests/acp/pi-acp-client.mjs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

/// The ids of the session files whose header names `cwd`, sorted.
fn sessions_of(env: &support::rpc::Env, cwd: &std::path::Path) -> Vec<String> {
    let mut ids: Vec<String> = env
        .session_files()
        .into_iter()
        .filter_map(|file| {
            let text = std::fs::read_to_string(&file).ok()?;
            let header: Value = serde_json::from_str(text.lines().next()?).ok()?;
            (header["cwd"] == cwd.display().to_string())
                .then(|| header["id"].as_str().unwrap_or_default().to_owned())
        })
        .collect();
    ids.sort();
    ids
}

fn system_prompt(body: &Value) -> String {
    body["messages"][0]["content"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_in_another_folder_is_built_there_and_the_first_folder_comes_back() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("hello from the first folder"));
    server.push(Script::tool_call(
        "write",
        json!({"path": "made.txt", "content": "made here\n"}),
    ));
    server.push(Script::text("made"));
    server.push(Script::text("back in the first folder"));
    let env = fresh_env(&server);
    let other = env.dir.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("AGENTS.md"), "Rules of the other folder.\n").unwrap();
    let steps = json!([
        {"op": "initialize"},
        {"op": "new"},
        {"op": "prompt", "text": "hi"},
        {"op": "new", "cwd": other},
        {"op": "prompt", "text": "make a file"},
        {"op": "new"},
        {"op": "prompt", "text": "and here?"},
        {"op": "load", "sameAgent": true, "sessionOfStep": 4, "cwd": other},
        {"op": "new", "cwd": env.dir.path().join("missing")},
        {"op": "new", "cwd": "relative/path"},
    ]);
    let lines = run_in(&env, steps, json!([]));
    for step in [2, 3, 4, 5, 6, 7, 8] {
        assert!(
            result(&lines, step).get("result").is_some(),
            "step {step}: {lines:#?}"
        );
    }
    let first = result(&lines, 2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let second = result(&lines, 4)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let third = result(&lines, 6)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(first != second && second != third && first != third);
    // The tools worked in the other folder, and its project files made the prompt.
    assert_eq!(
        std::fs::read_to_string(other.join("made.txt")).unwrap(),
        "made here\n"
    );
    assert!(!env.work.join("made.txt").exists());
    let requests = server.requests();
    assert!(!system_prompt(&requests[0].body).contains("Rules of the other folder."));
    assert!(system_prompt(&requests[1].body).contains("Rules of the other folder."));
    assert!(system_prompt(&requests[1].body).contains(&other.display().to_string()));
    assert!(!system_prompt(&requests[3].body).contains("Rules of the other folder."));
    // Each session is saved under its own folder.
    assert_eq!(sessions_of(&env, &other), vec![second]);
    let mut first_folder = vec![first.clone(), third.clone()];
    first_folder.sort();
    assert_eq!(sessions_of(&env, &env.work), first_folder);
    // The third answer went to the first folder's session; loading the other folder's
    // session in the same agent replays it.
    let answer: String = updates(&lines, 7)
        .iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(answer, "back in the first folder");
    let replayed: Vec<&str> = updates(&lines, 8)
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect();
    assert_eq!(replayed, ["make a file", "made"], "{lines:#?}");
    // A folder that does not exist, and a relative path, are refused.
    let missing = &result(&lines, 9)["error"];
    assert!(
        missing["message"]
            .as_str()
            .unwrap()
            .contains("No such folder"),
        "{missing}"
    );
    let relative = &result(&lines, 10)["error"];
    assert!(
        relative["message"].as_str().unwrap().contains("absolute"),
        "{relative}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sandbox_mode_confines_the_tools_and_leaving_it_frees_them() {
    if sdk_dir().is_none() {
        return;
    }
    if pi_coding_agent::sandbox::landlock_available().is_err() {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_LANDLOCK").is_none(),
            "Landlock is required here"
        );
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = fresh_env(&server);
    // The sandbox lets commands write in the temp dir: it is not the test's folder here.
    let outside = env.dir.path().join("outside");
    let tmp = env.dir.path().join("tmp");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    let touch = |name: &str| json!({"command": format!("touch {}", outside.join(name).display())});
    server.push(Script::tool_call("bash", touch("confined")));
    server.push(Script::text("tried"));
    server.push(Script::tool_call("bash", touch("free")));
    server.push(Script::text("done"));
    let steps = json!([
        {"op": "initialize"},
        {"op": "new"},
        {"op": "setMode", "modeId": "sandbox"},
        {"op": "prompt", "text": "touch it"},
        {"op": "setConfig", "configId": "mode", "value": "default"},
        {"op": "prompt", "text": "again"},
    ]);
    // The gate extension asks before each command.
    let lines = run_scenario(
        &env,
        steps,
        json!({"permissions": ["Yes", "Yes"], "env": {"TMPDIR": tmp}}),
    );
    let modes: Vec<&str> = result(&lines, 2)["result"]["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["default", "read-only", "sandbox"]);
    assert_eq!(
        updates(&lines, 3)
            .iter()
            .find(|u| u["sessionUpdate"] == "current_mode_update")
            .map(|u| u["currentModeId"].clone()),
        Some(json!("sandbox")),
        "{lines:#?}"
    );
    // Confined, the command could not write outside the folder; out of the sandbox it could.
    assert!(!outside.join("confined").exists());
    assert!(outside.join("free").exists());
    let failed = updates(&lines, 4)
        .into_iter()
        .any(|u| u["status"] == "failed");
    assert!(failed, "{lines:#?}");
    let options = result(&lines, 5)["result"]["configOptions"].clone();
    let mode = options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == "mode")
        .unwrap();
    assert_eq!(mode["currentValue"], "default");
    // The same session throughout: one session file, every message in it.
    let files = env.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let text = std::fs::read_to_string(&files[0]).unwrap();
    assert!(text.contains("touch it") && text.contains("again"));
    let id = result(&lines, 2)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.lines().next().unwrap().contains(&id));
}
