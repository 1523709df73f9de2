//! OpenClaw's gateway protocol v4 on pi-gateway: the handshake and its refusals, chat and
//! agent events with per-connection and per-run `seq`, aborts, `agent` / `agent.wait`, tool
//! streams only for clients that ask, and one run seen by a client of each protocol, with
//! a raw WebSocket client; the model is mock-llm. `openclaw_client.rs` runs OpenClaw's own
//! client against the same listener.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use mock_llm::{Fault, Script};
use pi_gateway::openclaw::{self, OpenClawHandle};
use serde_json::{Value, json};
use support::{ALICE, BOB, Env, relaxed};
use tokio_tungstenite::tungstenite::Message;

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A raw OpenClaw client: every frame it reads is kept.
struct Oc {
    ws: Ws,
    frames: Vec<Value>,
    next: u64,
}

impl Oc {
    async fn open(url: &str) -> (Oc, Value) {
        let (ws, _) = tokio_tungstenite::connect_async(url).await.unwrap();
        let mut oc = Oc {
            ws,
            frames: Vec::new(),
            next: 0,
        };
        let challenge = oc.read().await.unwrap();
        (oc, challenge)
    }

    /// Connects and authenticates; returns the client and `hello-ok`.
    async fn connect(url: &str, token: &str, caps: &[&str]) -> (Oc, Value) {
        let (mut oc, _) = Oc::open(url).await;
        let hello = oc
            .call("connect", connect_params(json!({"token": token}), caps))
            .await;
        assert_eq!(hello["ok"], true, "{hello}");
        (oc, hello["payload"].clone())
    }

    async fn read(&mut self) -> Option<Value> {
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), self.ws.next())
                .await
                .expect("a frame within 30 s")?;
            match message.ok()? {
                Message::Text(text) => {
                    let frame: Value = serde_json::from_str(text.as_str()).unwrap();
                    self.frames.push(frame.clone());
                    return Some(frame);
                }
                Message::Close(frame) => {
                    let frame = frame
                        .map(|f| json!({"close": u16::from(f.code), "reason": f.reason.as_str()}));
                    self.frames
                        .push(frame.clone().unwrap_or(json!({"close": null})));
                    return None;
                }
                // Kept in order with the frames (tungstenite answers it on the next read).
                Message::Ping(_) => self.frames.push(json!({"type": "ping"})),
                _ => {}
            }
        }
    }

    async fn send(&mut self, method: &str, params: Value) -> String {
        self.next += 1;
        let id = format!("{}:{}", self.next, uuid::Uuid::new_v4());
        let frame = json!({"type": "req", "id": id, "method": method, "params": params});
        self.ws
            .send(Message::Text(frame.to_string().into()))
            .await
            .unwrap();
        id
    }

    /// Sends a request and reads until its (first) response.
    async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.send(method, params).await;
        self.until(|f| f["type"] == "res" && f["id"] == id.as_str())
            .await
    }

    /// Reads until a frame matches; returns it.
    async fn until(&mut self, mut done: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let frame = self.read().await.expect("the connection stays open");
            if done(&frame) {
                return frame;
            }
        }
    }

    /// The events read so far, named `name`.
    fn events(&self, name: &str) -> Vec<Value> {
        self.frames
            .iter()
            .filter(|f| f["type"] == "event" && f["event"] == name)
            .cloned()
            .collect()
    }
}

fn connect_params(auth: Value, caps: &[&str]) -> Value {
    json!({
        "minProtocol": 4, "maxProtocol": 4,
        "client": {"id": "test", "version": "1", "platform": "linux", "mode": "cli"},
        "caps": caps, "role": "operator", "scopes": ["operator.admin"], "auth": auth,
    })
}

async fn start() -> (Env, OpenClawHandle) {
    let env = Env::start(relaxed()).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway = std::sync::Arc::clone(env.gateway.as_ref().unwrap().gateway());
    let handle = openclaw::serve(listener, gateway).unwrap();
    (env, handle)
}

fn is_chat_end(frame: &Value, run: &str) -> bool {
    frame["event"] == "chat"
        && frame["payload"]["runId"] == run
        && matches!(
            frame["payload"]["state"].as_str(),
            Some("final" | "aborted" | "error")
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_handshake_authenticates_and_refuses_as_openclaw_does() {
    let (_env, oc) = start().await;
    let url = oc.url();

    // The challenge comes first, without seq.
    let (mut client, challenge) = Oc::open(&url).await;
    assert_eq!(challenge["event"], "connect.challenge");
    assert!(challenge.get("seq").is_none());
    assert!(!challenge["payload"]["nonce"].as_str().unwrap().is_empty());
    assert!(challenge["payload"]["ts"].as_i64().unwrap() > 0);
    // A wrong token: ok:false with OpenClaw's code, then close 1008.
    let res = client
        .call("connect", connect_params(json!({"token": "nope"}), &[]))
        .await;
    assert_eq!(res["ok"], false);
    assert_eq!(res["error"]["code"], "INVALID_REQUEST");
    assert_eq!(
        res["error"]["message"],
        "unauthorized: gateway token mismatch"
    );
    assert_eq!(res["error"]["details"]["code"], "AUTH_TOKEN_MISMATCH");
    assert!(client.read().await.is_none());
    assert_eq!(client.frames.last().unwrap()["close"], 1008);

    // No token; another method first; another protocol.
    let (mut client, _) = Oc::open(&url).await;
    let res = client.call("connect", connect_params(json!({}), &[])).await;
    assert_eq!(res["error"]["details"]["code"], "AUTH_TOKEN_MISSING");
    let (mut client, _) = Oc::open(&url).await;
    let res = client.call("sessions.list", json!({})).await;
    assert_eq!(
        res["error"]["message"],
        "invalid handshake: first request must be connect"
    );
    let (mut client, _) = Oc::open(&url).await;
    let mut params = connect_params(json!({"token": ALICE}), &[]);
    params["minProtocol"] = json!(5);
    params["maxProtocol"] = json!(5);
    let res = client.call("connect", params).await;
    assert_eq!(res["error"]["details"]["code"], "PROTOCOL_MISMATCH");
    assert!(client.read().await.is_none());
    assert_eq!(client.frames.last().unwrap()["close"], 1002);

    // A password is a token too; hello-ok lists what is served.
    let (mut client, _) = Oc::open(&url).await;
    let res = client
        .call("connect", connect_params(json!({"password": ALICE}), &[]))
        .await;
    assert_eq!(res["ok"], true);
    let hello = &res["payload"];
    assert_eq!(hello["type"], "hello-ok");
    assert_eq!(hello["protocol"], 4);
    for method in [
        "chat.send",
        "chat.history",
        "agent",
        "agent.wait",
        "chat.abort",
    ] {
        assert!(
            hello["features"]["methods"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m == method)
        );
    }
    assert!(hello["policy"]["tickIntervalMs"].as_u64().unwrap() > 0);
    let unknown = client.call("no.such", json!({})).await;
    assert_eq!(unknown["error"]["message"], "unknown method: no.such");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chat_send_streams_chat_and_agent_events_with_both_seqs() {
    let (env, oc) = start().await;
    env.mock
        .push(Script::text("Hello from pi-rs, streamed in pieces"));
    let (mut client, _) = Oc::connect(&oc.url(), ALICE, &["tool-events"]).await;
    let subscribed = client.call("sessions.subscribe", json!({})).await;
    assert_eq!(subscribed["payload"]["subscribed"], true);
    let history = client
        .call("chat.history", json!({"sessionKey": "t1", "limit": 200}))
        .await;
    assert_eq!(history["payload"]["sessionKey"], "agent:main:t1");
    assert_eq!(history["payload"]["messages"], json!([]));

    let run = uuid::Uuid::new_v4().to_string();
    let ack = client
        .call(
            "chat.send",
            json!({"sessionKey": "agent:main:t1", "message": "hi", "deliver": false, "idempotencyKey": run}),
        )
        .await;
    assert_eq!(ack["payload"], json!({"runId": run, "status": "started"}));
    client.until(|f| is_chat_end(f, &run)).await;

    // Per connection: 1, 2, 3, … without gaps; the challenge and responses have none.
    let seqs: Vec<u64> = client
        .frames
        .iter()
        .filter(|f| f["type"] == "event" && f["event"] != "connect.challenge")
        .map(|f| f["seq"].as_u64().unwrap())
        .collect();
    assert_eq!(seqs, (1..=seqs.len() as u64).collect::<Vec<_>>());
    // Per run: agent seqs strictly increase; a chat event reuses its agent event's seq.
    let agent = client.events("agent");
    let run_seqs: Vec<u64> = agent
        .iter()
        .map(|f| f["payload"]["seq"].as_u64().unwrap())
        .collect();
    assert!(run_seqs.windows(2).all(|w| w[0] < w[1]), "{run_seqs:?}");
    assert_eq!(agent[0]["payload"]["stream"], "lifecycle");
    assert_eq!(agent[0]["payload"]["data"]["phase"], "start");
    assert_eq!(agent[0]["payload"]["sessionKey"], "agent:main:t1");
    let last = agent.last().unwrap();
    assert_eq!(last["payload"]["data"]["phase"], "end");
    let chat = client.events("chat");
    let deltas: Vec<&Value> = chat
        .iter()
        .filter(|f| f["payload"]["state"] == "delta")
        .collect();
    assert!(deltas.len() > 1, "the reply streams in pieces");
    // Each delta's message is the whole text so far.
    let mut so_far = String::new();
    for delta in &deltas {
        so_far.push_str(delta["payload"]["deltaText"].as_str().unwrap());
        assert_eq!(
            delta["payload"]["message"]["content"][0]["text"]
                .as_str()
                .unwrap(),
            so_far
        );
        let seq = &delta["payload"]["seq"];
        assert!(
            agent
                .iter()
                .any(|a| &a["payload"]["seq"] == seq && a["payload"]["stream"] == "assistant")
        );
    }
    let end = chat.last().unwrap();
    assert_eq!(end["payload"]["state"], "final");
    assert_eq!(end["payload"]["seq"], last["payload"]["seq"]);
    assert_eq!(
        end["payload"]["message"]["content"][0]["text"],
        "Hello from pi-rs, streamed in pieces"
    );

    // The same key again: the run is done, not repeated.
    let again = client
        .call(
            "chat.send",
            json!({"sessionKey": "t1", "message": "hi", "idempotencyKey": run}),
        )
        .await;
    assert_eq!(again["payload"], json!({"runId": run, "status": "ok"}));
    // History has both messages; the session is listed under its key.
    let history = client
        .call("chat.history", json!({"sessionKey": "t1"}))
        .await;
    let messages = history["payload"]["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[0]["role"], "user");
    assert_eq!(messages[1]["role"], "assistant");
    assert!(messages[1]["__openclaw"]["id"].is_string());
    let list = client.call("sessions.list", json!({})).await;
    assert_eq!(list["payload"]["sessions"][0]["key"], "agent:main:t1");
    assert_eq!(env.mock.requests().len(), 1);
}

/// Where each frame of a run lies in what the client read: (acknowledgement, the ping
/// after it, the run's first event).
fn ack_ping_first_event(frames: &[Value], ack_id: &str, run: &str) -> (usize, usize, usize) {
    let ack = frames
        .iter()
        .position(|f| f["type"] == "res" && f["id"] == ack_id)
        .unwrap();
    let ping = ack
        + frames[ack..]
            .iter()
            .position(|f| f["type"] == "ping")
            .expect("a ping after the acknowledgement");
    let first = frames
        .iter()
        .position(|f| {
            matches!(f["event"].as_str(), Some("chat" | "agent")) && f["payload"]["runId"] == run
        })
        .unwrap();
    (ack, ping, first)
}

/// A run's events reach the client only after it has read the acknowledgement of the
/// request that started it (`chat.send`'s `started`, `agent`'s `accepted`): the gateway
/// sends a ping behind the acknowledgement and starts the run on its pong. OpenClaw's TUI
/// handles an acknowledgement after the other frames of the same read, and stayed busy for
/// ever when a fast run (this mock answers at once) had ended before it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runs_events_come_after_its_acknowledgement_was_read() {
    let (env, oc) = start().await;
    let (mut client, _) = Oc::connect(&oc.url(), ALICE, &["tool-events"]).await;
    for round in 0..5 {
        env.mock.push(Script::text("at once"));
        let run = uuid::Uuid::new_v4().to_string();
        let id = client
            .send(
                "chat.send",
                json!({"sessionKey": "fast", "message": "hi", "idempotencyKey": run}),
            )
            .await;
        client.until(|f| is_chat_end(f, &run)).await;
        let (ack, ping, first) = ack_ping_first_event(&client.frames, &id, &run);
        assert!(
            ack < ping && ping < first,
            "round {round}: {ack} {ping} {first}"
        );

        env.mock.push(Script::text("at once"));
        let run = uuid::Uuid::new_v4().to_string();
        let id = client
            .send(
                "agent",
                json!({"sessionKey": "fast", "message": "hi", "idempotencyKey": run}),
            )
            .await;
        client
            .until(|f| {
                f["type"] == "res" && f["id"] == id.as_str() && f["payload"]["status"] != "accepted"
            })
            .await;
        let (ack, ping, first) = ack_ping_first_event(&client.frames, &id, &run);
        assert_eq!(client.frames[ack]["payload"]["status"], "accepted");
        assert!(
            ack < ping && ping < first,
            "round {round}: {ack} {ping} {first}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_streams_go_to_clients_that_ask_and_each_principal_sees_its_own() {
    let (env, oc) = start().await;
    // OpenClaw sessions open in alice's first workspace: the work dir.
    std::fs::write(env.work.join("hello.txt"), "hello-from-file\n").unwrap();
    let (mut tools, _) = Oc::connect(&oc.url(), ALICE, &["tool-events"]).await;
    let (mut plain, _) = Oc::connect(&oc.url(), ALICE, &[]).await;
    let (mut bob, _) = Oc::connect(&oc.url(), BOB, &["tool-events"]).await;
    // mock-llm answers "read X" with a read call, then "done: <result>".
    let run = uuid::Uuid::new_v4().to_string();
    tools
        .call(
            "chat.send",
            json!({"sessionKey": "main", "message": "read hello.txt", "idempotencyKey": run}),
        )
        .await;
    tools.until(|f| is_chat_end(f, &run)).await;
    plain.until(|f| is_chat_end(f, &run)).await;
    let tool_events: Vec<Value> = tools
        .events("agent")
        .into_iter()
        .filter(|f| f["payload"]["stream"] == "tool")
        .collect();
    assert_eq!(tool_events.len(), 2, "{tool_events:#?}");
    assert_eq!(tool_events[0]["payload"]["data"]["phase"], "start");
    assert_eq!(tool_events[0]["payload"]["data"]["name"], "read");
    assert_eq!(
        tool_events[0]["payload"]["data"]["args"],
        json!({"path": "hello.txt"})
    );
    assert_eq!(tool_events[1]["payload"]["data"]["phase"], "result");
    assert_eq!(tool_events[1]["payload"]["data"]["isError"], false);
    assert!(
        tool_events[1]["payload"]["data"]["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("hello-from-file")
    );
    assert!(
        plain
            .events("agent")
            .iter()
            .all(|f| f["payload"]["stream"] != "tool")
    );
    let last = plain.events("chat").last().unwrap().clone();
    assert_eq!(
        last["payload"]["message"]["content"][0]["text"],
        "done: hello-from-file\n"
    );
    // Bob saw nothing of Alice's run, and his sessions are his own.
    let listed = bob.call("sessions.list", json!({})).await;
    assert_eq!(listed["payload"]["sessions"], json!([]));
    assert!(bob.events("chat").is_empty() && bob.events("agent").is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_agent_and_agent_wait_and_both_protocols_see_one_run() {
    let (env, oc) = start().await;
    let (mut client, _) = Oc::connect(&oc.url(), ALICE, &[]).await;

    // `agent`: accepted, then the final answer under the same id.
    env.mock.push(Script::text("the agent's answer"));
    let run = uuid::Uuid::new_v4().to_string();
    let id = client
        .send(
            "agent",
            json!({"message": "go", "agentId": "main", "idempotencyKey": run, "timeout": 60}),
        )
        .await;
    let accepted = client
        .until(|f| f["type"] == "res" && f["id"] == id.as_str())
        .await;
    assert_eq!(accepted["payload"]["status"], "accepted");
    assert_eq!(accepted["payload"]["sessionKey"], "agent:main:main");
    let done = client
        .until(|f| f["type"] == "res" && f["id"] == id.as_str())
        .await;
    assert_eq!(done["payload"]["status"], "ok", "{done}");
    assert_eq!(
        done["payload"]["result"]["payloads"][0]["text"],
        "the agent's answer"
    );
    let waited = client
        .call("agent.wait", json!({"runId": run, "timeoutMs": 1000}))
        .await;
    assert_eq!(waited["payload"]["status"], "ok");
    let unknown = client
        .call("agent.wait", json!({"runId": "nope", "timeoutMs": 10}))
        .await;
    assert_eq!(unknown["payload"]["status"], "timeout");

    // A client of pi-gateway's own protocol subscribes to the same session.
    let listed = client.call("sessions.list", json!({})).await;
    let session_id = listed["payload"]["sessions"][0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let mut ours = env.client(ALICE).await;
    ours.call("session.subscribe", json!({"sessionId": session_id}))
        .await
        .unwrap();

    // A reply that stalls; chat.abort ends it as aborted, seen on both protocols.
    let mut stalled = Script::text("a long reply that never ends because the model stalls here");
    stalled.fault = Some(Fault::Stall {
        after_events: 3,
        ms: 30_000,
    });
    env.mock.push(stalled);
    let run = uuid::Uuid::new_v4().to_string();
    client
        .call(
            "chat.send",
            json!({"sessionKey": "main", "message": "talk", "idempotencyKey": run}),
        )
        .await;
    client
        .until(|f| {
            f["event"] == "chat"
                && f["payload"]["state"] == "delta"
                && f["payload"]["runId"] == run.as_str()
        })
        .await;
    let aborted = client
        .call(
            "chat.abort",
            json!({"sessionKey": "main", "preserveSideRuns": true}),
        )
        .await;
    assert_eq!(
        aborted["payload"],
        json!({"ok": true, "aborted": true, "runIds": [run]})
    );
    let end = client.until(|f| is_chat_end(f, &run)).await;
    assert_eq!(end["payload"]["state"], "aborted");
    assert_eq!(end["payload"]["stopReason"], "aborted");
    let waited = client
        .call("agent.wait", json!({"runId": run, "timeoutMs": 5000}))
        .await;
    assert_eq!(waited["payload"]["status"], "error");
    assert_eq!(waited["payload"]["stopReason"], "aborted");
    let (ended, frames) = support::until_agent_end(&mut ours, &session_id).await;
    assert_eq!(ended["terminationReason"], "abort_signal");
    assert!(
        frames
            .iter()
            .any(|f| support::is_event(f, "text_delta", &session_id)),
        "our protocol saw the same run stream"
    );
    let nothing = client
        .call("chat.abort", json!({"sessionKey": "main"}))
        .await;
    assert_eq!(
        nothing["payload"],
        json!({"ok": true, "aborted": false, "runIds": []})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_model_call_ends_the_run_with_chat_error_and_an_agent_error() {
    let (env, oc) = start().await;
    let (mut client, _) = Oc::connect(&oc.url(), ALICE, &[]).await;
    let mut failing = Script::text("never");
    failing.fault = Some(Fault::http_error(400));
    env.mock.push(failing);
    let run = uuid::Uuid::new_v4().to_string();
    client
        .call(
            "chat.send",
            json!({"sessionKey": "main", "message": "fail please", "idempotencyKey": run}),
        )
        .await;
    let end = client.until(|f| is_chat_end(f, &run)).await;
    assert_eq!(end["payload"]["state"], "error", "{end}");
    assert!(
        !end["payload"]["errorMessage"].as_str().unwrap().is_empty(),
        "{end}"
    );
    let lifecycle = client
        .events("agent")
        .into_iter()
        .rfind(|f| f["payload"]["stream"] == "lifecycle")
        .unwrap();
    assert_eq!(lifecycle["payload"]["data"]["phase"], "error");

    // `agent` for a failing run: accepted, then ok:false with OpenClaw's UNAVAILABLE.
    let mut failing = Script::text("never");
    failing.fault = Some(Fault::http_error(400));
    env.mock.push(failing);
    let id = client
        .send(
            "agent",
            json!({"message": "fail again", "idempotencyKey": uuid::Uuid::new_v4().to_string()}),
        )
        .await;
    let accepted = client
        .until(|f| f["type"] == "res" && f["id"] == id.as_str())
        .await;
    assert_eq!(accepted["payload"]["status"], "accepted");
    let done = client
        .until(|f| f["type"] == "res" && f["id"] == id.as_str())
        .await;
    assert_eq!(done["ok"], false, "{done}");
    assert_eq!(done["error"]["code"], "UNAVAILABLE");
    assert_eq!(done["payload"]["status"], "error");
}
