//! The WebSocket server: many AgentSessions behind one socket, each with its own lane,
//! lifecycle events with `seq` and `stateVersion`, replay, principals and the session tree.
//! The protocol is documented in [`protocol`].

pub mod channel_binding;
pub mod client;
mod cluster_conn;
pub mod cluster_hooks;
pub mod conn;
pub mod event_sink;
pub mod feed;
pub mod gateway;
mod gateway_nodes;
pub mod outbox;
pub mod protocol;
pub mod runtime_host;
pub mod secrets;
pub mod session;
pub mod session_ops;
pub mod tree;
pub mod workspaces;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{State, WebSocketUpgrade};
use axum::http::{HeaderMap, Uri};
use axum::response::Response;
use axum::routing::get;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use conn::PreAuth;
pub use gateway::{Gateway, GatewayConfig};
pub use session::{LiveSession, RunOutcome};
pub use tree::SessionNode;

/// A running gateway.
pub struct GatewayHandle {
    addr: SocketAddr,
    gateway: Arc<Gateway>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<()>>,
}

impl GatewayHandle {
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `ws://ADDR/`.
    pub fn url(&self) -> String {
        format!("ws://{}/", self.addr)
    }

    pub fn gateway(&self) -> &Arc<Gateway> {
        &self.gateway
    }

    /// Ends running prompts with `gateway_disconnected`, saves the session tree, closes
    /// the connections and stops the server.
    pub async fn shutdown(mut self) {
        self.gateway.shutdown().await;
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(mut task) = self.task.take()
            && tokio::time::timeout(Duration::from_secs(5), &mut task)
                .await
                .is_err()
        {
            task.abort();
        }
    }
}

impl Drop for GatewayHandle {
    fn drop(&mut self) {
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}

/// Serves the gateway on `listener` until [`GatewayHandle::shutdown`].
pub async fn serve(listener: TcpListener, config: GatewayConfig) -> anyhow::Result<GatewayHandle> {
    let addr = listener.local_addr()?;
    let gateway = Gateway::new(config)?;
    let app = Router::new()
        .route("/", get(upgrade))
        .route("/ws", get(upgrade))
        .route("/health", get(|| async { "ok" }))
        .with_state(Arc::clone(&gateway));
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let signal = async move {
            if stopped.await.is_err() {
                std::future::pending::<()>().await;
            }
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(signal)
            .await
        {
            eprintln!("pi-gateway: server error: {e}");
        }
    });
    Ok(GatewayHandle {
        addr,
        gateway,
        stop: Some(stop),
        task: Some(task),
    })
}

/// Decodes `%XX` escapes and `+` of a query value.
fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3])
                    .ok()
                    .and_then(|h| u8::from_str_radix(h, 16).ok());
                match hex {
                    Some(byte) => {
                        out.push(byte);
                        i += 3;
                    }
                    None => {
                        out.push(b'%');
                        i += 1;
                    }
                }
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            byte => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The token of an upgrade request: `?token=` or `Authorization: Bearer`.
fn request_token(uri: &Uri, headers: &HeaderMap) -> Option<String> {
    let from_query = uri.query().and_then(|query| {
        query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=')?;
            (key == "token").then(|| percent_decode(value))
        })
    });
    from_query.or_else(|| {
        headers
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(|t| t.trim().to_owned())
    })
}

/// The largest frame a client may send (a prompt with images fits; more closes the socket).
const MAX_FRAME_BYTES: usize = 32 * 1024 * 1024;

/// The initial read buffer of a client's socket.
const READ_BUFFER_BYTES: usize = 8 * 1024;

async fn upgrade(
    State(gateway): State<Arc<Gateway>>,
    uri: Uri,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let pre = match request_token(&uri, &headers) {
        None => PreAuth::Missing,
        Some(token) => match gateway.principal(&token) {
            Some(principal) => PreAuth::Principal(principal),
            None => PreAuth::Rejected,
        },
    };
    // tungstenite zero-fills its whole read buffer before each read: at its 128 KiB
    // default that is 128 KiB resident per idle client. Frames longer than this still
    // arrive whole (the buffer grows for them).
    ws.read_buffer_size(READ_BUFFER_BYTES)
        .max_message_size(MAX_FRAME_BYTES)
        .max_frame_size(MAX_FRAME_BYTES)
        .on_upgrade(move |socket| conn::run(gateway, socket, pre))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_come_from_the_query_or_the_header() {
        let uri: Uri = "/ws?x=1&token=a%2Bb%3D".parse().unwrap_or_default();
        assert_eq!(
            request_token(&uri, &HeaderMap::new()).as_deref(),
            Some("a+b=")
        );
        let mut headers = HeaderMap::new();
        headers.insert(
            axum::http::header::AUTHORIZATION,
            axum::http::HeaderValue::from_static("Bearer t1"),
        );
        assert_eq!(
            request_token(&Uri::from_static("/"), &headers).as_deref(),
            Some("t1")
        );
    }
}
