//! The gateway's socket against hostile clients: one frame before authentication, and a
//! small one; a wrong token answered only after a pause; frames above the size limit close
//! the connection; tokens never reach the gateway's output.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use pi_gateway::server::client::Client;
use serde_json::{Value, json};
use support::{ALICE, Env, relaxed};
use tokio_tungstenite::tungstenite::Message;

async fn raw(
    url: &str,
) -> tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>> {
    tokio_tungstenite::connect_async(url).await.unwrap().0
}

/// The text frames until the server closes.
async fn drain(
    ws: &mut tokio_tungstenite::WebSocketStream<
        tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
    >,
) -> Vec<Value> {
    let mut frames = Vec::new();
    while let Ok(Some(Ok(message))) = tokio::time::timeout(Duration::from_secs(10), ws.next()).await
    {
        match message {
            Message::Text(text) => frames.push(serde_json::from_str(text.as_str()).unwrap()),
            Message::Close(_) => break,
            _ => {}
        }
    }
    frames
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn before_authentication_one_small_frame_and_a_slow_no() {
    let env = Env::start(relaxed()).await;
    let url = env.url();

    // A first frame that is not `auth`: refused and closed.
    let mut ws = raw(&url).await;
    ws.send(Message::Text(
        json!({"id": 1, "method": "sessions.list"})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let frames = drain(&mut ws).await;
    assert_eq!(frames.len(), 1, "{frames:?}");
    assert_eq!(frames[0]["error"]["code"], "unauthorized");

    // A huge first frame: refused without being parsed.
    let mut ws = raw(&url).await;
    let padding = "x".repeat(200 * 1024);
    let big = json!({"id": 1, "method": "auth", "params": {"token": ALICE, "pad": padding}});
    ws.send(Message::Text(big.to_string().into()))
        .await
        .unwrap();
    let frames = drain(&mut ws).await;
    assert_eq!(frames[0]["error"]["message"], "the auth frame is too large");

    // A wrong token is answered after a pause, in the query and in the auth frame.
    let started = Instant::now();
    let refused = Client::connect(&url, Some("not-a-token")).await;
    let mut client = refused.unwrap();
    let answer = client.recv().await.unwrap().unwrap();
    assert_eq!(answer["error"]["message"], "invalid token");
    assert!(started.elapsed() >= Duration::from_millis(500));
    let mut ws = raw(&url).await;
    let started = Instant::now();
    ws.send(Message::Text(
        json!({"id": 1, "method": "auth", "params": {"token": "nope"}})
            .to_string()
            .into(),
    ))
    .await
    .unwrap();
    let frames = drain(&mut ws).await;
    assert_eq!(frames[0]["error"]["message"], "invalid token");
    assert!(started.elapsed() >= Duration::from_millis(500));

    // The right token works at once.
    let mut client = Client::connect(&url, Some(ALICE)).await.unwrap();
    let listed = client.call("sessions.list", json!({})).await.unwrap();
    assert!(listed["sessions"].is_array());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_frame_above_the_limit_closes_the_connection() {
    let env = Env::start(relaxed()).await;
    let mut client = Client::connect(&env.url(), Some(ALICE)).await.unwrap();
    client.call("sessions.list", json!({})).await.unwrap();
    let huge = format!(
        "{{\"id\":2,\"method\":\"sessions.list\",\"params\":{{\"pad\":\"{}\"}}}}",
        "x".repeat(33 * 1024 * 1024)
    );
    let _ = client.send_text(&huge).await;
    let closed = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match client.recv().await {
                Ok(Some(frame)) if frame["id"] == 2 => return false,
                Ok(Some(_)) => {}
                Ok(None) | Err(_) => return true,
            }
        }
    })
    .await
    .unwrap();
    assert!(closed, "the oversized frame was answered");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tokens_never_reach_the_gateways_output() {
    let dir = tempfile::tempdir().unwrap();
    let secret = "tok-3f9c1d7e-secret";
    let guess = "tok-wrong-guess-77";
    let mut child = Command::new(env!("CARGO_BIN_EXE_pi-gateway"))
        .args(["--port", "0", "--openclaw-port", "0", "--token"])
        .arg(format!("alice:{secret}"))
        .arg("--agent-dir")
        .arg(dir.path())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    // "pi-gateway listening on ws://…/" then the OpenClaw line.
    while !seen.contains("OpenClaw protocol on") {
        let n = stderr.read(&mut buf).unwrap();
        assert!(n > 0, "{seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    let url = seen
        .lines()
        .find_map(|l| l.strip_prefix("pi-gateway listening on "))
        .unwrap()
        .to_owned();
    for token in [secret, guess] {
        if let Ok(mut client) = Client::connect(&url, Some(token)).await {
            let _ = client.call("sessions.list", json!({})).await;
        }
    }
    let _ = Command::new("kill").arg(child.id().to_string()).status();
    child.wait().unwrap();
    let mut rest = String::new();
    stderr.read_to_string(&mut rest).unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    let output = format!("{seen}{rest}{stdout}");
    assert!(!output.contains(secret), "{output}");
    assert!(!output.contains(guess), "{output}");
}
