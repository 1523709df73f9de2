//! The GitHub Copilot sign-in's model steps, as pi-ai 1.6 takes them: the account's model
//! list (`GET <api>/models`), then the policy of each model it still has to accept
//! (`POST <api>/models/<id>/policy`), one at a time. A 429 is retried up to twice within
//! 5 seconds, after the server's `retry-after` (seconds or a date) or 0.5 s, 1 s; a wait
//! that would end past those 5 seconds is not taken. A policy still refused for the rate
//! limit stops the policy updates.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::OAuthError;
use super::endpoints::endpoint;

/// pi-ai 1.6's Copilot API version header for the model list.
const API_VERSION: &str = "2026-06-01";
/// Each request's own limit.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(5);
const MAX_RETRIES: u32 = 2;
const RETRY_BUDGET: Duration = Duration::from_secs(5);

/// The account's models: those it can pick, and those whose policy the login accepts.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct AccountModels {
    pub available: Vec<String>,
    pub needing_policy: Vec<String>,
}

/// One reply: status, reason phrase and body.
struct Reply {
    status: u16,
    reason: String,
    body: String,
}

impl Reply {
    /// `429 Too Many Requests: <body>`, as the Copilot login reports a failed request.
    fn describe(&self) -> String {
        format!("{} {}: {}", self.status, self.reason, self.body)
    }
}

/// How long a 429 asks to wait: its `retry-after` (seconds, or an HTTP date), else
/// 0.5 s doubled per retry; `None` when the header is neither.
fn retry_delay(headers: &reqwest::header::HeaderMap, retry: u32) -> Option<Duration> {
    let Some(value) = headers.get(reqwest::header::RETRY_AFTER) else {
        return Some(Duration::from_millis(500 * 2u64.pow(retry)));
    };
    // Only `retry-after` counts here (not `retry-after-ms`).
    let mut only = reqwest::header::HeaderMap::new();
    only.insert(reqwest::header::RETRY_AFTER, value.clone());
    crate::http::retry_after(&only)
}

/// Sends a request, retrying a 429 as the module doc says.
async fn send_retrying(
    build: impl Fn() -> Result<reqwest::RequestBuilder, OAuthError>,
    cancel: &CancellationToken,
) -> Result<Reply, OAuthError> {
    let deadline = Instant::now() + RETRY_BUDGET;
    let mut retry = 0;
    loop {
        let sent = tokio::select! {
            _ = cancel.cancelled() => return Err(OAuthError::Cancelled),
            sent = build()?.timeout(REQUEST_TIMEOUT).send() => sent,
        };
        let response =
            sent.map_err(|e| OAuthError::Failed(format!("Copilot request failed: {e}")))?;
        let status = response.status();
        let headers = response.headers().clone();
        let reply = Reply {
            status: status.as_u16(),
            reason: status.canonical_reason().unwrap_or_default().to_owned(),
            body: response.text().await.unwrap_or_default(),
        };
        if reply.status != 429 || retry == MAX_RETRIES {
            return Ok(reply);
        }
        let Some(delay) = retry_delay(&headers, retry) else {
            return Ok(reply);
        };
        if delay >= deadline.saturating_duration_since(Instant::now()) {
            return Ok(reply);
        }
        tokio::select! {
            _ = cancel.cancelled() => return Err(OAuthError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
        retry += 1;
    }
}

/// The account's model list from `GET <base>/models`; the individual endpoint falls back
/// to the models whose policy is on when the account picks none.
pub async fn fetch_account_models(
    token: &str,
    base: &str,
    headers: &[(&str, &str)],
    cancel: &CancellationToken,
) -> Result<AccountModels, OAuthError> {
    let client = crate::http::shared_client().map_err(OAuthError::Failed)?;
    let url = endpoint(&format!("{base}/models"));
    let reply = send_retrying(
        || {
            let mut builder = client
                .get(&url)
                .header("Accept", "application/json")
                .header("Authorization", format!("Bearer {token}"))
                .header("X-GitHub-Api-Version", API_VERSION);
            for (name, value) in headers {
                builder = builder.header(*name, *value);
            }
            Ok(builder)
        },
        cancel,
    )
    .await?;
    if !(200..300).contains(&reply.status) {
        return Err(OAuthError::Failed(reply.describe()));
    }
    let raw: Value = serde_json::from_str(&reply.body)
        .map_err(|_| OAuthError::Failed("Invalid Copilot models response".into()))?;
    let fallback = base == "https://api.individual.githubcopilot.com";
    parse_account_models(&raw, fallback)
}

/// pi-ai 1.6's `parseGitHubCopilotModelCatalog`: models without tool calls are left out;
/// the available ones are those the picker shows (policy not disabled); those needing a
/// policy are catalog models whose policy is unconfigured.
pub fn parse_account_models(raw: &Value, fallback: bool) -> Result<AccountModels, OAuthError> {
    let Some(data) = raw.get("data").and_then(Value::as_array) else {
        return Err(OAuthError::Failed("Invalid Copilot models response".into()));
    };
    let known: Vec<String> = crate::models::get_models("github-copilot")
        .into_iter()
        .map(|m| m.id)
        .collect();
    let models: Vec<(String, bool, Option<&str>)> = data
        .iter()
        .filter_map(|item| {
            let id = item.get("id")?.as_str()?;
            let tools = item.pointer("/capabilities/supports/tool_calls");
            (tools != Some(&Value::Bool(false))).then(|| {
                let picker = item.get("model_picker_enabled") == Some(&Value::Bool(true));
                let state = item.pointer("/policy/state").and_then(Value::as_str);
                (id.to_owned(), picker, state)
            })
        })
        .collect();
    let picked: Vec<String> = models
        .iter()
        .filter(|(_, picker, state)| *picker && *state != Some("disabled"))
        .map(|(id, ..)| id.clone())
        .collect();
    let use_fallback = fallback && picked.is_empty();
    let available = if !picked.is_empty() || !fallback {
        picked
    } else {
        models
            .iter()
            .filter(|(_, _, state)| *state == Some("enabled"))
            .map(|(id, ..)| id.clone())
            .collect()
    };
    let needing_policy = models
        .iter()
        .filter(|(id, picker, state)| {
            *state == Some("unconfigured") && known.contains(id) && (*picker || use_fallback)
        })
        .map(|(id, ..)| id.clone())
        .collect();
    Ok(AccountModels {
        available,
        needing_policy,
    })
}

/// Accepts the policy of each of `ids` in turn; the ones accepted. A request that fails
/// skips its model; one still rate limited after its retries ends the updates.
pub async fn enable_policies(
    token: &str,
    base: &str,
    ids: &[String],
    headers: &[(&str, &str)],
    cancel: &CancellationToken,
) -> Result<Vec<String>, OAuthError> {
    let client = crate::http::shared_client().map_err(OAuthError::Failed)?;
    let body = json!({ "state": "enabled" }).to_string();
    let mut enabled = Vec::new();
    for id in ids {
        let url = endpoint(&format!("{base}/models/{id}/policy"));
        let sent = send_retrying(
            || {
                let mut builder = client
                    .post(&url)
                    .header("Content-Type", "application/json")
                    .header("Authorization", format!("Bearer {token}"));
                for (name, value) in headers {
                    builder = builder.header(*name, *value);
                }
                Ok(builder
                    .header("openai-intent", "chat-policy")
                    .header("x-interaction-type", "chat-policy")
                    .body(body.clone()))
            },
            cancel,
        )
        .await;
        match sent {
            Err(OAuthError::Cancelled) => return Err(OAuthError::Cancelled),
            Err(_) => continue,
            Ok(reply) if reply.status == 429 => break,
            Ok(reply) if (200..300).contains(&reply.status) => enabled.push(id.clone()),
            Ok(_) => {}
        }
    }
    Ok(enabled)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_account_list_decides_what_is_available_and_what_needs_a_policy() {
        let known = crate::models::get_models("github-copilot");
        let (a, b) = (known[0].id.clone(), known[1].id.clone());
        let raw = json!({"data": [
            {"id": a, "model_picker_enabled": true, "policy": {"state": "unconfigured"}},
            {"id": b, "model_picker_enabled": true, "policy": {"state": "disabled"}},
            {"id": "not-in-catalog", "model_picker_enabled": true, "policy": {"state": "unconfigured"}},
            {"id": "embeddings", "model_picker_enabled": true,
             "capabilities": {"supports": {"tool_calls": false}}},
        ]});
        let parsed = parse_account_models(&raw, true).unwrap();
        assert_eq!(parsed.available, [a.clone(), "not-in-catalog".into()]);
        assert_eq!(parsed.needing_policy, std::slice::from_ref(&a));
        // None picked on the individual endpoint: the enabled ones, and every unconfigured one.
        let raw = json!({"data": [
            {"id": a, "policy": {"state": "unconfigured"}},
            {"id": b, "policy": {"state": "enabled"}},
        ]});
        let parsed = parse_account_models(&raw, true).unwrap();
        assert_eq!(parsed.available, std::slice::from_ref(&b));
        assert_eq!(parsed.needing_policy, std::slice::from_ref(&a));
        assert_eq!(
            parse_account_models(&raw, false).unwrap(),
            AccountModels::default()
        );
    }
}
