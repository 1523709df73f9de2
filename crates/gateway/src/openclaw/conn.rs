//! One OpenClaw connection: the `connect.challenge` / `connect` / `hello-ok` handshake with
//! token or password auth, then requests (each answered by one `res`, two for `agent`),
//! events numbered per connection, and `tick`s.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{CloseFrame, Message, Utf8Bytes, WebSocket};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;

use super::frames::{self, OcError, PROTOCOL, Req, now_ms};
use super::{OpenClaw, lock, methods};
use crate::server::outbox::Outbox;

/// How long a client may take to send `connect`.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest `connect` frame accepted before authentication.
const MAX_CONNECT_FRAME: usize = 64 * 1024;
/// A wrong token waits this long before its answer, to slow down guessing.
const FAILED_AUTH_DELAY: Duration = Duration::from_millis(500);
/// How long [`OcConn::read_barrier`] waits for a client that does not answer pings.
const PONG_WAIT: Duration = Duration::from_secs(2);

/// An authenticated connection.
pub struct OcConn {
    pub principal: String,
    /// The client asked for `tool`-stream `agent` events (`caps: ["tool-events"]`).
    pub tool_events: bool,
    outbox: Arc<Outbox>,
    seq: Mutex<u64>,
    /// Pings sent by [`read_barrier`](Self::read_barrier), by payload, until their pong.
    pings: Mutex<HashMap<u64, oneshot::Sender<()>>>,
    next_ping: AtomicU64,
}

impl OcConn {
    /// Sends an event with this connection's next `seq`.
    pub fn send_event(&self, name: &str, payload: &Value) {
        let mut seq = lock(&self.seq);
        *seq += 1;
        let frame = frames::event(name, payload, Some(*seq));
        self.outbox.offer(Utf8Bytes::from(frame));
    }

    /// Sends a response frame.
    pub fn send(&self, frame: String) {
        self.outbox.offer(Utf8Bytes::from(frame));
    }

    /// Waits until the client has read every frame sent so far: a Ping goes after them and
    /// the client answers it while reading them, so what is sent after its Pong arrives in
    /// a later read. OpenClaw's TUI needs that between a `chat.send` acknowledgement and
    /// the run's first event: it handles an acknowledgement after the other frames of the
    /// same read, and one handled after its run ended leaves it busy for ever. A client
    /// that does not answer pings is waited for [`PONG_WAIT`].
    pub async fn read_barrier(&self) {
        let id = self.next_ping.fetch_add(1, Ordering::Relaxed);
        let (answered, pong) = oneshot::channel();
        lock(&self.pings).insert(id, answered);
        let ping = Message::Ping(id.to_be_bytes().to_vec().into());
        if self.outbox.offer_message(ping) {
            let _ = tokio::time::timeout(PONG_WAIT, pong).await;
        }
        lock(&self.pings).remove(&id);
    }

    /// A Pong from the client: the barrier waiting for it goes on.
    fn pong(&self, payload: &[u8]) {
        let Ok(bytes) = <[u8; 8]>::try_from(payload) else {
            return;
        };
        if let Some(answered) = lock(&self.pings).remove(&u64::from_be_bytes(bytes)) {
            let _ = answered.send(());
        }
    }
}

/// What `connect` established.
pub(super) struct Hello {
    principal: String,
    scopes: Vec<String>,
    role: String,
    tool_events: bool,
}

/// The principal of a token or password.
fn principal_of(oc: &OpenClaw, secret: &str) -> Option<String> {
    oc.gateway.principal(secret)
}

/// Checks `connect`; the error, details and close code on refusal.
pub(super) fn check_connect(oc: &OpenClaw, params: &Value) -> Result<Hello, (OcError, u16)> {
    let low = params.get("minProtocol").and_then(Value::as_u64);
    let high = params.get("maxProtocol").and_then(Value::as_u64);
    if !matches!((low, high), (Some(l), Some(h)) if l <= PROTOCOL && PROTOCOL <= h) {
        let error = OcError::invalid("protocol mismatch").with_details(json!({
            "code": "PROTOCOL_MISMATCH",
            "expectedProtocol": PROTOCOL,
            "clientMinProtocol": params.get("minProtocol"),
            "clientMaxProtocol": params.get("maxProtocol"),
        }));
        return Err((error, 1002));
    }
    let auth = params.get("auth").cloned().unwrap_or(Value::Null);
    let token = auth
        .get("token")
        .and_then(Value::as_str)
        .filter(|t| !t.is_empty());
    let password = auth
        .get("password")
        .and_then(Value::as_str)
        .filter(|p| !p.is_empty());
    let refuse = |message: &str, code: &str, reason: &str| {
        (
            OcError::invalid(message).with_details(json!({"code": code, "authReason": reason})),
            1008,
        )
    };
    let principal = match (token, password) {
        (Some(token), _) => principal_of(oc, token).ok_or_else(|| {
            refuse(
                "unauthorized: gateway token mismatch",
                "AUTH_TOKEN_MISMATCH",
                "token_mismatch",
            )
        })?,
        (None, Some(password)) => principal_of(oc, password).ok_or_else(|| {
            refuse(
                "unauthorized: gateway password mismatch",
                "AUTH_PASSWORD_MISMATCH",
                "password_mismatch",
            )
        })?,
        (None, None) => {
            return Err(refuse(
                "unauthorized: gateway token missing",
                "AUTH_TOKEN_MISSING",
                "token_missing",
            ));
        }
    };
    let strings = |name: &str| -> Vec<String> {
        params
            .get(name)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    Ok(Hello {
        principal,
        scopes: strings("scopes"),
        role: params
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("operator")
            .to_owned(),
        tool_events: strings("caps").iter().any(|c| c == "tool-events"),
    })
}

pub(super) fn hello_ok(oc: &OpenClaw, hello: &Hello, conn_id: &str) -> Value {
    json!({
        "type": "hello-ok",
        "protocol": PROTOCOL,
        "server": {"version": format!("pi-gateway/{}", env!("CARGO_PKG_VERSION")), "connId": conn_id},
        "features": {"methods": methods::NAMES.iter().chain(super::control_methods::NAMES).collect::<Vec<_>>(), "events": methods::EVENTS, "capabilities": []},
        "snapshot": {
            "presence": [],
            "health": {"ok": true, "ts": now_ms()},
            "stateVersion": {"presence": 0, "health": 0},
            "uptimeMs": u64::try_from(oc.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            "sessionDefaults": {"defaultAgentId": "main", "mainKey": "main",
                                "mainSessionKey": "agent:main:main", "modelConfigured": true,
                                "scope": "per-sender"},
        },
        "auth": {"role": hello.role, "scopes": hello.scopes},
        "policy": {"maxPayload": frames::MAX_PAYLOAD, "maxBufferedBytes": 2 * frames::MAX_PAYLOAD,
                   "tickIntervalMs": u64::try_from(oc.tick.as_millis()).unwrap_or(30_000)},
    })
}

async fn close(socket: &mut WebSocket, code: u16, reason: &str) {
    let reason: String = reason.chars().take(120).collect();
    let _ = socket
        .send(Message::Close(Some(CloseFrame {
            code,
            reason: Utf8Bytes::from(reason),
        })))
        .await;
}

/// The handshake; the authenticated hello, or `None` after refusing.
async fn handshake(oc: &OpenClaw, socket: &mut WebSocket, conn_id: &str) -> Option<Hello> {
    let challenge = json!({"nonce": uuid::Uuid::new_v4().to_string(), "ts": now_ms()});
    let text = frames::event("connect.challenge", &challenge, None);
    socket
        .send(Message::Text(Utf8Bytes::from(text)))
        .await
        .ok()?;
    let first = tokio::time::timeout(CONNECT_TIMEOUT, async {
        loop {
            match socket.recv().await? {
                Ok(Message::Text(text)) => return Some(text),
                Ok(Message::Close(_)) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    })
    .await
    .ok()
    .flatten()?;
    if first.len() > MAX_CONNECT_FRAME {
        close(socket, 1009, "connect frame too large").await;
        return None;
    }
    let request: Option<Req> = serde_json::from_str(first.as_str()).ok();
    let Some(request) = request.filter(|r| r.kind == "req") else {
        close(socket, 1008, "invalid handshake").await;
        return None;
    };
    if request.method != "connect" {
        let error = OcError::invalid("invalid handshake: first request must be connect");
        let _ = socket
            .send(Message::Text(Utf8Bytes::from(frames::res_err(
                &request.id,
                &error,
                None,
            ))))
            .await;
        close(socket, 1008, "invalid handshake").await;
        return None;
    }
    match check_connect(oc, &request.params) {
        Ok(hello) => {
            let payload = hello_ok(oc, &hello, conn_id);
            let text = frames::res_ok(&request.id, &payload);
            socket
                .send(Message::Text(Utf8Bytes::from(text)))
                .await
                .ok()?;
            Some(hello)
        }
        Err((error, code)) => {
            if error
                .details
                .as_ref()
                .is_some_and(|d| d.get("authReason").is_some())
            {
                tokio::time::sleep(FAILED_AUTH_DELAY).await;
            }
            let text = frames::res_err(&request.id, &error, None);
            let _ = socket.send(Message::Text(Utf8Bytes::from(text))).await;
            close(socket, code, &error.message).await;
            None
        }
    }
}

/// Serves one connection until it closes or the gateway closes.
pub async fn run(oc: Arc<OpenClaw>, mut socket: WebSocket) {
    let conn_id = uuid::Uuid::new_v4().to_string();
    let Some(hello) = handshake(&oc, &mut socket, &conn_id).await else {
        return;
    };
    let (sink, mut stream) = socket.split();
    let outbox = Outbox::new(Box::pin(sink), oc.gateway.config().outbound_buffer.max(16));
    let done = CancellationToken::new();
    let writer = tokio::spawn(Arc::clone(&outbox).run_writer(done.clone()));
    let conn = Arc::new(OcConn {
        principal: hello.principal,
        tool_events: hello.tool_events,
        outbox: Arc::clone(&outbox),
        seq: Mutex::new(0),
        pings: Mutex::new(HashMap::new()),
        next_ping: AtomicU64::new(0),
    });
    lock(&oc.conns).push(Arc::clone(&conn));
    let ticker = {
        let conn = Arc::clone(&conn);
        let every = oc.tick;
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(every);
            interval.tick().await;
            loop {
                interval.tick().await;
                conn.send_event("tick", &json!({"ts": now_ms()}));
            }
        })
    };
    let closing = oc.gateway.closing();
    loop {
        tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    let parsed: Result<Req, _> = serde_json::from_str(text.as_str());
                    let Ok(request) = parsed else { continue };
                    if request.kind != "req" {
                        continue;
                    }
                    let (oc, conn) = (Arc::clone(&oc), Arc::clone(&conn));
                    tokio::spawn(async move { methods::dispatch(&oc, &conn, request).await });
                }
                Some(Ok(Message::Pong(payload))) => conn.pong(&payload),
                Some(Ok(Message::Close(_))) | None | Some(Err(_)) => break,
                Some(Ok(_)) => {}
            },
            () = outbox.lagged().cancelled() => break,
            () = closing.cancelled() => break,
        }
    }
    ticker.abort();
    // Barriers still waiting go on at once: nothing more reaches this client.
    lock(&conn.pings).clear();
    lock(&oc.conns).retain(|c| !Arc::ptr_eq(c, &conn));
    done.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), writer).await;
}
