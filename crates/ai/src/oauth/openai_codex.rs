//! ChatGPT Plus/Pro (OpenAI Codex): authorization code with PKCE on localhost:1455, or the
//! device code flow for headless machines; refresh; the account id read from the token.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};

use super::browser_flow::{CodeSource, callback_or_manual, parse_authorization_input};
use super::callback::{CallbackOptions, CallbackServer};
use super::device::{Poll, PollPlan, poll_until};
use super::http::{Body, Reply, request};
use super::interaction::{LoginInteraction, LoginNotice, LoginPrompt, SelectOption};
use super::pkce::random_bytes;
use super::{OAuthCredentials, OAuthError, Pkce, now_ms};

const CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
const AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
const REDIRECT_URI: &str = "http://localhost:1455/auth/callback";
const DEVICE_USER_CODE_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/usercode";
const DEVICE_TOKEN_URL: &str = "https://auth.openai.com/api/accounts/deviceauth/token";
const DEVICE_VERIFICATION_URI: &str = "https://auth.openai.com/codex/device";
const DEVICE_REDIRECT_URI: &str = "https://auth.openai.com/deviceauth/callback";
const DEVICE_CODE_TIMEOUT_SECS: f64 = 900.0;
const SCOPE: &str = "openid profile email offline_access";
const JWT_CLAIM: &str = "https://api.openai.com/auth";

/// Asks for the method (browser or device code), then signs in.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let method = ui
        .prompt(
            LoginPrompt::Select {
                message: "Select OpenAI Codex login method:".into(),
                options: vec![
                    SelectOption {
                        id: "browser".into(),
                        label: "Browser login (default)".into(),
                    },
                    SelectOption {
                        id: "device_code".into(),
                        label: "Device code login (headless)".into(),
                    },
                ],
            },
            ui.cancel_token(),
        )
        .await?;
    match method.as_str() {
        "browser" => login_browser(ui).await,
        "device_code" => login_device(ui).await,
        other => Err(OAuthError::Failed(format!(
            "Unknown OpenAI Codex login method: {other}"
        ))),
    }
}

async fn login_browser(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let pkce = Pkce::generate()?;
    let state: String = random_bytes::<16>()?
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let query = super::http::form(&[
        ("response_type", "code"),
        ("client_id", CLIENT_ID),
        ("redirect_uri", REDIRECT_URI),
        ("scope", SCOPE),
        ("code_challenge", &pkce.challenge),
        ("code_challenge_method", "S256"),
        ("state", &state),
        ("id_token_add_organizations", "true"),
        ("codex_cli_simplified_flow", "true"),
        ("originator", "pi"),
    ]);
    // The redirect URI is registered with port 1455: without it only a pasted code works.
    let mut server = CallbackServer::start(CallbackOptions {
        provider: "OpenAI",
        port: 1455,
        path: "/auth/callback",
        redirect_host: "localhost",
        state: Some(&state),
        bind_host: None,
        success_message: None,
    })
    .await
    .ok();
    ui.notify(LoginNotice::AuthUrl {
        url: format!("{}?{query}", super::endpoint(AUTHORIZE_URL)),
        instructions: Some("A browser window should open. Complete login to finish.".into()),
    });
    let source = callback_or_manual(
        ui,
        server.as_mut(),
        "Complete login in your browser, or paste the authorization code / redirect URL here",
        REDIRECT_URI,
    )
    .await?;
    drop(server);
    let code = match source {
        CodeSource::Callback(code) => code,
        CodeSource::Manual(input) => {
            let (code, pasted_state) = parse_authorization_input(&input);
            if pasted_state.is_some_and(|s| s != state) {
                return Err(OAuthError::Failed("State mismatch".into()));
            }
            code.filter(|c| !c.is_empty())
                .ok_or_else(|| OAuthError::Failed("Missing authorization code".into()))?
        }
    };
    exchange(&code, &pkce.verifier, REDIRECT_URI).await
}

async fn login_device(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let reply = request(
        reqwest::Method::POST,
        DEVICE_USER_CODE_URL,
        &[],
        Body::Json(&json!({ "client_id": CLIENT_ID })),
    )
    .await?;
    if reply.status == 404 {
        return Err(OAuthError::Failed("OpenAI Codex device code login is not enabled for this server. Use browser login or verify the server URL.".into()));
    }
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "OpenAI Codex device code request failed with status {}",
            reply.status
        )));
    }
    let data = reply.json("OpenAI Codex device code request")?;
    let interval = match &data["interval"] {
        Value::String(s) => s.trim().parse::<f64>().ok(),
        other => other.as_f64(),
    };
    let (Some(device_auth_id), Some(user_code), Some(interval)) = (
        data["device_auth_id"].as_str(),
        data["user_code"].as_str(),
        interval.filter(|i| i.is_finite() && *i >= 0.0),
    ) else {
        return Err(OAuthError::Failed(
            "Invalid OpenAI Codex device code response".into(),
        ));
    };
    ui.notify(LoginNotice::DeviceCode {
        verification_uri: DEVICE_VERIFICATION_URI.into(),
        user_code: user_code.into(),
    });
    let body = json!({ "device_auth_id": device_auth_id, "user_code": user_code });
    let plan = PollPlan {
        interval_secs: interval,
        expires_in_secs: DEVICE_CODE_TIMEOUT_SECS,
        wait_before_first: false,
    };
    let (code, verifier) = poll_until(plan, &ui.cancel_token(), || async {
        let reply = request(
            reqwest::Method::POST,
            DEVICE_TOKEN_URL,
            &[],
            Body::Json(&body),
        )
        .await?;
        device_poll(&reply)
    })
    .await?;
    exchange(&code, &verifier, DEVICE_REDIRECT_URI).await
}

fn device_poll(reply: &Reply) -> Result<Poll<(String, String)>, OAuthError> {
    if reply.ok() {
        let data = reply.json("OpenAI Codex device auth")?;
        return match (
            data["authorization_code"].as_str(),
            data["code_verifier"].as_str(),
        ) {
            (Some(code), Some(verifier)) => Ok(Poll::Done((code.into(), verifier.into()))),
            _ => Err(OAuthError::Failed(
                "Invalid OpenAI Codex device auth response".into(),
            )),
        };
    }
    match reply.error_code().as_deref() {
        Some("deviceauth_authorization_pending" | "authorization_pending") => Ok(Poll::Pending),
        Some("slow_down") => Ok(Poll::SlowDown(None)),
        _ => Err(OAuthError::Failed(format!(
            "OpenAI Codex device auth failed with status {}",
            reply.status
        ))),
    }
}

async fn exchange(
    code: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<OAuthCredentials, OAuthError> {
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &[],
        Body::Form(&[
            ("grant_type", "authorization_code"),
            ("client_id", CLIENT_ID),
            ("code", code),
            ("code_verifier", verifier),
            ("redirect_uri", redirect_uri),
        ]),
    )
    .await?;
    read_tokens(&reply, "exchange")
}

/// Refreshes with the stored refresh token.
pub(crate) async fn refresh(
    credentials: &OAuthCredentials,
) -> Result<OAuthCredentials, OAuthError> {
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &[],
        Body::Form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", &credentials.refresh),
            ("client_id", CLIENT_ID),
        ]),
    )
    .await?;
    read_tokens(&reply, "refresh")
}

fn read_tokens(reply: &Reply, operation: &str) -> Result<OAuthCredentials, OAuthError> {
    if !reply.ok() {
        let message = format!(
            "OpenAI Codex token {operation} failed ({})",
            reply.summary()
        );
        return Err(if operation == "refresh" && reply.refused_grant() {
            OAuthError::Revoked(message)
        } else {
            OAuthError::Failed(message)
        });
    }
    let data = reply.json(&format!("OpenAI Codex token {operation}"))?;
    let (Some(access), Some(refresh), Some(expires_in)) = (
        data["access_token"].as_str(),
        data["refresh_token"].as_str(),
        data["expires_in"].as_f64(),
    ) else {
        return Err(OAuthError::Failed(format!(
            "OpenAI Codex token {operation} response missing fields"
        )));
    };
    let mut extra = serde_json::Map::new();
    if let Some(account) = account_id(access) {
        extra.insert("accountId".into(), account.into());
    }
    Ok(OAuthCredentials {
        refresh: refresh.into(),
        access: access.into(),
        expires: now_ms() + (expires_in * 1000.0) as i64,
        extra,
    })
}

/// The ChatGPT account id in the access token's claims.
fn account_id(token: &str) -> Option<String> {
    let payload = token.split('.').nth(1)?;
    let bytes = URL_SAFE_NO_PAD.decode(payload.trim_end_matches('=')).ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    claims[JWT_CLAIM]["chatgpt_account_id"]
        .as_str()
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
}
