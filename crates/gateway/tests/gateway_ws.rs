//! The gateway over real WebSocket connections, against mock-llm: shared event streams,
//! replay after reconnecting, lanes, interrupts, sub-agents, principals, branching.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use serde_json::{Value, json};

use mock_llm::{Fault, Script};
use pi_gateway::server::client::Client;
use support::*;

/// A reply streamed in small pieces with a pause after the first few events.
fn slow_reply(text: &str, pause_ms: u64) -> Script {
    Script::text(text)
        .with_chunk_size(6)
        .with_fault(Fault::stall(3, pause_ms))
}

fn names(frames: &[Value], id: &str) -> Vec<String> {
    events(frames)
        .into_iter()
        .filter(|(_, _, session)| session == id)
        .map(|(_, name, _)| name)
        .collect()
}

/// The texts of the user and assistant entries of a `session.history` result.
fn message_texts(history: &Value) -> Vec<String> {
    history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "user" || e["role"] == "assistant")
        .map(|e| e["text"].as_str().unwrap().to_owned())
        .collect()
}

fn deltas(frames: &[Value], id: &str) -> String {
    frames
        .iter()
        .filter(|f| is_event(f, "text_delta", id))
        .map(|f| f["payload"]["delta"].as_str().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_clients_on_one_session_see_the_same_events_in_seq_order() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    let mut b = env.client(ALICE).await;
    let sub = b
        .call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap();
    assert_eq!(sub["replayed"], 0);
    env.mock
        .push(Script::text("Hello from the mock model, streamed in pieces.").with_chunk_size(7));
    let queued = a
        .call("session.prompt", json!({"sessionId": id, "text": "hi"}))
        .await
        .unwrap();
    assert_eq!(queued["queued"], 0);
    let (end, seen_a) = until_agent_end(&mut a, &id).await;
    let (_, seen_b) = until_agent_end(&mut b, &id).await;

    let (ea, eb) = (events(&seen_a), events(&seen_b));
    assert_eq!(ea, eb, "both clients see the same events with the same seq");
    assert!(
        ea.windows(2).all(|w| w[0].0 < w[1].0),
        "seq increases: {ea:?}"
    );
    let versions: Vec<u64> = seen_a
        .iter()
        .filter(|f| f["type"] == "event")
        .map(|f| f["stateVersion"].as_u64().unwrap())
        .collect();
    assert!(versions.windows(2).all(|w| w[0] <= w[1]));
    assert!(
        versions.last() > versions.first(),
        "a run changes the state"
    );

    let order = names(&seen_a, &id);
    assert_eq!(order.first().map(String::as_str), Some("agent_start"));
    assert_eq!(order.last().map(String::as_str), Some("agent_end"));
    let position = |name: &str| order.iter().position(|n| n == name).unwrap();
    assert!(position("turn_start") < position("text_delta"));
    assert!(position("text_delta") < position("turn_end"));
    assert!(order.iter().filter(|n| *n == "text_delta").count() > 3);
    assert_eq!(
        deltas(&seen_a, &id),
        "Hello from the mock model, streamed in pieces."
    );
    assert_eq!(end["terminationReason"], "no_tool_calls");
    assert_eq!(end["sessionId"], id.as_str());
    assert_eq!(end["totalTurns"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_reconnects_with_its_last_seq_misses_nothing() {
    let env = Env::start(relaxed()).await;
    let mut watcher = env.client(ALICE).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    watcher
        .call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap();
    let text = "one two three four five six seven eight nine ten eleven twelve";
    env.mock.push(slow_reply(text, 700));
    a.call("session.prompt", json!({"sessionId": id, "text": "count"}))
        .await
        .unwrap();
    let before = collect_until(&mut a, |f| is_event(f, "text_delta", &id)).await;
    let last_seq = events(&before).last().unwrap().0;
    a.close().await;

    // Events keep flowing while the client is away.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut again = env.client(ALICE).await;
    let sub = again
        .call(
            "session.subscribe",
            json!({"sessionId": id, "fromSeq": last_seq}),
        )
        .await
        .unwrap();
    assert_eq!(sub["gap"], false);
    let (_, after) = until_agent_end(&mut again, &id).await;
    let (_, full) = until_agent_end(&mut watcher, &id).await;

    let mut stitched = events(&before);
    stitched.extend(events(&after));
    assert_eq!(stitched, events(&full), "nothing lost, nothing repeated");
    assert_eq!(deltas(&full, &id), text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_on_one_session_are_serialized() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(slow_reply("first answer", 300));
    env.mock.push(slow_reply("second answer", 300));
    let one = a
        .call("session.prompt", json!({"sessionId": id, "text": "one"}))
        .await
        .unwrap();
    let two = a
        .call("session.prompt", json!({"sessionId": id, "text": "two"}))
        .await
        .unwrap();
    assert_eq!(one["queued"], 0);
    assert_eq!(two["queued"], 1, "the second waits behind the first");
    let mut ends = 0;
    let frames = collect_until(&mut a, |f| {
        if is_event(f, "agent_end", &id) {
            ends += 1;
        }
        ends == 2
    })
    .await;
    let order: Vec<String> = names(&frames, &id)
        .into_iter()
        .filter(|n| n == "agent_start" || n == "agent_end")
        .collect();
    assert_eq!(
        order,
        ["agent_start", "agent_end", "agent_start", "agent_end"]
    );
    let history = a
        .call("session.history", json!({"sessionId": id}))
        .await
        .unwrap();
    assert_eq!(
        message_texts(&history),
        ["one", "first answer", "two", "second answer"]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_on_different_sessions_run_in_parallel() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let first = env.create(&mut a, json!({})).await;
    let second = env.create(&mut a, json!({})).await;
    env.mock.push(slow_reply("answer", 800));
    env.mock.push(slow_reply("answer", 800));
    for id in [&first, &second] {
        a.call("session.prompt", json!({"sessionId": id, "text": "go"}))
            .await
            .unwrap();
    }
    let mut ended = 0;
    let frames = collect_until(&mut a, |f| {
        if f["event"] == "agent_end" {
            ended += 1;
        }
        ended == 2
    })
    .await;
    let all = events(&frames);
    let first_end = all.iter().find(|(_, n, _)| n == "agent_end").unwrap().0;
    for id in [&first, &second] {
        let start = all
            .iter()
            .find(|(_, n, s)| n == "agent_start" && s == id)
            .unwrap()
            .0;
        assert!(start < first_end, "both runs started before either ended");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_aborts_the_run() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(slow_reply("this will not finish", 20_000));
    a.call("session.prompt", json!({"sessionId": id, "text": "go"}))
        .await
        .unwrap();
    collect_until(&mut a, |f| is_event(f, "text_delta", &id)).await;
    let result = a
        .call("session.interrupt", json!({"sessionId": id}))
        .await
        .unwrap();
    assert_eq!(result["aborted"], json!([id]));
    let (end, _) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "abort_signal");
    // The session takes the next prompt.
    a.call("session.prompt", json!({"sessionId": id, "text": "again"}))
        .await
        .unwrap();
    let (end, frames) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "no_tool_calls");
    assert_eq!(deltas(&frames, &id), "ok: again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_agent_is_aborted_with_its_parent() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let parent = env.create(&mut a, json!({})).await;
    let child = env.create(&mut a, json!({"parentId": parent})).await;
    let tree = a.call("sessions.tree", json!({})).await.unwrap();
    let root = &tree["roots"][0];
    assert_eq!(root["id"], parent.as_str());
    assert_eq!(root["children"][0]["id"], child.as_str());
    assert_eq!(root["children"][0]["parentId"], parent.as_str());

    env.mock.push(slow_reply("parent working", 20_000));
    env.mock.push(slow_reply("child working", 20_000));
    for id in [&parent, &child] {
        a.call("session.prompt", json!({"sessionId": id, "text": "work"}))
            .await
            .unwrap();
    }
    let mut started = 0;
    collect_until(&mut a, |f| {
        if f["event"] == "text_delta" && f["payload"]["index"] == 0 {
            started += 1;
        }
        started == 2
    })
    .await;
    let result = a
        .call("session.interrupt", json!({"sessionId": parent}))
        .await
        .unwrap();
    let mut aborted: Vec<String> = result["aborted"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect();
    aborted.sort();
    let mut expected = vec![parent.clone(), child.clone()];
    expected.sort();
    assert_eq!(aborted, expected);
    let mut ends = Vec::new();
    collect_until(&mut a, |f| {
        if f["event"] == "agent_end" {
            ends.push((
                f["sessionId"].as_str().unwrap().to_owned(),
                f["payload"]["terminationReason"].clone(),
            ));
        }
        ends.len() == 2
    })
    .await;
    assert!(
        ends.iter().all(|(_, reason)| reason == "abort_signal"),
        "{ends:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_need_a_token_and_see_only_their_sessions() {
    let env = Env::start(relaxed()).await;
    let mut wrong = Client::connect(&env.url(), Some("not-a-token"))
        .await
        .unwrap();
    let refused = wrong.recv().await.unwrap().unwrap();
    assert_eq!(refused["ok"], false);
    assert_eq!(refused["error"]["code"], "unauthorized");
    assert!(wrong.recv().await.unwrap_or(None).is_none(), "then closed");

    // A token in the first frame works too.
    let mut late = Client::connect(&env.url(), None).await.unwrap();
    let who = late.call("auth", json!({"token": ALICE})).await.unwrap();
    assert_eq!(who["principal"], "alice");
    let id = env.create(&mut late, json!({})).await;

    let mut bob = env.client(BOB).await;
    let denied = bob
        .call("session.prompt", json!({"sessionId": id, "text": "hi"}))
        .await
        .unwrap_err()
        .to_string();
    assert!(denied.starts_with("not_found"), "{denied}");
    let denied = bob
        .call("session.subscribe", json!({"sessionId": id}))
        .await
        .unwrap_err()
        .to_string();
    assert!(denied.starts_with("not_found"), "{denied}");
    let listed = bob.call("sessions.list", json!({})).await.unwrap();
    assert_eq!(listed["sessions"], json!([]));
    let listed = late.call("sessions.list", json!({})).await.unwrap();
    assert_eq!(listed["sessions"][0]["id"], id.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_branch_starts_from_a_message_and_hangs_under_its_source() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    for text in ["first", "second"] {
        let done = a
            .call(
                "session.prompt",
                json!({"sessionId": id, "text": text, "wait": true}),
            )
            .await
            .unwrap();
        assert_eq!(done["terminationReason"], "no_tool_calls");
    }
    let history = a
        .call("session.history", json!({"sessionId": id}))
        .await
        .unwrap();
    let entries: Vec<Value> = history["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["role"] == "user" || e["role"] == "assistant")
        .cloned()
        .collect();
    assert_eq!(entries.len(), 4);
    let first_answer = &entries[1];
    assert_eq!(first_answer["text"], "ok: first");
    let message_id = first_answer["messageId"].as_str().unwrap().to_owned();

    let branch = a
        .call(
            "session.branch",
            json!({"sessionId": id, "fromMessage": message_id}),
        )
        .await
        .unwrap();
    let branch_id = branch["sessionId"].as_str().unwrap().to_owned();
    assert_ne!(branch_id, id);
    assert_eq!(branch["node"]["parentId"], id.as_str());
    assert_eq!(branch["node"]["branchPoint"], message_id.as_str());
    let history = a
        .call("session.history", json!({"sessionId": branch_id}))
        .await
        .unwrap();
    assert_eq!(message_texts(&history), ["first", "ok: first"]);
    let done = a
        .call(
            "session.prompt",
            json!({"sessionId": branch_id, "text": "other way", "wait": true}),
        )
        .await
        .unwrap();
    assert_eq!(done["terminationReason"], "no_tool_calls");
    let tree = a.call("sessions.tree", json!({})).await.unwrap();
    assert_eq!(tree["roots"][0]["children"][0]["id"], branch_id.as_str());

    // Navigating the source back to its first answer keeps both sessions intact.
    let nav = a
        .call(
            "session.navigate",
            json!({"sessionId": id, "target": message_id}),
        )
        .await
        .unwrap();
    assert_eq!(nav["cancelled"], false);
    let history = a
        .call("session.history", json!({"sessionId": id}))
        .await
        .unwrap();
    assert_eq!(message_texts(&history), ["first", "ok: first"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn steering_and_follow_ups_reach_the_running_agent() {
    let env = Env::start(relaxed()).await;
    let mut a = env.client(ALICE).await;
    let id = env.create(&mut a, json!({})).await;
    env.mock.push(Script::tool_call(
        "bash",
        json!({"command": "sleep 0.5; echo slept"}),
    ));
    env.mock.push(Script::text("saw the steer"));
    env.mock.push(Script::text("saw the follow-up"));
    a.call("session.prompt", json!({"sessionId": id, "text": "start"}))
        .await
        .unwrap();
    collect_until(&mut a, |f| is_event(f, "tool_execution_start", &id)).await;
    let steer = a
        .call(
            "session.steer",
            json!({"sessionId": id, "text": "change course"}),
        )
        .await
        .unwrap();
    assert_eq!(steer["delivered"], "steer");
    let follow = a
        .call(
            "session.followUp",
            json!({"sessionId": id, "text": "and then this"}),
        )
        .await
        .unwrap();
    assert_eq!(follow["delivered"], "followUp");
    let (end, _) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "no_tool_calls");
    let history = a
        .call("session.history", json!({"sessionId": id}))
        .await
        .unwrap();
    let texts = message_texts(&history);
    let at = |t: &str| texts.iter().position(|x| x == t).unwrap();
    assert!(at("change course") < at("saw the steer"), "{texts:?}");
    assert!(at("saw the steer") < at("and then this"), "{texts:?}");
    assert_eq!(texts.last().map(String::as_str), Some("saw the follow-up"));

    // Without a run, a steer starts one.
    let idle = a
        .call(
            "session.steer",
            json!({"sessionId": id, "text": "hello again"}),
        )
        .await
        .unwrap();
    assert_eq!(idle["delivered"], "prompt");
    let (end, _) = until_agent_end(&mut a, &id).await;
    assert_eq!(end["terminationReason"], "no_tool_calls");
}
