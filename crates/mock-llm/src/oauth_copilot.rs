//! A stand-in for the GitHub Copilot API a sign-in talks to after the Copilot token
//! (reached as `/api.individual.githubcopilot.com/...` with `PI_OAUTH_BASE_URL`): the
//! account's model list and each model's policy. `POST /_mock/copilot` makes the next
//! `modelsRateLimits` list requests and `policyRateLimits` policy requests answer 429 with
//! `retry-after: <retryAfter>` (left out when `null`), and `pickerOff` lists every model
//! with `model_picker_enabled: false`; `GET /_mock/copilot` tells each call
//! (path, status, milliseconds since the epoch) and the most policy requests in flight at once.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::state::Shared;

const API: &str = "/api.individual.githubcopilot.com";

/// What the Copilot stand-in was told and saw.
#[derive(Debug, Default)]
pub(crate) struct CopilotState {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    models_rate_limits: u32,
    policy_rate_limits: u32,
    retry_after: Option<String>,
    /// The account's list enables no model in the picker (policy-only answers).
    picker_off: bool,
    calls: Vec<Value>,
    in_flight: u32,
    max_in_flight: u32,
}

impl CopilotState {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

/// The Copilot routes, merged into the OAuth stand-in's router.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route(&format!("{API}/models"), get(models))
        .route(&format!("{API}/models/{{id}}/policy"), post(policy))
        .route("/_mock/copilot", get(status).post(configure))
}

/// A 429 with the configured `retry-after`, when one is still owed.
fn rate_limited(inner: &mut Inner, path: String, owed: bool) -> Option<Response> {
    let status = if owed { 429 } else { 200 };
    inner
        .calls
        .push(json!({"path": path, "status": status, "atMs": now_ms()}));
    if !owed {
        return None;
    }
    let body = Json(json!({"message": "API rate limit exceeded"}));
    Some(match inner.retry_after.clone() {
        Some(after) => (
            StatusCode::TOO_MANY_REQUESTS,
            [("retry-after", after)],
            body,
        )
            .into_response(),
        None => (StatusCode::TOO_MANY_REQUESTS, body).into_response(),
    })
}

/// The account's models: three to accept, one on, one off, one without tool calls.
async fn models(State(shared): State<Arc<Shared>>) -> Response {
    let mut inner = shared.copilot.lock();
    let owed = inner.models_rate_limits > 0;
    inner.models_rate_limits = inner.models_rate_limits.saturating_sub(1);
    if let Some(refused) = rate_limited(&mut inner, "/models".into(), owed) {
        return refused;
    }
    let picker = !inner.picker_off;
    let model = |id: &str, state: &str| json!({"id": id, "model_picker_enabled": picker, "policy": {"state": state}});
    Json(json!({"data": [
        model("claude-sonnet-5", "unconfigured"),
        model("claude-opus-5", "unconfigured"),
        model("gemini-4-argon", "unconfigured"),
        model("gpt-6.2-sol", "enabled"),
        model("grok-4.7", "disabled"),
        {"id": "text-embedding-3-small", "model_picker_enabled": true,
         "capabilities": {"supports": {"tool_calls": false}}},
    ]}))
    .into_response()
}

/// Accepts a model's policy after a short pause (so overlapping requests would show).
async fn policy(State(shared): State<Arc<Shared>>, Path(id): Path<String>) -> Response {
    {
        let mut inner = shared.copilot.lock();
        let owed = inner.policy_rate_limits > 0;
        inner.policy_rate_limits = inner.policy_rate_limits.saturating_sub(1);
        if let Some(refused) = rate_limited(&mut inner, format!("/models/{id}/policy"), owed) {
            return refused;
        }
        inner.in_flight += 1;
        inner.max_in_flight = inner.max_in_flight.max(inner.in_flight);
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    shared.copilot.lock().in_flight -= 1;
    Json(json!({"state": "enabled"})).into_response()
}

async fn status(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let inner = shared.copilot.lock();
    Json(json!({"calls": inner.calls, "maxInFlight": inner.max_in_flight}))
}

async fn configure(State(shared): State<Arc<Shared>>, body: Bytes) -> StatusCode {
    let value: Value = serde_json::from_slice(&body).unwrap_or_default();
    let mut inner = shared.copilot.lock();
    let count = |k: &str| value[k].as_u64().unwrap_or(0) as u32;
    inner.models_rate_limits = count("modelsRateLimits");
    inner.policy_rate_limits = count("policyRateLimits");
    inner.retry_after = value["retryAfter"].as_str().map(str::to_owned);
    inner.picker_off = value["pickerOff"] == json!(true);
    StatusCode::NO_CONTENT
}
