//! GitHub Copilot: GitHub's device flow (github.com or an Enterprise domain), then the
//! Copilot token, which is what "refresh" fetches again; the account's model list is read
//! and the models needing a policy are enabled (`github_copilot_models`).

use serde_json::{Value, json};

use super::device::{Poll, PollPlan, poll_until};
use super::github_copilot_models::{enable_policies, fetch_account_models};
use super::http::{Body, request};
use super::interaction::{LoginInteraction, LoginNotice, LoginPrompt};
use super::{OAuthCredentials, OAuthError};

const CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
const USER_AGENT: &str = "GitHubCopilotChat/0.35.0";
const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", USER_AGENT),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];

/// The host of a GitHub Enterprise URL or domain; `None` when it is not one.
pub fn normalize_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    if trimmed.is_empty() {
        return None;
    }
    let with_scheme = if trimmed.contains("://") {
        trimmed.to_owned()
    } else {
        format!("https://{trimmed}")
    };
    reqwest::Url::parse(&with_scheme)
        .ok()?
        .host_str()
        .map(str::to_owned)
}

/// The Copilot API base URL: the token's `proxy-ep` with `proxy.` turned into `api.`, else
/// the Enterprise one, else the individual one.
pub fn copilot_base_url(token: &str, enterprise: Option<&str>) -> String {
    let proxy = token
        .split(';')
        .find_map(|part| part.strip_prefix("proxy-ep="))
        .filter(|h| !h.is_empty());
    if let Some(host) = proxy {
        let api = host
            .strip_prefix("proxy.")
            .map_or_else(|| host.to_owned(), |rest| format!("api.{rest}"));
        return format!("https://{api}");
    }
    match enterprise.and_then(normalize_domain) {
        Some(domain) => format!("https://copilot-api.{domain}"),
        None => "https://api.individual.githubcopilot.com".into(),
    }
}

/// Signs in with the device flow.
pub(crate) async fn login(ui: &dyn LoginInteraction) -> Result<OAuthCredentials, OAuthError> {
    let cancel = ui.cancel_token();
    let input = ui
        .prompt(
            LoginPrompt::Text {
                message: "GitHub Enterprise URL/domain (blank for github.com)".into(),
                placeholder: Some("company.ghe.com".into()),
            },
            cancel.clone(),
        )
        .await?;
    let enterprise = normalize_domain(&input);
    if !input.trim().is_empty() && enterprise.is_none() {
        return Err(OAuthError::Failed(
            "Invalid GitHub Enterprise URL/domain".into(),
        ));
    }
    let domain = enterprise.clone().unwrap_or_else(|| "github.com".into());
    let reply = request(
        reqwest::Method::POST,
        &format!("https://{domain}/login/device/code"),
        &[("Accept", "application/json"), ("User-Agent", USER_AGENT)],
        Body::Form(&[("client_id", CLIENT_ID), ("scope", "read:user")]),
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "GitHub device code request failed ({})",
            reply.summary()
        )));
    }
    let data = reply.json("GitHub device code request")?;
    // A missing interval means GitHub's default of five seconds.
    let interval = match &data["interval"] {
        Value::Null => Some(5.0),
        value => value.as_f64(),
    };
    let (Some(device_code), Some(user_code), Some(uri), Some(interval), Some(expires_in)) = (
        data["device_code"].as_str(),
        data["user_code"].as_str(),
        data["verification_uri"].as_str(),
        interval,
        data["expires_in"].as_f64(),
    ) else {
        return Err(OAuthError::Failed(
            "Invalid device code response fields".into(),
        ));
    };
    ui.notify(LoginNotice::DeviceCode {
        verification_uri: uri.into(),
        user_code: user_code.into(),
    });
    let token_url = format!("https://{domain}/login/oauth/access_token");
    let plan = PollPlan {
        interval_secs: interval,
        expires_in_secs: expires_in,
        wait_before_first: true,
    };
    let github_token = poll_until(plan, &cancel, || async {
        let reply = request(
            reqwest::Method::POST,
            &token_url,
            &[("Accept", "application/json"), ("User-Agent", USER_AGENT)],
            Body::Form(&[
                ("client_id", CLIENT_ID),
                ("device_code", device_code),
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
            ]),
        )
        .await?;
        let data: Value = reply.json("GitHub device token poll")?;
        if let Some(token) = data["access_token"].as_str() {
            return Ok(Poll::Done(token.to_owned()));
        }
        match data["error"].as_str() {
            Some("authorization_pending") => Ok(Poll::Pending),
            Some("slow_down") => Ok(Poll::SlowDown(data["interval"].as_f64())),
            Some(error) => {
                let suffix = data["error_description"]
                    .as_str()
                    .map(|d| format!(": {d}"))
                    .unwrap_or_default();
                Err(OAuthError::Failed(format!(
                    "Device flow failed: {error}{suffix}"
                )))
            }
            None => Err(OAuthError::Failed(format!(
                "GitHub device token poll failed ({})",
                reply.summary()
            ))),
        }
    })
    .await?;
    let mut seed = OAuthCredentials {
        refresh: github_token,
        access: String::new(),
        expires: 0,
        extra: serde_json::Map::new(),
    };
    if let Some(domain) = &enterprise {
        seed.extra
            .insert("enterpriseUrl".into(), domain.clone().into());
    }
    let mut credentials = refresh(&seed).await?;
    // The account's models, then the policies it still has to accept, one at a time.
    let base = copilot_base_url(&credentials.access, enterprise.as_deref());
    let models =
        fetch_account_models(&credentials.access, &base, &COPILOT_HEADERS, &cancel).await?;
    let mut enabled = Vec::new();
    if !models.needing_policy.is_empty() {
        ui.notify(LoginNotice::Progress("Enabling models...".into()));
        enabled = enable_policies(
            &credentials.access,
            &base,
            &models.needing_policy,
            &COPILOT_HEADERS,
            &cancel,
        )
        .await?;
    }
    let mut available = models.available;
    for id in enabled {
        if !available.contains(&id) {
            available.push(id);
        }
    }
    credentials
        .extra
        .insert("availableModelIds".into(), json!(available));
    Ok(credentials)
}

/// Fetches a Copilot token with the GitHub token kept as the refresh token.
pub(crate) async fn refresh(
    credentials: &OAuthCredentials,
) -> Result<OAuthCredentials, OAuthError> {
    let enterprise = credentials.extra_str("enterpriseUrl");
    let domain = enterprise.unwrap_or("github.com");
    let auth = format!("Bearer {}", credentials.refresh);
    let mut headers = vec![
        ("Accept", "application/json"),
        ("Authorization", auth.as_str()),
    ];
    headers.extend(COPILOT_HEADERS);
    let url = format!("https://api.{domain}/copilot_internal/v2/token");
    let reply = request(reqwest::Method::GET, &url, &headers, Body::None).await?;
    if !reply.ok() {
        let message = format!("Copilot token request failed ({})", reply.summary());
        return Err(if matches!(reply.status, 401 | 403) {
            OAuthError::Revoked(message)
        } else {
            OAuthError::Failed(message)
        });
    }
    let data = reply.json("Copilot token request")?;
    let (Some(token), Some(expires_at)) = (data["token"].as_str(), data["expires_at"].as_f64())
    else {
        return Err(OAuthError::Failed(
            "Invalid Copilot token response fields".into(),
        ));
    };
    let mut extra = credentials.extra.clone();
    extra.remove("type");
    Ok(OAuthCredentials {
        refresh: credentials.refresh.clone(),
        access: token.to_owned(),
        expires: (expires_at * 1000.0) as i64 - 5 * 60 * 1000,
        extra,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_url_from_token_or_domain() {
        assert_eq!(
            copilot_base_url(
                "tid=1;exp=2;proxy-ep=proxy.individual.githubcopilot.com;",
                None
            ),
            "https://api.individual.githubcopilot.com"
        );
        assert_eq!(
            copilot_base_url("opaque", Some("company.ghe.com")),
            "https://copilot-api.company.ghe.com"
        );
        assert_eq!(
            copilot_base_url("opaque", None),
            "https://api.individual.githubcopilot.com"
        );
        assert_eq!(
            normalize_domain("https://company.ghe.com/x"),
            Some("company.ghe.com".into())
        );
        assert_eq!(normalize_domain("  "), None);
    }
}
