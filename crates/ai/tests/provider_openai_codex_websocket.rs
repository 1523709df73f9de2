//! The Codex WebSocket transport's request ids and session sockets, against the mock's Codex
//! WebSocket: a request without a session names itself with a fresh UUIDv7 (pi-ai 0.81.0),
//! and a session's kept socket serves one account only (pi-ai 0.84.0). These are library
//! paths: pi's coding agent always has a session and one account per run.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use mock_llm::{CodexWebSocket, RecordedRequest, Script};
use pi_ai::StopReason;
use serde_json::json;

use common::responses::{Api, base64url, model, options};
use common::{context, run_script, server};

fn on() -> CodexWebSocket {
    CodexWebSocket {
        enabled: true,
        upgrade_delay_ms: 0,
    }
}

/// A ChatGPT token naming `account`.
fn token(account: &str) -> String {
    let payload = json!({"https://api.openai.com/auth": {"chatgpt_account_id": account}});
    format!(
        "{}.{}.signature",
        base64url(br#"{"alg":"RS256","typ":"JWT"}"#),
        base64url(payload.to_string().as_bytes())
    )
}

fn of<'a>(requests: &'a [RecordedRequest], method: &str) -> Vec<&'a RecordedRequest> {
    requests.iter().filter(|r| r.method == method).collect()
}

#[tokio::test]
async fn sessionless_requests_name_themselves_with_a_fresh_uuidv7() {
    let server = server().await;
    server.set_codex_websocket(on());
    let model = model(&server, Api::Codex);
    for _ in 0..2 {
        let message = run_script(
            &server,
            &model,
            &context("hi"),
            Script::text("ok"),
            options(Api::Codex),
        )
        .await;
        assert_eq!(message.stop_reason, StopReason::Stop, "{message:?}");
    }
    let requests = server.requests();
    assert_eq!(of(&requests, "WS").len(), 2);
    assert!(of(&requests, "POST").is_empty());
    // No session: a socket per request, each named by a new UUIDv7.
    let upgrades = of(&requests, "GET");
    assert_eq!(upgrades.len(), 2);
    let ids: Vec<&String> = upgrades.iter().map(|r| &r.headers["session-id"]).collect();
    for (upgrade, id) in upgrades.iter().zip(&ids) {
        assert_eq!(&upgrade.headers["x-client-request-id"], *id);
        let parsed = uuid_version(id);
        assert_eq!(parsed, Some(7), "{id}");
    }
    assert_ne!(ids[0], ids[1]);
}

/// The version of a hyphenated UUID.
fn uuid_version(id: &str) -> Option<u32> {
    let parts: Vec<&str> = id.split('-').collect();
    let lengths: Vec<usize> = parts.iter().map(|p| p.len()).collect();
    if lengths != [8, 4, 4, 4, 12] || !id.chars().all(|c| c == '-' || c.is_ascii_hexdigit()) {
        return None;
    }
    parts[2].chars().next()?.to_digit(16)
}

#[tokio::test]
async fn a_kept_session_socket_serves_one_account() {
    let server = server().await;
    server.set_codex_websocket(on());
    let model = model(&server, Api::Codex);
    let run = |account: &'static str| {
        let mut opts = options(Api::Codex);
        opts.api_key = Some(token(account));
        opts.session_id = Some("session-kept-per-account".into());
        let (server, model) = (server.clone(), model.clone());
        async move {
            let message =
                run_script(&server, &model, &context("hi"), Script::text("ok"), opts).await;
            assert_eq!(message.stop_reason, StopReason::Stop, "{message:?}");
        }
    };
    run("acct-a").await;
    run("acct-a").await;
    run("acct-b").await;
    run("acct-a").await;
    let requests = server.requests();
    assert_eq!(of(&requests, "WS").len(), 4);
    // acct-a's socket serves its three requests; acct-b gets its own.
    let upgrades: Vec<&str> = of(&requests, "GET")
        .iter()
        .map(|r| r.headers["chatgpt-account-id"].as_str())
        .collect();
    assert_eq!(upgrades, ["acct-a", "acct-b"]);
    let frames: Vec<&str> = of(&requests, "WS")
        .iter()
        .map(|r| r.headers["chatgpt-account-id"].as_str())
        .collect();
    assert_eq!(frames, ["acct-a", "acct-a", "acct-b", "acct-a"]);
}
