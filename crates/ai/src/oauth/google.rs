//! Google sign-ins for Cloud Code Assist: Gemini CLI and Antigravity. Authorization code
//! with PKCE on a localhost port, then the user's Cloud project (found or provisioned).
//! The client ids are the public installed-app ones of those tools, as pi-ai has them.

use std::time::Duration;

use serde_json::{Value, json};

use super::browser_flow::{CodeSource, callback_or_manual, parse_authorization_input};
use super::callback::{CallbackOptions, CallbackServer};
use super::http::{Body, request};
use super::interaction::{LoginInteraction, LoginNotice};
use super::{OAuthCredentials, OAuthError, Pkce, expiry_from};

const AUTH_URL: &str = "https://accounts.google.com/o/oauth2/v2/auth";
const TOKEN_URL: &str = "https://oauth2.googleapis.com/token";
const USERINFO_URL: &str = "https://www.googleapis.com/oauth2/v1/userinfo?alt=json";
const CODE_ASSIST: &str = "https://cloudcode-pa.googleapis.com";
const CODE_ASSIST_SANDBOX: &str = "https://daily-cloudcode-pa.sandbox.googleapis.com";
const METADATA: &str =
    r#"{"ideType":"IDE_UNSPECIFIED","platform":"PLATFORM_UNSPECIFIED","pluginType":"GEMINI"}"#;
const PROJECT_HELP: &str = "See https://goo.gle/gemini-cli-auth-docs#workspace-gca";

/// One of the two Google tools' OAuth clients.
pub(crate) struct Flavor {
    name: &'static str,
    client_id: &'static str,
    client_secret: &'static str,
    port: u16,
    path: &'static str,
    scopes: &'static [&'static str],
    consent: bool,
    antigravity: bool,
}

pub(crate) const GEMINI_CLI: Flavor = Flavor {
    name: "Google Cloud",
    client_id: "681255809395-oo8ft2oprdrnp9e3aqf6av3hmdib135j.apps.googleusercontent.com",
    client_secret: "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",
    port: 8085,
    path: "/oauth2callback",
    scopes: &[
        "https://www.googleapis.com/auth/cloud-platform",
        "https://www.googleapis.com/auth/userinfo.email",
        "https://www.googleapis.com/auth/userinfo.profile",
    ],
    consent: true,
    antigravity: false,
};

pub(crate) const ANTIGRAVITY: Flavor = Flavor {
    name: "Antigravity",
    client_id: "1071006060591-tmhssin2h21lcre235vtolojh4g403ep.apps.googleusercontent.com",
    client_secret: "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",
    port: 51121,
    path: "/oauth-callback",
    scopes: &[
        "https://www.googleapis.com/auth/cloud-platform",
        "https://www.googleapis.com/auth/userinfo.email",
        "https://www.googleapis.com/auth/userinfo.profile",
        "https://www.googleapis.com/auth/cclog",
        "https://www.googleapis.com/auth/experimentsandconfigs",
    ],
    consent: false,
    antigravity: true,
};

/// Signs in through the browser (or a pasted redirect URL), then finds the project.
pub(crate) async fn login(
    flavor: Flavor,
    ui: &dyn LoginInteraction,
) -> Result<OAuthCredentials, OAuthError> {
    let pkce = Pkce::generate()?;
    let redirect_uri = format!("http://localhost:{}{}", flavor.port, flavor.path);
    ui.notify(LoginNotice::Progress(
        "Starting local server for OAuth callback...".into(),
    ));
    let mut server = CallbackServer::start(CallbackOptions {
        provider: flavor.name,
        port: flavor.port,
        path: flavor.path,
        redirect_host: "localhost",
        state: Some(&pkce.verifier),
        bind_host: None,
        success_message: None,
    })
    .await?;
    let scope = flavor.scopes.join(" ");
    let mut params = vec![
        ("client_id", flavor.client_id),
        ("response_type", "code"),
        ("redirect_uri", redirect_uri.as_str()),
        ("scope", scope.as_str()),
        ("code_challenge", pkce.challenge.as_str()),
        ("code_challenge_method", "S256"),
        ("state", pkce.verifier.as_str()),
        ("access_type", "offline"),
    ];
    if flavor.consent {
        params.push(("prompt", "consent"));
    }
    ui.notify(LoginNotice::AuthUrl {
        url: format!(
            "{}?{}",
            super::endpoint(AUTH_URL),
            super::http::form(&params)
        ),
        instructions: Some("Complete the sign-in in your browser.".into()),
    });
    let source = callback_or_manual(
        ui,
        Some(&mut server),
        "Complete the sign-in in your browser, or paste the redirect URL here",
        &redirect_uri,
    )
    .await?;
    drop(server);
    let code = match source {
        CodeSource::Callback(code) => code,
        CodeSource::Manual(input) => {
            let (code, state) = parse_authorization_input(&input);
            if state.is_some_and(|s| s != pkce.verifier) {
                return Err(OAuthError::Failed(
                    "OAuth state mismatch - possible CSRF attack".into(),
                ));
            }
            code.filter(|c| !c.is_empty())
                .ok_or_else(|| OAuthError::Failed("No authorization code received".into()))?
        }
    };
    ui.notify(LoginNotice::Progress(
        "Exchanging authorization code for tokens...".into(),
    ));
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &[],
        Body::Form(&[
            ("client_id", flavor.client_id),
            ("client_secret", flavor.client_secret),
            ("code", &code),
            ("grant_type", "authorization_code"),
            ("redirect_uri", &redirect_uri),
            ("code_verifier", &pkce.verifier),
        ]),
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "Token exchange failed ({})",
            reply.summary()
        )));
    }
    let data = reply.json("Token exchange")?;
    let (Some(access), Some(refresh)) = (
        data["access_token"].as_str(),
        data["refresh_token"].as_str().filter(|r| !r.is_empty()),
    ) else {
        return Err(OAuthError::Failed(
            "No refresh token received. Please try again.".into(),
        ));
    };
    ui.notify(LoginNotice::Progress("Getting user info...".into()));
    let email = user_email(access).await;
    let project = if flavor.antigravity {
        ui.notify(LoginNotice::Progress(
            "Checking for existing project...".into(),
        ));
        antigravity_project(access).await
    } else {
        gemini_project(access, ui).await?
    };
    let mut extra = serde_json::Map::new();
    extra.insert("projectId".into(), project.into());
    if let Some(email) = email {
        extra.insert("email".into(), email.into());
    }
    Ok(OAuthCredentials {
        refresh: refresh.into(),
        access: access.into(),
        expires: expiry_from(data["expires_in"].as_f64().unwrap_or(3600.0)),
        extra,
    })
}

/// Refreshes the access token; the project stays.
pub(crate) async fn refresh(
    flavor: Flavor,
    credentials: &OAuthCredentials,
) -> Result<OAuthCredentials, OAuthError> {
    if credentials.extra_str("projectId").is_none() {
        return Err(OAuthError::Revoked(format!(
            "{} credentials missing projectId",
            flavor.name
        )));
    }
    let reply = request(
        reqwest::Method::POST,
        TOKEN_URL,
        &[],
        Body::Form(&[
            ("client_id", flavor.client_id),
            ("client_secret", flavor.client_secret),
            ("refresh_token", &credentials.refresh),
            ("grant_type", "refresh_token"),
        ]),
    )
    .await?;
    if !reply.ok() {
        let message = format!("{} token refresh failed ({})", flavor.name, reply.summary());
        return Err(if reply.refused_grant() {
            OAuthError::Revoked(message)
        } else {
            OAuthError::Failed(message)
        });
    }
    super::anthropic::tokens(&reply.json("Token refresh")?, Some(credentials))
}

async fn user_email(access: &str) -> Option<String> {
    let auth = format!("Bearer {access}");
    let reply = request(
        reqwest::Method::GET,
        USERINFO_URL,
        &[("Authorization", &auth)],
        Body::None,
    )
    .await
    .ok()?;
    let data: Value = serde_json::from_str(&reply.body).ok()?;
    data["email"].as_str().map(str::to_owned)
}

fn project_env() -> Option<String> {
    std::env::var("GOOGLE_CLOUD_PROJECT")
        .or_else(|_| std::env::var("GOOGLE_CLOUD_PROJECT_ID"))
        .ok()
        .filter(|p| !p.is_empty())
}

/// Gemini CLI: the project Code Assist already has, else onboarding to the default tier.
async fn gemini_project(access: &str, ui: &dyn LoginInteraction) -> Result<String, OAuthError> {
    let env_project = project_env();
    let auth = format!("Bearer {access}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("User-Agent", "google-api-nodejs-client/9.15.1"),
        ("X-Goog-Api-Client", "gl-node/22.17.0"),
    ];
    let metadata: Value = serde_json::from_str(METADATA).unwrap_or_default();
    let mut load_metadata = metadata.clone();
    load_metadata["duetProject"] = json!(env_project);
    ui.notify(LoginNotice::Progress(
        "Checking for existing Cloud Code Assist project...".into(),
    ));
    let reply = request(
        reqwest::Method::POST,
        &format!("{CODE_ASSIST}/v1internal:loadCodeAssist"),
        &headers,
        Body::Json(&json!({ "cloudaicompanionProject": env_project, "metadata": load_metadata })),
    )
    .await?;
    let needs_project = || {
        OAuthError::Failed(format!(
            "This account requires setting the GOOGLE_CLOUD_PROJECT or GOOGLE_CLOUD_PROJECT_ID environment variable. {PROJECT_HELP}"
        ))
    };
    let data: Value = if reply.ok() {
        reply.json("loadCodeAssist")?
    } else if reply.body.contains("SECURITY_POLICY_VIOLATED") {
        json!({ "currentTier": { "id": "standard-tier" } })
    } else {
        return Err(OAuthError::Failed(format!(
            "loadCodeAssist failed ({})",
            reply.summary()
        )));
    };
    if !data["currentTier"].is_null() {
        if let Some(project) = data["cloudaicompanionProject"]
            .as_str()
            .filter(|p| !p.is_empty())
        {
            return Ok(project.to_owned());
        }
        return env_project.ok_or_else(needs_project);
    }
    let tier = data["allowedTiers"]
        .as_array()
        .and_then(|tiers| tiers.iter().find(|t| t["isDefault"] == json!(true)))
        .and_then(|t| t["id"].as_str())
        .unwrap_or("legacy-tier")
        .to_owned();
    if tier != "free-tier" && env_project.is_none() {
        return Err(needs_project());
    }
    ui.notify(LoginNotice::Progress(
        "Provisioning Cloud Code Assist project (this may take a moment)...".into(),
    ));
    let mut body = json!({ "tierId": tier, "metadata": metadata });
    if tier != "free-tier"
        && let Some(project) = &env_project
    {
        body["cloudaicompanionProject"] = json!(project);
        body["metadata"]["duetProject"] = json!(project);
    }
    let reply = request(
        reqwest::Method::POST,
        &format!("{CODE_ASSIST}/v1internal:onboardUser"),
        &headers,
        Body::Json(&body),
    )
    .await?;
    if !reply.ok() {
        return Err(OAuthError::Failed(format!(
            "onboardUser failed ({})",
            reply.summary()
        )));
    }
    let mut operation = reply.json("onboardUser")?;
    let mut attempt = 1;
    while operation["done"] != json!(true) {
        let Some(name) = operation["name"].as_str().map(str::to_owned) else {
            break;
        };
        ui.notify(LoginNotice::Progress(format!(
            "Waiting for project provisioning (attempt {})...",
            attempt + 1
        )));
        tokio::time::sleep(Duration::from_secs(5)).await;
        let reply = request(
            reqwest::Method::GET,
            &format!("{CODE_ASSIST}/v1internal/{name}"),
            &headers,
            Body::None,
        )
        .await?;
        if !reply.ok() {
            return Err(OAuthError::Failed(format!(
                "Failed to poll operation ({})",
                reply.summary()
            )));
        }
        operation = reply.json("operation poll")?;
        attempt += 1;
    }
    operation["response"]["cloudaicompanionProject"]["id"]
        .as_str()
        .map(str::to_owned)
        .or(env_project)
        .ok_or_else(|| {
            OAuthError::Failed(format!(
                "Could not discover or provision a Google Cloud project. Try setting the GOOGLE_CLOUD_PROJECT or GOOGLE_CLOUD_PROJECT_ID environment variable. {PROJECT_HELP}"
            ))
        })
}

/// Antigravity: the project Code Assist names (production, then sandbox), else its default.
async fn antigravity_project(access: &str) -> String {
    let auth = format!("Bearer {access}");
    let headers = [
        ("Authorization", auth.as_str()),
        ("User-Agent", "google-api-nodejs-client/9.15.1"),
        (
            "X-Goog-Api-Client",
            "google-cloud-sdk vscode_cloudshelleditor/0.1",
        ),
        ("Client-Metadata", METADATA),
    ];
    let metadata: Value = serde_json::from_str(METADATA).unwrap_or_default();
    for base in [CODE_ASSIST, CODE_ASSIST_SANDBOX] {
        let Ok(reply) = request(
            reqwest::Method::POST,
            &format!("{base}/v1internal:loadCodeAssist"),
            &headers,
            Body::Json(&json!({ "metadata": metadata })),
        )
        .await
        else {
            continue;
        };
        let Ok(data) = serde_json::from_str::<Value>(&reply.body) else {
            continue;
        };
        if !reply.ok() {
            continue;
        }
        let project = &data["cloudaicompanionProject"];
        if let Some(id) = project
            .as_str()
            .or_else(|| project["id"].as_str())
            .filter(|p| !p.is_empty())
        {
            return id.to_owned();
        }
    }
    "rising-fact-p41fc".into()
}
