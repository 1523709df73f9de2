//! A network partition: three NATS servers and three pi-gateway nodes, server `i` and node
//! `i` in network namespace `i`; iptables in one namespace cuts it off from the other two.
//! The minority (one server, one node) stalls, the majority goes on and takes over the
//! cut-off node's session, and after healing the servers hold the same streams and the
//! healed node writes nothing it should not.
//! Skipped without nats-server (`PI_TEST_REQUIRE_NATS`) or where network namespaces cannot
//! be made: root, `ip` and `iptables` are needed (`PI_TEST_REQUIRE_NETNS`).
#![cfg(feature = "cluster")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::json;

use pi_gateway::server::client::Client;
use support::gateway_cluster::{GatewayCluster, check_export, eventually, session_events};
use support::is_event;

/// The streams a healed cluster must hold alike on every server (the lease and node
/// buckets keep changing with heartbeats and expiry).
const DURABLE: [&str; 4] = ["KV_pi_sessions", "PI_CMD", "PI_EV", "PI_SESS"];

/// The lease TTL: a lease must outlive the election of a new leader for a stream whose
/// leader was cut off (NATS waits 4 to 9 s of silence before electing), renewed every third
/// of it and given up at four fifths, so 20 s.
const TTL: &str = "20s";

/// A prompt that runs to its end through `client`, within `limit`: its reply.
async fn prompt(
    cluster: &GatewayCluster,
    client: &mut Client,
    id: &str,
    text: &str,
    limit: Duration,
) -> serde_json::Value {
    tokio::time::timeout(
        limit,
        client.call(
            "session.prompt",
            json!({"sessionId": id, "text": text, "wait": true}),
        ),
    )
    .await
    .unwrap_or_else(|_| {
        panic!(
            "the prompt {text:?} did not end within {limit:?}\n{}\n{}{}",
            cluster.logs(),
            cluster.nats.stream_report(&DURABLE),
            cluster.nats.log_tails(30)
        )
    })
    .unwrap_or_else(|e| panic!("the prompt {text:?} failed: {e}\n{}", cluster.logs()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_partition_stalls_the_minority_and_the_majority_goes_on() {
    let Some(cluster) = GatewayCluster::start_in_netns(TTL, &[]).await else {
        return;
    };
    let net = cluster.net.as_ref().unwrap();
    // Session `a` runs on node 1, session `b` on node 3 (the one to be cut off).
    let mut c1 = cluster.client(0).await;
    let a = cluster.create(&mut c1).await;
    let mut c3 = cluster.client(2).await;
    let b = cluster.create(&mut c3).await;
    prompt(&cluster, &mut c1, &a, "a before", Duration::from_secs(20)).await;
    prompt(&cluster, &mut c3, &b, "b before", Duration::from_secs(20)).await;
    let mut c2 = cluster.client(1).await;
    c2.call("session.subscribe", json!({"sessionId": b}))
        .await
        .unwrap();
    let before = cluster.export(&b);

    net.partition(2);
    let cut = Instant::now();

    // The minority stalls: node 3 cannot store a command or an event, so its prompt
    // neither runs to an end nor shows anything to a client of the majority.
    let sent = c3
        .send(
            "session.prompt",
            json!({"sessionId": b, "text": "b in the minority", "wait": true}),
        )
        .await
        .unwrap();
    let minority = tokio::time::timeout(Duration::from_secs(5), c3.response(sent)).await;
    if let Ok(Ok(reply)) = &minority {
        panic!("the minority ran a prompt: {reply}");
    }

    // The majority goes on: node 1's session at once, node 3's session taken over by
    // node 2 once node 3's lease ran out.
    let during = prompt(&cluster, &mut c1, &a, "a during", Duration::from_secs(30)).await;
    assert_eq!(during["terminationReason"], "no_tool_calls", "{during}");
    let done = prompt(
        &cluster,
        &mut c2,
        &b,
        "b on the majority",
        Duration::from_secs(40),
    )
    .await;
    assert_eq!(done["terminationReason"], "no_tool_calls", "{done}");
    let taken_after = cut.elapsed();
    eprintln!("node 3's session ran on the majority {taken_after:?} after the cut");
    let during = cluster.export(&b);
    assert!(during.starts_with(&before), "entries changed:\n{during}");
    assert!(during.contains("b on the majority"));
    assert!(!during.contains("b in the minority"), "{during}");
    // The minority's prompt gives up with an error (it is not left to run after healing).
    let failed = tokio::time::timeout(Duration::from_secs(60), c3.response(sent))
        .await
        .expect("the minority's prompt got no answer");
    assert!(failed.is_err(), "the minority ran a prompt: {failed:?}");
    eprintln!("the minority's prompt failed: {}", failed.unwrap_err());

    net.heal(2);
    let healed_at = Instant::now();
    // The servers converge: the same messages and sequences in every stream kept.
    let mut last = Vec::new();
    let check = || {
        let states = cluster.nats.stream_states();
        let durable: Vec<Option<Vec<(String, u64, u64)>>> = states
            .into_iter()
            .map(|s| {
                s.map(|list| {
                    list.into_iter()
                        .filter(|(name, _, _)| DURABLE.contains(&name.as_str()))
                        .collect()
                })
            })
            .collect();
        let converged = durable[0].as_ref().is_some_and(|first| {
            first.len() == DURABLE.len() && durable.iter().all(|s| s.as_ref() == Some(first))
        });
        last = durable;
        converged
    };
    eventually(
        "the servers converge",
        Duration::from_secs(30),
        check,
        || {
            format!(
                "{}{}",
                cluster.nats.stream_report(&DURABLE),
                cluster.nats.log_tails(20)
            )
        },
    )
    .await;
    eprintln!(
        "converged {:?} after healing: {:?}",
        healed_at.elapsed(),
        last[0]
    );

    // The healed node wrote nothing in the meantime, and serves the session again from
    // its new owner.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let healed = cluster.export(&b);
    assert_eq!(healed, during, "the cut-off node appended after healing");
    check_export(&healed);
    let mut c3 = cluster.client(2).await;
    c3.call("session.subscribe", json!({"sessionId": b}))
        .await
        .unwrap();
    let again = prompt(
        &cluster,
        &mut c3,
        &b,
        "b after healing",
        Duration::from_secs(20),
    )
    .await;
    assert_eq!(
        again["terminationReason"],
        "no_tool_calls",
        "{again}\n{}",
        cluster.logs()
    );
    let frames = {
        let mut frames = std::mem::take(&mut c3.events);
        while !frames.iter().any(|f| is_event(f, "agent_end", &b)) {
            let Ok(Ok(Some(frame))) =
                tokio::time::timeout(Duration::from_secs(10), c3.recv()).await
            else {
                panic!("no agent_end on the healed node\n{}", cluster.logs());
            };
            frames.push(frame);
        }
        frames
    };
    assert!(!session_events(&frames, &b).is_empty());
    let seqs: Vec<u64> = session_events(&frames, &b).iter().map(|e| e.0).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "{seqs:?}");
    check_export(&cluster.export(&b));
}
