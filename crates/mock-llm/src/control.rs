//! Control endpoints under `/_mock/`: enqueue scripts, inspect and reset state.

use std::sync::Arc;

use axum::Json;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::recording::RecordedRequest;
use crate::script::Script;
use crate::state::Shared;

/// `POST /_mock/scripts`: enqueue one Script object or an array of Scripts.
pub(crate) async fn push_scripts(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let parsed = serde_json::from_slice(&body)
        .map_err(crate::MockError::InvalidScript)
        .and_then(Script::from_value_many);
    match parsed {
        Ok(scripts) => {
            let queued = scripts.len();
            shared.push_all(scripts);
            Json(json!({ "queued": queued, "pending": shared.pending() })).into_response()
        }
        Err(err) => (
            StatusCode::BAD_REQUEST,
            Json(json!({ "error": err.to_string() })),
        )
            .into_response(),
    }
}

/// `GET /_mock/requests`: every recorded request, in order.
pub(crate) async fn list_requests(State(shared): State<Arc<Shared>>) -> Json<Vec<RecordedRequest>> {
    Json(shared.requests())
}

/// `DELETE /_mock/requests`: forget recorded requests.
pub(crate) async fn clear_requests(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.clear_requests();
    StatusCode::NO_CONTENT
}

/// `POST /_mock/reset`: clear the script queue and recorded requests.
pub(crate) async fn reset(State(shared): State<Arc<Shared>>) -> StatusCode {
    shared.clear_queue();
    shared.clear_requests();
    StatusCode::NO_CONTENT
}

/// `GET /_mock/health`: liveness probe.
pub(crate) async fn health() -> &'static str {
    "ok"
}
