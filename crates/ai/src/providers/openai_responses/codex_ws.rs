//! pi's OpenAI Codex WebSocket transport (the `transport` setting, `auto` by default): the
//! request goes as one `response.create` frame on `wss://…/codex/responses` and each event
//! comes back as a text message. A session keeps its socket (per account) for later
//! requests, closed after 5 idle minutes and replaced after 45 (the backend ends them at
//! 60); `auto` and `websocket-cached` then send only the new input items after the previous
//! response's id. A socket that fails before the reply starts sends the request over SSE
//! instead, for the rest of the session.

use std::collections::{HashMap, HashSet};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use futures_util::{SinkExt, StreamExt};
use serde_json::{Map, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::http::{HeaderName, HeaderValue};
use tokio_tungstenite::{MaybeTlsStream, WebSocketStream};
use tokio_util::sync::CancellationToken;

use crate::http::HttpRequest;

type Socket = WebSocketStream<MaybeTlsStream<TcpStream>>;

/// The beta flag WebSocket requests carry instead of SSE's.
const BETA: &str = "responses_websockets=2026-02-06";
const DEFAULT_CONNECT_TIMEOUT_MS: u64 = 15_000;
/// An unused session socket is closed after this long.
const IDLE_TTL: Duration = Duration::from_secs(300);
/// A session socket is replaced before the backend's 60-minute limit (pi 0.80.4).
const MAX_AGE: Duration = Duration::from_secs(2700);
/// Error codes that are retried once before the reply starts.
pub(super) const CONNECTION_LIMIT: &str = "websocket_connection_limit_reached";
pub(super) const PREVIOUS_RESPONSE_NOT_FOUND: &str = "previous_response_not_found";

/// What a session's next request can build on: the last request and what it answered.
#[derive(Clone)]
pub(super) struct Continuation {
    pub body: Map<String, Value>,
    pub response_id: String,
    pub response_items: Vec<Value>,
}

/// A session socket and what it last did; `socket` is `None` while a request has it.
struct Entry {
    socket: Option<Socket>,
    created: Instant,
    idle_since: Instant,
    continuation: Option<Continuation>,
}

/// Session sockets by session id and account id.
static SESSIONS: LazyLock<Mutex<HashMap<(String, String), Entry>>> = LazyLock::new(Mutex::default);
/// Sessions whose WebSocket failed: they use SSE from then on.
static FALLBACK: LazyLock<Mutex<HashSet<String>>> = LazyLock::new(Mutex::default);

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Whether the session's WebSocket failed before, so its requests go over SSE.
pub(super) fn fell_back(session: Option<&str>) -> bool {
    session.is_some_and(|s| lock(&FALLBACK).contains(s))
}

/// Remembers that the session's WebSocket failed.
pub(super) fn record_fallback(session: Option<&str>) {
    if let Some(session) = session {
        lock(&FALLBACK).insert(session.to_owned());
    }
}

/// `ws(s)://` form of the Codex URL.
pub fn ws_url(base_url: &str) -> String {
    let url = super::codex::resolve_url(base_url);
    if let Some(rest) = url.strip_prefix("https://") {
        format!("wss://{rest}")
    } else if let Some(rest) = url.strip_prefix("http://") {
        format!("ws://{rest}")
    } else {
        url
    }
}

/// The upgrade's headers: the SSE request's, without its body and SSE headers, with the
/// WebSocket beta flag and `request_id` as session and client request id.
pub(super) fn headers(request: &HttpRequest, request_id: &str) -> Vec<(String, String)> {
    const DROPPED: [&str; 7] = [
        "accept",
        "content-type",
        "content-encoding",
        "accept-encoding",
        "openai-beta",
        "session-id",
        "x-client-request-id",
    ];
    let mut headers: Vec<(String, String)> = request
        .headers
        .iter()
        .filter(|(name, _)| !DROPPED.iter().any(|d| name.eq_ignore_ascii_case(d)))
        .cloned()
        .collect();
    // What node's WebSocket client sends for pi-ai (it drops the SSE `accept`).
    headers.push(("accept".into(), "*/*".into()));
    headers.push(("OpenAI-Beta".into(), BETA.into()));
    headers.push(("x-client-request-id".into(), request_id.into()));
    headers.push(("session-id".into(), request_id.into()));
    headers
}

/// A socket on loan to one request; `session` names its cache slot, if it has one.
pub(super) struct Lease {
    socket: Socket,
    session: Option<(String, String)>,
    created: Instant,
    pub continuation: Option<Continuation>,
}

impl Lease {
    /// A new socket kept by no session: closed after its request.
    fn unshared(socket: Socket) -> Self {
        Self {
            socket,
            session: None,
            created: Instant::now(),
            continuation: None,
        }
    }
}

/// Why no socket or no reply came: `Transport` failures may fall back to SSE.
pub(super) enum Failure {
    Transport(String),
    Aborted,
}

/// A socket for a request: the session's idle one (unless too old or idle too long), else
/// a new one, cached for the session when it has none in use.
pub(super) async fn acquire(
    url: &str,
    headers: &[(String, String)],
    session: Option<(&str, &str)>,
    connect_timeout_ms: Option<u64>,
    cancel: &CancellationToken,
) -> Result<Lease, Failure> {
    let Some((session, account)) = session else {
        return Ok(Lease::unshared(
            connect(url, headers, connect_timeout_ms, cancel).await?,
        ));
    };
    let key = (session.to_owned(), account.to_owned());
    /// What the session's slot held.
    enum Slot {
        Idle(Lease),
        Stale(Socket),
        Busy,
        Empty,
    }
    let slot = {
        let mut sessions = lock(&SESSIONS);
        let slot = match sessions.get_mut(&key) {
            None => Slot::Empty,
            Some(entry) => match entry.socket.take() {
                None => Slot::Busy,
                Some(socket)
                    if entry.created.elapsed() < MAX_AGE
                        && entry.idle_since.elapsed() < IDLE_TTL =>
                {
                    Slot::Idle(Lease {
                        socket,
                        session: Some(key.clone()),
                        created: entry.created,
                        continuation: entry.continuation.clone(),
                    })
                }
                Some(socket) => Slot::Stale(socket),
            },
        };
        if matches!(slot, Slot::Stale(_)) {
            sessions.remove(&key);
        }
        slot
    };
    match slot {
        Slot::Idle(lease) => return Ok(lease),
        Slot::Busy => {
            // In use by another request: this one gets a socket of its own.
            return Ok(Lease::unshared(
                connect(url, headers, connect_timeout_ms, cancel).await?,
            ));
        }
        Slot::Stale(socket) => close(socket, "connection_age_limit").await,
        Slot::Empty => {}
    }
    let socket = connect(url, headers, connect_timeout_ms, cancel).await?;
    let created = Instant::now();
    lock(&SESSIONS).insert(
        key.clone(),
        Entry {
            socket: None,
            created,
            idle_since: created,
            continuation: None,
        },
    );
    Ok(Lease {
        socket,
        session: Some(key),
        created,
        continuation: None,
    })
}

/// Gives the socket back: kept for the session with `continuation` when `keep`, else
/// closed and the session's slot (if still this socket's) emptied.
pub(super) async fn release(lease: Lease, keep: bool, continuation: Option<Continuation>) {
    let Lease {
        socket,
        session,
        created,
        ..
    } = lease;
    if let Some(key) = session {
        let mut sessions = lock(&SESSIONS);
        let ours = sessions.get(&key).is_some_and(|e| e.created == created);
        if keep && ours {
            if let Some(entry) = sessions.get_mut(&key) {
                entry.socket = Some(socket);
                entry.idle_since = Instant::now();
                entry.continuation = continuation;
            }
            return;
        }
        if ours {
            sessions.remove(&key);
        }
    }
    close(socket, "done").await;
}

/// Closes a socket politely, without waiting long for the other side.
async fn close(mut socket: Socket, reason: &str) {
    use tokio_tungstenite::tungstenite::protocol::CloseFrame;
    use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
    let frame = CloseFrame {
        code: CloseCode::Normal,
        reason: reason.to_owned().into(),
    };
    let _ = tokio::time::timeout(Duration::from_secs(1), socket.close(Some(frame))).await;
}

/// Opens a socket within the connect timeout (default 15 s; 0: none).
async fn connect(
    url: &str,
    headers: &[(String, String)],
    timeout_ms: Option<u64>,
    cancel: &CancellationToken,
) -> Result<Socket, Failure> {
    let mut request = url
        .into_client_request()
        .map_err(|e| Failure::Transport(e.to_string()))?;
    for (name, value) in headers {
        if let (Ok(name), Ok(value)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            request.headers_mut().insert(name, value);
        }
    }
    let timeout_ms = timeout_ms.unwrap_or(DEFAULT_CONNECT_TIMEOUT_MS);
    let connecting = tokio_tungstenite::connect_async(request);
    let limit = async {
        if timeout_ms == 0 {
            std::future::pending::<()>().await;
        }
        tokio::time::sleep(Duration::from_millis(timeout_ms)).await;
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Failure::Aborted),
        connected = connecting => connected
            .map(|(socket, _)| socket)
            .map_err(|e| Failure::Transport(e.to_string())),
        _ = limit => Err(Failure::Transport(format!(
            "WebSocket connect timeout after {timeout_ms}ms"
        ))),
    }
}

/// Sends one frame.
pub(super) async fn send(lease: &mut Lease, frame: String) -> Result<(), Failure> {
    lease
        .socket
        .send(Message::Text(frame.into()))
        .await
        .map_err(|e| Failure::Transport(e.to_string()))
}

/// The next event's text: `Ok(None)` when the socket closed, `Err` on a broken socket or
/// after `idle` without one.
pub(super) async fn next_text(
    lease: &mut Lease,
    idle: Option<Duration>,
    cancel: &CancellationToken,
) -> Result<Option<String>, Failure> {
    let wait = async {
        loop {
            match lease.socket.next().await {
                None => return Ok(None),
                Some(Err(error)) => return Err(Failure::Transport(error.to_string())),
                Some(Ok(Message::Text(text))) => return Ok(Some(text.to_string())),
                Some(Ok(Message::Binary(bytes))) => {
                    return Ok(Some(String::from_utf8_lossy(&bytes).into_owned()));
                }
                Some(Ok(Message::Close(frame))) => {
                    return Err(Failure::Transport(match frame {
                        Some(f) if !f.reason.is_empty() => {
                            format!("WebSocket closed {} {}", u16::from(f.code), f.reason)
                        }
                        Some(f) => format!("WebSocket closed {}", u16::from(f.code)),
                        None => "WebSocket closed".to_owned(),
                    }));
                }
                Some(Ok(_)) => {}
            }
        }
    };
    let limit = async {
        match idle.filter(|d| !d.is_zero()) {
            Some(d) => tokio::time::sleep(d).await,
            None => std::future::pending::<()>().await,
        }
    };
    tokio::select! {
        biased;
        _ = cancel.cancelled() => Err(Failure::Aborted),
        text = wait => text,
        _ = limit => Err(Failure::Transport(format!(
            "WebSocket idle timeout after {}ms",
            idle.map_or(0, |d| d.as_millis())
        ))),
    }
}

/// The body for a session that can continue: only the input items after the last request's
/// input and answer, after `previous_response_id`; `None` when the body differs otherwise.
pub(super) fn delta_body(
    body: &Map<String, Value>,
    continuation: &Continuation,
) -> Option<Map<String, Value>> {
    let rest = |b: &Map<String, Value>| {
        let mut b = b.clone();
        b.remove("input");
        b.remove("previous_response_id");
        b
    };
    if rest(body) != rest(&continuation.body) {
        return None;
    }
    let input = body.get("input")?.as_array()?;
    let last = continuation
        .body
        .get("input")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    let baseline: Vec<&Value> = last.iter().chain(&continuation.response_items).collect();
    if input.len() < baseline.len() || !input.iter().zip(&baseline).all(|(a, b)| a == *b) {
        return None;
    }
    let mut delta = body.clone();
    delta.insert(
        "previous_response_id".into(),
        continuation.response_id.clone().into(),
    );
    delta.insert("input".into(), input[baseline.len()..].to_vec().into());
    Some(delta)
}

/// `{"type":"response.create", …body}`.
pub(super) fn frame(body: &Map<String, Value>) -> String {
    let mut frame = Map::with_capacity(body.len() + 1);
    frame.insert("type".into(), "response.create".into());
    frame.extend(body.iter().map(|(k, v)| (k.clone(), v.clone())));
    Value::Object(frame).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }

    #[test]
    fn urls_switch_to_websocket_schemes() {
        assert_eq!(
            ws_url("https://chatgpt.com/backend-api"),
            "wss://chatgpt.com/backend-api/codex/responses"
        );
        assert_eq!(
            ws_url("http://127.0.0.1:9/x"),
            "ws://127.0.0.1:9/x/codex/responses"
        );
    }

    #[test]
    fn a_continuing_body_sends_only_the_new_items() {
        let continuation = Continuation {
            body: map(json!({"model": "m", "input": [1, 2]})),
            response_id: "resp_1".into(),
            response_items: vec![json!(3)],
        };
        let next = map(json!({"model": "m", "input": [1, 2, 3, 4]}));
        assert_eq!(
            Value::Object(delta_body(&next, &continuation).unwrap()),
            json!({"model": "m", "input": [4], "previous_response_id": "resp_1"})
        );
        // Another model, or a changed history: the whole body.
        assert!(
            delta_body(
                &map(json!({"model": "n", "input": [1, 2, 3]})),
                &continuation
            )
            .is_none()
        );
        assert!(
            delta_body(
                &map(json!({"model": "m", "input": [1, 9, 3]})),
                &continuation
            )
            .is_none()
        );
        assert!(delta_body(&map(json!({"model": "m", "input": [1]})), &continuation).is_none());
        assert_eq!(
            frame(&map(json!({"model": "m"}))),
            r#"{"type":"response.create","model":"m"}"#
        );
    }
}
