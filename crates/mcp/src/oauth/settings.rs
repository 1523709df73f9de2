//! A server's `oauth` settings from `mcp.json` (already checked by the config loader).

use serde_json::{Map, Value};

/// How pi becomes a client of the authorization server.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Registration {
    /// A configured client id, else dynamic registration, else a metadata document.
    #[default]
    Auto,
    Dcr,
    Cimd,
}

/// `oauth` in a server entry.
#[derive(Debug, Clone, Default)]
pub struct OAuthSettings {
    pub client_id: Option<String>,
    /// Already resolved (`${NAME}`, `!command`).
    pub client_secret: Option<String>,
    pub callback_port: Option<u16>,
    pub callback_url: Option<String>,
    pub scope: Option<String>,
    pub client_name: Option<String>,
    pub registration: Registration,
    pub auth_server_metadata_url: Option<String>,
}

impl OAuthSettings {
    /// Reads the checked `oauth` object; `resolve` expands the client secret.
    pub fn from_config(
        oauth: Option<&Map<String, Value>>,
        resolve: impl Fn(&str) -> Result<String, String>,
    ) -> Result<Self, String> {
        let Some(oauth) = oauth else {
            return Ok(Self::default());
        };
        let text = |key: &str| oauth.get(key).and_then(Value::as_str).map(str::to_owned);
        let client_secret = match text("clientSecret") {
            Some(secret) => Some(resolve(&secret)?),
            None => None,
        };
        Ok(Self {
            client_id: text("clientId"),
            client_secret,
            callback_port: oauth
                .get("callbackPort")
                .and_then(Value::as_u64)
                .and_then(|p| u16::try_from(p).ok()),
            callback_url: text("callbackUrl"),
            scope: text("scope"),
            client_name: text("clientName"),
            registration: match text("clientRegistration").as_deref() {
                Some("dcr") => Registration::Dcr,
                Some("cimd") => Registration::Cimd,
                _ => Registration::Auto,
            },
            auth_server_metadata_url: text("authServerMetadataUrl"),
        })
    }

    /// The loopback redirect: `(bind host, host named in the URI, port, path)`.
    pub fn loopback(&self) -> (String, String, Option<u16>, String) {
        let configured = self
            .callback_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok());
        let Some(url) = configured else {
            return (
                "127.0.0.1".into(),
                "127.0.0.1".into(),
                self.callback_port,
                "/callback".into(),
            );
        };
        let named = url.host_str().unwrap_or("127.0.0.1").to_owned();
        let bind = match named.trim_start_matches('[').trim_end_matches(']') {
            "localhost" => "127.0.0.1".to_owned(),
            other => other.to_owned(),
        };
        (
            bind,
            named,
            url.port().or(self.callback_port),
            url.path().to_owned(),
        )
    }
}
