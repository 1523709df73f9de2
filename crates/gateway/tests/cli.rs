//! The `pi-gateway` binary: serving, and `sessions tree` / `switch` / `branch --from`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::time::Duration;

use serde_json::json;

use mock_llm::MockServer;
use pi_gateway::server::client::Client;

const BIN: &str = env!("CARGO_BIN_EXE_pi-gateway");

struct Served {
    child: Child,
    url: String,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn serve(agent: &std::path::Path) -> Served {
    serve_with(agent, &[])
}

/// [`serve`] with more environment variables.
fn serve_with(agent: &std::path::Path, vars: &[(&str, &std::path::Path)]) -> Served {
    let mut child = Command::new(BIN)
        .args(["--port", "0", "--token", "alice:tok-a"])
        .arg("--agent-dir")
        .arg(agent)
        .env("PI_CODING_AGENT_DIR", agent)
        .envs(vars.iter().copied())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    let url = line
        .strip_prefix("pi-gateway listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line}"))
        .to_owned();
    std::thread::spawn(move || for _ in lines {});
    Served { child, url }
}

fn sessions(agent: &std::path::Path, url: &str, args: &[&str]) -> Output {
    Command::new(BIN)
        .arg("sessions")
        .args(args)
        .args(["--url", url, "--token", "tok-a"])
        .env("PI_CODING_AGENT_DIR", agent)
        .output()
        .unwrap()
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

#[test]
fn serving_needs_a_token() {
    let dir = tempfile::tempdir().unwrap();
    let output = Command::new(BIN)
        .args(["--port", "0", "--agent-dir"])
        .arg(dir.path())
        .env_remove("PI_GATEWAY_TOKEN")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("no token configured"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tree_switch_and_branch_from_the_command_line() {
    let mock = MockServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    support::write_agent_dir(&agent, &mock);
    std::fs::write(
        agent.join("gateway.json"),
        json!({"principals": {"alice": {"workspaces": [dir.path()]}}}).to_string(),
    )
    .unwrap();
    let served = serve(&agent);

    let mut client = Client::connect(&served.url, Some("tok-a")).await.unwrap();
    let created = client
        .call(
            "session.create",
            json!({"cwd": dir.path().to_string_lossy(), "subscribe": false}),
        )
        .await
        .unwrap();
    let id = created["sessionId"].as_str().unwrap().to_owned();
    client
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "hello", "wait": true}),
        )
        .await
        .unwrap();
    let history = client
        .call("session.history", json!({"sessionId": id}))
        .await
        .unwrap();
    let answer = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["role"] == "assistant")
        .unwrap()
        .clone();
    let message_id = answer["messageId"].as_str().unwrap().to_owned();

    let url = served.url.clone();
    let agent_dir = agent.clone();
    let (tree, switched, branched, tree_after, json_tree) =
        tokio::task::spawn_blocking(move || {
            let tree = stdout(&sessions(&agent_dir, &url, &["tree"]));
            let switched = stdout(&sessions(&agent_dir, &url, &["switch", &id]));
            let branched = stdout(&sessions(
                &agent_dir,
                &url,
                &["branch", "--from", &message_id],
            ));
            let tree_after = stdout(&sessions(&agent_dir, &url, &["tree"]));
            let json_tree = stdout(&sessions(&agent_dir, &url, &["tree", "--json"]));
            (tree, switched, branched, tree_after, json_tree)
        })
        .await
        .unwrap();
    let id = created["sessionId"].as_str().unwrap();
    assert!(tree.contains(id), "{tree}");
    assert!(tree.contains("[no_tool_calls]"), "{tree}");
    assert!(
        switched.starts_with(&format!("Switched to {id}")),
        "{switched}"
    );
    assert!(
        branched.starts_with(&format!("Branched {id} at ")),
        "{branched}"
    );
    let branch_id = branched.trim().rsplit(' ').next().unwrap().to_owned();
    let lines: Vec<&str> = tree_after.lines().collect();
    assert_eq!(lines.len(), 2, "{tree_after}");
    assert!(lines[0].contains(id));
    assert!(
        lines[1].starts_with("* "),
        "the branch is current: {tree_after}"
    );
    assert!(lines[1].contains(&branch_id));
    assert!(lines[1].contains("branched at"), "{tree_after}");
    let parsed: serde_json::Value = serde_json::from_str(&json_tree).unwrap();
    assert_eq!(parsed["roots"][0]["children"][0]["id"], branch_id.as_str());
    assert_eq!(
        std::fs::read_to_string(agent.join("gateway-current-session")).unwrap(),
        branch_id
    );
    client.close().await;

    // The tree survives a restart of the gateway.
    drop(served);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let served = serve(&agent);
    let url = served.url.clone();
    let agent_dir = agent.clone();
    let tree = tokio::task::spawn_blocking(move || stdout(&sessions(&agent_dir, &url, &["tree"])))
        .await
        .unwrap();
    assert!(tree.contains(id) && tree.contains(&branch_id), "{tree}");
}

/// A gateway with the sandbox on leaves nothing in its temp dir: not after sandboxed
/// commands, not after SIGTERM; a stale extension-host socket of a killed process is
/// removed when it starts.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandboxed_gateway_leaves_nothing_in_the_temp_dir() {
    if pi_gateway::sandbox::landlock_available().is_err() {
        eprintln!("skipped: no Landlock here");
        return;
    }
    let mock = MockServer::start().await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    support::write_agent_dir(&agent, &mock);
    std::fs::write(
        agent.join("gateway.json"),
        json!({"principals": {"alice": {"workspaces": [dir.path()]}},
               "sandbox": {"enabled": true}})
        .to_string(),
    )
    .unwrap();
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let stale = tmp.join(format!(
        "pi-ext-{dead}-0123456789abcdef0123456789abcdef.sock"
    ));
    std::fs::write(&stale, "").unwrap();

    let mut served = serve_with(&agent, &[("TMPDIR", &tmp)]);
    let url = served.url.clone();

    mock.push(mock_llm::Script::new(vec![
        mock_llm::Item::tool_call("bash", json!({"command": "echo one > one.txt"})),
        mock_llm::Item::tool_call("bash", json!({"command": "echo two"})),
    ]));
    mock.push(mock_llm::Script::text("done"));
    let mut client = Client::connect(&url, Some("tok-a")).await.unwrap();
    let created = client
        .call(
            "session.create",
            json!({"cwd": dir.path().to_string_lossy(), "subscribe": false}),
        )
        .await
        .unwrap();
    let id = created["sessionId"].as_str().unwrap().to_owned();
    client
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "go", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(dir.path().join("one.txt")).unwrap(),
        "one\n",
        "the sandboxed bash did not run"
    );
    assert!(!stale.exists(), "the stale socket was not swept");
    let pid = nix::unistd::Pid::from_raw(served.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let status = served.child.wait().unwrap();
    assert!(status.success(), "{status}");
    let left: Vec<_> = std::fs::read_dir(&tmp)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert!(left.is_empty(), "left in the temp dir: {left:?}");
}
