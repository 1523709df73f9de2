//! Claude Pro/Max: authorization code with PKCE, by the localhost callback or by the code
//! Anthropic's page shows (headless), and refresh; pi-ai's client id, scopes and URLs.

use serde_json::json;

use super::browser_flow::{CodeSource, callback_or_manual, parse_authorization_input};
use super::callback::{CallbackOptions, CallbackServer};
use super::http::{Body, request};
use super::interaction::{LoginInteraction, LoginNotice, LoginPrompt, SelectOption};
use super::{OAuthCredentials, OAuthError, Pkce, expiry_from};

const CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
const AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
const TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
const CALLBACK_PORT: u16 = 53692;
const CALLBACK_PATH: &str = "/callback";
const COPY_CODE_REDIRECT_URI: &str = "https://platform.claude.com/oauth/code/callback";
const SCOPES: &str = "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";

/// Asks for the method (browser or copy code), then signs in.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let method = ui
        .prompt(
            LoginPrompt::Select {
                message: "Select Anthropic login method:".into(),
                options: vec![
                    SelectOption {
                        id: "browser".into(),
                        label: "Browser login (default)".into(),
                    },
                    SelectOption {
                        id: "copy_code".into(),
                        label: "Copy code login (headless)".into(),
                    },
                ],
            },
            ui.cancel_token(),
        )
        .await?;
    match method.as_str() {
        "browser" => login_browser(ui).await,
        "copy_code" => login_copy_code(ui).await,
        other => Err(OAuthError::Failed(format!(
            "Unknown Anthropic login method: {other}"
        ))),
    }
}

fn authorize_url(pkce: &Pkce, redirect_uri: &str) -> String {
    let query = super::http::form(&[
        ("code", "true"),
        ("client_id", CLIENT_ID),
        ("response_type", "code"),
        ("redirect_uri", redirect_uri),
        ("scope", SCOPES),
        ("code_challenge", &pkce.challenge),
        ("code_challenge_method", "S256"),
        ("state", &pkce.verifier),
    ]);
    format!("{}?{query}", super::endpoint(AUTHORIZE_URL))
}

async fn login_browser(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let pkce = Pkce::generate()?;
    let options = |port| CallbackOptions {
        provider: "Anthropic",
        port,
        path: CALLBACK_PATH,
        redirect_host: "localhost",
        state: Some(&pkce.verifier),
        bind_host: None,
        success_message: None,
    };
    let mut server = match CallbackServer::start(options(CALLBACK_PORT)).await {
        Ok(server) => Some(server),
        Err(_) => CallbackServer::start(options(0)).await.ok(),
    };
    let redirect_uri = server.as_ref().map_or_else(
        || format!("http://localhost:{CALLBACK_PORT}{CALLBACK_PATH}"),
        |s| s.redirect_uri().to_owned(),
    );
    ui.notify(LoginNotice::AuthUrl {
        url: authorize_url(&pkce, &redirect_uri),
        instructions: Some("Complete login in your browser. If the browser is on another machine, paste the final redirect URL here.".into()),
    });
    let source = callback_or_manual(
        ui,
        server.as_mut(),
        "Complete login in your browser, or paste the authorization code / redirect URL here",
        &redirect_uri,
    )
    .await?;
    drop(server);
    let (code, state) = match source {
        CodeSource::Callback(code) => (code, pkce.verifier.clone()),
        CodeSource::Manual(input) => pasted_code(&input, &pkce.verifier)?,
    };
    ui.notify(LoginNotice::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    exchange(&code, &state, &pkce.verifier, &redirect_uri).await
}

async fn login_copy_code(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let pkce = Pkce::generate()?;
    ui.notify(LoginNotice::AuthUrl {
        url: authorize_url(&pkce, COPY_CODE_REDIRECT_URI),
        instructions: Some(
            "Complete login in your browser, then copy the code Anthropic shows and paste it here."
                .into(),
        ),
    });
    let input = ui
        .prompt(
            LoginPrompt::ManualCode {
                message: "Paste the code Anthropic shows after you sign in".into(),
                placeholder: Some("code#state".into()),
            },
            ui.cancel_token(),
        )
        .await?;
    let (code, state) = pasted_code(&input, &pkce.verifier)?;
    ui.notify(LoginNotice::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    exchange(&code, &state, &pkce.verifier, COPY_CODE_REDIRECT_URI).await
}

/// The code and state of a pasted answer, refusing another sign-in's state.
fn pasted_code(input: &str, verifier: &str) -> Result<(String, String), OAuthError> {
    let (code, state) = parse_authorization_input(input);
    if state.as_deref().is_some_and(|s| s != verifier) {
        return Err(OAuthError::Failed("OAuth state mismatch".into()));
    }
    let code = code
        .filter(|c| !c.is_empty())
        .ok_or_else(|| OAuthError::Failed("Missing authorization code".into()))?;
    Ok((code, state.unwrap_or_else(|| verifier.to_owned())))
}

async fn exchange(
    code: &str,
    state: &str,
    verifier: &str,
    redirect_uri: &str,
) -> Result<OAuthCredentials, OAuthError> {
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect_uri,
        "code_verifier": verifier,
    });
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &[("Accept", "application/json")],
        Body::Json(&body),
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "Token exchange request failed. url={TOKEN_URL}; {}",
            reply.summary()
        )));
    }
    tokens(&reply.json("Token exchange")?, None)
}

/// Refreshes with the stored refresh token.
pub(crate) async fn refresh(
    credentials: &OAuthCredentials,
) -> Result<OAuthCredentials, OAuthError> {
    let body = json!({
        "grant_type": "refresh_token",
        "client_id": CLIENT_ID,
        "refresh_token": credentials.refresh,
    });
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &[("Accept", "application/json")],
        Body::Json(&body),
    )
    .await?;
    if !reply.ok() {
        let message = format!(
            "Anthropic token refresh request failed. url={TOKEN_URL}; {}",
            reply.summary()
        );
        return Err(if reply.refused_grant() {
            OAuthError::Revoked(message)
        } else {
            OAuthError::Failed(message)
        });
    }
    tokens(&reply.json("Anthropic token refresh")?, Some(credentials))
}

/// Credentials from a token reply; a reply without a new refresh token keeps the old one.
pub(crate) fn tokens(
    data: &serde_json::Value,
    previous: Option<&OAuthCredentials>,
) -> Result<OAuthCredentials, OAuthError> {
    let access = data["access_token"]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| OAuthError::Failed("The token reply has no access_token".into()))?;
    let refresh = data["refresh_token"]
        .as_str()
        .map(str::to_owned)
        .or_else(|| previous.map(|p| p.refresh.clone()))
        .unwrap_or_default();
    let expires_in = data["expires_in"].as_f64().unwrap_or(3600.0);
    let mut extra = previous.map(|p| p.extra.clone()).unwrap_or_default();
    extra.remove("type");
    Ok(OAuthCredentials {
        refresh,
        access: access.to_owned(),
        expires: expiry_from(expires_in),
        extra,
    })
}
