//! Stand-ins for the RFC 8628 device sign-ins of xAI (`auth.x.ai`), Kimi Code
//! (`auth.kimi.com`) and Meta (`auth.meta.com`, whose identity token then mints Model API
//! keys at `api.meta.ai`): a device code, token polls answered `authorization_pending` until
//! the user "approves", and refresh tokens that rotate. Counted with the other sign-ins.

use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::json;

use crate::oauth::{oauth_error, params_of};
use crate::state::Shared;

const DEVICE_GRANT: &str = "urn:ietf:params:oauth:grant-type:device_code";

/// The device-flow routes, merged into the OAuth stand-in's router.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/auth.x.ai/oauth2/device/code", post(device_code))
        .route("/auth.x.ai/oauth2/token", post(token))
        .route(
            "/auth.kimi.com/api/oauth/device_authorization",
            post(device_code),
        )
        .route("/auth.kimi.com/api/oauth/token", post(token))
        .route(
            "/auth.meta.com/oidc/device/authorization/",
            post(device_code),
        )
        .route("/auth.meta.com/oidc/device/token/", post(token))
        .route("/api.meta.ai/muse-code/key", post(meta_key))
}

/// Which sign-in server a path belongs to, and the client id pi must send it.
fn server_of(uri: &Uri) -> (&'static str, &'static str) {
    if uri.path().starts_with("/auth.x.ai") {
        ("xai", "b1a00492-073a-47ea-816f-4c329264a828")
    } else if uri.path().starts_with("/auth.meta.com") {
        ("meta", "1031625952748946")
    } else {
        ("kimi", "17e5f671-d194-4dfb-9706-5516cb48c098")
    }
}

async fn device_code(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (server, client_id) = server_of(&uri);
    let params = params_of(&headers, &body);
    if params.get("client_id").map(String::as_str) != Some(client_id) {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_client", "Unknown client");
    }
    if server == "xai"
        && !params
            .get("scope")
            .is_some_and(|s| s.split(' ').any(|w| w == "offline_access"))
    {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_scope",
            "offline_access is required",
        );
    }
    let n = shared.oauth.next_seq();
    let device_code = format!("device-{server}-{n}");
    shared.oauth.device_issued(&device_code);
    let page = match server {
        "xai" => "https://accounts.x.ai/device",
        "meta" => "https://auth.meta.com/device",
        _ => "https://www.kimi.com/code/authorize_device",
    };
    Json(json!({
        "device_code": device_code,
        "user_code": "WXYZ-5678",
        "verification_uri": page,
        "verification_uri_complete": format!("{page}?user_code=WXYZ-5678"),
        "interval": 1,
        "expires_in": 900,
    }))
    .into_response()
}

async fn token(
    State(shared): State<Arc<Shared>>,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let (server, client_id) = server_of(&uri);
    let params = params_of(&headers, &body);
    let get = |k: &str| params.get(k).map(String::as_str).unwrap_or_default();
    if get("client_id") != client_id {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_client", "Unknown client");
    }
    let tokens = match get("grant_type") {
        DEVICE_GRANT => {
            let device = get("device_code");
            if !device.starts_with(&format!("device-{server}-")) {
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "Unknown device code",
                );
            }
            if let Some(refusal) = shared
                .oauth
                .device_poll(device)
                .refusal(StatusCode::BAD_REQUEST)
            {
                return refusal;
            }
            if server == "meta" {
                let identity = shared.oauth.issue_identity(server);
                return Json(json!({"access_token": identity, "token_type": "Bearer"}))
                    .into_response();
            }
            shared.oauth.issue_tokens(server, None)
        }
        "refresh_token" => shared
            .oauth
            .issue_tokens(server, Some(get("refresh_token"))),
        _ => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "Unsupported grant_type",
            );
        }
    };
    if tokens.is_some() && get("grant_type") == "refresh_token" {
        tokio::time::sleep(shared.oauth.refresh_reply_delay()).await;
    }
    match tokens {
        Some(tokens) => Json(tokens).into_response(),
        None => oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "Refresh token is invalid, used or revoked",
        ),
    }
}

/// Meta's Model API key mint: the identity token as the bearer, `{}` as the body.
async fn meta_key(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let identity = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if headers.get("x-api-version").and_then(|v| v.to_str().ok()) != Some("1.0.0") {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "x-api-version is required",
        );
    }
    match shared.oauth.mint_key(identity, "meta-mock-key") {
        Some(key) => Json(json!({"api_key": key})).into_response(),
        None => (
            StatusCode::UNAUTHORIZED,
            Json(json!({"detail": "Identity token expired or revoked"})),
        )
            .into_response(),
    }
}
