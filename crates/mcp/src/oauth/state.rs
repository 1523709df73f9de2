//! A server's OAuth state as pi 1.5 keeps it in `mcp-auth.json`: the client registration,
//! the tokens and their expiry, the pending sign-in and the cached discovery. Fields pi
//! writes that we do not use are kept as they are.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One server's entry (camelCase, as pi-mcp writes it).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AuthState {
    #[serde(default)]
    pub server_url: String,
    /// The `state` of the sign-in in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oauth_state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_information: Option<ClientInformation>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// When the access token expires, in epoch milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_expire_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_verifier: Option<String>,
    /// `{authorizationServerUrl, authorizationServerMetadata, resourceMetadata}`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub discovery: Option<Value>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

/// The client pi is to the authorization server: registered, configured or a metadata URL.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClientInformation {
    pub client_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    #[serde(default)]
    pub redirect_uris: Vec<String>,
    #[serde(flatten)]
    pub extra: Map<String, Value>,
}

impl ClientInformation {
    /// A client known by its id (and secret) only.
    pub fn with_id(client_id: &str, client_secret: Option<&str>) -> Self {
        Self {
            client_id: client_id.to_owned(),
            client_secret: client_secret.map(str::to_owned),
            redirect_uris: Vec::new(),
            extra: Map::new(),
        }
    }

    /// The `token_endpoint_auth_method` the registration answered, if any.
    pub fn auth_method(&self) -> Option<&str> {
        self.extra
            .get("token_endpoint_auth_method")
            .and_then(Value::as_str)
    }
}

/// A token response (snake_case, as OAuth sends it).
#[derive(Clone, PartialEq, Serialize, Deserialize)]
pub struct Tokens {
    pub access_token: String,
    pub token_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_in: Option<serde_json::Number>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id_token: Option<String>,
}

/// Tokens never reach a log or an error through `Debug`.
impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tokens")
            .field("token_type", &self.token_type)
            .field("expires_in", &self.expires_in)
            .field("scope", &self.scope)
            .field("refresh_token", &self.refresh_token.as_ref().map(|_| "…"))
            .finish_non_exhaustive()
    }
}

impl AuthState {
    /// An empty state for a server.
    pub fn for_server(server_url: &str) -> Self {
        Self {
            server_url: server_url.to_owned(),
            ..Self::default()
        }
    }

    /// Stores new tokens and their expiry; a response without a scope keeps `scope`.
    pub fn set_tokens(&mut self, mut tokens: Tokens, scope: Option<&str>, now_ms: i64) {
        if tokens.scope.is_none() {
            tokens.scope = scope.filter(|s| !s.is_empty()).map(str::to_owned);
        }
        self.tokens_expire_at = tokens
            .expires_in
            .as_ref()
            .and_then(serde_json::Number::as_f64)
            .map(|secs| now_ms.saturating_add((secs * 1000.0) as i64));
        self.tokens = Some(tokens);
    }

    /// Forgets the tokens.
    pub fn clear_tokens(&mut self) {
        self.tokens = None;
        self.tokens_expire_at = None;
    }

    /// Forgets everything but the server URL.
    pub fn clear_all(&mut self) {
        *self = Self::for_server(&self.server_url);
    }

    /// The stored access token.
    pub fn access_token(&self) -> Option<&str> {
        self.tokens.as_ref().map(|t| t.access_token.as_str())
    }

    /// The stored refresh token.
    pub fn refresh_token(&self) -> Option<&str> {
        self.tokens
            .as_ref()
            .and_then(|t| t.refresh_token.as_deref())
    }

    /// Whether the access token expires within `skew_ms` (false when its expiry is unknown).
    pub fn expires_within(&self, skew_ms: i64, now_ms: i64) -> bool {
        self.tokens_expire_at
            .is_some_and(|at| at.saturating_sub(skew_ms) <= now_ms)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_and_writes_pi_layout() {
        let text = r#"{"serverUrl":"https://x.test/mcp","clientInformation":{"client_id":"c1","redirect_uris":["http://127.0.0.1:5555/callback"],"client_name":"pi"},"tokens":{"access_token":"a","token_type":"Bearer","expires_in":3600,"refresh_token":"r"},"tokensExpireAt":1700000000000,"discovery":{"authorizationServerUrl":"https://as.test/"}}"#;
        let state: AuthState = serde_json::from_str(text).unwrap();
        assert_eq!(state.refresh_token(), Some("r"));
        assert_eq!(
            state.client_information.as_ref().unwrap().extra["client_name"],
            "pi"
        );
        let back: Value = serde_json::to_value(&state).unwrap();
        assert_eq!(back, serde_json::from_str::<Value>(text).unwrap());
    }

    #[test]
    fn expiry_follows_expires_in_and_scope_is_kept() {
        let mut state = AuthState::for_server("https://x.test/");
        let tokens = Tokens {
            access_token: "a".into(),
            token_type: "Bearer".into(),
            expires_in: Some(60.into()),
            scope: None,
            refresh_token: None,
            id_token: None,
        };
        state.set_tokens(tokens, Some("read"), 1_000);
        assert_eq!(state.tokens_expire_at, Some(61_000));
        assert_eq!(
            state.tokens.as_ref().unwrap().scope.as_deref(),
            Some("read")
        );
        assert!(state.expires_within(30_000, 31_000));
        assert!(!state.expires_within(30_000, 30_999));
        assert!(!format!("{:?}", state.tokens).contains("\"a\""));
    }
}
