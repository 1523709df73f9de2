//! OpenClaw's gateway protocol v4 on its own listener, so OpenClaw's own clients (`openclaw
//! tui`, `openclaw agent`, `openclaw gateway call`) work against pi-gateway.
//!
//! One event stream underneath both protocols: every session OpenClaw clients use gets a
//! tap on its lifecycle events, which become OpenClaw `agent` and `chat` events (with
//! per-run `seq`) for every OpenClaw connection of the session's principal; each
//! connection numbers what it receives with its own `seq`. Sessions are named by OpenClaw
//! session keys (`agent:<id>:<name>`), kept on the session's node; a key nobody used yet
//! opens a session in the principal's workspace. Runs are named by the client's
//! idempotency key. Tokens are the gateway's (`--token`), given as `auth.token` or
//! `auth.password`. On a node of a cluster the tap reads the cluster's event stream and
//! operations go to the node running the session (`cluster_feed`).

mod cluster_feed;
mod conn;
mod control_methods;
mod control_ui;
mod frames;
#[doc(hidden)]
pub mod fuzzing;
mod keys;
mod methods;
mod runs;
mod translate;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{State, WebSocketUpgrade};
use axum::http::Uri;
use axum::response::Response;
use axum::routing::get;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::events::LifecycleEvent;
use crate::server::{Gateway, LiveSession};
use conn::OcConn;
use frames::OcError;
use runs::Runs;
use translate::{Outgoing, Track};

pub use frames::PROTOCOL;

/// A session OpenClaw clients act on: run on this gateway (`live`), or, on a node of a
/// cluster, wherever its lane is owned (operations routed there, events from the stream).
pub(crate) struct Target {
    pub id: String,
    pub owner: String,
    pub live: Option<Arc<LiveSession>>,
}

/// How often connections get a `tick` (announced as `policy.tickIntervalMs`).
const TICK_INTERVAL: Duration = Duration::from_secs(30);

/// The OpenClaw side of a gateway.
pub struct OpenClaw {
    gateway: Arc<Gateway>,
    runs: Runs,
    tracks: Mutex<HashMap<String, Arc<Mutex<Track>>>>,
    /// On a node of a cluster: per session, whether its events are followed yet.
    following: Mutex<HashMap<String, tokio::sync::watch::Receiver<bool>>>,
    conns: Mutex<Vec<Arc<OcConn>>>,
    started: Instant,
    tick: Duration,
    /// OpenClaw's Control UI files (`dist/control-ui` of the `openclaw` package), if served.
    control_ui: Option<PathBuf>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

impl OpenClaw {
    pub fn new(gateway: Arc<Gateway>, control_ui: Option<PathBuf>) -> Arc<Self> {
        Arc::new(Self {
            gateway,
            runs: Runs::default(),
            tracks: Mutex::new(HashMap::new()),
            following: Mutex::new(HashMap::new()),
            conns: Mutex::new(Vec::new()),
            started: Instant::now(),
            tick: TICK_INTERVAL,
            control_ui,
        })
    }

    /// Sends an event to every OpenClaw connection of `principal` (tool streams only to
    /// those that asked for tool events).
    fn broadcast(&self, principal: &str, outgoing: &Outgoing) {
        let conns: Vec<Arc<OcConn>> = lock(&self.conns)
            .iter()
            .filter(|c| c.principal == principal && (!outgoing.tool || c.tool_events))
            .cloned()
            .collect();
        for conn in conns {
            conn.send_event(outgoing.event, &outgoing.payload);
        }
    }

    /// The cluster this gateway is a node of (only asked for where there is one).
    fn cluster(&self) -> Result<&Arc<dyn crate::server::cluster_hooks::ClusterHooks>, OcError> {
        self.gateway
            .cluster()
            .ok_or_else(|| OcError::unavailable("the session runs nowhere"))
    }

    /// The folder sessions opened by key work in: the principal's first workspace.
    fn workspace(&self, principal: &str) -> Result<PathBuf, OcError> {
        let agent_dir = &self.gateway.config().agent_dir;
        let roots =
            crate::server::workspaces::workspaces(&self.gateway.file(), agent_dir, principal);
        let dir = roots
            .into_iter()
            .next()
            .unwrap_or_else(|| crate::server::workspaces::default_workspace(agent_dir, principal));
        std::fs::create_dir_all(&dir).map_err(|e| {
            OcError::unavailable(format!("cannot make workspace {}: {e}", dir.display()))
        })?;
        Ok(dir)
    }

    /// The session `key` names for `principal`: the one named so before (reopened), a
    /// session known by `agent:main:<id>`, or a new one in the principal's workspace.
    fn session_for(
        self: &Arc<Self>,
        principal: &str,
        key: &str,
    ) -> Result<(Target, Arc<Mutex<Track>>), OcError> {
        let clustered = self.gateway.cluster().is_some();
        let known = self
            .gateway
            .node_for_key(principal, key)
            .map(|node| node.id)
            .or_else(|| {
                key.strip_prefix("agent:main:")
                    .filter(|id| self.gateway.node(id).is_some_and(|n| n.owner == principal))
                    .map(str::to_owned)
            });
        if let Some(id) = known {
            // On a node of a cluster the session runs wherever its lane is owned.
            if clustered {
                return Ok(self.attach_remote(&id, principal, key));
            }
            if let Ok(live) = self.gateway.session(principal, &id) {
                return Ok(self.attach(live, key));
            }
        }
        let cwd = self.workspace(principal)?;
        let params = serde_json::from_value(serde_json::json!({"cwd": cwd}))
            .map_err(|e| OcError::invalid(e.to_string()))?;
        let live = self
            .gateway
            .create(principal, &params, Vec::new())
            .map_err(|e| match e.code.as_str() {
                crate::server::protocol::codes::FORBIDDEN => OcError::forbidden(e.message),
                _ => OcError::unavailable(e.message),
            })?;
        self.gateway.set_key(&live.id, key);
        if clustered {
            return Ok(self.attach_remote(&live.id, principal, key));
        }
        Ok(self.attach(live, key))
    }

    /// The session's track, tapping its events the first time.
    fn attach(self: &Arc<Self>, live: Arc<LiveSession>, key: &str) -> (Target, Arc<Mutex<Track>>) {
        let track = Arc::clone(
            lock(&self.tracks)
                .entry(live.id.clone())
                .or_insert_with(|| Arc::new(Mutex::new(Track::new(key, &live.id)))),
        );
        let weak = Arc::downgrade(self);
        let tapped = Arc::clone(&track);
        let owner = live.owner.clone();
        live.add_tap(
            "openclaw",
            Arc::new(move |event| {
                if let Some(oc) = weak.upgrade() {
                    oc.deliver(&owner, &tapped, event);
                }
            }),
        );
        let target = Target {
            id: live.id.clone(),
            owner: live.owner.clone(),
            live: Some(live),
        };
        (target, track)
    }

    /// [`Self::attach`] on a node of a cluster: the track follows the session's events
    /// from the cluster's stream, from the first time on.
    fn attach_remote(
        self: &Arc<Self>,
        id: &str,
        owner: &str,
        key: &str,
    ) -> (Target, Arc<Mutex<Track>>) {
        let (track, fresh) = {
            let mut tracks = lock(&self.tracks);
            match tracks.get(id) {
                Some(track) => (Arc::clone(track), false),
                None => {
                    let track = Arc::new(Mutex::new(Track::new(key, id)));
                    tracks.insert(id.to_owned(), Arc::clone(&track));
                    (track, true)
                }
            }
        };
        if fresh && let Some(cluster) = self.gateway.cluster() {
            let ready = cluster_feed::follow(self, cluster, id, owner, Arc::clone(&track));
            lock(&self.following).insert(id.to_owned(), ready);
        }
        let target = Target {
            id: id.to_owned(),
            owner: owner.to_owned(),
            live: None,
        };
        (target, track)
    }

    /// Translates one of a session's events for `owner`'s OpenClaw connections.
    fn deliver(&self, owner: &str, track: &Mutex<Track>, event: &LifecycleEvent) {
        let (outgoing, finished, key, session_id) = {
            let mut track = lock(track);
            let (outgoing, finished) = track.translate(event);
            (
                outgoing,
                finished,
                track.key.clone(),
                track.session_id.clone(),
            )
        };
        for event in &outgoing {
            self.broadcast(owner, event);
        }
        if let Some(finished) = finished {
            self.runs.finish(finished, &key, &session_id);
        }
    }

    /// `sessions.list` rows of a principal, newest first.
    fn session_rows(&self, principal: &str) -> Vec<Value> {
        let mut nodes = self.gateway.nodes_of(principal);
        nodes.sort_by_key(|n| std::cmp::Reverse(n.last_active_at));
        nodes
            .iter()
            .map(|node| methods::row(node, node.key.as_deref()))
            .collect()
    }
}

/// The OpenClaw listener of a running gateway.
pub struct OpenClawHandle {
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl OpenClawHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `ws://ADDR`.
    pub fn url(&self) -> String {
        format!("ws://{}", self.addr)
    }
}

impl Drop for OpenClawHandle {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Serves OpenClaw's protocol for `gateway` on `listener` until the gateway closes.
pub fn serve(listener: TcpListener, gateway: Arc<Gateway>) -> std::io::Result<OpenClawHandle> {
    serve_with_ui(listener, gateway, None)
}

/// [`serve`], with OpenClaw's web Control UI served from `control_ui` on plain GETs.
pub fn serve_with_ui(
    listener: TcpListener,
    gateway: Arc<Gateway>,
    control_ui: Option<PathBuf>,
) -> std::io::Result<OpenClawHandle> {
    let addr = listener.local_addr()?;
    let closing = gateway.closing();
    let oc = OpenClaw::new(gateway, control_ui);
    let app = Router::new()
        .route("/", get(upgrade))
        .route("/ws", get(upgrade))
        .fallback(get(page))
        .with_state(oc);
    let task = tokio::spawn(async move {
        let stop = async move { closing.cancelled().await };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(stop)
            .await
        {
            eprintln!("pi-gateway: OpenClaw listener error: {e}");
        }
    });
    Ok(OpenClawHandle { addr, task })
}

async fn upgrade(
    State(oc): State<Arc<OpenClaw>>,
    uri: Uri,
    ws: Result<WebSocketUpgrade, axum::extract::ws::rejection::WebSocketUpgradeRejection>,
) -> Response {
    let Ok(ws) = ws else {
        return page(State(oc), uri).await;
    };
    ws.max_message_size(frames::MAX_PAYLOAD)
        .max_frame_size(frames::MAX_PAYLOAD)
        .read_buffer_size(8 * 1024)
        .on_upgrade(move |socket| conn::run(oc, socket))
}

/// A plain GET: the Control UI when it is served.
async fn page(State(oc): State<Arc<OpenClaw>>, uri: Uri) -> Response {
    match &oc.control_ui {
        Some(root) => control_ui::serve(root.clone(), uri.path().to_owned()).await,
        None => {
            let mut response = Response::new(axum::body::Body::from(
                "pi-gateway: OpenClaw protocol v4 (connect with a WebSocket)",
            ));
            *response.status_mut() = axum::http::StatusCode::NOT_FOUND;
            response
        }
    }
}
