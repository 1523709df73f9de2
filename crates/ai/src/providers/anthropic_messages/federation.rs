//! Anthropic workload identity federation (pi-ai 0.99.2 through the Anthropic SDK): with no
//! key or credential header, `ANTHROPIC_FEDERATION_RULE_ID`, `ANTHROPIC_ORGANIZATION_ID` and
//! `ANTHROPIC_IDENTITY_TOKEN_FILE` (optional `ANTHROPIC_SERVICE_ACCOUNT_ID`,
//! `ANTHROPIC_WORKSPACE_ID`) trade the identity token in that file for an access token at
//! `<base URL>/v1/oauth/token`, which the messages request carries as
//! `Authorization: Bearer`. Tokens are kept per base URL and configuration for the process
//! and exchanged again when under 30 s from expiry (in the background under 2 minutes), or
//! after a 401.

use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex, MutexGuard, PoisonError};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::env_keys::provider_env;

/// The variables, as the Anthropic SDK names them.
pub const RULE_ID_ENV: &str = "ANTHROPIC_FEDERATION_RULE_ID";
pub const ORGANIZATION_ID_ENV: &str = "ANTHROPIC_ORGANIZATION_ID";
pub const IDENTITY_TOKEN_FILE_ENV: &str = "ANTHROPIC_IDENTITY_TOKEN_FILE";
pub const SERVICE_ACCOUNT_ID_ENV: &str = "ANTHROPIC_SERVICE_ACCOUNT_ID";
pub const WORKSPACE_ID_ENV: &str = "ANTHROPIC_WORKSPACE_ID";

const TOKEN_PATH: &str = "/v1/oauth/token";
const GRANT_TYPE: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const BETAS: &str = "oauth-2025-04-20,oidc-federation-2026-04-01";
/// The user agent of the Anthropic SDK pi-ai 1.6 bundles.
const USER_AGENT: &str = "Anthropic/JS 0.129.0";
const DEFAULT_BASE_URL: &str = "https://api.anthropic.com";
const ADVISORY_REFRESH_SECS: i64 = 120;
const MANDATORY_REFRESH_SECS: i64 = 30;
const MAX_ASSERTION_CHARS: usize = 16 * 1024;
const MAX_ERROR_BODY_CHARS: usize = 2000;

/// A federation configured from the environment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Federation {
    rule_id: String,
    organization_id: String,
    identity_token_file: String,
    service_account_id: Option<String>,
    workspace_id: Option<String>,
}

impl Federation {
    /// The federation the (provider-scoped, then process) environment configures; `None`
    /// unless the rule, organization and identity token file are all set.
    pub fn from_env(scoped: Option<&BTreeMap<String, String>>) -> Option<Self> {
        Some(Self {
            rule_id: provider_env(RULE_ID_ENV, scoped)?,
            organization_id: provider_env(ORGANIZATION_ID_ENV, scoped)?,
            identity_token_file: provider_env(IDENTITY_TOKEN_FILE_ENV, scoped)?,
            service_account_id: provider_env(SERVICE_ACCOUNT_ID_ENV, scoped),
            workspace_id: provider_env(WORKSPACE_ID_ENV, scoped),
        })
    }
}

/// The token exchange request body (field order as the SDK writes it).
#[derive(Serialize)]
struct Exchange<'a> {
    grant_type: &'a str,
    assertion: &'a str,
    federation_rule_id: &'a str,
    organization_id: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    service_account_id: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    workspace_id: Option<&'a str>,
}

/// The token endpoint's answer.
#[derive(Deserialize)]
struct Granted {
    access_token: Option<String>,
    token_type: Option<String>,
    expires_in: Option<serde_json::Value>,
}

#[derive(Clone)]
struct Cached {
    token: String,
    expires_at: i64,
}

#[derive(Default)]
struct Cache {
    tokens: HashMap<(String, Federation), Cached>,
    /// Entries a 401 invalidated: the next request exchanges again.
    forced: Vec<(String, Federation)>,
}

static CACHE: LazyLock<Mutex<Cache>> = LazyLock::new(Mutex::default);

fn cache() -> MutexGuard<'static, Cache> {
    CACHE.lock().unwrap_or_else(PoisonError::into_inner)
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// The token endpoint's base: the model's base URL without trailing slashes.
fn token_base(base_url: &str) -> String {
    let base = base_url.trim_end_matches('/');
    if base.is_empty() {
        DEFAULT_BASE_URL.to_owned()
    } else {
        base.to_owned()
    }
}

/// An access token for requests to `base_url`: the kept one while it has over 30 s left
/// (refreshed in the background under 2 minutes), else a new exchange.
pub async fn bearer_token(federation: &Federation, base_url: &str) -> Result<String, String> {
    let key = (token_base(base_url), federation.clone());
    let kept = {
        let mut cache = cache();
        let forced = cache.forced.iter().position(|k| *k == key);
        match forced {
            Some(index) => {
                cache.forced.remove(index);
                cache.tokens.remove(&key);
                None
            }
            None => cache.tokens.get(&key).cloned(),
        }
    };
    if let Some(kept) = kept {
        let remaining = kept.expires_at - now_secs();
        if remaining > ADVISORY_REFRESH_SECS {
            return Ok(kept.token);
        }
        if remaining > MANDATORY_REFRESH_SECS {
            let key = key.clone();
            tokio::spawn(async move {
                if let Ok(fresh) = exchange(&key.1, &key.0).await {
                    cache().tokens.insert(key, fresh);
                }
            });
            return Ok(kept.token);
        }
    }
    let fresh = exchange(federation, &key.0).await?;
    let token = fresh.token.clone();
    cache().tokens.insert(key, fresh);
    Ok(token)
}

/// Forgets the token for `base_url` after the API refused it (401): the next request
/// exchanges the identity token again.
pub fn invalidate(federation: &Federation, base_url: &str) {
    let key = (token_base(base_url), federation.clone());
    let mut cache = cache();
    if !cache.forced.contains(&key) {
        cache.forced.push(key);
    }
}

/// Refuses to send the identity token over plain HTTP except to this machine.
fn require_secure(base: &str) -> Result<(), String> {
    let Ok(url) = reqwest::Url::parse(base) else {
        return Err(format!("Invalid token endpoint base URL \"{base}\""));
    };
    let host = url
        .host_str()
        .unwrap_or_default()
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let local = matches!(host.as_str(), "localhost" | "127.0.0.1" | "::1");
    if url.scheme() == "https" || (url.scheme() == "http" && local) {
        Ok(())
    } else {
        Err(format!(
            "Refusing to send credential over non-https token endpoint \"{base}\""
        ))
    }
}

/// The identity token in `path`, trimmed.
fn identity_token(path: &str) -> Result<String, String> {
    let content = std::fs::read_to_string(path)
        .map_err(|e| format!("Failed to read identity token file at {path}: {e}"))?;
    let token = content.trim().to_owned();
    if token.is_empty() {
        return Err(format!("Identity token file at {path} is empty"));
    }
    if token.len() > MAX_ASSERTION_CHARS {
        return Err(format!(
            "Identity token is {} KiB, exceeds the 16 KiB assertion limit",
            token.len().div_ceil(1024)
        ));
    }
    Ok(token)
}

/// An error body with only the fields that carry no credential (`error`,
/// `error_description`, `error_uri`); a non-JSON body cut to 2000 characters.
fn redacted(body: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(body) {
        Ok(serde_json::Value::Object(fields)) => {
            let kept: serde_json::Map<String, serde_json::Value> = fields
                .into_iter()
                .filter(|(k, _)| matches!(k.as_str(), "error" | "error_description" | "error_uri"))
                .collect();
            serde_json::Value::Object(kept).to_string()
        }
        // A JSON string is kept (as JSON); other values carry nothing worth showing.
        Ok(serde_json::Value::String(text)) => serde_json::Value::String(text).to_string(),
        Ok(_) => "null".to_owned(),
        Err(_) if body.chars().count() <= MAX_ERROR_BODY_CHARS => body.to_owned(),
        Err(_) => {
            let cut: String = body.chars().take(MAX_ERROR_BODY_CHARS).collect();
            let more = body.chars().count() - MAX_ERROR_BODY_CHARS;
            format!("{cut}... <{more} more chars>")
        }
    }
}

/// Trades the identity token for an access token at `<base>/v1/oauth/token`.
async fn exchange(federation: &Federation, base: &str) -> Result<Cached, String> {
    require_secure(base)?;
    let assertion = identity_token(&federation.identity_token_file)?;
    let body = Exchange {
        grant_type: GRANT_TYPE,
        assertion: &assertion,
        federation_rule_id: &federation.rule_id,
        organization_id: &federation.organization_id,
        service_account_id: federation.service_account_id.as_deref(),
        workspace_id: federation.workspace_id.as_deref(),
    };
    let body = serde_json::to_string(&body).map_err(|e| e.to_string())?;
    let url = format!("{base}{TOKEN_PATH}");
    let client = crate::http::shared_client()?;
    let response = client
        .post(&url)
        .header("content-type", "application/json")
        .header("anthropic-beta", BETAS)
        .header("user-agent", USER_AGENT)
        .body(body)
        .send()
        .await
        .map_err(|e| format!("Failed to reach token endpoint {url}: {e}"))?;
    let status = response.status().as_u16();
    let request_id = response
        .headers()
        .get("request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let text = response.text().await.unwrap_or_default();
    if !(200..300).contains(&status) {
        let id = request_id
            .map(|id| format!(" (request-id {id})"))
            .unwrap_or_default();
        let hint = if status == 401 {
            let workspace = if federation.workspace_id.is_some() {
                ""
            } else {
                "If your federation rule is scoped to multiple workspaces, set the \
                 ANTHROPIC_WORKSPACE_ID environment variable, the 'workspace_id' config key, \
                 or the `workspaceId` option. "
            };
            format!(
                " Ensure your federation rule matches your identity token. {workspace}View \
                 your authentication events in the Workload identity page of Claude Console \
                 for more details."
            )
        } else {
            String::new()
        };
        return Err(format!(
            "Token exchange failed with status {status}{id}: {}{hint}",
            redacted(&text)
        ));
    }
    let granted: Granted = serde_json::from_str(&text)
        .map_err(|_| format!("Token endpoint returned non-JSON response (status {status})"))?;
    let Some(token) = granted.access_token.filter(|t| !t.is_empty()) else {
        return Err(format!(
            "Token endpoint response missing access_token: {}",
            redacted(&text)
        ));
    };
    if let Some(kind) = granted
        .token_type
        .filter(|t| !t.is_empty() && !t.eq_ignore_ascii_case("bearer"))
    {
        return Err(format!(
            "Token endpoint response: unsupported token_type \"{kind}\" (want Bearer)"
        ));
    }
    let expires_in = match granted.expires_in {
        Some(serde_json::Value::Number(n)) => n.as_f64(),
        Some(serde_json::Value::String(s)) => s.trim().parse::<f64>().ok(),
        _ => None,
    }
    .filter(|n| n.is_finite())
    .ok_or_else(|| {
        format!(
            "Token endpoint response missing required fields: {}",
            redacted(&text)
        )
    })?;
    Ok(Cached {
        token,
        expires_at: now_secs() + expires_in as i64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_identity_token_goes_only_over_https_or_to_this_machine() {
        assert!(require_secure("https://api.anthropic.com").is_ok());
        assert!(require_secure("http://127.0.0.1:8080/x").is_ok());
        assert!(require_secure("http://localhost:1").is_ok());
        assert_eq!(
            require_secure("http://gateway.example"),
            Err(
                "Refusing to send credential over non-https token endpoint \"http://gateway.example\""
                    .into()
            )
        );
    }

    #[test]
    fn error_bodies_keep_only_the_oauth_error_fields() {
        assert_eq!(
            redacted(
                r#"{"error":"invalid_grant","access_token":"secret","error_description":"no"}"#
            ),
            r#"{"error":"invalid_grant","error_description":"no"}"#
        );
        assert_eq!(redacted("plain"), "plain");
    }
}
