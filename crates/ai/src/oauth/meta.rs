//! Meta ("Sign in with Meta", Muse subscription): a device code at auth.meta.com gives an
//! identity token, which mints a Model API key for a day. The identity token is stored as
//! the refresh token: a refresh mints a new key with it.

use serde_json::Value;

use super::device::{Poll, PollPlan, poll_until};
use super::http::{Body, Reply, request};
use super::interaction::{LoginInteraction, LoginNotice};
use super::{OAuthCredentials, OAuthError, now_ms};

const CLIENT_ID: &str = "1031625952748946";
const DEVICE_AUTHORIZATION_URL: &str = "https://auth.meta.com/oidc/device/authorization/";
const DEVICE_TOKEN_URL: &str = "https://auth.meta.com/oidc/device/token/";
const KEY_MINT_URL: &str = "https://api.meta.ai/muse-code/key";
/// A minted key lives for a day.
const KEY_LIFETIME_MS: i64 = 24 * 60 * 60 * 1000;
const ACCEPT: [(&str, &str); 1] = [("Accept", "application/json")];

/// The reply's JSON, `Null` when it is none.
fn json_of(reply: &Reply) -> Value {
    serde_json::from_str(&reply.body).unwrap_or(Value::Null)
}

/// `: <text>` from the first of the reply's error fields that has one.
fn detail(json: &Value) -> String {
    ["error_description", "detail", "message", "error"]
        .iter()
        .find_map(|k| json[*k].as_str().map(str::trim).filter(|s| !s.is_empty()))
        .map(|text| format!(": {text}"))
        .unwrap_or_default()
}

fn positive(value: &Value) -> Option<f64> {
    value.as_f64().filter(|n| n.is_finite() && *n > 0.0)
}

/// An http(s) URL, else `None`.
fn web_url(value: &Value) -> Option<String> {
    let url = reqwest::Url::parse(value.as_str()?).ok()?;
    matches!(url.scheme(), "https" | "http").then(|| url.to_string())
}

/// Mints a Model API key with the identity token.
async fn mint_key(identity: &str) -> Result<OAuthCredentials, OAuthError> {
    let bearer = format!("Bearer {identity}");
    let reply = request(
        reqwest::Method::POST,
        KEY_MINT_URL,
        &[
            ("Accept", "application/json"),
            ("Authorization", &bearer),
            ("Content-Type", "application/json"),
            ("x-api-version", "1.0.0"),
        ],
        Body::Json(&Value::Object(Default::default())),
    )
    .await?;
    let json = json_of(&reply);
    if matches!(reply.status, 401 | 403) {
        return Err(OAuthError::Revoked(format!(
            "Meta session expired (status {}). Run `/login meta` to sign in again.{}",
            reply.status,
            detail(&json)
        )));
    }
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "Meta API key mint failed with status {}{}",
            reply.status,
            detail(&json)
        )));
    }
    let Some(key) = json["api_key"].as_str().filter(|k| !k.is_empty()) else {
        let setup = web_url(&json["action_url"])
            .map(|url| format!(" Complete setup at {url}"))
            .unwrap_or_default();
        return Err(OAuthError::Failed(format!(
            "Meta did not issue an API key.{setup}"
        )));
    };
    Ok(OAuthCredentials {
        refresh: identity.to_owned(),
        access: key.to_owned(),
        expires: now_ms() + KEY_LIFETIME_MS,
        extra: Default::default(),
    })
}

/// Signs in with the device code, then mints the first key.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let cancel = ui.cancel_token();
    let reply = request(
        reqwest::Method::POST,
        DEVICE_AUTHORIZATION_URL,
        &ACCEPT,
        Body::Form(&[("client_id", CLIENT_ID)]),
    )
    .await?;
    let json = json_of(&reply);
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "Meta device authorization failed with status {}{}",
            reply.status,
            detail(&json)
        )));
    }
    let page =
        web_url(&json["verification_uri_complete"]).or_else(|| web_url(&json["verification_uri"]));
    let (Some(device_code), Some(user_code), Some(page)) = (
        json["device_code"].as_str().filter(|s| !s.is_empty()),
        json["user_code"].as_str().filter(|s| !s.is_empty()),
        page,
    ) else {
        return Err(OAuthError::Failed(format!(
            "Invalid Meta device authorization response: {json}"
        )));
    };
    ui.notify(LoginNotice::DeviceCode {
        verification_uri: page,
        user_code: user_code.to_owned(),
    });
    let plan = PollPlan {
        interval_secs: positive(&json["interval"]).unwrap_or(5.0),
        // pi polls until the code expires; without an expiry it polls until cancelled.
        expires_in_secs: positive(&json["expires_in"]).unwrap_or(f64::from(u32::MAX)),
        wait_before_first: true,
    };
    let identity = poll_until(plan, &cancel, || async {
        let reply = request(
            reqwest::Method::POST,
            DEVICE_TOKEN_URL,
            &ACCEPT,
            Body::Form(&[
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ("device_code", device_code),
                ("client_id", CLIENT_ID),
            ]),
        )
        .await?;
        let json = json_of(&reply);
        if reply.ok()
            && let Some(token) = json["access_token"].as_str().filter(|t| !t.is_empty())
        {
            return Ok(Poll::Done(token.to_owned()));
        }
        match json["error"].as_str() {
            Some("authorization_pending") => Ok(Poll::Pending),
            Some("slow_down") => Ok(Poll::SlowDown(positive(&json["interval"]))),
            Some("access_denied") => Err(OAuthError::Failed("Meta login was denied.".into())),
            Some("expired_token") => Err(OAuthError::Failed(
                "Meta device authorization expired. Please restart login.".into(),
            )),
            _ => Err(OAuthError::Failed(format!(
                "Meta device token request failed with status {}{}",
                reply.status,
                detail(&json)
            ))),
        }
    })
    .await?;
    ui.notify(LoginNotice::Progress(
        "Enabling Meta Model API access...".into(),
    ));
    mint_key(&identity).await
}

/// Mints a new key with the stored identity token.
pub(crate) async fn refresh(
    credentials: &OAuthCredentials,
) -> Result<OAuthCredentials, OAuthError> {
    mint_key(&credentials.refresh).await
}
