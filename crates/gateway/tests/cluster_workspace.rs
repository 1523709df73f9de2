//! Workspaces in a cluster: a session's cwd lives on its workspace node's disk. When that
//! node dies with its disk, the node taking the session over restores the snapshot taken at
//! the end of the last run (`workspace_restored`), or, with snapshots off, goes on in an
//! empty folder (`workspace_lost`): the conversation is intact either way.
//! Skipped without nats-server (`scripts/install-nats.sh`) unless `PI_TEST_REQUIRE_NATS`.
#![cfg(feature = "cluster")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::Script;
use pi_gateway::cluster::{ClusterConfig, Engine};
use pi_gateway::server::client::Client;
use support::gateway_cluster::{GatewayCluster, session_events};
use support::is_event;

/// Creates a session of alice in `cwd` on node 1 and runs one turn that writes two files.
async fn session_with_files(cluster: &GatewayCluster, cwd: &Path) -> String {
    let mut a = cluster.client(0).await;
    let created = a
        .call("session.create", json!({"cwd": cwd, "subscribe": true}))
        .await
        .unwrap();
    let id = created["sessionId"].as_str().unwrap().to_owned();
    cluster.mock.push_all([
        Script::tool_call(
            "bash",
            json!({"command": "echo kept > notes.txt && mkdir -p src && echo 'fn main() {}' > src/main.rs"}),
        ),
        Script::text("written"),
    ]);
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "write the files", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls", "{done}");
    assert!(cwd.join("notes.txt").exists());
    id
}

/// Node 1 dies with its disk (the cwd goes too); a prompt through node 2 takes the session
/// over and runs. The events node 2's client saw.
async fn lose_node_one(cluster: &mut GatewayCluster, id: &str, cwd: &Path) -> Vec<Value> {
    cluster.kill(0);
    std::fs::remove_dir_all(cwd).unwrap();
    let mut w: Client = cluster.client(1).await;
    w.call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap();
    cluster.mock.push(Script::text("still here"));
    let done = tokio::time::timeout(
        Duration::from_secs(20),
        w.call(
            "session.prompt",
            json!({"sessionId": id, "text": "go on", "wait": true}),
        ),
    )
    .await
    .unwrap_or_else(|_| panic!("no takeover\n{}", cluster.logs()))
    .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls", "{done}");
    let mut frames = std::mem::take(&mut w.events);
    while !frames.iter().any(|f| is_event(f, "agent_end", id)) {
        let frame = tokio::time::timeout(Duration::from_secs(10), w.recv())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        frames.push(frame);
    }
    frames
}

/// The code of the `error` event among `frames`.
fn error_code(frames: &[Value], id: &str) -> Option<String> {
    session_events(frames, id)
        .into_iter()
        .find(|(_, name, _)| name == "error")
        .and_then(|(_, _, payload)| payload["code"].as_str().map(str::to_owned))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_workspace_nodes_files_come_back_from_the_last_runs_snapshot() {
    let Some(mut cluster) = GatewayCluster::start("3s", &[]).await else {
        return;
    };
    let cwd = cluster.work.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    let id = session_with_files(&cluster, &cwd).await;
    // The snapshot is stored at the end of the run, in the background.
    let engine = Engine::connect(ClusterConfig::new(cluster.nats.urls(), "test"))
        .await
        .unwrap();
    let name = format!("{id}/workspace.tar.gz");
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while engine.blobs.info(&name).await.is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "no workspace snapshot was stored\n{}",
            cluster.logs()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    let frames = lose_node_one(&mut cluster, &id, &cwd).await;
    assert_eq!(
        error_code(&frames, &id).as_deref(),
        Some("workspace_restored"),
        "{frames:?}"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("notes.txt")).unwrap(),
        "kept\n"
    );
    assert_eq!(
        std::fs::read_to_string(cwd.join("src/main.rs")).unwrap(),
        "fn main() {}\n"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_snapshots_the_conversation_goes_on_in_an_empty_folder() {
    let Some(mut cluster) = GatewayCluster::start("3s", &["--snapshot-limit-mib", "0"]).await
    else {
        return;
    };
    let cwd = cluster.work.join("project");
    std::fs::create_dir_all(&cwd).unwrap();
    let id = session_with_files(&cluster, &cwd).await;
    let frames = lose_node_one(&mut cluster, &id, &cwd).await;
    assert_eq!(
        error_code(&frames, &id).as_deref(),
        Some("workspace_lost"),
        "{frames:?}"
    );
    assert!(cwd.is_dir());
    assert!(!cwd.join("notes.txt").exists());
    // The conversation is whole: both turns are in the stored session.
    let file = cluster.export(&id);
    assert!(file.contains("write the files") && file.contains("still here"));
}
