//! OpenClaw's own client (`openclaw`, installed by `scripts/install-openclaw-client.sh`)
//! against a cluster of three pi-gateway nodes: a session started through one node's
//! OpenClaw listener is continued through another's (the run on its owner, the reply from
//! the cluster's event stream), its history read through a third, and after its node is
//! killed -9 the next `agent` runs on a node that takes it over.
//! Skipped without nats-server or the client, unless CI requires them.
#![cfg(feature = "cluster")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Output};

use mock_llm::{Fault, Script};
use serde_json::{Value, json};

use support::ALICE;
use support::gateway_cluster::{GatewayCluster, check_export};

/// Runs the client against node `i`'s OpenClaw listener, with a private HOME.
async fn run(oc: &Path, cluster: &GatewayCluster, i: usize, args: &[&str]) -> Output {
    let mut command = Command::new(oc);
    command
        .args(args)
        .env("OPENCLAW_KIT_HOME", cluster.dir.path().join("oc-home"))
        .env("OPENCLAW_GATEWAY_URL", cluster.openclaw_url(i))
        .env("OPENCLAW_GATEWAY_TOKEN", ALICE);
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// `openclaw agent --message MESSAGE` through node `i`: its printed reply.
async fn agent(oc: &Path, cluster: &GatewayCluster, i: usize, message: &str) -> String {
    let out = run(
        oc,
        cluster,
        i,
        &["agent", "--message", message, "--timeout", "60"],
    )
    .await;
    assert!(
        out.status.success(),
        "agent through node {i} failed: {}{}\n{}",
        text(&out.stdout),
        text(&out.stderr),
        cluster.logs()
    );
    text(&out.stdout).trim().to_owned()
}

/// `openclaw gateway call METHOD --params PARAMS --json` through node `i`.
async fn call(oc: &Path, cluster: &GatewayCluster, i: usize, method: &str, params: Value) -> Value {
    let (url, params) = (cluster.openclaw_url(i), params.to_string());
    let args = [
        "gateway", "call", method, "--params", &params, "--url", &url, "--token", ALICE, "--json",
    ];
    let out = run(oc, cluster, i, &args).await;
    assert!(
        out.status.success(),
        "{method} through node {i}: {}{}",
        text(&out.stdout),
        text(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openclaws_client_uses_one_session_through_every_node() {
    let Some(oc) = support::openclaw_client() else {
        return;
    };
    let Some(mut cluster) = GatewayCluster::start("3s", &["--openclaw-port", "0"]).await else {
        return;
    };

    // Started through node 1 (the session runs there), continued through node 2.
    cluster.mock.push(Script::text("answer one"));
    assert_eq!(
        agent(&oc, &cluster, 0, "first question").await,
        "answer one"
    );
    cluster.mock.push(Script::text("answer two"));
    assert_eq!(
        agent(&oc, &cluster, 1, "second question").await,
        "answer two"
    );

    // Node 3 reads the history, and our protocol's clients see the same session.
    let history = call(
        &oc,
        &cluster,
        2,
        "chat.history",
        json!({"sessionKey": "agent:main:main"}),
    )
    .await;
    let said = history["messages"].to_string();
    for part in [
        "first question",
        "answer one",
        "second question",
        "answer two",
    ] {
        assert!(said.contains(part), "{part} missing: {history}");
    }
    let id = history["sessionId"].as_str().unwrap().to_owned();
    let mut ours = cluster.client(2).await;
    let listed = ours.call("sessions.list", json!({})).await.unwrap();
    assert!(
        listed["sessions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s["id"] == id.as_str() && s["key"] == "agent:main:main"),
        "{listed}"
    );

    // A run sent through node 2 is aborted through node 2 while node 1 runs it.
    let mut stalled = Script::text("a long reply that stalls in the middle of it");
    stalled.fault = Some(Fault::Stall {
        after_events: 3,
        ms: 30_000,
    });
    cluster.mock.push(stalled);
    let key = "agent:main:main";
    let sent = call(
        &oc,
        &cluster,
        1,
        "chat.send",
        json!({"sessionKey": key, "message": "talk slowly", "idempotencyKey": "slow-run"}),
    )
    .await;
    assert_eq!(sent["status"], "started", "{sent}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let aborted = call(
            &oc,
            &cluster,
            1,
            "chat.abort",
            json!({"sessionKey": key, "runId": "slow-run"}),
        )
        .await;
        if aborted["aborted"] == true {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the run never showed as in flight: {aborted}"
        );
    }
    let waited = call(
        &oc,
        &cluster,
        1,
        "agent.wait",
        json!({"runId": "slow-run", "timeoutMs": 20_000}),
    )
    .await;
    assert_eq!(waited["stopReason"], "aborted", "{waited}");

    // The node running it dies: the next run goes on through a node that takes it over.
    cluster.kill(0);
    cluster.mock.push(Script::text("answer three"));
    assert_eq!(
        agent(&oc, &cluster, 2, "third question").await,
        "answer three"
    );
    let file = cluster.export(&id);
    check_export(&file);
    for part in [
        "first question",
        "answer two",
        "third question",
        "answer three",
    ] {
        assert!(
            file.contains(part),
            "{part} missing from the stored session"
        );
    }
}
