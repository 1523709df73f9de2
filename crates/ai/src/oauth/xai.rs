//! xAI ("Sign in with SuperGrok or X Premium"): a device code at auth.x.ai, then token
//! polls; the access token is the request key and refreshes with the rotating refresh token.

use serde_json::Value;

use super::device::{Poll, PollPlan, poll_until};
use super::http::{Body, Reply, request};
use super::interaction::{LoginInteraction, LoginNotice};
use super::{OAuthCredentials, OAuthError, now_ms};

const CLIENT_ID: &str = "b1a00492-073a-47ea-816f-4c329264a828";
const SCOPE: &str = "openid profile email offline_access grok-cli:access api:access";
const DEVICE_CODE_URL: &str = "https://auth.x.ai/oauth2/device/code";
const TOKEN_URL: &str = "https://auth.x.ai/oauth2/token";
/// The lifetime assumed when a token reply names none.
const DEFAULT_LIFETIME_SECS: f64 = 3600.0;
const ACCEPT: [(&str, &str); 1] = [("Accept", "application/json")];

fn invalid(field: &str) -> OAuthError {
    OAuthError::Failed(format!("Invalid xAI OAuth response field: {field}"))
}

fn required<'a>(body: &'a Value, field: &str) -> Result<&'a str, OAuthError> {
    body[field]
        .as_str()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid(field))
}

fn positive(body: &Value, field: &str) -> Result<f64, OAuthError> {
    body[field]
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .ok_or_else(|| invalid(field))
}

/// Only an https page may be shown as the place to enter the code.
fn trusted_page(raw: &str) -> Result<String, OAuthError> {
    match reqwest::Url::parse(raw) {
        Ok(url) if url.scheme() == "https" => Ok(url.to_string()),
        _ => Err(OAuthError::Failed(
            "Untrusted verification URI in xAI OAuth response".into(),
        )),
    }
}

/// `xAI OAuth <action> failed (HTTP 400): invalid_grant: <description>`.
fn failure(action: &str, reply: &Reply) -> String {
    let body: Value = serde_json::from_str(&reply.body).unwrap_or_default();
    let detail: Vec<&str> = ["error", "error_description"]
        .iter()
        .filter_map(|k| body[*k].as_str().filter(|s| !s.is_empty()))
        .collect();
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(": {}", detail.join(": "))
    };
    format!("xAI OAuth {action} failed (HTTP {}){detail}", reply.status)
}

/// The reply's JSON object (an empty one when it is another JSON value).
fn body_of(reply: &Reply) -> Result<Value, OAuthError> {
    let value: Value = serde_json::from_str(&reply.body).map_err(|_| {
        OAuthError::Failed(format!(
            "xAI OAuth returned invalid JSON (HTTP {})",
            reply.status
        ))
    })?;
    Ok(if value.is_object() {
        value
    } else {
        Value::Object(Default::default())
    })
}

/// Credentials from a token reply; a refresh without a new refresh token keeps the old one.
fn credentials(
    body: &Value,
    previous_refresh: Option<&str>,
) -> Result<OAuthCredentials, OAuthError> {
    let access = required(body, "access_token")?.to_owned();
    let refresh = match (body.get("refresh_token"), previous_refresh) {
        (None, Some(previous)) => previous.to_owned(),
        _ => required(body, "refresh_token")?.to_owned(),
    };
    let lifetime = match body.get("expires_in") {
        None => DEFAULT_LIFETIME_SECS,
        Some(_) => positive(body, "expires_in")?,
    };
    Ok(OAuthCredentials {
        refresh,
        access,
        expires: now_ms() + (lifetime * 1000.0) as i64 - 5 * 60 * 1000,
        extra: Default::default(),
    })
}

/// Signs in with the device code: shows the (prefilled) page and the code, then polls.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let cancel = ui.cancel_token();
    let reply = request(
        reqwest::Method::POST,
        DEVICE_CODE_URL,
        &ACCEPT,
        Body::Form(&[
            ("client_id", CLIENT_ID),
            ("scope", SCOPE),
            ("referrer", "pi"),
        ]),
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Failed(failure("device authorization", &reply)));
    }
    let device = body_of(&reply)?;
    let device_code = required(&device, "device_code")?;
    let user_code = required(&device, "user_code")?;
    let page = trusted_page(required(&device, "verification_uri")?)?;
    let prefilled = match device["verification_uri_complete"].as_str() {
        Some(raw) if !raw.is_empty() => Some(trusted_page(raw)?),
        _ => None,
    };
    let expires_in = positive(&device, "expires_in")?;
    let interval = device["interval"]
        .as_f64()
        .filter(|n| n.is_finite() && *n > 0.0)
        .unwrap_or(5.0);
    ui.notify(LoginNotice::DeviceCode {
        verification_uri: prefilled.unwrap_or(page),
        user_code: user_code.to_owned(),
    });
    let plan = PollPlan {
        interval_secs: interval,
        expires_in_secs: expires_in,
        wait_before_first: true,
    };
    poll_until(plan, &cancel, || async {
        let reply = request(
            reqwest::Method::POST,
            TOKEN_URL,
            &ACCEPT,
            Body::Form(&[
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
                ("client_id", CLIENT_ID),
                ("device_code", device_code),
            ]),
        )
        .await?;
        let body = body_of(&reply)?;
        if reply.ok() {
            return credentials(&body, None).map(Poll::Done);
        }
        match body["error"].as_str() {
            Some("authorization_pending") => Ok(Poll::Pending),
            Some("slow_down") => Ok(Poll::SlowDown(body["interval"].as_f64())),
            Some("access_denied" | "authorization_denied") => Err(OAuthError::Failed(
                "xAI device authorization was denied".into(),
            )),
            Some("expired_token") => Err(OAuthError::Failed("xAI device code expired".into())),
            _ => Err(OAuthError::Failed(failure("device token polling", &reply))),
        }
    })
    .await
}

/// Exchanges the refresh token for new tokens.
pub(crate) async fn refresh(
    credentials_now: &OAuthCredentials,
) -> Result<OAuthCredentials, OAuthError> {
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &ACCEPT,
        Body::Form(&[
            ("grant_type", "refresh_token"),
            ("client_id", CLIENT_ID),
            ("refresh_token", &credentials_now.refresh),
        ]),
    )
    .await?;
    if !reply.ok() {
        let message = failure("token refresh", &reply);
        return Err(if reply.refused_grant() {
            OAuthError::Revoked(message)
        } else {
            OAuthError::Failed(message)
        });
    }
    credentials(&body_of(&reply)?, Some(&credentials_now.refresh))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{credentials, trusted_page};

    #[test]
    fn a_refresh_without_a_new_refresh_token_keeps_the_old_one() {
        let kept = credentials(&json!({"access_token": "a2"}), Some("r1")).unwrap();
        assert_eq!((kept.access.as_str(), kept.refresh.as_str()), ("a2", "r1"));
        assert!(credentials(&json!({"access_token": "a2"}), None).is_err());
        let bad = credentials(
            &json!({"access_token": "a", "refresh_token": "r", "expires_in": 0}),
            None,
        );
        assert_eq!(
            bad.unwrap_err().to_string(),
            "Invalid xAI OAuth response field: expires_in"
        );
    }

    #[test]
    fn only_https_pages_are_shown() {
        assert!(trusted_page("https://accounts.x.ai/device").is_ok());
        assert!(trusted_page("http://accounts.x.ai/device").is_err());
        assert!(trusted_page("javascript:alert(1)").is_err());
    }
}
