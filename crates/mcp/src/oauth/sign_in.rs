//! `pi mcp login`'s sign-in: the stored refresh token when it still works, else the
//! browser authorization code flow (PKCE) against a loopback callback.

use base64::Engine;
use pi_ai::oauth::{CallbackOptions, CallbackServer};

use super::client::{Refreshed, ServerAuth};
use super::discovery::{Challenge, Discovered};
use super::flow::{self, TokenRequest};
use super::settings::Registration;
use super::state::ClientInformation;
use super::{OAuthError, now_ms};

/// pi's Client ID Metadata Documents, used when the server takes metadata documents and
/// registration by pi is not possible or not wanted.
const CLIENT_METADATA_BASE: &str = "https://pi.dev/oauth";

/// How the sign-in ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedIn {
    /// The stored refresh token gave new tokens.
    Refreshed,
    /// The user signed in in the browser.
    InBrowser,
}

/// The short id of a server in callback paths: 9 bytes of the SHA-256 of its URL.
fn callback_id(server_url: &str) -> String {
    let mut url = server_url.to_owned();
    if let Ok(mut parsed) = url::Url::parse(server_url) {
        parsed.set_fragment(None);
        url = parsed.into();
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest.as_ref()[..9])
}

/// `hex` of 32 random bytes: the `state` parameter.
fn random_state() -> Result<String, OAuthError> {
    let bytes = pi_ai::oauth::random_bytes::<32>().map_err(|e| OAuthError::Flow(e.to_string()))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// Joins scope lists without repeats.
fn merge_scopes(scopes: &[Option<&str>]) -> Option<String> {
    let mut merged: Vec<&str> = Vec::new();
    for scope in scopes.iter().flatten() {
        for item in scope.split_whitespace() {
            if !merged.contains(&item) {
                merged.push(item);
            }
        }
    }
    (!merged.is_empty()).then(|| merged.join(" "))
}

/// Whether pi's metadata document can be the client for this server.
fn metadata_document_usable(discovered: &Discovered) -> bool {
    discovered.flag("client_id_metadata_document_supported")
        && discovered
            .list("token_endpoint_auth_methods_supported")
            .is_some_and(|m| m.contains(&"none"))
}

/// The client the sign-in will use, before the callback listens.
enum Plan {
    Known(ClientInformation),
    /// pi's metadata document at this URL; the redirect path gains a suffix when the
    /// server cannot name itself in the response.
    Document {
        url: String,
        path_suffix: Option<String>,
    },
    Register,
}

impl ServerAuth {
    /// Signs in: a refresh when possible, else the browser. `show_url` receives the URL
    /// the user opens; cancel by dropping the future (the caller's timeout).
    pub async fn sign_in(
        &self,
        challenge: Option<&Challenge>,
        show_url: &(dyn Fn(&str) + Sync),
    ) -> Result<SignedIn, OAuthError> {
        let step_up = challenge.is_some_and(|c| c.error.as_deref() == Some("insufficient_scope"));
        let state = self.load()?;
        let document_client = self.settings.registration == Registration::Cimd
            && self.settings.client_id.is_none()
            && state.client_information.is_some();
        if !step_up
            && !document_client
            && state.refresh_token().is_some()
            && self.refresh_stored(state, challenge).await? == Refreshed::Authorized
        {
            return Ok(SignedIn::Refreshed);
        }
        self.browser_sign_in(challenge, step_up, show_url).await
    }

    async fn browser_sign_in(
        &self,
        challenge: Option<&Challenge>,
        step_up: bool,
        show_url: &(dyn Fn(&str) + Sync),
    ) -> Result<SignedIn, OAuthError> {
        let state = self.load()?;
        let discovered = self.discovered(&state, challenge).await?;
        let (bind, named_host, port, path) = self.settings.loopback();
        let registered = state
            .client_information
            .as_ref()
            .and_then(|c| c.redirect_uris.first())
            .and_then(|u| url::Url::parse(u).ok());
        let plan = self.plan(&state, &discovered);
        let path = match &plan {
            Plan::Document {
                path_suffix: Some(id),
                ..
            } => format!("{}/{id}", path.trim_end_matches('/')),
            _ => path,
        };
        let oauth_state = random_state()?;
        let provider = format!("MCP server \"{}\"", self.server);
        let options = |port: u16| CallbackOptions {
            provider: &provider,
            port,
            path: &path,
            redirect_host: &named_host,
            state: Some(&oauth_state),
            bind_host: Some(&bind),
        };
        let wanted = port.or_else(|| registered.as_ref().and_then(url::Url::port));
        let mut callback = match CallbackServer::start(options(wanted.unwrap_or(0))).await {
            Ok(server) => server,
            // The port of an earlier registration is taken: register again on another.
            Err(_) if port.is_none() && wanted.is_some() => CallbackServer::start(options(0))
                .await
                .map_err(|e| OAuthError::Flow(e.to_string()))?,
            Err(e) => return Err(OAuthError::Flow(e.to_string())),
        };
        let redirect_uri = callback.redirect_uri().to_owned();
        let scope = self.scope(&discovered, challenge, step_up, &state);
        let name = self.settings.client_name.as_deref().unwrap_or("pi");
        let register = || {
            flow::register(
                &self.http,
                &discovered,
                name,
                &redirect_uri,
                scope.as_deref(),
            )
        };
        let client = match plan {
            Plan::Known(client) => client,
            Plan::Document { url, .. } => {
                let mut client = ClientInformation::with_id(&url, None);
                client.redirect_uris = vec![redirect_uri.clone()];
                client
            }
            Plan::Register => register().await?,
        };
        // A registration for another redirect URI would be refused: register again.
        let client = if self.settings.client_id.is_none()
            && !client.redirect_uris.is_empty()
            && !client.redirect_uris.contains(&redirect_uri)
            && !client.client_id.starts_with("https://")
        {
            register().await?
        } else {
            client
        };
        let resource = discovered.resource(&self.url)?;
        let authorization = flow::authorization_url(
            &discovered,
            &client,
            &redirect_uri,
            &oauth_state,
            scope.as_deref(),
            resource.as_deref(),
        )?;
        let keep_client = self.settings.client_id.is_none();
        let verifier = authorization.code_verifier.clone();
        let saved_client = client.clone();
        self.update(|s| {
            s.oauth_state = Some(oauth_state.clone());
            s.code_verifier = Some(verifier);
            if keep_client {
                if s.client_information.as_ref() != Some(&saved_client) {
                    s.clear_tokens();
                }
                s.client_information = Some(saved_client);
            }
        })?;
        show_url(&authorization.url);
        let delivered = callback
            .wait_with_issuer()
            .await
            .map_err(|e| OAuthError::Flow(e.to_string()))?;
        drop(callback);
        check_issuer(&discovered, delivered.iss.as_deref())?;
        let code = delivered.code;
        let current = self.load()?;
        if current.oauth_state.as_deref() != Some(oauth_state.as_str()) {
            return Err(OAuthError::Flow(
                "Another sign-in to this MCP server started since; sign in again".into(),
            ));
        }
        let request = TokenRequest {
            discovered: &discovered,
            client: &client,
            resource: resource.as_deref(),
        };
        let tokens = flow::exchange_code(
            &self.http,
            &request,
            &code,
            &authorization.code_verifier,
            &redirect_uri,
        )
        .await?;
        self.update(|s| s.set_tokens(tokens, scope.as_deref(), now_ms()))?;
        Ok(SignedIn::InBrowser)
    }

    /// The scope to ask for: configured and challenged, else what the resource lists.
    fn scope(
        &self,
        discovered: &Discovered,
        challenge: Option<&Challenge>,
        step_up: bool,
        state: &super::state::AuthState,
    ) -> Option<String> {
        let challenged = challenge.and_then(|c| c.scope.as_deref());
        let granted = state.tokens.as_ref().and_then(|t| t.scope.as_deref());
        let asked = if step_up {
            merge_scopes(&[self.settings.scope.as_deref(), granted, challenged])
        } else {
            merge_scopes(&[self.settings.scope.as_deref(), challenged])
        };
        asked.or_else(|| discovered.resource_scopes())
    }

    fn plan(&self, state: &super::state::AuthState, discovered: &Discovered) -> Plan {
        if let Some(client) = self.client(state) {
            return Plan::Known(client);
        }
        let document = match self.settings.registration {
            Registration::Dcr => false,
            Registration::Cimd => true,
            Registration::Auto => {
                discovered.endpoint("registration_endpoint").is_none()
                    && discovered.metadata.is_some()
                    && self.settings.client_name.is_none()
            }
        };
        if document && metadata_document_usable(discovered) {
            if discovered.flag("authorization_response_iss_parameter_supported") {
                return Plan::Document {
                    url: format!("{CLIENT_METADATA_BASE}/client.json"),
                    path_suffix: None,
                };
            }
            let id = callback_id(&self.url);
            return Plan::Document {
                url: format!("{CLIENT_METADATA_BASE}/{id}/client.json"),
                path_suffix: Some(id),
            };
        }
        Plan::Register
    }
}

/// RFC 9207, as the MCP SDK of pi 1.6.0 checks it before the code exchange: an `iss` the
/// authorization response carries, or one the server promised to send, must be the
/// server's issuer.
fn check_issuer(discovered: &Discovered, iss: Option<&str>) -> Result<(), OAuthError> {
    let issuer = discovered
        .metadata
        .as_ref()
        .and_then(|m| m.get("issuer"))
        .and_then(serde_json::Value::as_str);
    let promised = discovered.flag("authorization_response_iss_parameter_supported");
    if (iss.is_some() || promised) && iss != issuer {
        let show = |value: Option<&str>| {
            value.map_or_else(
                || "none".to_owned(),
                |v| serde_json::Value::from(v).to_string(),
            )
        };
        return Err(OAuthError::Flow(format!(
            "OAuth issuer mismatch: expected {}, received {}",
            show(issuer),
            show(iss)
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn callback_id_is_twelve_url_safe_chars() {
        let id = callback_id("https://mcp.example.com/mcp");
        assert_eq!(id.len(), 12);
        assert_eq!(id, callback_id("https://mcp.example.com/mcp#frag"));
        assert!(
            id.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        );
    }

    #[test]
    fn the_issuer_of_the_response_must_be_the_servers() {
        let discovered = |metadata: serde_json::Value| Discovered {
            authorization_server_url: "https://as.test/".into(),
            metadata: Some(metadata),
            resource_metadata: None,
        };
        let plain = discovered(serde_json::json!({"issuer": "https://as.test/"}));
        assert!(check_issuer(&plain, None).is_ok());
        assert!(check_issuer(&plain, Some("https://as.test/")).is_ok());
        let error = check_issuer(&plain, Some("https://evil.test/")).unwrap_err();
        assert_eq!(
            error.to_string(),
            r#"OAuth issuer mismatch: expected "https://as.test/", received "https://evil.test/""#
        );
        let promised = discovered(serde_json::json!({"issuer": "https://as.test/",
            "authorization_response_iss_parameter_supported": true}));
        assert_eq!(
            check_issuer(&promised, None).unwrap_err().to_string(),
            r#"OAuth issuer mismatch: expected "https://as.test/", received none"#
        );
        // An `iss` with no issuer to check it against is refused too.
        let unknown = discovered(serde_json::json!({}));
        assert!(check_issuer(&unknown, Some("https://as.test/")).is_err());
    }

    #[test]
    fn scopes_merge_without_repeats() {
        assert_eq!(
            merge_scopes(&[Some("a b"), None, Some("b c")]).as_deref(),
            Some("a b c")
        );
        assert_eq!(merge_scopes(&[None, Some("  ")]), None);
    }
}
