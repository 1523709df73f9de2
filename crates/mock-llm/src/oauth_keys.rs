//! A stand-in for OpenRouter's sign-in, which mints an API key: the authorization page
//! redirects to pi's `callback_url` with a code at once, and `/api/v1/auth/keys` trades the
//! code and its PKCE verifier for a key.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::state::Shared;

/// The OpenRouter routes, merged into the OAuth stand-in's router.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/openrouter.ai/auth", get(authorize))
        .route("/openrouter.ai/api/v1/auth/keys", post(keys))
}

fn refused(status: StatusCode, message: &str) -> Response {
    (
        status,
        Json(json!({"error": {"message": message, "code": status.as_u16()}})),
    )
        .into_response()
}

async fn authorize(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    let params: HashMap<String, String> =
        form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let get = |k: &str| params.get(k).cloned().unwrap_or_default();
    let (callback, challenge) = (get("callback_url"), get("code_challenge"));
    if callback.is_empty() || challenge.is_empty() || get("code_challenge_method") != "S256" {
        return refused(
            StatusCode::BAD_REQUEST,
            "callback_url and a PKCE S256 challenge are required",
        );
    }
    let code = shared.oauth.grant_code(&challenge, &callback);
    let separator = if callback.contains('?') { '&' } else { '?' };
    (
        StatusCode::FOUND,
        [(
            header::LOCATION,
            format!("{callback}{separator}code={code}"),
        )],
    )
        .into_response()
}

async fn keys(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let text = |k: &str| body[k].as_str().unwrap_or_default().to_owned();
    if text("code_challenge_method") != "S256" {
        return refused(
            StatusCode::BAD_REQUEST,
            "code_challenge_method must be S256",
        );
    }
    match shared
        .oauth
        .redeem_for_key(&text("code"), &text("code_verifier"))
    {
        Ok(key) => Json(json!({"key": key, "user_id": "user_mock"})).into_response(),
        Err(reason) => refused(StatusCode::FORBIDDEN, reason),
    }
}
