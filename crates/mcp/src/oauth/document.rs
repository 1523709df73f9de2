//! pi's Client ID Metadata Documents on pi.dev, chosen as pi 1.6.0 chooses them: offered
//! unless a client id or name is configured or the redirect is not a loopback `/callback`
//! (`clientRegistration` overrides that), and used when the authorization server takes
//! documents from public clients.

use base64::Engine;

use super::OAuthError;
use super::discovery::Discovered;
use super::settings::{OAuthSettings, Registration};

/// Where pi's documents live.
const BASE: &str = "https://pi.dev/oauth";

/// A document pi signs in with: its URL is the client id, listing this redirect URI.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Document {
    pub client_id: String,
    pub redirect_uri: String,
}

/// Whether pi's documents list a redirect: any port, the path `/callback`, not `[::1]`.
pub fn lists_redirect(redirect: &str) -> bool {
    url::Url::parse(redirect)
        .is_ok_and(|u| u.host_str() != Some("[::1]") && u.path() == "/callback")
}

/// Whether the settings let pi offer a document for this redirect.
pub fn offered(settings: &OAuthSettings, redirect: &str) -> bool {
    match settings.registration {
        Registration::Cimd => true,
        Registration::Dcr => false,
        Registration::Auto => {
            settings.client_id.is_none()
                && settings.client_name.is_none()
                && lists_redirect(redirect)
        }
    }
}

/// The short id of a server in document URLs and callback paths: 9 bytes of the SHA-256
/// of its URL, base64url.
pub fn callback_id(server_url: &str) -> String {
    let mut url = server_url.to_owned();
    if let Ok(mut parsed) = url::Url::parse(server_url) {
        parsed.set_fragment(None);
        url = parsed.into();
    }
    let digest = ring::digest::digest(&ring::digest::SHA256, url.as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest.as_ref()[..9])
}

/// The document to sign in with for the redirect `base` (`/callback`), or `None` to
/// register a client. A server that does not send `iss` in authorization responses gets
/// the document and callback path of this MCP server, so a response cannot be replayed
/// to another. With `clientRegistration: "cimd"` a document that cannot be used fails.
pub fn choose(
    settings: &OAuthSettings,
    server_url: &str,
    discovered: &Discovered,
    base: &str,
) -> Result<Option<Document>, OAuthError> {
    if !offered(settings, base) {
        return Ok(None);
    }
    if !lists_redirect(base) {
        return Err(OAuthError::Flow(format!(
            "oauth.clientRegistration \"cimd\" needs Client ID Metadata Documents that list the redirect URI {base}"
        )));
    }
    let supported = discovered.flag("client_id_metadata_document_supported")
        && discovered
            .list("token_endpoint_auth_methods_supported")
            .is_some_and(|m| m.contains(&"none"));
    if !supported {
        if settings.registration == Registration::Cimd {
            return Err(OAuthError::Flow(
                "The authorization server does not support Client ID Metadata Documents for public clients; remove oauth.clientRegistration \"cimd\"".into(),
            ));
        }
        return Ok(None);
    }
    if discovered.flag("authorization_response_iss_parameter_supported") {
        return Ok(Some(Document {
            client_id: format!("{BASE}/client.json"),
            redirect_uri: base.to_owned(),
        }));
    }
    let id = callback_id(server_url);
    let mut redirect = url::Url::parse(base)
        .map_err(|e| OAuthError::Flow(format!("Invalid redirect URI {base}: {e}")))?;
    let path = format!("{}/{id}", redirect.path().trim_end_matches('/'));
    redirect.set_path(&path);
    Ok(Some(Document {
        client_id: format!("{BASE}/{id}/client.json"),
        redirect_uri: redirect.into(),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn discovered(metadata: serde_json::Value) -> Discovered {
        Discovered {
            authorization_server_url: "https://as.test/".into(),
            metadata: Some(metadata),
            resource_metadata: None,
        }
    }

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
    fn documents_follow_the_settings_and_the_servers_support() {
        let takes = discovered(serde_json::json!({
            "client_id_metadata_document_supported": true,
            "token_endpoint_auth_methods_supported": ["none"],
            "authorization_response_iss_parameter_supported": true,
        }));
        let base = "http://127.0.0.1:5/callback";
        let auto = OAuthSettings::default();
        let chosen = choose(&auto, "https://x.test/mcp", &takes, base).unwrap();
        assert_eq!(
            chosen.map(|d| d.client_id).as_deref(),
            Some("https://pi.dev/oauth/client.json")
        );
        let named = OAuthSettings {
            client_name: Some("Other".into()),
            ..OAuthSettings::default()
        };
        assert_eq!(
            choose(&named, "https://x.test/mcp", &takes, base).unwrap(),
            None
        );
        let refuses =
            discovered(serde_json::json!({"token_endpoint_auth_methods_supported": ["none"]}));
        assert_eq!(
            choose(&auto, "https://x.test/mcp", &refuses, base).unwrap(),
            None
        );
        let cimd = OAuthSettings {
            registration: Registration::Cimd,
            ..OAuthSettings::default()
        };
        assert!(choose(&cimd, "https://x.test/mcp", &refuses, base).is_err());
        assert!(choose(&cimd, "https://x.test/mcp", &takes, "http://127.0.0.1:5/cb").is_err());
    }
}
