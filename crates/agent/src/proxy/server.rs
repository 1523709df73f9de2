//! The server side: an axum router whose `POST /api/stream` runs pi-ai with the server's
//! keys and streams proxy events as SSE.

use std::convert::Infallible;
use std::sync::Arc;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use futures_util::StreamExt;

use super::event::{ProxyRequest, to_proxy_event};

/// Resolves the API key for a provider on the server (default: its environment variable).
pub type KeyResolver = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Who may use the proxy and with which keys.
#[derive(Clone)]
pub struct ProxyServerConfig {
    /// Clients must send `Authorization: Bearer <auth_token>`.
    pub auth_token: String,
    pub keys: KeyResolver,
}

impl ProxyServerConfig {
    /// Accepts `auth_token`; keys come from the environment.
    pub fn new(auth_token: impl Into<String>) -> Self {
        Self {
            auth_token: auth_token.into(),
            keys: Arc::new(pi_ai::get_env_api_key),
        }
    }
}

fn json_error(status: StatusCode, message: &str) -> Response {
    let body = serde_json::json!({ "error": message }).to_string();
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

async fn stream(
    State(config): State<Arc<ProxyServerConfig>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorized = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .is_some_and(|token| token == config.auth_token);
    if !authorized {
        return json_error(StatusCode::UNAUTHORIZED, "Unauthorized");
    }
    let request: ProxyRequest = match serde_json::from_slice(&body) {
        Ok(request) => request,
        Err(e) => return json_error(StatusCode::BAD_REQUEST, &format!("Invalid request: {e}")),
    };
    let mut options = request.options.into_simple();
    options.stream.api_key = (config.keys)(&request.model.provider);
    let events = pi_ai::stream_simple(&request.model, &request.context, options);
    let frames = events.map(|event| {
        let json = serde_json::to_string(&to_proxy_event(&event)).unwrap_or_else(|_| "{}".into());
        Ok::<_, Infallible>(Bytes::from(format!("data: {json}\n\n")))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(frames))
        .unwrap_or_else(|_| {
            json_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Could not build the response",
            )
        })
}

/// The proxy router (`POST /api/stream`).
pub fn router(config: ProxyServerConfig) -> Router {
    Router::new()
        .route("/api/stream", post(stream))
        .with_state(Arc::new(config))
}
