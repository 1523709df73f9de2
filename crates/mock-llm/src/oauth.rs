//! A stand-in for the sign-in servers of Anthropic, OpenAI, GitHub, Google, xAI, Kimi, Meta
//! and OpenRouter, reached by pi with `PI_OAUTH_BASE_URL=<mock>` (each real host becomes the
//! first path segment).
//! It checks PKCE, redirect URIs and states, runs device flows, rotates refresh tokens
//! (a used or revoked one is refused with `invalid_grant`) and counts what it did.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Json;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::state::Shared;

/// The Anthropic page that shows the code for a headless sign-in.
const ANTHROPIC_COPY_CODE: &str = "https://platform.claude.com/oauth/code/callback";
const CODEX_DEVICE_REDIRECT: &str = "https://auth.openai.com/deviceauth/callback";

/// Settings the tests change through `POST /_mock/oauth`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct OAuthSettings {
    /// Lifetime of issued access tokens in seconds (pi keeps 5 minutes in hand, so a
    /// value under 300 makes every token "expired" at once).
    pub access_ttl_secs: i64,
    /// A delay before each token reply, to widen races between processes.
    pub token_delay_ms: u64,
    /// Device-flow polls answered "pending" before approval (after the `slow_down` ones).
    pub pending_polls: u32,
    /// Device-flow polls answered `slow_down` first, naming `slowDownInterval` seconds as
    /// the new interval (or none when it is `null`).
    pub slow_down_polls: u32,
    pub slow_down_interval: Option<f64>,
    /// A delay after a refresh was granted (the old refresh token is spent) and before its
    /// reply, as when a reply is lost: pi must still save what the server issued.
    pub refresh_reply_delay_ms: u64,
}

impl Default for OAuthSettings {
    fn default() -> Self {
        Self {
            access_ttl_secs: 3600,
            token_delay_ms: 0,
            pending_polls: 1,
            slow_down_polls: 0,
            slow_down_interval: None,
            refresh_reply_delay_ms: 0,
        }
    }
}

#[derive(Debug, Clone)]
struct Grant {
    challenge: String,
    redirect_uri: String,
    client_id: String,
}

/// What the server issued and counted.
#[derive(Debug, Default)]
pub(crate) struct OAuthState {
    inner: Mutex<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    settings: OAuthSettings,
    seq: u64,
    grants: HashMap<String, Grant>,
    /// Refresh token → host it belongs to; removed when used or revoked.
    refresh_tokens: HashMap<String, String>,
    /// GitHub tokens still valid.
    github_tokens: Vec<String>,
    /// Identity tokens (Meta's device sign-in) still valid.
    identity_tokens: Vec<String>,
    device_polls: HashMap<String, u32>,
    /// Each device code issued and each poll of one, with its time, in order.
    device_events: Vec<Value>,
    logins: u64,
    refreshes: u64,
    refused: u64,
    issued: Vec<String>,
}

impl OAuthState {
    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// How long a granted refresh waits before its reply (`refreshReplyDelayMs`).
    pub(crate) fn refresh_reply_delay(&self) -> Duration {
        Duration::from_millis(self.lock().settings.refresh_reply_delay_ms)
    }

    /// Counts a poll of a device code and answers it: `slow_down` for the first
    /// `slowDownPolls`, then pending for `pendingPolls`, then approved.
    pub(crate) fn device_poll(&self, device_code: &str) -> DevicePoll {
        let mut inner = self.lock();
        inner
            .device_events
            .push(json!({"poll": device_code, "atMs": now_ms()}));
        let settings = inner.settings.clone();
        let polls = inner
            .device_polls
            .entry(device_code.to_owned())
            .or_default();
        *polls += 1;
        if *polls <= settings.slow_down_polls {
            DevicePoll::SlowDown(settings.slow_down_interval)
        } else if *polls <= settings.slow_down_polls + settings.pending_polls {
            DevicePoll::Pending
        } else {
            DevicePoll::Approved
        }
    }

    /// Records that a device code was issued (the start of its polling).
    pub(crate) fn device_issued(&self, device_code: &str) {
        self.lock()
            .device_events
            .push(json!({"issued": device_code, "atMs": now_ms()}));
    }

    /// Records an authorization for `redirect_uri` with a PKCE challenge; its code.
    pub(crate) fn grant_code(&self, challenge: &str, redirect_uri: &str) -> String {
        let mut inner = self.lock();
        inner.seq += 1;
        let code = format!("code-{}", inner.seq);
        inner.grants.insert(
            code.clone(),
            Grant {
                challenge: challenge.to_owned(),
                redirect_uri: redirect_uri.to_owned(),
                client_id: String::new(),
            },
        );
        code
    }

    /// Uses up `code` when `verifier` matches its challenge; a sign-in is counted and an
    /// API key issued (`sk-or-v1-mock-N`). `Err` carries why the code was refused.
    pub(crate) fn redeem_for_key(
        &self,
        code: &str,
        verifier: &str,
    ) -> Result<String, &'static str> {
        self.redeem_code(code, verifier, None)?;
        let mut inner = self.lock();
        inner.logins += 1;
        inner.seq += 1;
        let key = format!("sk-or-v1-mock-{}", inner.seq);
        inner.issued.push(key.clone());
        Ok(key)
    }

    /// Uses up `code` when `verifier` matches its challenge (and `redirect_uri`, when
    /// given, the one it was granted for); `Err` carries why it was refused.
    pub(crate) fn redeem_code(
        &self,
        code: &str,
        verifier: &str,
        redirect_uri: Option<&str>,
    ) -> Result<(), &'static str> {
        let mut inner = self.lock();
        let Some(grant) = inner.grants.remove(code) else {
            inner.refused += 1;
            return Err("Unknown or used authorization code");
        };
        if challenge_of(verifier) != grant.challenge {
            inner.refused += 1;
            return Err("PKCE verification failed");
        }
        if redirect_uri.is_some_and(|uri| uri != grant.redirect_uri) {
            inner.refused += 1;
            return Err("redirect_uri does not match");
        }
        Ok(())
    }

    /// A sign-in that yields only an identity token (Meta's device flow): counted, and
    /// valid until revoked.
    pub(crate) fn issue_identity(&self, host: &str) -> String {
        let mut inner = self.lock();
        inner.logins += 1;
        inner.seq += 1;
        let token = format!("{host}-identity-{}", inner.seq);
        inner.identity_tokens.push(token.clone());
        token
    }

    /// An API key minted with a valid identity token (`None`: unknown or revoked); every
    /// mint after the sign-in's first counts as a refresh.
    pub(crate) fn mint_key(&self, identity: &str, prefix: &str) -> Option<String> {
        let mut inner = self.lock();
        if !inner.identity_tokens.iter().any(|t| t == identity) {
            inner.refused += 1;
            return None;
        }
        inner.seq += 1;
        let key = format!("{prefix}-{}", inner.seq);
        if inner.issued.iter().any(|k| k.starts_with(prefix)) {
            inner.refreshes += 1;
        }
        inner.issued.push(key.clone());
        Some(key)
    }

    /// A fresh number for codes and tokens.
    /// The lifetime of issued access tokens, in seconds.
    pub(crate) fn access_ttl_secs(&self) -> i64 {
        self.lock().settings.access_ttl_secs
    }

    pub(crate) fn next_seq(&self) -> u64 {
        let mut inner = self.lock();
        inner.seq += 1;
        inner.seq
    }

    /// Issues tokens for `host` after a sign-in (`refresh: None`) or in exchange for a
    /// refresh token, which is used up; `None` when that token is unknown, used or revoked.
    pub(crate) fn issue_tokens(&self, host: &str, refresh: Option<&str>) -> Option<Value> {
        let mut inner = self.lock();
        match refresh {
            Some(token) => {
                if inner.refresh_tokens.remove(token).is_none() {
                    inner.refused += 1;
                    return None;
                }
                inner.refreshes += 1;
            }
            None => inner.logins += 1,
        }
        let access = access_token(&mut inner, host);
        inner.seq += 1;
        let refresh = format!("mock-refresh-{}", inner.seq);
        inner
            .refresh_tokens
            .insert(refresh.clone(), host.to_owned());
        Some(json!({
            "access_token": access,
            "refresh_token": refresh,
            "expires_in": inner.settings.access_ttl_secs,
            "token_type": "Bearer",
        }))
    }
}

/// How a device-code poll is answered.
pub(crate) enum DevicePoll {
    /// Poll less often; the new interval in seconds, when the server names one.
    SlowDown(Option<f64>),
    Pending,
    Approved,
}

impl DevicePoll {
    /// The OAuth error reply of a poll that is not approved yet (`None` once it is), with
    /// `status` as the HTTP status.
    pub(crate) fn refusal(&self, status: StatusCode) -> Option<Response> {
        match self {
            DevicePoll::SlowDown(interval) => {
                let mut body =
                    json!({"error": "slow_down", "error_description": "Polling too fast"});
                if let Some(interval) = interval {
                    body["interval"] = json!(interval);
                }
                Some((status, Json(body)).into_response())
            }
            DevicePoll::Pending => Some(oauth_error(
                status,
                "authorization_pending",
                "The user has not approved the device yet",
            )),
            DevicePoll::Approved => None,
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or_default()
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

fn challenge_of(verifier: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, verifier.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// The OAuth routes, merged into the mock's router.
pub(crate) fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/claude.ai/oauth/authorize", get(authorize))
        .route("/auth.openai.com/oauth/authorize", get(authorize))
        .route("/accounts.google.com/o/oauth2/v2/auth", get(authorize))
        .route("/platform.claude.com/v1/oauth/token", post(token))
        .route("/auth.openai.com/oauth/token", post(token))
        .route("/oauth2.googleapis.com/token", post(token))
        .route(
            "/auth.openai.com/api/accounts/deviceauth/usercode",
            post(codex_user_code),
        )
        .route(
            "/auth.openai.com/api/accounts/deviceauth/token",
            post(codex_device_token),
        )
        .route("/github.com/login/device/code", post(github_device_code))
        .route(
            "/github.com/login/oauth/access_token",
            post(github_access_token),
        )
        .route(
            "/api.github.com/copilot_internal/v2/token",
            get(copilot_token),
        )
        .route(
            "/www.googleapis.com/oauth2/v1/userinfo",
            get(google_userinfo),
        )
        .route(
            "/cloudcode-pa.googleapis.com/v1internal:loadCodeAssist",
            post(load_code_assist),
        )
        .route("/_mock/oauth", get(status).post(configure))
        .merge(crate::oauth_device::routes())
        .merge(crate::oauth_keys::routes())
        .merge(crate::oauth_federation::routes())
        .merge(crate::oauth_copilot::routes())
        .merge(crate::oauth_chatgpt::routes())
}

pub(crate) fn oauth_error(status: StatusCode, code: &str, description: &str) -> Response {
    (
        status,
        Json(json!({ "error": code, "error_description": description })),
    )
        .into_response()
}

/// The authorization page: it "signs the user in" at once and redirects back with a code
/// (or, for Anthropic's copy-code sign-in, shows `code#state`).
async fn authorize(State(shared): State<Arc<Shared>>, uri: axum::http::Uri) -> Response {
    let params: HashMap<String, String> =
        form_urlencoded::parse(uri.query().unwrap_or_default().as_bytes())
            .into_owned()
            .collect();
    let get = |k: &str| params.get(k).cloned().unwrap_or_default();
    let (redirect_uri, state, challenge) =
        (get("redirect_uri"), get("state"), get("code_challenge"));
    if redirect_uri.is_empty() || challenge.is_empty() || get("code_challenge_method") != "S256" {
        return oauth_error(
            StatusCode::BAD_REQUEST,
            "invalid_request",
            "PKCE S256 and a redirect_uri are required",
        );
    }
    let code = {
        let mut inner = shared.oauth.lock();
        inner.seq += 1;
        let code = format!("code-{}", inner.seq);
        inner.grants.insert(
            code.clone(),
            Grant {
                challenge,
                redirect_uri: redirect_uri.clone(),
                client_id: get("client_id"),
            },
        );
        code
    };
    if redirect_uri == ANTHROPIC_COPY_CODE {
        return (StatusCode::OK, format!("{code}#{state}")).into_response();
    }
    let query = form_urlencoded::Serializer::new(String::new())
        .append_pair("code", &code)
        .append_pair("state", &state)
        .finish();
    let separator = if redirect_uri.contains('?') { '&' } else { '?' };
    (
        StatusCode::FOUND,
        [(
            header::LOCATION,
            format!("{redirect_uri}{separator}{query}"),
        )],
    )
        .into_response()
}

/// Reads a JSON or form body into string pairs.
pub(crate) fn params_of(headers: &HeaderMap, body: &[u8]) -> HashMap<String, String> {
    let json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("json"));
    if json {
        let value: Value = serde_json::from_slice(body).unwrap_or_default();
        value
            .as_object()
            .map(|map| {
                map.iter()
                    .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_owned())))
                    .collect()
            })
            .unwrap_or_default()
    } else {
        form_urlencoded::parse(body).into_owned().collect()
    }
}

/// A new access token in the host's style.
fn access_token(inner: &mut Inner, host: &str) -> String {
    inner.seq += 1;
    let n = inner.seq;
    let token = match host {
        "openai" => {
            let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"none","typ":"JWT"}"#);
            let claims = json!({
                "https://api.openai.com/auth": { "chatgpt_account_id": "acct-mock" },
                "n": n,
            });
            let claims = URL_SAFE_NO_PAD.encode(claims.to_string());
            format!("{header}.{claims}.sig")
        }
        "google" => format!("ya29.mock-access-{n}"),
        "xai" | "kimi" => format!("{host}-mock-access-{n}"),
        _ => format!("sk-ant-oat01-mock-access-{n}"),
    };
    inner.issued.push(token.clone());
    token
}

/// The token endpoint of each host: code exchange (PKCE checked) and refresh (rotating).
async fn token(
    State(shared): State<Arc<Shared>>,
    uri: axum::http::Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let host = match uri.path() {
        p if p.starts_with("/auth.openai.com") => "openai",
        p if p.starts_with("/oauth2.googleapis.com") => "google",
        _ => "anthropic",
    };
    let delay = shared.oauth.lock().settings.token_delay_ms;
    if delay > 0 {
        tokio::time::sleep(Duration::from_millis(delay)).await;
    }
    let params = params_of(&headers, &body);
    let refresh = params.get("grant_type").map(String::as_str) == Some("refresh_token");
    let reply = grant(&shared, host, &params);
    if refresh && reply.status().is_success() {
        tokio::time::sleep(shared.oauth.refresh_reply_delay()).await;
    }
    reply
}

/// Answers one token request: a code exchange or a refresh, counted.
fn grant(shared: &Shared, host: &str, params: &HashMap<String, String>) -> Response {
    let get = |k: &str| params.get(k).cloned().unwrap_or_default();
    let mut inner = shared.oauth.lock();
    match get("grant_type").as_str() {
        "authorization_code" => {
            let Some(grant) = inner.grants.remove(&get("code")) else {
                inner.refused += 1;
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "Unknown or used authorization code",
                );
            };
            if challenge_of(&get("code_verifier")) != grant.challenge {
                inner.refused += 1;
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "PKCE verification failed",
                );
            }
            if get("redirect_uri") != grant.redirect_uri || get("client_id") != grant.client_id {
                inner.refused += 1;
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "redirect_uri or client_id does not match",
                );
            }
            inner.logins += 1;
        }
        "refresh_token" => {
            let refresh = get("refresh_token");
            if inner.refresh_tokens.remove(&refresh).is_none() {
                inner.refused += 1;
                return oauth_error(
                    StatusCode::BAD_REQUEST,
                    "invalid_grant",
                    "Refresh token is invalid, used or revoked",
                );
            }
            inner.refreshes += 1;
        }
        _ => {
            return oauth_error(
                StatusCode::BAD_REQUEST,
                "unsupported_grant_type",
                "Unsupported grant_type",
            );
        }
    }
    let access = access_token(&mut inner, host);
    inner.seq += 1;
    let refresh = format!("mock-refresh-{}", inner.seq);
    inner
        .refresh_tokens
        .insert(refresh.clone(), host.to_owned());
    Json(json!({
        "access_token": access,
        "refresh_token": refresh,
        "expires_in": inner.settings.access_ttl_secs,
        "token_type": "Bearer",
    }))
    .into_response()
}

async fn codex_user_code(State(shared): State<Arc<Shared>>) -> Response {
    let mut inner = shared.oauth.lock();
    inner.seq += 1;
    let id = format!("devauth-{}", inner.seq);
    Json(json!({ "device_auth_id": id, "user_code": "MOCK-CODE", "interval": "1" })).into_response()
}

async fn codex_device_token(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    let value: Value = serde_json::from_slice(&body).unwrap_or_default();
    let id = value["device_auth_id"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    let mut inner = shared.oauth.lock();
    let polls = inner.device_polls.entry(id).or_default();
    *polls += 1;
    if *polls <= inner.settings.pending_polls {
        return (
            StatusCode::FORBIDDEN,
            Json(json!({ "error": { "code": "deviceauth_authorization_pending" } })),
        )
            .into_response();
    }
    inner.seq += 1;
    let code = format!("code-{}", inner.seq);
    let verifier = format!(
        "device-verifier-{}-padding-to-make-it-long-enough",
        inner.seq
    );
    inner.grants.insert(
        code.clone(),
        Grant {
            challenge: challenge_of(&verifier),
            redirect_uri: CODEX_DEVICE_REDIRECT.into(),
            client_id: "app_EMoamEEZ73f0CkXaXp7hrann".into(),
        },
    );
    Json(json!({ "authorization_code": code, "code_verifier": verifier })).into_response()
}

async fn github_device_code(State(shared): State<Arc<Shared>>) -> Response {
    let device_code = format!("device-{}", shared.oauth.next_seq());
    shared.oauth.device_issued(&device_code);
    Json(json!({
        "device_code": device_code,
        "user_code": "ABCD-1234",
        "verification_uri": "https://github.com/login/device",
        "interval": 1,
        "expires_in": 900,
    }))
    .into_response()
}

async fn github_access_token(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let params = params_of(&headers, &body);
    let device = params.get("device_code").cloned().unwrap_or_default();
    // GitHub answers a poll that is not approved yet with 200 and an `error` field.
    if let Some(refusal) = shared.oauth.device_poll(&device).refusal(StatusCode::OK) {
        return refusal;
    }
    let mut inner = shared.oauth.lock();
    inner.seq += 1;
    let token = format!("gho_mock_{}", inner.seq);
    inner.github_tokens.push(token.clone());
    inner.logins += 1;
    Json(json!({ "access_token": token, "token_type": "bearer", "scope": "read:user" }))
        .into_response()
}

async fn copilot_token(State(shared): State<Arc<Shared>>, headers: HeaderMap) -> Response {
    let bearer = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default()
        .to_owned();
    let mut inner = shared.oauth.lock();
    if !inner.github_tokens.contains(&bearer) {
        inner.refused += 1;
        return (
            StatusCode::UNAUTHORIZED,
            Json(json!({ "message": "Bad credentials" })),
        )
            .into_response();
    }
    inner.seq += 1;
    inner.refreshes += 1;
    let expires_at = now_secs() + inner.settings.access_ttl_secs;
    let token = format!(
        "tid=mock-{};exp={expires_at};proxy-ep=proxy.individual.githubcopilot.com;",
        inner.seq
    );
    inner.issued.push(token.clone());
    Json(json!({ "token": token, "expires_at": expires_at })).into_response()
}

async fn google_userinfo() -> Json<Value> {
    Json(json!({ "email": "user@example.com" }))
}

async fn load_code_assist() -> Json<Value> {
    Json(
        json!({ "currentTier": { "id": "free-tier" }, "cloudaicompanionProject": "mock-project-123" }),
    )
}

/// `GET /_mock/oauth`: what was issued and counted.
async fn status(State(shared): State<Arc<Shared>>) -> Json<Value> {
    let inner = shared.oauth.lock();
    Json(json!({
        "logins": inner.logins,
        "refreshes": inner.refreshes,
        "refused": inner.refused,
        "issued": inner.issued,
        "liveRefreshTokens": inner.refresh_tokens.len(),
        "deviceEvents": inner.device_events,
        "liveRefreshTokenList": inner.refresh_tokens.keys().collect::<std::collections::BTreeSet<_>>(),
    }))
}

/// `POST /_mock/oauth`: change settings; `{"revokeAll": true}` revokes every refresh token
/// and GitHub token issued so far; `{"seedRefreshTokens": [...]}` makes those refresh tokens
/// valid (a test writes a login into auth.json without signing in).
async fn configure(State(shared): State<Arc<Shared>>, body: Bytes) -> Response {
    const ACTIONS: [&str; 2] = ["revokeAll", "seedRefreshTokens"];
    let value: Value = serde_json::from_slice(&body).unwrap_or_default();
    let mut inner = shared.oauth.lock();
    if value["revokeAll"] == json!(true) {
        inner.refresh_tokens.clear();
        inner.github_tokens.clear();
        inner.identity_tokens.clear();
    }
    for token in value["seedRefreshTokens"].as_array().into_iter().flatten() {
        if let Some(token) = token.as_str() {
            inner
                .refresh_tokens
                .insert(token.to_owned(), "anthropic".to_owned());
        }
    }
    if let Ok(settings) = serde_json::from_value::<OAuthSettings>(value.clone())
        && value
            .as_object()
            .is_some_and(|m| m.keys().any(|k| !ACTIONS.contains(&k.as_str())))
    {
        inner.settings = settings;
    }
    StatusCode::NO_CONTENT.into_response()
}
