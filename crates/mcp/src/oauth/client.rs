//! One server's OAuth: the stored state, discovery cached in it, and the token a
//! connection sends, refreshed before it expires or after a 401. Connections never start a
//! browser sign-in; when a refresh cannot help they report that the server needs sign-in.

use std::sync::Arc;
use std::time::Duration;

use super::discovery::{Challenge, Discovered, discover};
use super::document;
use super::flow::{self, TokenRequest};
use super::settings::OAuthSettings;
use super::state::{AuthState, ClientInformation};
use super::store::AuthStore;
use super::{OAuthError, now_ms};

/// Refresh this long before the access token expires, as pi-mcp does.
const REFRESH_SKEW_MS: i64 = 30_000;
/// Each request to the authorization server is limited to this.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(15);

/// What a refresh achieved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refreshed {
    Authorized,
    /// Only a browser sign-in helps.
    NeedsSignIn,
}

/// A server that signs in with OAuth.
#[derive(Clone)]
pub struct ServerAuth {
    pub server: String,
    pub url: String,
    pub settings: OAuthSettings,
    pub store: AuthStore,
    pub(super) http: reqwest::Client,
    /// One refresh at a time per server in this process.
    refreshing: Arc<tokio::sync::Mutex<()>>,
}

impl ServerAuth {
    pub fn new(
        server: &str,
        url: &str,
        settings: OAuthSettings,
        store: AuthStore,
    ) -> Result<Self, OAuthError> {
        // reqwest is built without a bundled crypto provider; ring is pi's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let http = reqwest::Client::builder()
            .timeout(REQUEST_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map_err(|e| OAuthError::Flow(e.to_string()))?;
        Ok(Self {
            server: server.to_owned(),
            url: super::store::normalize_url(url),
            settings,
            store,
            http,
            refreshing: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    pub fn load(&self) -> Result<AuthState, OAuthError> {
        Ok(self.store.load(&self.server, &self.url)?)
    }

    pub fn update(&self, change: impl FnOnce(&mut AuthState)) -> Result<AuthState, OAuthError> {
        Ok(self.store.update(&self.server, &self.url, change)?)
    }

    /// The authorization server: cached in the state, else discovered and cached.
    pub(super) async fn discovered(
        &self,
        state: &AuthState,
        challenge: Option<&Challenge>,
    ) -> Result<Discovered, OAuthError> {
        let configured = self.settings.auth_server_metadata_url.as_deref();
        if configured.is_none()
            && let Some(cached) = state.discovery.as_ref().and_then(Discovered::from_value)
        {
            return Ok(cached);
        }
        let found = discover(&self.http, &self.url, challenge, configured).await?;
        if configured.is_none() {
            let value = found.to_value();
            self.update(|s| s.discovery = Some(value))?;
        }
        Ok(found)
    }

    /// The configured client, else the stored one.
    pub(super) fn client(&self, state: &AuthState) -> Option<ClientInformation> {
        match &self.settings.client_id {
            Some(id) => Some(ClientInformation::with_id(
                id,
                self.settings.client_secret.as_deref(),
            )),
            None => state.client_information.clone(),
        }
    }

    /// The client a refresh authenticates as: the configured or stored one, else pi's
    /// document for the first redirect it lists (pi 1.6.0 stores no document client).
    fn refresh_client(
        &self,
        state: &AuthState,
        discovered: &Discovered,
    ) -> Result<Option<ClientInformation>, OAuthError> {
        if let Some(client) = self.client(state) {
            return Ok(Some(client));
        }
        let fixed = self
            .settings
            .callback_url
            .clone()
            .filter(|_| self.settings.loopback().2.is_some());
        let redirect = fixed
            .into_iter()
            .find(|u| document::lists_redirect(u))
            .unwrap_or_else(|| "http://127.0.0.1/callback".to_owned());
        Ok(
            document::choose(&self.settings, &self.url, discovered, &redirect)?
                .map(|doc| ClientInformation::with_id(&doc.client_id, None)),
        )
    }

    /// The access token to send: refreshed first when it is about to expire.
    pub async fn token(&self) -> Option<String> {
        let state = self.load().ok()?;
        let token = state.access_token()?.to_owned();
        if state.expires_within(REFRESH_SKEW_MS, now_ms()) && state.refresh_token().is_some() {
            let _ = self.refresh(Some(&token), None).await;
            return self.load().ok()?.access_token().map(str::to_owned);
        }
        Some(token)
    }

    /// After a 401 to `sent`: refresh unless another refresh already replaced the token.
    pub async fn unauthorized(
        &self,
        sent: Option<&str>,
        challenge: &Challenge,
    ) -> Result<Refreshed, OAuthError> {
        if challenge.error.as_deref() == Some("insufficient_scope") {
            return Ok(Refreshed::NeedsSignIn);
        }
        self.refresh(sent, Some(challenge)).await
    }

    /// Uses the stored refresh token when the stored access token is still `stale`.
    pub async fn refresh(
        &self,
        stale: Option<&str>,
        challenge: Option<&Challenge>,
    ) -> Result<Refreshed, OAuthError> {
        let _one = self.refreshing.lock().await;
        let state = self.load()?;
        if state.access_token() != stale {
            return Ok(Refreshed::Authorized);
        }
        self.refresh_stored(state, challenge).await
    }

    /// A refresh with the stored state; an unknown client or a refused grant clears what
    /// they invalidate, as pi-mcp does.
    pub(super) async fn refresh_stored(
        &self,
        state: AuthState,
        challenge: Option<&Challenge>,
    ) -> Result<Refreshed, OAuthError> {
        let Some(refresh_token) = state.refresh_token().map(str::to_owned) else {
            return Ok(Refreshed::NeedsSignIn);
        };
        let discovered = self.discovered(&state, challenge).await?;
        let Some(client) = self.refresh_client(&state, &discovered)? else {
            return Ok(Refreshed::NeedsSignIn);
        };
        let resource = discovered.resource(&self.url)?;
        let request = TokenRequest {
            discovered: &discovered,
            client: &client,
            resource: resource.as_deref(),
        };
        match flow::refresh(&self.http, &request, &refresh_token).await {
            Ok(tokens) => {
                let scope = state.tokens.as_ref().and_then(|t| t.scope.clone());
                self.update(|s| s.set_tokens(tokens, scope.as_deref(), now_ms()))?;
                Ok(Refreshed::Authorized)
            }
            Err(OAuthError::Server { code, .. })
                if code == "invalid_client" || code == "unauthorized_client" =>
            {
                self.update(|s| {
                    s.client_information = None;
                    s.clear_tokens();
                    s.discovery = None;
                })?;
                Ok(Refreshed::NeedsSignIn)
            }
            Err(OAuthError::Server { code, .. }) if code == "invalid_grant" => {
                self.update(AuthState::clear_tokens)?;
                Ok(Refreshed::NeedsSignIn)
            }
            Err(OAuthError::Server { code, .. }) if code == "server_error" => {
                Ok(Refreshed::NeedsSignIn)
            }
            Err(e) => Err(e),
        }
    }
}
