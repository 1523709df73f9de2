//! One WebSocket connection: authentication, request dispatch, the outbound writer and
//! the subscriptions it holds.

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::ws::{Message, Utf8Bytes, WebSocket};
use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::channel_binding::{ChannelBinding, ToolReply};
use super::gateway::Gateway;
use super::outbox::Outbox;
use super::protocol::{
    ApiError, AuthParams, BranchParams, CreateParams, Request, Response, ResumeParams,
    SessionParams, SubscribeParams, codes, params,
};
use super::session::{LiveSession, SubscribeInfo, Subscriber};
use super::session_ops::{self, OpOutcome};

/// How long an unauthenticated client may take to send its `auth` frame.
const AUTH_TIMEOUT: Duration = Duration::from_secs(10);
/// The largest frame accepted before authentication (the `auth` request).
const MAX_AUTH_FRAME: usize = 64 * 1024;
/// A wrong token is answered after this long, to slow down guessing.
const FAILED_AUTH_DELAY: Duration = Duration::from_millis(500);

/// What the upgrade request said about authentication.
#[derive(Debug, Clone)]
pub enum PreAuth {
    /// No token: the first frame must be `auth`.
    Missing,
    Principal(String),
    Rejected,
}

pub(super) type Deferred = Pin<Box<dyn Future<Output = Result<Value, ApiError>> + Send>>;

/// What handling a request produced.
pub(super) enum Outcome {
    Reply(Result<Value, ApiError>),
    /// The response was queued already (before a replay).
    Sent,
    Later(Deferred),
    /// Work that queues its response itself (a subscription from the cluster's stream).
    Spawned(Pin<Box<dyn Future<Output = ()> + Send>>),
}

pub(super) struct Conn {
    pub(super) id: u64,
    pub(super) principal: String,
    outbox: Arc<Outbox>,
    pub(super) subscriptions: Mutex<HashSet<String>>,
    /// The channel tools this client declared.
    pub(super) binding: Arc<ChannelBinding>,
}

impl Conn {
    pub(super) fn subscriber(&self) -> Subscriber {
        Subscriber {
            conn: self.id,
            outbox: Arc::clone(&self.outbox),
        }
    }

    fn send(&self, frame: String) {
        self.outbox.offer(Utf8Bytes::from(frame));
    }

    pub(super) fn respond(&self, id: Value, outcome: Result<Value, ApiError>) {
        self.send(Response::new(id, outcome).to_text());
    }
}

fn unauthorized(id: Value, message: &str) -> String {
    Response::new(id, Err(ApiError::new(codes::UNAUTHORIZED, message))).to_text()
}

/// Serves one upgraded connection until it closes, lags, or the gateway closes.
pub async fn run(gateway: Arc<Gateway>, socket: WebSocket, pre: PreAuth) {
    let (sink, mut stream) = socket.split();
    let outbox = Outbox::new(Box::pin(sink), gateway.config().outbound_buffer.max(16));
    let done = CancellationToken::new();
    let writer = tokio::spawn(Arc::clone(&outbox).run_writer(done.clone()));
    let finish = |done: CancellationToken, writer: tokio::task::JoinHandle<()>| async move {
        done.cancel();
        let _ = tokio::time::timeout(Duration::from_secs(5), writer).await;
    };

    let principal = match pre {
        PreAuth::Principal(principal) => principal,
        PreAuth::Rejected => {
            tokio::time::sleep(FAILED_AUTH_DELAY).await;
            outbox.offer(Utf8Bytes::from(unauthorized(Value::Null, "invalid token")));
            finish(done, writer).await;
            return;
        }
        PreAuth::Missing => match first_frame_auth(&gateway, &mut stream).await {
            Ok((id, principal)) => {
                let response = Response::new(id, Ok(json!({ "principal": principal }))).to_text();
                outbox.offer(Utf8Bytes::from(response));
                principal
            }
            Err((id, message)) => {
                tokio::time::sleep(FAILED_AUTH_DELAY).await;
                outbox.offer(Utf8Bytes::from(unauthorized(id, &message)));
                finish(done, writer).await;
                return;
            }
        },
    };

    let binding = ChannelBinding::new(Arc::clone(&outbox));
    let conn = Arc::new(Conn {
        id: gateway.next_conn_id(),
        principal,
        binding: Arc::clone(&binding),
        outbox,
        subscriptions: Mutex::new(HashSet::new()),
    });
    let closing = gateway.closing();
    loop {
        tokio::select! {
            frame = stream.next() => match frame {
                Some(Ok(Message::Text(text))) => {
                    handle_frame(&gateway, &conn, text.as_str());
                }
                Some(Ok(Message::Binary(_))) => conn.respond(
                    Value::Null,
                    Err(ApiError::new(codes::BAD_REQUEST, "binary frames are not supported")),
                ),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => {}
                Some(Ok(Message::Close(_)) | Err(_)) | None => break,
            },
            _ = conn.outbox.lagged().cancelled() => break,
            _ = closing.cancelled() => break,
        }
    }
    let subscriptions: Vec<String> = conn
        .subscriptions
        .lock()
        .map(|s| s.iter().cloned().collect())
        .unwrap_or_default();
    for id in subscriptions {
        if let Some(cluster) = gateway.cluster() {
            cluster.unsubscribe(&id, conn.id);
        } else if let Some(live) = gateway.live_session(&id) {
            live.unsubscribe(conn.id);
        }
    }
    binding.close();
    drop(conn);
    finish(done, writer).await;
}

/// Waits for the first frame, which must be a valid `auth` request.
async fn first_frame_auth(
    gateway: &Gateway,
    stream: &mut futures_util::stream::SplitStream<WebSocket>,
) -> Result<(Value, String), (Value, String)> {
    let frame = tokio::time::timeout(AUTH_TIMEOUT, async {
        loop {
            match stream.next().await {
                Some(Ok(Message::Text(text))) => return Some(text),
                Some(Ok(Message::Ping(_) | Message::Pong(_))) => continue,
                _ => return None,
            }
        }
    })
    .await
    .ok()
    .flatten()
    .ok_or((Value::Null, "authenticate first".to_owned()))?;
    if frame.len() > MAX_AUTH_FRAME {
        return Err((Value::Null, "the auth frame is too large".to_owned()));
    }
    let request: Request = serde_json::from_str(frame.as_str())
        .map_err(|_| (Value::Null, "authenticate first".to_owned()))?;
    if request.method != "auth" {
        return Err((request.id, "authenticate first".into()));
    }
    let auth: AuthParams = params(&request.params).map_err(|e| (request.id.clone(), e.message))?;
    match gateway.principal(&auth.token) {
        Some(principal) => Ok((request.id, principal)),
        None => Err((request.id, "invalid token".into())),
    }
}

fn handle_frame(gateway: &Arc<Gateway>, conn: &Arc<Conn>, text: &str) {
    let request: Request = match serde_json::from_str(text) {
        Ok(request) => request,
        Err(e) => {
            conn.respond(
                Value::Null,
                Err(ApiError::new(codes::BAD_REQUEST, e.to_string())),
            );
            return;
        }
    };
    let id = request.id.clone();
    let outcome = match gateway.cluster() {
        Some(cluster) => super::cluster_conn::dispatch(gateway, cluster, conn, request),
        None => dispatch(gateway, conn, request),
    };
    match outcome {
        Outcome::Reply(result) => conn.respond(id, result),
        Outcome::Sent => {}
        Outcome::Later(future) => {
            let conn = Arc::clone(conn);
            tokio::spawn(async move {
                let result = future.await;
                conn.respond(id, result);
            });
        }
        Outcome::Spawned(future) => {
            tokio::spawn(future);
        }
    }
}

fn reply<T>(result: Result<T, ApiError>, map: impl FnOnce(T) -> Value) -> Outcome {
    Outcome::Reply(result.map(map))
}

/// Subscribes `conn` to `live`, the response (built from `base`) preceding any replay.
fn subscribe(
    conn: &Conn,
    live: &LiveSession,
    request_id: Value,
    from_seq: Option<u64>,
    base: Value,
) -> Outcome {
    if let Ok(mut subscriptions) = conn.subscriptions.lock() {
        subscriptions.insert(live.id.clone());
    }
    live.subscribe(
        conn.subscriber(),
        from_seq,
        subscribed_response(request_id, base),
    );
    Outcome::Sent
}

/// The response to a subscription: `base` with what the subscription found.
pub(super) fn subscribed_response(
    request_id: Value,
    base: Value,
) -> impl FnOnce(SubscribeInfo) -> Utf8Bytes + Send + 'static {
    move |info: SubscribeInfo| {
        let mut result = base;
        if let Value::Object(map) = &mut result {
            map.insert("replayed".into(), info.replayed.into());
            map.insert("gap".into(), info.gap.into());
            map.insert("seq".into(), info.seq.into());
            map.insert("stateVersion".into(), info.state_version.into());
            map.insert("subscribed".into(), true.into());
        }
        Utf8Bytes::from(Response::new(request_id, Ok(result)).to_text())
    }
}

/// A created, resumed or branched session: described, and subscribed to when asked.
fn opened(
    gateway: &Gateway,
    conn: &Conn,
    request_id: Value,
    live: Result<Arc<LiveSession>, ApiError>,
    subscribe_to: bool,
) -> Outcome {
    let live = match live {
        Ok(live) => live,
        Err(e) => return Outcome::Reply(Err(e)),
    };
    let base = gateway.describe(&live);
    if subscribe_to {
        subscribe(conn, &live, request_id, None, base)
    } else {
        Outcome::Reply(Ok(base))
    }
}

pub(super) fn dispatch(gateway: &Arc<Gateway>, conn: &Conn, request: Request) -> Outcome {
    let principal = conn.principal.as_str();
    let p = &request.params;
    match request.method.as_str() {
        "auth" => {
            let result =
                params::<AuthParams>(p).and_then(|auth| match gateway.principal(&auth.token) {
                    Some(found) if found == principal => Ok(json!({ "principal": found })),
                    _ => Err(ApiError::new(
                        codes::UNAUTHORIZED,
                        "a connection keeps the principal it authenticated as",
                    )),
                });
            Outcome::Reply(result)
        }
        "session.create" => match params::<CreateParams>(p) {
            Ok(create) => {
                let session = Arc::new(std::sync::OnceLock::new());
                let channel = conn.binding.tools(&create.channel_tools, &session);
                let live = gateway.create(principal, &create, channel);
                if let Ok(live) = &live {
                    let _ = session.set(live.id.clone());
                }
                opened(gateway, conn, request.id, live, create.subscribe)
            }
            Err(e) => Outcome::Reply(Err(e)),
        },
        "session.resume" => match params::<ResumeParams>(p) {
            Ok(resume) => {
                let live = gateway.resume(principal, &resume.session_id);
                opened(gateway, conn, request.id, live, resume.subscribe)
            }
            Err(e) => Outcome::Reply(Err(e)),
        },
        "session.branch" => match params::<BranchParams>(p) {
            Ok(branch) => {
                let live = gateway.branch(principal, &branch);
                opened(gateway, conn, request.id, live, branch.subscribe)
            }
            Err(e) => Outcome::Reply(Err(e)),
        },
        "session.subscribe" => {
            let result = params::<SubscribeParams>(p).and_then(|s| {
                gateway
                    .session(principal, &s.session_id)
                    .map(|live| (live, s.from_seq))
            });
            match result {
                Ok((live, from_seq)) => subscribe(
                    conn,
                    &live,
                    request.id,
                    from_seq,
                    json!({ "sessionId": live.id }),
                ),
                Err(e) => Outcome::Reply(Err(e)),
            }
        }
        "session.unsubscribe" => {
            let result =
                params::<SessionParams>(p).and_then(|s| gateway.session(principal, &s.session_id));
            reply(result, |live| {
                live.unsubscribe(conn.id);
                if let Ok(mut subscriptions) = conn.subscriptions.lock() {
                    subscriptions.remove(&live.id);
                }
                json!({})
            })
        }
        method if session_ops::is_session_op(method) => {
            match session_ops::run(gateway, principal, method, p) {
                OpOutcome::Ready(result) => Outcome::Reply(result),
                OpOutcome::Later(future) => Outcome::Later(future),
            }
        }
        "tool.result" => Outcome::Reply(params::<ToolReply>(p).and_then(|reply| {
            let id = reply.request_id.clone();
            if conn.binding.resolve(reply) {
                Ok(json!({}))
            } else {
                Err(ApiError::new(
                    codes::NOT_FOUND,
                    format!("no tool call waits for request {id}"),
                ))
            }
        })),
        "sessions.list" => Outcome::Reply(Ok(gateway.list(principal))),
        "sessions.tree" => Outcome::Reply(Ok(gateway.tree(principal))),
        other => Outcome::Reply(Err(ApiError::new(
            codes::UNKNOWN_METHOD,
            format!("unknown method {other}"),
        ))),
    }
}
