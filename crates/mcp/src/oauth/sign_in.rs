//! `pi mcp login`'s sign-in: the stored refresh token when it still works, else the
//! browser authorization code flow (PKCE) against a loopback callback.

use pi_ai::oauth::{CallbackOptions, CallbackServer};

use super::client::{Refreshed, ServerAuth};
use super::discovery::{Challenge, Discovered};
use super::document;
use super::flow::{self, TokenRequest};
use super::settings::Registration;
use super::state::ClientInformation;
use super::{OAuthError, now_ms};

/// The page the browser shows after the sign-in, as pi 1.6.0's.
const SUCCESS_PAGE: &str = "Signed in to the MCP server. You may now close this page.";

/// How the sign-in ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SignedIn {
    /// The stored refresh token gave new tokens.
    Refreshed,
    /// The user signed in in the browser.
    InBrowser,
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

/// The client of a sign-in.
enum Client {
    /// Configured, or registered before for this redirect URI.
    Known(ClientInformation),
    /// pi's metadata document; never stored, it is worked out again for refreshes.
    Document(ClientInformation),
    /// Registered now.
    Registered(ClientInformation),
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
        let (bind, named_host, port, base_path) = self.settings.loopback();
        let configured = self.settings.client_id.is_some();
        let stored = state.client_information.clone().filter(|_| !configured);
        // A registered client stays while its redirect URI matches (never with "cimd").
        let may_keep = stored.is_some() && self.settings.registration != Registration::Cimd;
        // Without a client to keep, the callback listens where pi's document points.
        let provisional = format!("http://{named_host}{base_path}");
        let path = match (
            configured || may_keep,
            document::choose(&self.settings, &self.url, &discovered, &provisional)?,
        ) {
            (false, Some(doc)) => redirect_path(&doc.redirect_uri).unwrap_or(base_path.clone()),
            _ => base_path.clone(),
        };
        let oauth_state = random_state()?;
        let provider = format!("MCP server \"{}\"", self.server);
        let listen = |path: String, port: u16| {
            let (provider, oauth_state, named_host, bind) =
                (&provider, &oauth_state, &named_host, &bind);
            async move {
                CallbackServer::start(CallbackOptions {
                    provider,
                    port,
                    path: &path,
                    redirect_host: named_host,
                    state: Some(oauth_state),
                    bind_host: Some(bind),
                    success_message: Some(SUCCESS_PAGE),
                })
                .await
                .map_err(|e| OAuthError::Flow(e.to_string()))
            }
        };
        let registered_port = stored
            .as_ref()
            .and_then(|c| c.redirect_uris.first())
            .and_then(|u| url::Url::parse(u).ok())
            .and_then(|u| u.port());
        let wanted = port.or(registered_port);
        let mut callback = match listen(path.clone(), wanted.unwrap_or(0)).await {
            Ok(server) => server,
            // The port of an earlier registration is taken: use another.
            Err(_) if port.is_none() && wanted.is_some() => listen(path.clone(), 0).await?,
            Err(e) => return Err(e),
        };
        let mut redirect_uri = callback.redirect_uri().to_owned();
        let base_redirect = with_path(&redirect_uri, &base_path);
        let scope = self.scope(&discovered, challenge, step_up, &state);
        let client = if let Some(client) = self.client(&state).filter(|_| configured) {
            Client::Known(client)
        } else if let Some(client) =
            stored.filter(|c| may_keep && c.redirect_uris.contains(&base_redirect))
        {
            Client::Known(client)
        } else if let Some(doc) =
            document::choose(&self.settings, &self.url, &discovered, &base_redirect)?
        {
            if doc.redirect_uri != redirect_uri {
                // The kept client's port was taken, and the document has its own path.
                drop(callback);
                callback = listen(
                    redirect_path(&doc.redirect_uri).unwrap_or(base_path.clone()),
                    0,
                )
                .await?;
                redirect_uri = callback.redirect_uri().to_owned();
            }
            Client::Document(ClientInformation::with_id(&doc.client_id, None))
        } else {
            let name = self.settings.client_name.as_deref().unwrap_or("pi");
            Client::Registered(
                flow::register(
                    &self.http,
                    &discovered,
                    name,
                    &redirect_uri,
                    scope.as_deref(),
                )
                .await?,
            )
        };
        // Credentials of a client that is not kept go with it, as pi 1.6.0 drops them.
        let keep_credentials = matches!(client, Client::Known(_))
            || (state.client_information.is_none()
                && document::offered(&self.settings, &base_redirect));
        let (client, registered) = match client {
            Client::Known(c) | Client::Document(c) => (c, None),
            Client::Registered(c) => (c.clone(), Some(c)),
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
        let verifier = authorization.code_verifier.clone();
        self.update(|s| {
            s.oauth_state = Some(oauth_state.clone());
            s.code_verifier = Some(verifier);
            if !configured && !keep_credentials {
                s.client_information = None;
                s.clear_tokens();
            }
            if let Some(registered) = registered {
                s.client_information = Some(registered);
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
        // A step-up asks for what was granted and what is missing (the challenge may name
        // only the missing scopes), so the new token keeps the access the old one had.
        let asked = if step_up && challenged.is_some() {
            merge_scopes(&[self.settings.scope.as_deref(), granted, challenged])
        } else {
            merge_scopes(&[self.settings.scope.as_deref(), challenged])
        };
        asked.or_else(|| discovered.resource_scopes())
    }
}

/// The path of a redirect URI.
fn redirect_path(redirect: &str) -> Option<String> {
    url::Url::parse(redirect).ok().map(|u| u.path().to_owned())
}

/// A redirect URI with another path.
fn with_path(redirect: &str, path: &str) -> String {
    url::Url::parse(redirect).map_or_else(
        |_| redirect.to_owned(),
        |mut u| {
            u.set_path(path);
            u.into()
        },
    )
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
