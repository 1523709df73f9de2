//! A stand-in for Anthropic's workload identity token endpoint (`POST /v1/oauth/token` at
//! the API's base URL): it records the exchange like a model request, checks the JWT-bearer
//! grant and the federation beta, and answers with a numbered access token living
//! `accessTtlSecs` (`POST /_mock/oauth`). The identity token `refused` is turned down with a
//! 401, as the real endpoint turns down a token its federation rule does not match.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::extract::Request;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

use crate::oauth::oauth_error;
use crate::recording::StoredRequest;
use crate::state::Shared;

const JWT_BEARER: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const FEDERATION_BETA: &str = "oidc-federation-2026-04-01";

/// The token endpoint's route, merged into the OAuth stand-in's router.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/v1/oauth/token", post(exchange))
}

async fn exchange(State(shared): State<Arc<Shared>>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let raw = axum::body::to_bytes(body, usize::MAX)
        .await
        .unwrap_or_default();
    shared.record(StoredRequest::new(
        &parts.method,
        &parts.uri,
        &parts.headers,
        raw.clone(),
    ));
    let body: Value = serde_json::from_slice(&raw).unwrap_or_default();
    let text = |k: &str| body[k].as_str().unwrap_or_default().to_owned();
    let beta = parts
        .headers
        .get("anthropic-beta")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let complete = text("grant_type") == JWT_BEARER
        && ["assertion", "federation_rule_id", "organization_id"]
            .iter()
            .all(|k| !text(k).is_empty());
    if !complete || !beta.split(',').any(|b| b.trim() == FEDERATION_BETA) {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "a JWT-bearer grant with the federation beta is required",
        );
    }
    if text("assertion") == "refused" {
        return oauth_error(
            StatusCode::UNAUTHORIZED,
            "invalid_grant",
            "the identity token does not match the federation rule",
        );
    }
    let n = shared.oauth.next_seq();
    Json(json!({
        "access_token": format!("wif-access-{n}"),
        "token_type": "Bearer",
        "expires_in": shared.oauth.access_ttl_secs(),
    }))
    .into_response()
}
