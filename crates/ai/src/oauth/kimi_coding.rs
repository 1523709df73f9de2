//! Kimi Code ("Sign in with Kimi Code"): a device code at auth.kimi.com (or
//! `KIMI_CODE_OAUTH_HOST` / `KIMI_OAUTH_HOST`), then token polls; requests carry the access
//! token as a bearer header. Refreshes retry rate limits and server errors three times.

use std::time::Duration;

use serde_json::Value;

use super::device::{Poll, PollPlan, poll_until};
use super::http::{Body, Reply, request};
use super::interaction::{LoginInteraction, LoginNotice};
use super::{OAuthCredentials, OAuthError, now_ms};

const CLIENT_ID: &str = "17e5f671-d194-4dfb-9706-5516cb48c098";
const DEFAULT_HOST: &str = "https://auth.kimi.com";
const DEFAULT_EXPIRES_SECS: f64 = 900.0;
const DEFAULT_INTERVAL_SECS: f64 = 5.0;
const REFRESH_RETRIES: u32 = 3;
const ACCEPT: [(&str, &str); 1] = [("Accept", "application/json")];

/// The sign-in server: `KIMI_CODE_OAUTH_HOST`, `KIMI_OAUTH_HOST` or auth.kimi.com.
fn host() -> String {
    ["KIMI_CODE_OAUTH_HOST", "KIMI_OAUTH_HOST"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| DEFAULT_HOST.to_owned())
        .trim_end_matches('/')
        .to_owned()
}

/// An http(s) URL as the page to show, else `None`.
fn web_url(value: &Value) -> Option<String> {
    let url = reqwest::Url::parse(value.as_str()?).ok()?;
    matches!(url.scheme(), "https" | "http").then(|| url.to_string())
}

fn positive_or(value: &Value, default: f64) -> f64 {
    value
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .unwrap_or(default)
}

/// The reply's JSON, `Null` when it is none.
fn json_of(reply: &Reply) -> Value {
    serde_json::from_str(&reply.body).unwrap_or(Value::Null)
}

/// Credentials from a token reply, which must name all three fields.
fn tokens(json: &Value, operation: &str) -> Result<OAuthCredentials, OAuthError> {
    let access = json["access_token"].as_str().filter(|s| !s.is_empty());
    let refresh = json["refresh_token"].as_str().filter(|s| !s.is_empty());
    let expires_in = json["expires_in"]
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0);
    match (access, refresh, expires_in) {
        (Some(access), Some(refresh), Some(expires_in)) => Ok(OAuthCredentials {
            refresh: refresh.to_owned(),
            access: access.to_owned(),
            expires: now_ms() + (expires_in * 1000.0) as i64,
            extra: Default::default(),
        }),
        _ => Err(OAuthError::Failed(format!(
            "Kimi Code token {operation} response missing fields: {json}"
        ))),
    }
}

/// `: <body>` when the body is not empty.
fn with_body(text: &str) -> String {
    if text.is_empty() {
        String::new()
    } else {
        format!(": {text}")
    }
}

/// Signs in with the device code: shows the prefilled page and the code, then polls.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let cancel = ui.cancel_token();
    let host = host();
    let reply = request(
        reqwest::Method::POST,
        &format!("{host}/api/oauth/device_authorization"),
        &ACCEPT,
        Body::Form(&[("client_id", CLIENT_ID)]),
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "Kimi Code device authorization failed with status {}{}",
            reply.status,
            with_body(&reply.body)
        )));
    }
    let json = json_of(&reply);
    let (Some(device_code), Some(user_code), Some(_page), Some(prefilled)) = (
        json["device_code"].as_str(),
        json["user_code"].as_str(),
        web_url(&json["verification_uri"]),
        web_url(&json["verification_uri_complete"]),
    ) else {
        return Err(OAuthError::Failed(format!(
            "Invalid Kimi Code device authorization response: {json}"
        )));
    };
    ui.notify(LoginNotice::DeviceCode {
        verification_uri: prefilled,
        user_code: user_code.to_owned(),
    });
    let plan = PollPlan {
        interval_secs: positive_or(&json["interval"], DEFAULT_INTERVAL_SECS),
        expires_in_secs: positive_or(&json["expires_in"], DEFAULT_EXPIRES_SECS),
        wait_before_first: true,
    };
    let token_url = format!("{host}/api/oauth/token");
    poll_until(plan, &cancel, || async {
        let reply = request(
            reqwest::Method::POST,
            &token_url,
            &ACCEPT,
            Body::Form(&[
                ("client_id", CLIENT_ID),
                ("device_code", device_code),
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ]),
        )
        .await?;
        if reply.status >= 500 {
            return Err(OAuthError::Failed(format!(
                "Kimi Code device token request failed with status {}{}",
                reply.status,
                with_body(&reply.body)
            )));
        }
        let json = json_of(&reply);
        if reply.ok() && json["access_token"].is_string() {
            return tokens(&json, "poll").map(Poll::Done);
        }
        let description = json["error_description"]
            .as_str()
            .map(|d| format!(": {d}"))
            .unwrap_or_default();
        match json["error"].as_str() {
            Some("authorization_pending") => Ok(Poll::Pending),
            Some("slow_down") => Ok(Poll::SlowDown(json["interval"].as_f64())),
            Some("expired_token") => Err(OAuthError::Failed(
                "Kimi Code device authorization expired. Please restart login.".into(),
            )),
            Some("access_denied") => Err(OAuthError::Failed("Kimi Code login was denied.".into())),
            error => Err(OAuthError::Failed(format!(
                "Kimi Code device token request failed (status {}){}",
                reply.status,
                error
                    .map(|e| format!(": {e}{description}"))
                    .unwrap_or_default()
            ))),
        }
    })
    .await
}

/// Exchanges the refresh token, retrying rate limits and server errors (1 s, 2 s, 4 s).
pub(crate) async fn refresh(
    credentials: &OAuthCredentials,
) -> Result<OAuthCredentials, OAuthError> {
    let url = format!("{}/api/oauth/token", host());
    let mut last = None;
    for attempt in 0..=REFRESH_RETRIES {
        if attempt > 0 {
            tokio::time::sleep(Duration::from_secs(1 << (attempt - 1))).await;
        }
        let reply = match request(
            reqwest::Method::POST,
            &url,
            &ACCEPT,
            Body::Form(&[
                ("client_id", CLIENT_ID),
                ("grant_type", "refresh_token"),
                ("refresh_token", &credentials.refresh),
            ]),
        )
        .await
        {
            Ok(reply) => reply,
            Err(error) => {
                last = Some(error);
                continue;
            }
        };
        let json = json_of(&reply);
        if reply.ok() {
            return tokens(&json, "refresh");
        }
        if matches!(reply.status, 401 | 403) || json["error"] == "invalid_grant" {
            let description = json["error_description"]
                .as_str()
                .map(|d| format!(": {d}"))
                .unwrap_or_default();
            return Err(OAuthError::Revoked(format!(
                "Kimi Code token refresh unauthorized (status {}){description}",
                reply.status
            )));
        }
        let retryable = reply.status == 429 || reply.status >= 500;
        if retryable && attempt < REFRESH_RETRIES {
            last = Some(OAuthError::Failed(format!(
                "Kimi Code token refresh failed with status {}",
                reply.status
            )));
            continue;
        }
        return Err(OAuthError::Failed(format!(
            "Kimi Code token refresh failed with status {}{}",
            reply.status,
            with_body(&json.to_string())
        )));
    }
    Err(last.unwrap_or_else(|| OAuthError::Failed("Kimi Code token refresh failed".into())))
}
