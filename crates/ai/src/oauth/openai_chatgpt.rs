//! Sign in with ChatGPT (the `openai` provider): the browser registers pi as an agent of
//! this installation's device id and comes back to `127.0.0.1:1455` with a code, the state
//! and the issued client id; the tokens must grant `chatgpt.tokens.use.direct`, and the
//! access token is the request key. The client id and scopes are stored with the login.

use serde_json::{Map, Value};

use super::browser_flow::parse_authorization_input;
use super::callback::{CallbackCode, CallbackOptions, CallbackServer};
use super::http::{Body, request};
use super::interaction::{LoginInteraction, LoginNotice, LoginPrompt};
use super::{OAuthCredentials, OAuthError, Pkce, now_ms, random_bytes};

const DYNAMIC_CLIENT_ID: &str = "dynamic_agent_client";
const AGENT_NAME: &str = "Pi";
const AUTHORIZE_URL: &str = "https://auth.openai.com/api/accounts/authorize";
const TOKEN_URL: &str = "https://auth.openai.com/api/accounts/oauth/token";
const RESOURCE: &str = "https://api.openai.com/v1";
const PORT: u16 = 1455;
const PATH: &str = "/auth/callback";
const REDIRECT_URI: &str = "http://127.0.0.1:1455/auth/callback";
const DIRECT_SCOPE: &str = "chatgpt.tokens.use.direct";
const SCOPE: &str = "openid profile email offline_access resource.invoke chatgpt.tokens.use.direct";
/// pi takes three minutes off the token's lifetime.
const EXPIRY_MARGIN_MS: i64 = 3 * 60 * 1000;

fn random_value() -> Result<String, OAuthError> {
    use base64::Engine;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(random_bytes::<32>()?))
}

/// `urn:uuid:<id>` of a UUID device id.
fn host_id(device_id: Option<String>) -> Result<String, OAuthError> {
    device_id
        .and_then(|id| uuid::Uuid::parse_str(&id).ok().filter(|_| id.len() == 36))
        .map(|id| format!("urn:uuid:{}", id.hyphenated()))
        .ok_or_else(|| {
            OAuthError::Failed(
                "Sign in with ChatGPT requires a device ID (UUID) for this installation".into(),
            )
        })
}

/// The code and issued client id of a pasted redirect URL.
fn from_pasted(input: &str, state: &str) -> Result<(String, String), OAuthError> {
    let url = reqwest::Url::parse(input.trim())
        .map_err(|_| OAuthError::Failed("Paste the full callback URL from the browser".into()))?;
    if url.origin().ascii_serialization() != "http://127.0.0.1:1455" || url.path() != PATH {
        return Err(OAuthError::Failed(format!(
            "The pasted callback URL must start with {REDIRECT_URI}"
        )));
    }
    let param = |name: &str| {
        url.query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = param("error") {
        return Err(OAuthError::Failed(format!(
            "ChatGPT authorization failed: {error}"
        )));
    }
    let (code, pasted_state) = parse_authorization_input(input);
    let code = code.ok_or_else(|| OAuthError::Failed("Missing authorization code".into()))?;
    match pasted_state {
        None => return Err(OAuthError::Failed("Missing OAuth state".into())),
        Some(s) if s != state => return Err(OAuthError::Failed("OAuth state mismatch".into())),
        Some(_) => {}
    }
    let client_id = issued_client(param("client_id"))?;
    Ok((code, client_id))
}

fn issued_client(client_id: Option<String>) -> Result<String, OAuthError> {
    client_id
        .map(|c| c.trim().to_owned())
        .filter(|c| !c.is_empty())
        .ok_or_else(|| {
            OAuthError::Failed(
                "OpenAI OAuth registration callback did not contain an issued client ID".into(),
            )
        })
}

/// Posts a token request; the reply's JSON object.
async fn token_request(fields: &[(&str, &str)]) -> Result<Value, OAuthError> {
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &[("accept", "application/json")],
        Body::Form(fields),
    )
    .await?;
    if !reply.ok() {
        let message = format!(
            "OpenAI OAuth token request failed ({}): {}",
            reply.status,
            if reply.body.is_empty() {
                "error"
            } else {
                &reply.body
            }
        );
        return Err(if reply.refused_grant() {
            OAuthError::Revoked(message)
        } else {
            OAuthError::Failed(message)
        });
    }
    match serde_json::from_str(&reply.body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        _ => Err(OAuthError::Failed(
            "OpenAI OAuth token response must be an object".into(),
        )),
    }
}

fn token_string<'a>(token: &'a Value, field: &str) -> Result<&'a str, OAuthError> {
    token[field]
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .ok_or_else(|| {
            OAuthError::Failed(format!("OpenAI OAuth token response has invalid {field}"))
        })
}

/// Credentials from a token reply, which must grant direct token use.
fn credentials(token: &Value, client_id: &str) -> Result<OAuthCredentials, OAuthError> {
    let access = token_string(token, "access_token")?;
    let refresh = token_string(token, "refresh_token")?;
    let scope = token_string(token, "scope")?;
    let expires_in = token["expires_in"]
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(|| {
            OAuthError::Failed("OpenAI OAuth token response has invalid expires_in".into())
        })?;
    let scopes: Vec<Value> = scope.split_whitespace().map(Value::from).collect();
    if !scopes.iter().any(|s| s == DIRECT_SCOPE) {
        return Err(OAuthError::Failed(format!(
            "OpenAI OAuth grant did not include {DIRECT_SCOPE}"
        )));
    }
    let mut extra = Map::new();
    extra.insert("clientId".into(), client_id.into());
    extra.insert("scopes".into(), Value::Array(scopes));
    Ok(OAuthCredentials {
        refresh: refresh.to_owned(),
        access: access.to_owned(),
        expires: now_ms() + (expires_in * 1000.0) as i64 - EXPIRY_MARGIN_MS,
        extra,
    })
}

/// Signs in through the browser, or with the final redirect URL pasted.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let host = host_id(ui.device_id())?;
    let pkce = Pkce::generate()?;
    let state = random_value()?;
    let nonce = random_value()?;
    let mut server = CallbackServer::start(CallbackOptions {
        provider: "ChatGPT",
        port: PORT,
        path: PATH,
        redirect_host: "127.0.0.1",
        state: Some(&state),
        bind_host: None,
        success_message: None,
    })
    .await
    .map_err(|_| {
        OAuthError::Failed(format!(
            "Port {PORT} is in use, probably by an unfinished login in another pi session or by the Codex CLI. Cancel that login and try again."
        ))
    })?;
    let query = super::http::form(&[
        ("client_id", DYNAMIC_CLIENT_ID),
        ("agent_name_hint", AGENT_NAME),
        ("ext_agent_host_id", &host),
        ("response_type", "code"),
        ("redirect_uri", REDIRECT_URI),
        ("resource", RESOURCE),
        ("scope", SCOPE),
        ("state", &state),
        ("code_challenge", &pkce.challenge),
        ("code_challenge_method", "S256"),
        ("nonce", &nonce),
    ]);
    ui.notify(LoginNotice::AuthUrl {
        url: format!("{}?{query}", super::endpoint(AUTHORIZE_URL)),
        instructions: Some(
            "Complete sign-in in your browser. If the callback does not complete, paste the final redirect URL here."
                .into(),
        ),
    });
    let prompt_cancel = tokio_util::sync::CancellationToken::new();
    let pasted = ui.prompt(
        LoginPrompt::ManualCode {
            message: "Complete login in your browser, or paste the final redirect URL here:".into(),
            placeholder: Some(REDIRECT_URI.into()),
        },
        prompt_cancel.clone(),
    );
    let mut pasted = pasted;
    let (code, client_id) = tokio::select! {
        delivered = server.wait_with_issuer() => {
            // The question is moot: cancel it and let it finish (the UI closes it).
            prompt_cancel.cancel();
            let _ = pasted.await;
            let CallbackCode { code, client_id, .. } = delivered?;
            (code, issued_client(client_id)?)
        }
        input = &mut pasted => from_pasted(&input?, &state)?,
    };
    drop(server);
    ui.notify(LoginNotice::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    let token = token_request(&[
        ("grant_type", "authorization_code"),
        ("client_id", &client_id),
        ("code", &code),
        ("code_verifier", &pkce.verifier),
        ("redirect_uri", REDIRECT_URI),
        ("resource", RESOURCE),
    ])
    .await?;
    if token["id_token"]
        .as_str()
        .is_none_or(|t| t.trim().is_empty())
    {
        return Err(OAuthError::Failed(
            "OpenAI OAuth token response did not contain an ID token".into(),
        ));
    }
    credentials(&token, &client_id)
}

/// Refreshes the tokens for the client the sign-in was issued.
pub(crate) async fn refresh(stored: &OAuthCredentials) -> Result<OAuthCredentials, OAuthError> {
    let client_id = stored.extra_str("clientId").ok_or_else(|| {
        OAuthError::Failed(
            "Stored OpenAI OAuth credential does not contain an issued client ID; reconnect ChatGPT"
                .into(),
        )
    })?;
    let token = token_request(&[
        ("grant_type", "refresh_token"),
        ("client_id", client_id),
        ("refresh_token", &stored.refresh),
        ("resource", RESOURCE),
    ])
    .await?;
    credentials(&token, client_id)
}
