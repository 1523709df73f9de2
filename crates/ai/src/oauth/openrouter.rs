//! OpenRouter ("Sign in with OpenRouter"): PKCE without a client id; OpenRouter sends the
//! browser back to a localhost callback on any free port, and the code buys an API key,
//! which never expires and so is never refreshed.

use serde_json::{Value, json};

use super::browser_flow::{CodeSource, callback_or_manual, parse_authorization_input};
use super::callback::{CallbackOptions, CallbackServer, bind_host};
use super::http::{Body, request};
use super::interaction::{LoginInteraction, LoginNotice};
use super::{OAuthCredentials, OAuthError, Pkce};

const AUTHORIZE_URL: &str = "https://openrouter.ai/auth";
const KEYS_URL: &str = "https://openrouter.ai/api/v1/auth/keys";
/// JavaScript's `Number.MAX_SAFE_INTEGER`: pi's "never expires".
const NEVER: i64 = 9_007_199_254_740_991;

/// The text of an error reply, as OpenRouter words it in one of its shapes.
fn error_detail(body: &Value) -> Option<&str> {
    body["error_description"]
        .as_str()
        .or_else(|| body["message"].as_str())
        .or_else(|| body["error"].as_str())
        .or_else(|| body["error"]["message"].as_str())
}

/// Trades the code and the PKCE verifier for an API key.
async fn exchange(code: &str, verifier: &str) -> Result<OAuthCredentials, OAuthError> {
    let payload = json!({"code": code, "code_verifier": verifier, "code_challenge_method": "S256"});
    let reply = request(
        reqwest::Method::POST,
        KEYS_URL,
        &[("accept", "application/json")],
        Body::Json(&payload),
    )
    .await?;
    let body: Value = match serde_json::from_str(&reply.body) {
        Ok(value @ Value::Object(_)) => value,
        Ok(_) => Value::Null,
        Err(_) if reply.ok() => {
            return Err(OAuthError::Failed(
                "OpenRouter OAuth returned invalid JSON".into(),
            ));
        }
        Err(_) => Value::Null,
    };
    if !reply.ok() {
        let detail = error_detail(&body)
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        return Err(OAuthError::Failed(format!(
            "OpenRouter OAuth key exchange failed (HTTP {}){detail}",
            reply.status
        )));
    }
    let key = body["key"]
        .as_str()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| OAuthError::Failed("OpenRouter OAuth response carries no \"key\"".into()))?;
    Ok(OAuthCredentials {
        refresh: String::new(),
        access: key.to_owned(),
        expires: NEVER,
        extra: Default::default(),
    })
}

/// Signs in through the browser, or with the redirect URL or code pasted instead.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let pkce = Pkce::generate()?;
    let path = format!("/oauth/callback/{}", uuid::Uuid::new_v4());
    // The redirect names the address the server listens on (an IPv6 one in brackets).
    let host = bind_host();
    let redirect_host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host.clone()
    };
    let mut server = CallbackServer::start(CallbackOptions {
        provider: "OpenRouter",
        port: 0,
        path: &path,
        redirect_host: &redirect_host,
        state: None,
        bind_host: Some(&host),
        success_message: None,
    })
    .await?;
    let redirect_uri = server.redirect_uri().to_owned();
    let query = super::http::form(&[
        ("callback_url", &redirect_uri),
        ("code_challenge", &pkce.challenge),
        ("code_challenge_method", "S256"),
    ]);
    ui.notify(LoginNotice::Progress(format!(
        "Listening for OpenRouter OAuth callback on {redirect_uri}"
    )));
    ui.notify(LoginNotice::AuthUrl {
        url: format!("{}?{query}", super::endpoint(AUTHORIZE_URL)),
        instructions: Some(
            "Complete sign-in in your browser. If the browser is on another machine, paste the final redirect URL here."
                .into(),
        ),
    });
    let source = callback_or_manual(
        ui,
        Some(&mut server),
        "Complete sign-in in your browser, or paste the authorization code / redirect URL here:",
        &redirect_uri,
    )
    .await?;
    drop(server);
    let code = match source {
        CodeSource::Callback(code) => code,
        CodeSource::Manual(input) => {
            let code = parse_authorization_input(&input)
                .0
                .filter(|c| !c.is_empty())
                .ok_or_else(|| OAuthError::Failed("Missing authorization code".into()))?;
            ui.notify(LoginNotice::Progress(
                "Exchanging authorization code for an API key...".into(),
            ));
            code
        }
    };
    exchange(&code, &pkce.verifier).await
}
