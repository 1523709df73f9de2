//! The OpenAI Codex Responses WebSocket (`GET …/codex/responses` upgraded), off unless a
//! test turns it on ([`crate::MockServer::set_codex_websocket`]): then each connection is
//! recorded as a `GET` request and each `response.create` frame as a `WS` request (its
//! JSON as the body), and each frame is answered with the next script's Responses events,
//! one text message per event. Faults: `dropAfter` closes the connection without a close
//! frame after that many events, `stall` pauses, `delayHeaders` delays the upgrade; a raw
//! body's `data:` lines are sent as they are.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::FromRequestParts;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Response};

use crate::recording::StoredRequest;
use crate::script::{Fault, Script};
use crate::state::Shared;
use crate::wire::WireFormat;
use crate::wire::openai_responses::OpenAiResponses;

/// How the Codex WebSocket endpoint behaves.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodexWebSocket {
    /// Whether upgrades are accepted (otherwise they get the usual 404).
    pub enabled: bool,
    /// Milliseconds to wait before answering an upgrade.
    pub upgrade_delay_ms: u64,
}

/// Whether `parts` asks to upgrade a Codex Responses path while the endpoint is on.
pub(crate) fn wants(shared: &Shared, parts: &Parts) -> bool {
    shared.codex_websocket().enabled
        && parts.method == axum::http::Method::GET
        && parts.uri.path().ends_with("/responses")
        && parts
            .headers
            .get(axum::http::header::UPGRADE)
            .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"websocket"))
}

/// Records the upgrade and serves the connection.
pub(crate) async fn upgrade(shared: Arc<Shared>, mut parts: Parts) -> Response {
    shared.record(StoredRequest::new(
        &parts.method,
        &parts.uri,
        &parts.headers,
        bytes::Bytes::new(),
    ));
    let delay = shared.codex_websocket().upgrade_delay_ms;
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let upgrade = match WebSocketUpgrade::from_request_parts(&mut parts, &()).await {
        Ok(upgrade) => upgrade,
        Err(rejection) => return rejection.into_response(),
    };
    upgrade.on_upgrade(move |socket| serve(shared, parts, socket))
}

/// Answers every text frame of one connection until the client closes it.
async fn serve(shared: Arc<Shared>, parts: Parts, mut socket: WebSocket) {
    while let Some(Ok(message)) = socket.recv().await {
        let text = match message {
            Message::Text(text) => text.to_string(),
            Message::Binary(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
            Message::Close(_) => return,
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        let frame_uri = axum::http::Uri::try_from(parts.uri.path()).unwrap_or_default();
        let method = axum::http::Method::from_bytes(b"WS").unwrap_or_default();
        shared.record(StoredRequest::new(
            &method,
            &frame_uri,
            &parts.headers,
            bytes::Bytes::from(text.clone()),
        ));
        let request = crate::request_view::slim_request(text.as_bytes());
        let script = shared
            .pop()
            .unwrap_or_else(|| OpenAiResponses.default_reply(&request));
        if !answer(&shared, &mut socket, &script, &request, text.len()).await {
            return;
        }
    }
}

/// Sends the script's events; `false` when the connection is gone (or dropped on purpose).
async fn answer(
    shared: &Shared,
    socket: &mut WebSocket,
    script: &Script,
    request: &serde_json::Value,
    request_len: usize,
) -> bool {
    let events: Vec<String> = match &script.raw_body {
        Some(raw) => raw
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.trim().to_owned())
            .collect(),
        None => {
            let ctx = shared.render_ctx(request, request_len);
            OpenAiResponses
                .render(script, &ctx)
                .into_iter()
                .map(|f| f.data)
                .collect()
        }
    };
    for (sent, event) in events.into_iter().enumerate() {
        match script.fault {
            Some(Fault::DropAfter { after_events }) if sent == after_events => return false,
            Some(Fault::Stall { after_events, ms }) if sent == after_events => {
                tokio::time::sleep(Duration::from_millis(ms)).await;
            }
            _ => {}
        }
        if socket.send(Message::Text(event.into())).await.is_err() {
            return false;
        }
    }
    !matches!(script.fault, Some(Fault::DropAfter { .. }))
}
