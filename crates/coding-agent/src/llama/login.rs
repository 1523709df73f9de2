//! `/login llama.cpp`: asks for the router URL and an optional key, checks that the router
//! answers `GET /models`, and stores the connection in `auth.json` as pi 1.6.0 does.

use std::path::Path;

use pi_ai::oauth::{LoginInteraction, LoginPrompt, OAuthError};

use super::PROVIDER_ID;
use super::client::LlamaClient;
use super::config::{BASE_URL_VAR, credential_entry};
use super::url::{DEFAULT_SERVER_URL, normalize_server_url};

/// Asks for the connection, checks it and returns the credential to store.
pub async fn ask(ui: &dyn LoginInteraction) -> Result<serde_json::Value, OAuthError> {
    let cancel = ui.cancel_token();
    let from_env = std::env::var(BASE_URL_VAR).ok().filter(|v| !v.is_empty());
    let entered = ui
        .prompt(
            LoginPrompt::Text {
                message: "llama.cpp server URL".to_owned(),
                placeholder: Some(
                    from_env
                        .clone()
                        .unwrap_or_else(|| DEFAULT_SERVER_URL.to_owned()),
                ),
            },
            cancel.child_token(),
        )
        .await?;
    let entered = entered.trim();
    let url = if entered.is_empty() {
        from_env.unwrap_or_else(|| DEFAULT_SERVER_URL.to_owned())
    } else {
        entered.to_owned()
    };
    let server_url = normalize_server_url(&url).map_err(|e| OAuthError::Failed(e.to_string()))?;
    let key = ui
        .prompt(
            LoginPrompt::Secret {
                message: "API key (optional)".to_owned(),
            },
            cancel.child_token(),
        )
        .await?;
    let key = key.trim();
    let key = (!key.is_empty()).then(|| key.to_owned());
    let client = LlamaClient::new(&server_url, key.clone())
        .map_err(|e| OAuthError::Failed(e.to_string()))?;
    client.list(false, &cancel).await.map_err(|e| match e {
        super::LlamaError::Cancelled => OAuthError::Cancelled,
        other => OAuthError::Failed(other.to_string()),
    })?;
    Ok(credential_entry(&server_url, key.as_deref()))
}

/// Stores the credential under `llama.cpp` in `auth.json` (other entries stay).
pub fn save(auth_path: &Path, credential: serde_json::Value) -> std::io::Result<()> {
    crate::config::auth::update_auth_file(auth_path, |map| {
        map.insert(PROVIDER_ID.to_owned(), credential);
    })
}
