//! A stand-in for "Sign in with ChatGPT" (the `openai` provider): the authorization page
//! registers a client for the agent and redirects with a code, the state and the issued
//! `client_id`; the token endpoint trades the code (PKCE) for tokens that carry the
//! `chatgpt.tokens.use.direct` scope, and refreshes them for that client.

use std::collections::HashMap;
use std::sync::Arc;

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::Value;

use crate::oauth::{oauth_error, params_of};
use crate::state::Shared;

const SCOPE: &str = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
const RESOURCE: &str = "https://api.openai.com/v1";

/// The ChatGPT sign-in routes, merged into the OAuth stand-in's router.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/auth.openai.com/api/accounts/authorize", get(authorize))
        .route("/auth.openai.com/api/accounts/oauth/token", post(token))
}

async fn authorize(State(shared): State<Arc<Shared>>, uri: Uri) -> Response {
    let params: HashMap<String, String> =
        form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let get = |k: &str| params.get(k).cloned().unwrap_or_default();
    let host_id = get("ext_agent_host_id");
    let valid = get("client_id") == "dynamic_agent_client"
        && host_id.starts_with("urn:uuid:")
        && get("resource") == RESOURCE
        && get("scope") == SCOPE
        && get("code_challenge_method") == "S256"
        && !get("state").is_empty()
        && !get("nonce").is_empty();
    if !valid {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "agent registration parameters are missing",
        );
    }
    let redirect_uri = get("redirect_uri");
    let code = shared
        .oauth
        .grant_code(&get("code_challenge"), &redirect_uri);
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("code", &code)
        .append_pair("state", &get("state"))
        .append_pair("client_id", "app_mock_agent")
        .finish();
    (
        StatusCode::FOUND,
        [(header::LOCATION, format!("{redirect_uri}?{query}"))],
    )
        .into_response()
}

async fn token(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let params = params_of(&headers, &body);
    let get = |k: &str| params.get(k).map(String::as_str).unwrap_or_default();
    if get("client_id") != "app_mock_agent" || get("resource") != RESOURCE {
        return oauth_error(StatusCode::BAD_REQUEST, "invalid_client", "Unknown client");
    }
    let login = get("grant_type") == "authorization_code";
    let tokens = if login {
        if let Err(reason) =
            shared
                .oauth
                .redeem_code(get("code"), get("code_verifier"), Some(get("redirect_uri")))
        {
            return oauth_error(StatusCode::BAD_REQUEST, "invalid_grant", reason);
        }
        shared.oauth.issue_tokens("openai", None)
    } else if get("grant_type") == "refresh_token" {
        shared
            .oauth
            .issue_tokens("openai", Some(get("refresh_token")))
    } else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
            "Unsupported grant_type",
        );
    };
    let Some(mut tokens) = tokens else {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_grant",
            "Refresh token is invalid, used or revoked",
        );
    };
    tokens["scope"] = Value::from(SCOPE);
    if login {
        tokens["id_token"] = Value::from("mock.id.token");
    }
    Json(tokens).into_response()
}
