//! The axum app and the [`MockServer`] handle.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::serve::ListenerExt;
use serde_json::json;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

use crate::control;
use crate::recording::{RecordedRequest, StoredRequest};
use crate::respond::respond;
use crate::script::Script;
use crate::state::Shared;
use crate::wire::WireFormat;
use crate::wire::anthropic::Anthropic;
use crate::wire::openai_chat::OpenAiChat;

/// How long [`MockServer::shutdown`] waits for open streams before aborting them.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A running mock server; cloning yields another handle to the same server.
#[derive(Clone, Debug)]
pub struct MockServer {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: Mutex<Option<(oneshot::Sender<()>, JoinHandle<()>)>>,
}

impl MockServer {
    /// Starts a server on `127.0.0.1` with an OS-assigned port.
    pub async fn start() -> std::io::Result<MockServer> {
        MockServer::start_on(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await
    }

    /// Starts a server on `addr`.
    pub async fn start_on(addr: SocketAddr) -> std::io::Result<MockServer> {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let listener = listener.tap_io(|tcp| {
            // Best effort: small writes should leave immediately.
            let _ = tcp.set_nodelay(true);
        });
        let shared = Arc::new(Shared::default());
        let app = router(Arc::clone(&shared));
        let (stop_tx, stop_rx) = oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            let signal = async move {
                // A dropped handle (sender gone) keeps the server running.
                if stop_rx.await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            let _ = axum::serve(listener, app)
                .with_graceful_shutdown(signal)
                .await;
        });
        let stop = Mutex::new(Some((stop_tx, task)));
        Ok(MockServer {
            inner: Arc::new(Inner { addr, shared, stop }),
        })
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.inner.addr
    }

    /// Base URL, e.g. `http://127.0.0.1:PORT` (no trailing slash).
    pub fn url(&self) -> String {
        format!("http://{}", self.inner.addr)
    }

    /// Base URL for OpenAI clients: `url() + "/v1"`.
    pub fn openai_base_url(&self) -> String {
        format!("{}/v1", self.url())
    }

    /// Base URL for Anthropic clients (they append `/v1/messages`).
    pub fn anthropic_base_url(&self) -> String {
        self.url()
    }

    /// Enqueues one scripted response (FIFO shared by all endpoints).
    pub fn push(&self, response: Script) {
        self.inner.shared.push_all([response]);
    }

    /// Enqueues several scripted responses in order.
    pub fn push_all(&self, responses: impl IntoIterator<Item = Script>) {
        self.inner.shared.push_all(responses);
    }

    /// Every provider request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.inner.shared.requests()
    }

    /// Forgets recorded requests.
    pub fn clear_requests(&self) {
        self.inner.shared.clear_requests();
    }

    /// Drops the scripts still queued (later requests get the default reply).
    pub fn clear_queue(&self) {
        self.inner.shared.clear_queue();
    }

    /// Sets up the stand-in llama.cpp router (its models, load time, hub repositories).
    pub fn set_llama(&self, settings: crate::LlamaSettings) {
        self.inner.shared.llama.set(settings);
    }

    /// Replaces the llama.cpp router's model list (its settings and calls stay).
    pub fn set_llama_models(&self, models: Vec<serde_json::Value>) {
        self.inner.shared.llama.set_models(models);
    }

    /// The llama.cpp router calls so far: `"POST /models/load <id>"`, `"GET /models"`, …
    pub fn llama_calls(&self) -> Vec<String> {
        self.inner.shared.llama.calls()
    }

    /// The classification requests the llama.cpp stand-in got: `{"path", "body"}`.
    pub fn llama_requests(&self) -> Vec<serde_json::Value> {
        self.inner.shared.llama.requests()
    }

    /// The llama.cpp router's models as it lists them now.
    pub fn llama_models(&self) -> Vec<serde_json::Value> {
        self.inner.shared.llama.models()
    }

    /// Turns the Codex Responses WebSocket on or off (off by default: upgrades get 404).
    pub fn set_codex_websocket(&self, settings: crate::CodexWebSocket) {
        self.inner.shared.set_codex_websocket(settings);
    }

    /// Number of scripts still queued.
    pub fn pending(&self) -> usize {
        self.inner.shared.pending()
    }

    /// Stops accepting connections and waits (bounded) for open responses to finish.
    pub async fn shutdown(self) {
        let stop = self
            .inner
            .stop
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        if let Some((stop_tx, mut task)) = stop {
            let _ = stop_tx.send(());
            if tokio::time::timeout(SHUTDOWN_GRACE, &mut task)
                .await
                .is_err()
            {
                task.abort();
            }
        }
    }
}

/// Builds the axum router with provider and control endpoints.
pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(openai_chat))
        .route("/chat/completions", post(openai_chat))
        .route("/v1/messages", post(anthropic))
        .route("/messages", post(anthropic))
        .route("/_mock/scripts", post(control::push_scripts))
        .route(
            "/_mock/requests",
            get(control::list_requests).delete(control::clear_requests),
        )
        .route("/_mock/reset", post(control::reset))
        .route("/_mock/health", get(control::health))
        .merge(crate::oauth::routes())
        .merge(crate::llama_router::routes())
        .fallback(not_found)
        .layer(DefaultBodyLimit::disable())
        .with_state(shared)
}

async fn openai_chat(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    provider(&OpenAiChat, &shared, request).await
}

async fn anthropic(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    provider(&Anthropic, &shared, request).await
}

/// Records the request, takes the next script (or the default reply) and answers.
async fn provider(wire: &dyn WireFormat, shared: &Shared, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let raw = match read_body(&parts.headers, body).await {
        Ok(raw) => raw,
        Err(err) => return (StatusCode::BAD_REQUEST, err.to_string()).into_response(),
    };
    // A zstd body (pi 1.6.0's Codex client) is answered from what it says.
    let zstd = parts
        .headers
        .get(axum::http::header::CONTENT_ENCODING)
        .is_some_and(|v| v.as_bytes() == b"zstd");
    let json = match zstd.then(|| crate::recording::zstd_decoded(&raw)).flatten() {
        Some(decoded) => crate::request_view::slim_request(&decoded),
        None => crate::request_view::slim_request(&raw),
    };
    shared.record(StoredRequest::new(
        &parts.method,
        &parts.uri,
        &parts.headers,
        raw.clone(),
    ));
    let script = shared.pop().unwrap_or_else(|| wire.default_reply(&json));
    if let Some(crate::script::Fault::DelayHeaders { ms }) = &script.fault {
        tokio::time::sleep(Duration::from_millis(*ms)).await;
    }
    respond(wire, &script, &json, raw.len(), shared)
}

/// A request body, gathered into one buffer of its announced length as it arrives (no
/// second copy once the last byte is in).
async fn read_body(
    headers: &axum::http::HeaderMap,
    body: axum::body::Body,
) -> Result<bytes::Bytes, axum::Error> {
    use futures_util::StreamExt;
    let announced = headers
        .get(axum::http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut out = Vec::with_capacity(announced.min(1 << 30));
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        out.extend_from_slice(&chunk?);
    }
    Ok(out.into())
}

/// Paths matched by suffix go to their wire format ([`crate::wire::for_path`]); other
/// routes are recorded (to ease debugging of wrong base URLs) and answered 404.
async fn not_found(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    if request.method() == axum::http::Method::POST
        && let Some(wire) = crate::wire::for_path(request.uri().path())
    {
        return provider(wire, &shared, request).await;
    }
    let (parts, body) = request.into_parts();
    if crate::websocket::wants(&shared, &parts) {
        return crate::websocket::upgrade(shared, parts).await;
    }
    let raw = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    shared.record(StoredRequest::new(
        &parts.method,
        &parts.uri,
        &parts.headers,
        raw,
    ));
    let message = format!(
        "mock-llm: no route for {} {}",
        parts.method,
        parts.uri.path()
    );
    (
        StatusCode::NOT_FOUND,
        axum::Json(json!({ "error": { "message": message } })),
    )
        .into_response()
}
