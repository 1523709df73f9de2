//! pi-gateway as three nodes on three NATS servers (`--cluster`): events fan out to every
//! node in one order, clients reconnect to another node with their last `seq`, a
//! session's prompts never overlap whichever node they arrive on, and a node killed or
//! paused mid-run loses nothing committed. Skipped without nats-server
//! (`scripts/install-nats.sh`) unless `PI_TEST_REQUIRE_NATS` is set.
#![cfg(feature = "cluster")]
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{Item, Script};
use pi_gateway::server::client::Client;
use support::gateway_cluster::{GatewayCluster, session_events};
use support::{collect_until, is_event};

/// Frames of `client` until `agent_end` of `id` (bounded).
async fn until_end(client: &mut Client, id: &str) -> Vec<Value> {
    collect_until(client, |f| is_event(f, "agent_end", id)).await
}

/// A reply in several chunks.
fn chunked(text: &str) -> Script {
    Script::text(text).with_chunk_size(4)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_reach_every_node_in_one_order_and_replay_from_any_node() {
    let Some(cluster) = GatewayCluster::start("3s", &["--event-log", "24"]).await else {
        return;
    };
    let mut a = cluster.client(0).await;
    let id = cluster.create(&mut a).await;
    let mut b = cluster.client(1).await;
    let mut c = cluster.client(2).await;
    for client in [&mut b, &mut c] {
        let subscribed = client
            .call("session.subscribe", json!({"sessionId": id}))
            .await
            .unwrap_or_else(|e| panic!("{e}: {}", cluster.logs()));
        assert_eq!(subscribed["subscribed"], true);
    }
    cluster.mock.push(chunked("one two three four five six"));
    // The prompt arrives on the third node; the session runs on the first.
    let done = c
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "hi", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(
        done["terminationReason"],
        "no_tool_calls",
        "{}",
        cluster.logs()
    );
    let seen: Vec<Vec<(u64, String, Value)>> = vec![
        session_events(&until_end(&mut a, &id).await, &id),
        session_events(&until_end(&mut b, &id).await, &id),
        session_events(&until_end(&mut c, &id).await, &id),
    ];
    assert!(seen[0].len() >= 6, "{:?}", seen[0]);
    assert_eq!(seen[0], seen[1]);
    assert_eq!(seen[0], seen[2]);
    assert!(seen[0].windows(2).all(|w| w[0].0 < w[1].0), "seq increases");
    let text: String = seen[0]
        .iter()
        .filter(|e| e.1 == "text_delta")
        .map(|e| e.2["delta"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(text, "one two three four five six");

    // A client of node 2 that had seen the first three events reconnects to node 3.
    let last = seen[0][2].0;
    drop(b);
    let mut d = cluster.client(2).await;
    let replay = d
        .call(
            "session.subscribe",
            json!({"sessionId": id, "fromSeq": last}),
        )
        .await
        .unwrap();
    assert_eq!(replay["gap"], false);
    assert_eq!(replay["replayed"], seen[0].len() - 3);
    let frames = until_end(&mut d, &id).await;
    assert_eq!(session_events(&frames, &id), seen[0][3..].to_vec());

    // Past retention (24 events per session): a replay from the start is a gap.
    cluster
        .mock
        .push(chunked(&"word ".repeat(30)).with_chunk_size(1));
    cluster
        .mock
        .push(chunked(&"more ".repeat(30)).with_chunk_size(1));
    for text in ["again", "and again"] {
        let done = a
            .call(
                "session.prompt",
                json!({"sessionId": id, "text": text, "wait": true}),
            )
            .await
            .unwrap();
        assert_eq!(done["terminationReason"], "no_tool_calls");
    }
    let mut e = cluster.client(1).await;
    let gap = e
        .call(
            "session.subscribe",
            json!({"sessionId": id, "fromSeq": seen[0][0].0}),
        )
        .await
        .unwrap();
    assert_eq!(gap["gap"], true, "{gap}");
    // Another principal sees nothing of it on any node.
    let mut bob =
        pi_gateway::server::client::Client::connect(&cluster.nodes[1].url, Some(support::BOB))
            .await
            .unwrap();
    let refused = bob
        .call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap_err();
    assert!(refused.to_string().contains("not_found"), "{refused}");
    let listed = bob.call("sessions.list", json!({})).await.unwrap();
    assert_eq!(listed["sessions"], json!([]));
    let listed = e.call("sessions.list", json!({})).await.unwrap();
    assert_eq!(listed["sessions"][0]["id"], id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_for_one_session_on_two_nodes_never_overlap() {
    let Some(cluster) = GatewayCluster::start("3s", &[]).await else {
        return;
    };
    let mut a = cluster.client(0).await;
    let id = cluster.create(&mut a).await;
    let other = cluster.create(&mut a).await;
    let mut b = cluster.client(1).await;
    let mut c = cluster.client(2).await;
    for _ in 0..5 {
        cluster
            .mock
            .push(chunked("a reply that takes a few chunks to arrive"));
    }
    let started = Instant::now();
    let (first, second, third) = tokio::join!(
        b.call(
            "session.prompt",
            json!({"sessionId": id, "text": "from b", "wait": true})
        ),
        c.call(
            "session.prompt",
            json!({"sessionId": id, "text": "from c", "wait": true})
        ),
        a.call(
            "session.prompt",
            json!({"sessionId": other, "text": "other", "wait": true})
        ),
    );
    for done in [first, second, third] {
        assert_eq!(done.unwrap()["terminationReason"], "no_tool_calls");
    }
    assert!(started.elapsed() < Duration::from_secs(30));
    let mut frames = Vec::new();
    let mut ends = 0;
    while ends < 3 {
        let frame = collect_until(&mut a, |f| f["event"] == "agent_end").await;
        ends += 1;
        frames.extend(frame);
    }
    // Per session, runs alternate start, end, start, end.
    let runs: Vec<String> = session_events(&frames, &id)
        .into_iter()
        .filter(|e| e.1 == "agent_start" || e.1 == "agent_end")
        .map(|e| e.1)
        .collect();
    assert_eq!(
        runs,
        ["agent_start", "agent_end", "agent_start", "agent_end"]
    );
    let history = a
        .call("session.history", json!({"sessionId": id}))
        .await
        .unwrap();
    let users: Vec<&str> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "user")
        .map(|e| e["text"].as_str().unwrap())
        .collect();
    assert_eq!(users.len(), 2);
    assert!(users.contains(&"from b") && users.contains(&"from c"));
    // A repeated command id is accepted once.
    cluster.mock.push(Script::new(vec![Item::text("once")]));
    let params = json!({"sessionId": id, "text": "once", "commandId": "cmd-1"});
    let first = b.call("session.prompt", params.clone()).await.unwrap();
    assert!(first.get("duplicate").is_none(), "{first}");
    let again = c.call("session.prompt", params).await.unwrap();
    assert_eq!(again["duplicate"], true, "{again}");
}

/// A waiting prompt sent through another node than the session's gets its run's result
/// even when the run takes longer than the NATS client's default request timeout (10 s):
/// the sender waits as long as the prompt may, and the sends it repeats meanwhile are
/// answered with the one run's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_waiting_prompt_through_another_node_gets_its_result() {
    let Some(cluster) = GatewayCluster::start("3s", &[]).await else {
        return;
    };
    let mut a = cluster.client(0).await;
    let id = cluster.create(&mut a).await;
    let mut b = cluster.client(1).await;
    cluster
        .mock
        .push(Script::text("slow but sure").with_fault(mock_llm::Fault::stall(1, 12_000)));
    let done = b
        .call(
            "session.prompt",
            json!({"sessionId": id, "text": "take your time", "wait": true}),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}: {}", cluster.logs()));
    assert_eq!(
        done["terminationReason"],
        "no_tool_calls",
        "{done}\n{}",
        cluster.logs()
    );
    assert_ne!(done["duplicate"], true, "{done}");
    assert_eq!(cluster.mock.requests().len(), 1, "the prompt ran once");
}

/// A prompt whose request to the session's owner is lost on the way (the sending node's
/// link to NATS swallows it, then breaks) still runs, once: the sending node sends it
/// again until the owner answers, and the owner does not run a repeat twice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_lost_on_the_way_to_the_owner_is_sent_again_and_runs_once() {
    let Some(cluster) = GatewayCluster::start_with_lossy_link("3s", &[], 2).await else {
        return;
    };
    let mut a = cluster.client(0).await;
    let id = cluster.create(&mut a).await;
    let mut c = cluster.client(2).await;
    cluster.mock.push(Script::text("got it in the end"));
    cluster.link().lose();
    let sent = c
        .send(
            "session.prompt",
            json!({"sessionId": id, "text": "a prompt that gets lost", "wait": true}),
        )
        .await
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while !cluster.link().lost("a prompt that gets lost") {
        assert!(
            Instant::now() < deadline,
            "the prompt never went out: {}",
            cluster.logs()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    cluster.link().cut();
    let done = tokio::time::timeout(Duration::from_secs(30), c.response(sent))
        .await
        .unwrap_or_else(|_| panic!("no answer to the lost prompt: {}", cluster.logs()))
        .unwrap_or_else(|e| panic!("{e}: {}", cluster.logs()));
    assert_eq!(
        done["terminationReason"],
        "no_tool_calls",
        "{done}\n{}",
        cluster.logs()
    );
    assert_ne!(done["duplicate"], true, "{done}");
    let asked: Vec<_> = cluster
        .mock
        .requests()
        .into_iter()
        .filter(|r| r.body.to_string().contains("a prompt that gets lost"))
        .collect();
    assert_eq!(asked.len(), 1, "the prompt ran once");
}
