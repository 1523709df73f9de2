//! Opening a streamable HTTP server: its headers resolved, and for a server that signs in
//! with OAuth the stored token sent, refreshed once after a 401; when that cannot help the
//! server needs sign-in (`pi mcp login` or `/mcp`).

use std::sync::Arc;

use rmcp::ServiceExt;
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::handler::Handler;
use super::{Connection, lock};
use crate::oauth::{Challenge, OAuthSettings, Refreshed, ServerAuth};

/// How much of an HTTP error's body is read: a body that never ends does not hold the call.
const MAX_ERROR_BODY_BYTES: usize = 8 * 1024;

/// The error `open` returns for a server that needs sign-in.
pub(super) const NEEDS_SIGN_IN: &str = "needs sign-in";

type Opened = Result<RunningService<rmcp::RoleClient, Handler>, (String, Option<String>)>;

impl Connection {
    /// The server's OAuth, when it signs in with OAuth and credentials are kept.
    pub fn server_auth(&self) -> Result<Option<ServerAuth>, String> {
        let (Some(url), Some(store)) = (self.entry.config.oauth_url(), self.context.auth.clone())
        else {
            return Ok(None);
        };
        let oauth = match &self.entry.config.transport {
            crate::config::Transport::Http { oauth, .. } => oauth.as_ref(),
            crate::config::Transport::Stdio { .. } => None,
        };
        let what = format!("MCP server \"{}\" oauth.clientSecret", self.entry.name);
        let settings = OAuthSettings::from_config(oauth, |v| (self.context.resolve)(v, &what))?;
        ServerAuth::new(&self.entry.name, url, settings, store)
            .map(Some)
            .map_err(|e| e.to_string())
    }

    /// The challenge of the last 401, for a sign-in.
    pub fn challenge(&self) -> Option<Challenge> {
        lock(&self.challenge).clone()
    }

    /// After the credentials were deleted: drops the connection; the server needs sign-in.
    pub async fn sign_out(&self) {
        let old = self.live.lock().await.take();
        if let Some(old) = old
            && let Ok(service) = Arc::try_unwrap(old.service)
        {
            let _ = service.cancel().await;
        }
        if !self.closed.is_cancelled() {
            self.set(|s| {
                s.state = super::State::NeedsAuth;
                s.error = None;
            });
        }
    }

    /// Forgets the challenge after a sign-in.
    pub fn clear_challenge(&self) {
        *lock(&self.challenge) = None;
    }

    pub(super) async fn open_http(
        self: &Arc<Self>,
        handler: Handler,
        url: &str,
        headers: &[(String, String)],
    ) -> Opened {
        let mut map = reqwest::header::HeaderMap::new();
        for (key, value) in headers {
            let what = format!("MCP server \"{}\" header \"{key}\"", self.entry.name);
            let value = (self.context.resolve)(value, &what).map_err(|e| (e, None))?;
            let (Ok(name), Ok(value)) = (
                reqwest::header::HeaderName::from_bytes(key.as_bytes()),
                reqwest::header::HeaderValue::from_str(&value),
            ) else {
                return Err((format!("invalid header \"{key}\""), None));
            };
            map.insert(name, value);
        }
        // reqwest is built without a bundled crypto provider; ring is pi's.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .default_headers(map)
            .build()
            .map_err(|e| (e.to_string(), None))?;
        let auth = self.server_auth().map_err(|e| (e, None))?;
        let provider = match &self.entry.config.transport {
            crate::config::Transport::Http { auth_provider, .. } => auth_provider.clone(),
            crate::config::Transport::Stdio { .. } => None,
        };
        let mut refreshed = false;
        loop {
            let token = match (&auth, &provider, &self.context.provider_token) {
                (Some(auth), _, _) => auth.token().await,
                (None, Some(provider), Some(resolve)) => resolve(provider.clone()).await,
                _ => None,
            };
            let mut config = StreamableHttpClientTransportConfig::with_uri(url);
            config.auth_header = token.clone();
            // Only the start of an HTTP error's body is read, as pi 1.5.1 does (8 KiB).
            config.max_error_response_size = MAX_ERROR_BODY_BYTES;
            let transport = StreamableHttpClientTransport::with_client(client.clone(), config);
            let transport = super::ProgressTap::new(transport, self.routes.clone());
            let error = match handler.clone().serve(transport).await {
                Ok(service) => return Ok(service),
                Err(error) => error,
            };
            let Some(header) = error.auth_challenge() else {
                return Err((error.to_string(), None));
            };
            let Some(auth) = &auth else {
                // A provider's token was refused (or there is none): `/login` helps.
                return match provider {
                    Some(provider) => {
                        Err((format!("{NEEDS_SIGN_IN} with /login {provider}"), None))
                    }
                    None => Err((error.to_string(), None)),
                };
            };
            let challenge = Challenge::parse(header);
            *lock(&self.challenge) = Some(challenge.clone());
            if refreshed {
                return Err((NEEDS_SIGN_IN.into(), None));
            }
            match auth.unauthorized(token.as_deref(), &challenge).await {
                Ok(Refreshed::Authorized) => refreshed = true,
                Ok(Refreshed::NeedsSignIn) => return Err((NEEDS_SIGN_IN.into(), None)),
                Err(e) => return Err((format!("token refresh failed: {e}"), None)),
            }
        }
    }
}
