//! A cluster of three pi-gateway nodes losing parts: the owner of a session killed -9 in
//! the middle of a run (at varied points), paused past its lease and resumed, and the NATS
//! server leading the event stream killed. Nothing committed or seen by a client is lost,
//! a lost run is reported as `gateway_disconnected`, the next prompt runs on another node,
//! and the stored session opens in our loader and (with `PI_TS15`) in the TypeScript pi.
//! Skipped without nats-server (`scripts/install-nats.sh`) unless `PI_TEST_REQUIRE_NATS`.
#![cfg(feature = "cluster")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::Script;
use pi_gateway::server::client::Client;
use support::gateway_cluster::{GatewayCluster, check_export, session_events};
use support::{collect_until, is_event};

const TTL: Duration = Duration::from_secs(2);

/// A run of two slow tool calls and a reply.
fn slow_run(cluster: &GatewayCluster, tag: &str) {
    cluster.mock.push_all([
        Script::tool_call(
            "bash",
            json!({"command": format!("sleep 0.4; echo {tag}-1")}),
        ),
        Script::tool_call(
            "bash",
            json!({"command": format!("sleep 0.4; echo {tag}-2")}),
        ),
        Script::text(format!("{tag} done")),
    ]);
}

/// Frames until `agent_end` of `id`, within `limit`; `None` after `limit`.
async fn try_end_within(client: &mut Client, id: &str, limit: Duration) -> Option<Vec<Value>> {
    let mut frames = Vec::new();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let buffered = std::mem::take(&mut client.events);
        let mut rest = buffered.into_iter();
        for frame in rest.by_ref() {
            let end = is_event(&frame, "agent_end", id);
            frames.push(frame);
            if end {
                client.events = rest.collect();
                return Some(frames);
            }
        }
        match tokio::time::timeout_at(deadline, client.recv()).await {
            Ok(Ok(Some(frame))) => client.events.push(frame),
            _ => return None,
        }
    }
}

/// Frames until `agent_end` of `id`, within `limit`.
async fn end_within(
    client: &mut Client,
    id: &str,
    limit: Duration,
    cluster: &GatewayCluster,
) -> Vec<Value> {
    match try_end_within(client, id, limit).await {
        Some(frames) => frames,
        None => panic!(
            "no agent_end of {id} within {limit:?}; {} events came\n{}\n{}",
            session_events(&client.events, id).len(),
            cluster.logs(),
            cluster.nats.log_tails(40)
        ),
    }
}

/// The export opens in our loader, and in the TypeScript pi 1.5.2 when `PI_TS15` is set
/// (which continues it with one more turn).
fn opens_everywhere(cluster: &GatewayCluster, id: &str, text: &str) {
    let path = cluster.write(&format!("{id}.jsonl"), text);
    let manager = pi_coding_agent::session::SessionManager::open(&path, &cluster.work).unwrap();
    assert!(manager.warnings().is_empty(), "{:?}", manager.warnings());
    let Some(ts) = std::env::var_os("PI_TS15").filter(|p| !p.is_empty()) else {
        eprintln!("PI_TS15 is not set: the TypeScript pi check is skipped");
        return;
    };
    let agent = cluster.dir.path().join("ts-agent");
    support::write_agent_dir(&agent, &cluster.mock);
    cluster
        .mock
        .push(Script::text("continued by the TypeScript pi"));
    let out = std::process::Command::new(ts)
        .args(["--session", path.to_str().unwrap(), "-p", "go on"])
        .current_dir(&cluster.work)
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", cluster.dir.path())
        .env("PI_OFFLINE", "1")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "the TypeScript pi could not open it: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("continued by the TypeScript pi"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_owner_mid_run_loses_nothing_committed() {
    let Some(mut cluster) = GatewayCluster::start("2s", &[]).await else {
        return;
    };
    let trials: u64 = std::env::var("PI_TEST_KILL_TRIALS")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(4);
    let mut seed: u64 = std::env::var("PI_TEST_KILL_SEED")
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .subsec_nanos()
                .into()
        });
    eprintln!("kill points from seed {seed}");
    for trial in 0..trials {
        let owner = (trial % 3) as usize;
        let watcher_node = (owner + 1) % 3;
        let third = (owner + 2) % 3;
        let mut a = cluster.client(owner).await;
        let id = cluster.create(&mut a).await;
        let mut w = cluster.client(watcher_node).await;
        w.call("session.subscribe", json!({"sessionId": id}))
            .await
            .unwrap();
        cluster.mock.clear_queue();
        slow_run(&cluster, &format!("t{trial}"));
        a.call("session.prompt", json!({"sessionId": id, "text": "work"}))
            .await
            .unwrap();
        seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        let delay = Duration::from_millis(50 + (seed >> 33) % 1300);
        tokio::time::sleep(delay).await;
        cluster.kill(owner);
        let killed = Instant::now();
        drop(a);
        // The run ends for the watcher: finished before the kill, or lost with the node;
        // or it had not begun when the node died (nothing of it was stored).
        let Some(frames) = try_end_within(&mut w, &id, TTL + Duration::from_secs(6)).await else {
            let seen = session_events(&std::mem::take(&mut w.events), &id);
            assert!(
                seen.is_empty(),
                "a run seen but never ended: {seen:?}\n{}",
                cluster.logs()
            );
            eprintln!("trial {trial}: killed after {delay:?}, before the run began");
            cluster.restart(owner);
            continue;
        };
        let seen = session_events(&frames, &id);
        let end = &seen.last().unwrap().2;
        let lost = end["terminationReason"] == "gateway_disconnected";
        eprintln!(
            "trial {trial}: killed {} after {delay:?}: {} events seen, run {}",
            cluster.nodes[owner].id,
            seen.len(),
            if lost { "lost" } else { "finished" }
        );
        if lost {
            assert!(
                killed.elapsed() <= TTL + Duration::from_secs(2) + Duration::from_millis(900),
                "reported after {:?}",
                killed.elapsed()
            );
        }
        let before = cluster.export_or_empty(&id);
        // The next prompt runs on another node.
        cluster.mock.clear_queue();
        cluster.mock.push(Script::text("after the kill"));
        let done = w
            .call(
                "session.prompt",
                json!({"sessionId": id, "text": "again", "wait": true}),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}: {}", cluster.logs()));
        assert_eq!(done["terminationReason"], "no_tool_calls", "{done}");
        assert!(
            killed.elapsed() <= TTL * 2 + Duration::from_secs(4),
            "the next prompt ended {:?} after the kill",
            killed.elapsed()
        );
        // Every event the watcher saw is in the log, as a client of the third node reads it.
        let mut r = cluster.client(third).await;
        let first = seen[0].0 - 1;
        r.call(
            "session.subscribe",
            json!({"sessionId": id, "fromSeq": first}),
        )
        .await
        .unwrap();
        // The replay holds the first run's end and the second run's.
        let mut ends = 0;
        let replay = collect_until(&mut r, |f| {
            ends += usize::from(is_event(f, "agent_end", &id));
            ends == 2
        })
        .await;
        let replayed = session_events(&replay, &id);
        assert_eq!(replayed[..seen.len()], seen[..], "a seen event is missing");
        // Every committed entry is still there, the lost run recorded, and it opens.
        let after = cluster.export(&id);
        assert!(after.starts_with(&before), "committed entries changed");
        let lines = check_export(&after);
        if lost && !before.is_empty() {
            assert!(
                lines
                    .iter()
                    .any(|l| l["customType"] == pi_gateway::cluster::INTERRUPTED_ENTRY),
                "{after}"
            );
        }
        opens_everywhere(&cluster, &id, &after);
        cluster.restart(owner);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_owner_is_fenced_when_it_resumes() {
    let Some(cluster) = GatewayCluster::start("2s", &[]).await else {
        return;
    };
    let mut a = cluster.client(0).await;
    let id = cluster.create(&mut a).await;
    cluster.mock.push(Script::text("first"));
    a.call(
        "session.prompt",
        json!({"sessionId": id, "text": "one", "wait": true}),
    )
    .await
    .unwrap();
    let mut w = cluster.client(1).await;
    w.call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap();
    slow_run(&cluster, "paused");
    a.call("session.prompt", json!({"sessionId": id, "text": "two"}))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.signal(0, "STOP");
    let frames = end_within(&mut w, &id, TTL + Duration::from_secs(6), &cluster).await;
    let end = session_events(&frames, &id).last().unwrap().2.clone();
    assert_eq!(end["terminationReason"], "gateway_disconnected", "{end}");
    cluster.mock.clear_queue();
    cluster.mock.push(Script::text("on the new owner"));
    let done = w
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "three", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls");
    end_within(&mut w, &id, Duration::from_secs(5), &cluster).await;
    let before = cluster.export(&id);
    // The old owner wakes up with a run in progress: it must not write or publish again.
    cluster.signal(0, "CONT");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after = cluster.export(&id);
    assert_eq!(before, after, "the paused owner appended after resuming");
    check_export(&after);
    let late: Vec<Value> = {
        let mut late = Vec::new();
        while let Ok(Ok(Some(frame))) =
            tokio::time::timeout(Duration::from_millis(300), w.recv()).await
        {
            late.push(frame);
        }
        late
    };
    assert!(
        session_events(&late, &id).is_empty(),
        "events after the takeover: {late:?}"
    );
    assert!(
        cluster.nodes[0]
            .log
            .lock()
            .unwrap()
            .contains("stops running session"),
        "{}",
        cluster.logs()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn killing_the_event_streams_leader_loses_no_acknowledged_event() {
    let Some(mut cluster) = GatewayCluster::start("10s", &[]).await else {
        return;
    };
    let mut a = cluster.client(0).await;
    let id = cluster.create(&mut a).await;
    let mut w = cluster.client(2).await;
    w.call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap();
    let text = "alpha beta gamma delta epsilon zeta eta theta iota kappa ".repeat(4);
    cluster.mock.push(
        Script::text(text.clone())
            .with_chunk_size(3)
            .with_fault(mock_llm::Fault::stall(20, 1500)),
    );
    a.call("session.prompt", json!({"sessionId": id, "text": "stream"}))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let leader = cluster.nats.stream_leader("PI_EV").unwrap();
    cluster.nats.kill(leader);
    // The run ends: it completes, or (when its events could not be stored for twice the
    // lease TTL) the owner gives the lane up and another node reports it interrupted.
    let frames = end_within(&mut w, &id, Duration::from_secs(120), &cluster).await;
    cluster.nats.restart(leader);
    let seen = session_events(&frames, &id);
    assert!(seen.windows(2).all(|p| p[0].0 < p[1].0), "seq increases");
    let streamed: String = seen
        .iter()
        .filter(|e| e.1 == "text_delta")
        .map(|e| e.2["delta"].as_str().unwrap().to_owned())
        .collect();
    let end = &seen.last().unwrap().2;
    if end["terminationReason"] == "no_tool_calls" {
        assert_eq!(streamed, text, "deltas lost or repeated");
    } else {
        assert_eq!(end["terminationReason"], "gateway_disconnected", "{end}");
        assert!(
            text.starts_with(&streamed),
            "deltas out of order or repeated"
        );
        eprintln!(
            "the run was given up after the leader's kill: {} of {} characters",
            streamed.len(),
            text.len()
        );
    }
    // The stream holds exactly what was delivered.
    let mut r = cluster.client(1).await;
    r.call(
        "session.subscribe",
        json!({"sessionId": id, "fromSeq": seen[0].0 - 1}),
    )
    .await
    .unwrap();
    let replay = collect_until(&mut r, |f| is_event(f, "agent_end", &id)).await;
    assert_eq!(session_events(&replay, &id), seen);
}
