//! The cluster's JetStream objects on three real NATS servers: lane leases that one node
//! holds at a time and that a stale owner cannot renew, session appends fenced by the
//! expected last sequence, one `seq` for all nodes' events, and no acknowledged event lost
//! when the stream's leader is killed.
#![cfg(feature = "cluster")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use bytes::Bytes;
use pi_gateway::cluster::{ClusterConfig, ClusterError, Engine, Lease};
use support::nats::{Cluster, nats_server};

async fn engine(cluster: &Cluster, node: &str, ttl: Duration) -> Engine {
    let mut config = ClusterConfig::new(cluster.urls(), node);
    config.lease_ttl = ttl;
    Engine::connect(config).await.unwrap()
}

/// Claims `session` for `engine` as the gateway does: a transient cluster error (a request
/// timed out under load, a leader being elected) is tried again, so the answer is a lease or
/// `LaneTaken`.
async fn claim(engine: &Engine, session: &str) -> Result<Lease, ClusterError> {
    Lease::claim_within(engine, session, Duration::from_secs(10)).await
}

/// Fails, saying what came instead, unless `result` is `LaneTaken`.
#[track_caller]
fn assert_lane_taken<T: std::fmt::Debug>(result: Result<T, ClusterError>) {
    match result {
        Err(ClusterError::LaneTaken(_)) => {}
        other => panic!("expected LaneTaken, got {other:?}"),
    }
}

/// Notes a command as it is accepted; the work answering it.
async fn accept(
    log: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    command: Bytes,
) -> futures_util::future::BoxFuture<'static, Bytes> {
    let text = String::from_utf8_lossy(&command).into_owned();
    log.lock().unwrap().push(text.clone());
    Box::pin(async move { Bytes::from(format!("done: {text}")) })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_node_holds_a_lane_and_a_stale_owner_cannot_renew() {
    let Some(binary) = nats_server() else { return };
    let cluster = Cluster::start(&binary);
    let ttl = Duration::from_secs(2);
    let a = engine(&cluster, "gw1", ttl).await;
    let b = engine(&cluster, "gw2", ttl).await;

    let mut lease = claim(&a, "s1").await.unwrap();
    assert_lane_taken(claim(&b, "s1").await);
    // Renewals keep it past the TTL.
    for _ in 0..3 {
        tokio::time::sleep(Duration::from_millis(800)).await;
        lease.renew(&a, false).await.unwrap();
    }
    assert_lane_taken(claim(&b, "s1").await);
    // The owner stops renewing: after the TTL another node takes the lane.
    let started = std::time::Instant::now();
    let taken = loop {
        match claim(&b, "s1").await {
            Ok(taken) => break taken,
            Err(ClusterError::LaneTaken(_)) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => panic!("{e}"),
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "the lease never expired"
        );
    };
    assert!(taken.revision > lease.revision);
    assert!(lease.expired(ttl, Duration::from_millis(500)));
    // The old owner comes back: its renewal is refused.
    assert_lane_taken(lease.renew(&a, false).await);
    // A released lane is free at once.
    taken.release(&b).await.unwrap();
    claim(&a, "s1").await.unwrap();
}

/// Under load a write can be stored while its acknowledgement is lost (the request timed
/// out, a leader was elected meanwhile). The lease's next write then names a revision that
/// is no longer the last one: that must not read as another node holding the lane.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lease_whose_acknowledgement_was_lost_is_still_held() {
    let Some(binary) = nats_server() else { return };
    let cluster = Cluster::start(&binary);
    let ttl = Duration::from_secs(20);
    let a = engine(&cluster, "gw1", ttl).await;
    let b = engine(&cluster, "gw2", ttl).await;

    // A renewal stored unseen: the clone wrote it, the lease never learned its revision.
    let mut lease = claim(&a, "s1").await.unwrap();
    let mut unseen = lease.clone();
    unseen.renew(&a, true).await.unwrap();
    assert!(unseen.revision > lease.revision);
    lease.renew(&a, false).await.unwrap();
    assert!(lease.revision > unseen.revision, "{lease:?} {unseen:?}");
    assert_lane_taken(claim(&b, "s1").await);
    // Another node's lease is still another node's: the old owner stops.
    lease.release(&a).await.unwrap();
    let mut taken = claim(&b, "s1").await.unwrap();
    assert_lane_taken(unseen.renew(&a, false).await);
    taken.renew(&b, false).await.unwrap();

    // A claim stored unseen: claiming again under the same token finds it held.
    let token = Lease::new_token();
    let since = std::time::Instant::now();
    let first = Lease::claim_as(&a, "s2", &token, since).await.unwrap();
    let again = Lease::claim_as(&a, "s2", &token, since).await.unwrap();
    assert_eq!(again.revision, first.revision);
    assert_eq!(again.renewed, since);
    assert_lane_taken(Lease::claim_as(&a, "s2", &Lease::new_token(), since).await);
    assert_lane_taken(claim(&b, "s2").await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_appends_are_fenced_by_the_expected_last_sequence() {
    let Some(binary) = nats_server() else { return };
    let cluster = Cluster::start(&binary);
    let a = engine(&cluster, "gw1", Duration::from_secs(5)).await;
    let b = engine(&cluster, "gw2", Duration::from_secs(5)).await;
    let first = a
        .append_entry("s2", "s2:e1", Bytes::from("{\"id\":\"e1\"}"), 0)
        .await
        .unwrap();
    let second = a
        .append_entry("s2", "s2:e2", Bytes::from("{\"id\":\"e2\"}"), first)
        .await
        .unwrap();
    assert!(second > first);
    // A node that believes the last entry is still `first` is refused.
    let stale = b
        .append_entry("s2", "s2:x", Bytes::from("{\"id\":\"x\"}"), first)
        .await;
    assert!(matches!(stale, Err(ClusterError::Fenced(_))), "{stale:?}");
    // A retried publish with the same id is not stored twice.
    let retried = a
        .append_entry("s2", "s2:e2", Bytes::from("{\"id\":\"e2\"}"), first)
        .await
        .unwrap();
    assert_eq!(retried, second);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_of_every_node_share_one_seq_and_survive_a_killed_leader() {
    let Some(binary) = nats_server() else { return };
    let mut cluster = Cluster::start(&binary);
    let a = engine(&cluster, "gw1", Duration::from_secs(5)).await;
    let b = engine(&cluster, "gw2", Duration::from_secs(5)).await;
    let mut seqs = Vec::new();
    for i in 0..20 {
        let node = if i % 2 == 0 { &a } else { &b };
        seqs.push(
            node.publish_event("s3", &format!("ev-{i}"), Bytes::from(format!("{i}")))
                .await
                .unwrap(),
        );
    }
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");

    // Kill the stream's leader while publishing; every acknowledged event is kept.
    let leader = cluster.stream_leader("PI_EV").expect("a leader");
    let publisher = {
        let a = a.clone();
        tokio::spawn(async move {
            let mut acked = Vec::new();
            for i in 0..300 {
                let id = format!("load-{i}");
                // Retry with the same id until acknowledged (deduplicated by the stream).
                let deadline = std::time::Instant::now() + Duration::from_secs(30);
                loop {
                    match tokio::time::timeout(
                        Duration::from_secs(2),
                        a.publish_event("s4", &id, Bytes::from(id.clone())),
                    )
                    .await
                    {
                        Ok(Ok(seq)) => {
                            acked.push((id.clone(), seq));
                            break;
                        }
                        _ => assert!(std::time::Instant::now() < deadline, "publishing stalled"),
                    }
                }
            }
            acked
        })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    cluster.kill(leader);
    let acked = publisher.await.unwrap();
    assert_eq!(acked.len(), 300);
    cluster.restart(leader);
    // Read every stored event of s4 back (the cluster may still be electing leaders after
    // the restart: its API requests are tried again).
    let mut tries = 0;
    let stream = loop {
        match a.jetstream.get_stream("PI_EV").await {
            Ok(stream) => break stream,
            Err(e) if tries < 30 => {
                tries += 1;
                eprintln!("looking the stream up: {e}; trying again");
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            Err(e) => panic!("looking the stream up: {e}"),
        }
    };
    let mut found = Vec::new();
    for (id, seq) in &acked {
        // The restarted server may still be catching up, or the stream electing a leader.
        let mut tries = 0;
        let message = loop {
            match stream.get_raw_message(*seq).await {
                Ok(message) => break message,
                Err(e) if tries < 50 => {
                    tries += 1;
                    eprintln!("reading {seq} back: {e}; trying again");
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                Err(e) => panic!("reading {seq} back: {e}"),
            }
        };
        assert_eq!(message.subject.as_str(), "pi.ev.s4");
        found.push((String::from_utf8(message.payload.to_vec()).unwrap(), *seq));
        assert_eq!(&found.last().unwrap().0, id);
    }
    let mut unique: Vec<u64> = acked.iter().map(|(_, s)| *s).collect();
    unique.dedup();
    assert_eq!(unique.len(), 300, "no duplicates");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_reads_the_same_events_in_the_same_order_and_replays_after_a_seq() {
    let Some(binary) = nats_server() else { return };
    let cluster = Cluster::start(&binary);
    let nodes = [
        engine(&cluster, "gw1", Duration::from_secs(5)).await,
        engine(&cluster, "gw2", Duration::from_secs(5)).await,
        engine(&cluster, "gw3", Duration::from_secs(5)).await,
    ];
    let mut firehoses = Vec::new();
    for node in &nodes {
        firehoses.push(node.events(None, None).await.unwrap());
    }
    let mut published = Vec::new();
    for i in 0..60 {
        let node = &nodes[i % 3];
        let session = if i % 2 == 0 { "fan-a" } else { "fan-b" };
        let seq = node
            .publish_event(session, &format!("fan-{i}"), Bytes::from(format!("{i}")))
            .await
            .unwrap();
        published.push((seq, session.to_owned(), format!("{i}")));
    }
    let mut seen = Vec::new();
    for firehose in &mut firehoses {
        let mut got = Vec::new();
        while got.len() < published.len() {
            let event = tokio::time::timeout(Duration::from_secs(10), firehose.recv())
                .await
                .expect("events keep coming")
                .unwrap();
            got.push((
                event.seq,
                event.session,
                String::from_utf8(event.payload.to_vec()).unwrap(),
            ));
        }
        seen.push(got);
    }
    assert_eq!(
        seen[0], published,
        "node 1 saw what was published, in order"
    );
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[1], seen[2]);

    // A replay of one session after a seq: exactly its later events; no gap.
    let a_events: Vec<_> = published
        .iter()
        .filter(|(_, s, _)| s == "fan-a")
        .cloned()
        .collect();
    let after = a_events[9].0;
    assert_eq!(
        nodes[1].replay_start("fan-a", after).await.unwrap(),
        pi_gateway::cluster::ReplayStart::Complete
    );
    let mut replay = nodes[1].events(Some("fan-a"), Some(after)).await.unwrap();
    for expected in &a_events[10..] {
        let event = tokio::time::timeout(Duration::from_secs(10), replay.recv())
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            (
                event.seq,
                event.session,
                String::from_utf8(event.payload.to_vec()).unwrap()
            ),
            expected.clone()
        );
    }
    // An unknown session the client claims to have seen events of: a gap.
    assert!(matches!(
        nodes[2].replay_start("never-published", 5).await.unwrap(),
        pi_gateway::cluster::ReplayStart::Gap(_)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_file_lives_in_jetstream_and_a_new_owner_reads_it_back_whole() {
    use pi_ai::{AssistantMessage, UserMessage};
    use pi_coding_agent::session::manager::SessionManager;

    let Some(binary) = nats_server() else { return };
    let cluster = Cluster::start(&binary);
    let a = engine(&cluster, "gw1", Duration::from_secs(5)).await;
    let b = engine(&cluster, "gw2", Duration::from_secs(5)).await;
    let dir = tempfile::tempdir().unwrap();

    // Node A's session writes its file and, through the sink, PI_SESS.
    let mut session = SessionManager::create(dir.path(), &dir.path().join("a"));
    let id = session.session_id().to_owned();
    let writer = pi_gateway::cluster::EntryWriter::start(a.clone(), &id, 0);
    session.set_line_sink(writer.sink());
    session
        .append_message(UserMessage::text("question").into())
        .unwrap();
    session
        .append_message(AssistantMessage::empty("api", "p", "m").into())
        .unwrap();
    session
        .append_message(UserMessage::text("more").into())
        .unwrap();
    assert!(writer.flush().await);
    let file = std::fs::read_to_string(session.session_file().unwrap()).unwrap();

    // Node B reads it back: the same lines, and the file opens.
    let (lines, last) = b.load_entries(&id).await.unwrap();
    let joined: String = lines
        .iter()
        .map(|l| format!("{}\n", String::from_utf8_lossy(l)))
        .collect();
    assert_eq!(joined, file);
    let copy = dir.path().join("b.jsonl");
    std::fs::write(&copy, &joined).unwrap();
    let reopened = SessionManager::open(&copy, dir.path()).unwrap();
    assert_eq!(reopened.entries().len(), 3);

    // B takes over and appends after `last`; A, still believing it owns the session, is fenced.
    let b_writer = pi_gateway::cluster::EntryWriter::start(b.clone(), &id, last);
    let mut b_session = reopened;
    b_session.set_line_sink(b_writer.sink());
    b_session
        .append_message(UserMessage::text("from b").into())
        .unwrap();
    assert!(b_writer.flush().await);
    session
        .append_message(UserMessage::text("stale a").into())
        .unwrap();
    assert!(!writer.flush().await, "the old owner is fenced");
    assert!(writer.fenced.is_cancelled());
    let (lines, _) = b.load_entries(&id).await.unwrap();
    assert_eq!(lines.len(), 5);
    assert!(String::from_utf8_lossy(lines.last().unwrap()).contains("from b"));
    assert!(
        !lines
            .iter()
            .any(|l| String::from_utf8_lossy(l).contains("stale a"))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_reach_the_lanes_owner_and_nobody_means_no_owner() {
    let Some(binary) = nats_server() else { return };
    let cluster = Cluster::start(&binary);
    let a = engine(&cluster, "gw1", Duration::from_secs(5)).await;
    let b = engine(&cluster, "gw2", Duration::from_secs(5)).await;
    let timeout = Duration::from_secs(5);
    assert_eq!(
        b.send_to_owner("s6", Bytes::from("prompt"), timeout)
            .await
            .unwrap(),
        None
    );

    // A claims the lane and answers its commands, in order.
    let lease = claim(&a, "s6").await.unwrap();
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let log = std::sync::Arc::clone(&seen);
    let server = a
        .serve_lane(
            "s6",
            std::sync::Arc::new(move |command: Bytes| {
                let log = std::sync::Arc::clone(&log);
                Box::pin(accept(log, command))
            }),
        )
        .await
        .unwrap();
    for i in 0..5 {
        // The owner's subscription reaches the other servers a moment later: while nobody
        // answers, the lease says the lane is taken, so the sender tries again.
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        let reply = loop {
            match b
                .send_to_owner("s6", Bytes::from(format!("c{i}")), timeout)
                .await
                .unwrap()
            {
                Some(reply) => break reply,
                None => {
                    assert_lane_taken(claim(&b, "s6").await);
                    assert!(
                        std::time::Instant::now() < deadline,
                        "the owner never answered"
                    );
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            }
        };
        assert_eq!(reply, Bytes::from(format!("done: c{i}")));
    }
    assert_eq!(*seen.lock().unwrap(), ["c0", "c1", "c2", "c3", "c4"]);
    // The owner lets go: nobody answers again.
    drop(server);
    lease.release(&a).await.unwrap();
    a.client.flush().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        b.send_to_owner("s6", Bytes::from("late"), timeout)
            .await
            .unwrap(),
        None
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_node_keeps_a_current_copy_of_the_session_index() {
    let Some(binary) = nats_server() else { return };
    let cluster = Cluster::start(&binary);
    let a = engine(&cluster, "gw1", Duration::from_secs(5)).await;
    let b = engine(&cluster, "gw2", Duration::from_secs(5)).await;
    let record = serde_json::json!({"id": "s7", "owner": "alice", "cwd": "/w"});
    a.put_record("s7", &record).await.unwrap();
    // A view started later has the existing record, then follows changes.
    let view = b.watch_index().await.unwrap();
    let wait = |check: Box<dyn Fn(&pi_gateway::cluster::IndexView) -> bool>| {
        let view = view.clone();
        async move {
            let deadline = std::time::Instant::now() + Duration::from_secs(10);
            while !check(&view) {
                assert!(
                    std::time::Instant::now() < deadline,
                    "the index view did not follow"
                );
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    };
    wait(Box::new(|v| v.get("s7").is_some())).await;
    assert_eq!(view.get("s7").unwrap()["owner"], "alice");
    a.put_record("s8", &serde_json::json!({"id": "s8", "owner": "bob"}))
        .await
        .unwrap();
    wait(Box::new(|v| v.all().len() == 2)).await;
    a.delete_record("s7").await.unwrap();
    wait(Box::new(|v| v.get("s7").is_none())).await;
    assert_eq!(view.all().len(), 1);
}
