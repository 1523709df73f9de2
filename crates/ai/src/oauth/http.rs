//! The few HTTP calls sign-in flows make: JSON or form posts and JSON gets, each bounded by
//! 30 seconds, with errors that name the URL and status but never a token.

use std::time::Duration;

use serde_json::Value;

use super::OAuthError;
use super::endpoints::endpoint;

const TIMEOUT: Duration = Duration::from_secs(30);

/// A response: status and body text.
pub(crate) struct Reply {
    pub status: u16,
    pub body: String,
}

impl Reply {
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as JSON, or an error naming what was being read.
    pub fn json(&self, what: &str) -> Result<Value, OAuthError> {
        serde_json::from_str(&self.body)
            .map_err(|_| OAuthError::Failed(format!("{what} returned invalid JSON")))
    }

    /// The OAuth error code of a failed reply (`invalid_grant`, ...), if the body has one.
    pub fn error_code(&self) -> Option<String> {
        let value: Value = serde_json::from_str(&self.body).ok()?;
        match value.get("error")? {
            Value::String(code) => Some(code.clone()),
            Value::Object(map) => map
                .get("code")
                .or_else(|| map.get("type"))
                .and_then(Value::as_str)
                .map(str::to_owned),
            _ => None,
        }
    }

    /// `status=400; error=invalid_grant` (the description too when short and token-free).
    pub fn summary(&self) -> String {
        let mut text = format!("status={}", self.status);
        if let Some(code) = self.error_code() {
            text.push_str(&format!("; error={code}"));
        }
        let description = serde_json::from_str::<Value>(&self.body)
            .ok()
            .and_then(|v| {
                v.get("error_description")
                    .or_else(|| v.pointer("/error/message"))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            });
        if let Some(description) = description.filter(|d| d.len() <= 200) {
            text.push_str(&format!("; {description}"));
        }
        text
    }

    /// Whether the server refused the grant itself (a revoked or used refresh token).
    pub fn refused_grant(&self) -> bool {
        matches!(self.status, 400 | 401 | 403)
            && matches!(
                self.error_code().as_deref(),
                Some("invalid_grant" | "invalid_token" | "unauthorized_client" | "invalid_request")
            )
            || self.status == 401
    }
}

/// How a request body is encoded.
pub(crate) enum Body<'a> {
    Json(&'a Value),
    Form(&'a [(&'a str, &'a str)]),
    None,
}

/// Sends a request to `url` (redirected by `PI_OAUTH_BASE_URL`).
pub(crate) async fn request(
    method: reqwest::Method,
    url: &str,
    headers: &[(&str, &str)],
    body: Body<'_>,
) -> Result<Reply, OAuthError> {
    let client = super::super::http::shared_client().map_err(OAuthError::Failed)?;
    let target = endpoint(url);
    let mut builder = client.request(method, &target).timeout(TIMEOUT);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder = match body {
        Body::Json(value) => builder
            .header("Content-Type", "application/json")
            .body(value.to_string()),
        Body::Form(pairs) => builder
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(form(pairs)),
        Body::None => builder,
    };
    let response = builder
        .send()
        .await
        .map_err(|e| OAuthError::Failed(format!("Request to {url} failed: {}", reason(&e))))?;
    let status = response.status().as_u16();
    let body = response.text().await.map_err(|e| {
        OAuthError::Failed(format!("Reading the reply of {url} failed: {}", reason(&e)))
    })?;
    Ok(Reply { status, body })
}

/// `application/x-www-form-urlencoded` of `pairs`.
pub(crate) fn form(pairs: &[(&str, &str)]) -> String {
    form_urlencoded::Serializer::new(String::new())
        .extend_pairs(pairs)
        .finish()
}

fn reason(error: &reqwest::Error) -> &'static str {
    if error.is_timeout() {
        "timed out"
    } else if error.is_connect() {
        "could not connect"
    } else {
        "connection error"
    }
}
