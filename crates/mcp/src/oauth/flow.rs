//! The OAuth requests of a sign-in and a refresh, as pi-mcp makes them: dynamic client
//! registration (RFC 7591), the authorization URL with PKCE (S256) and `resource`
//! (RFC 8707), and the token endpoint with the client authentication the server supports.

use base64::Engine;
use serde_json::{Value, json};

use super::OAuthError;
use super::discovery::Discovered;
use super::state::{ClientInformation, Tokens};

/// The form of a token request, and the client it authenticates as.
pub struct TokenRequest<'a> {
    pub discovered: &'a Discovered,
    pub client: &'a ClientInformation,
    pub resource: Option<&'a str>,
}

/// Whether a host is a loopback address (where plain HTTP is allowed).
pub fn is_loopback(host: &str) -> bool {
    matches!(host, "localhost" | "127.0.0.1" | "[::1]" | "::1")
}

/// An endpoint credentials may be sent to: HTTPS, or HTTP on loopback.
fn secure_endpoint(endpoint: &str) -> Result<url::Url, OAuthError> {
    let url = url::Url::parse(endpoint)
        .map_err(|e| OAuthError::Flow(format!("Invalid OAuth endpoint {endpoint}: {e}")))?;
    if url.scheme() != "https" && !url.host_str().is_some_and(is_loopback) {
        return Err(OAuthError::Flow(format!(
            "Refusing to send OAuth credentials to non-HTTPS endpoint {url}"
        )));
    }
    Ok(url)
}

/// An endpoint from the metadata, or `path` on the authorization server.
fn endpoint(discovered: &Discovered, field: &str, path: &str) -> Result<String, OAuthError> {
    if let Some(found) = discovered.endpoint(field) {
        return Ok(found.to_owned());
    }
    url::Url::parse(&discovered.authorization_server_url)
        .and_then(|base| base.join(path))
        .map(String::from)
        .map_err(|e| OAuthError::Flow(format!("Invalid authorization server URL: {e}")))
}

/// `native` for loopback or custom-scheme redirects, as pi-mcp registers.
fn application_type(redirect_uris: &[String]) -> &'static str {
    let native = redirect_uris.iter().any(|uri| {
        url::Url::parse(uri).is_ok_and(|u| {
            !matches!(u.scheme(), "http" | "https") || u.host_str().is_some_and(is_loopback)
        })
    });
    if native { "native" } else { "web" }
}

/// Registers pi as a client (dynamic client registration).
pub async fn register(
    http: &reqwest::Client,
    discovered: &Discovered,
    client_name: &str,
    redirect_uri: &str,
    scope: Option<&str>,
) -> Result<ClientInformation, OAuthError> {
    if discovered.metadata.is_some() && discovered.endpoint("registration_endpoint").is_none() {
        return Err(OAuthError::Flow(
            "Authorization server does not support dynamic client registration".into(),
        ));
    }
    let url = endpoint(discovered, "registration_endpoint", "/register")?;
    let redirect_uris = vec![redirect_uri.to_owned()];
    let mut body = json!({
        "client_name": client_name,
        "redirect_uris": redirect_uris,
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
        "application_type": application_type(&redirect_uris),
    });
    if let Some(scope) = scope {
        body["scope"] = Value::String(scope.to_owned());
    }
    let response = http
        .post(&url)
        .header("Accept", "application/json")
        .json(&body)
        .send()
        .await
        .map_err(|e| {
            OAuthError::Flow(format!("Could not reach {url}: {}", super::error_chain(&e)))
        })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    if !status.is_success() {
        return Err(OAuthError::Flow(format!(
            "OAuth dynamic client registration failed with status {}: {text}",
            status.as_u16()
        )));
    }
    let mut client: ClientInformation = serde_json::from_str(&text)
        .map_err(|_| OAuthError::Flow("Invalid OAuth client registration response".into()))?;
    if client.client_id.is_empty() {
        return Err(OAuthError::Flow("Invalid client_id".into()));
    }
    if client.redirect_uris.is_empty() {
        client.redirect_uris = redirect_uris;
    }
    Ok(client)
}

/// The authorization URL and the parameters it was built with.
pub struct Authorization {
    pub url: String,
    pub code_verifier: String,
}

/// Builds the authorization request: PKCE S256, `state`, `scope`, `resource`.
pub fn authorization_url(
    discovered: &Discovered,
    client: &ClientInformation,
    redirect_uri: &str,
    state: &str,
    scope: Option<&str>,
    resource: Option<&str>,
) -> Result<Authorization, OAuthError> {
    if let Some(types) = discovered.list("response_types_supported")
        && !types.contains(&"code")
    {
        return Err(OAuthError::Flow(
            "Authorization server does not support authorization codes".into(),
        ));
    }
    if let Some(methods) = discovered.list("code_challenge_methods_supported")
        && !methods.contains(&"S256")
    {
        return Err(OAuthError::Flow(
            "Authorization server does not support PKCE S256".into(),
        ));
    }
    let base = endpoint(discovered, "authorization_endpoint", "/authorize")?;
    let mut url = url::Url::parse(&base)
        .map_err(|_| OAuthError::Flow(format!("Invalid authorization endpoint {base}")))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(OAuthError::Flow(format!(
            "Invalid authorization endpoint {base}"
        )));
    }
    let pkce = pi_ai::oauth::Pkce::generate().map_err(|e| OAuthError::Flow(e.to_string()))?;
    {
        let mut query = url.query_pairs_mut();
        query
            .append_pair("response_type", "code")
            .append_pair("client_id", &client.client_id)
            .append_pair("code_challenge", &pkce.challenge)
            .append_pair("code_challenge_method", "S256")
            .append_pair("redirect_uri", redirect_uri)
            .append_pair("state", state);
        if let Some(scope) = scope {
            query.append_pair("scope", scope);
            if scope.split_whitespace().any(|s| s == "offline_access") {
                query.append_pair("prompt", "consent");
            }
        }
        if let Some(resource) = resource {
            query.append_pair("resource", resource);
        }
    }
    Ok(Authorization {
        url: url.into(),
        code_verifier: pkce.verifier,
    })
}

/// How the client authenticates at the token endpoint, as pi-mcp picks it.
fn auth_method(client: &ClientInformation, supported: &[&str]) -> &'static str {
    let known = ["client_secret_basic", "client_secret_post", "none"];
    if let Some(hinted) = client.auth_method()
        && let Some(method) = known.iter().find(|m| **m == hinted)
        && (supported.is_empty() || supported.contains(method))
    {
        return method;
    }
    let secret = client.client_secret.is_some();
    if supported.is_empty() {
        return if secret {
            "client_secret_basic"
        } else {
            "none"
        };
    }
    if secret && supported.contains(&"client_secret_basic") {
        "client_secret_basic"
    } else if secret && supported.contains(&"client_secret_post") {
        "client_secret_post"
    } else if supported.contains(&"none") {
        "none"
    } else if secret {
        "client_secret_post"
    } else {
        "none"
    }
}

/// Posts a token request and parses the answer; an OAuth error keeps its code.
pub async fn token(
    http: &reqwest::Client,
    request: &TokenRequest<'_>,
    mut form: Vec<(&str, String)>,
) -> Result<Tokens, OAuthError> {
    let url = secure_endpoint(&endpoint(request.discovered, "token_endpoint", "/token")?)?;
    if let Some(resource) = request.resource {
        form.push(("resource", resource.to_owned()));
    }
    let supported = request
        .discovered
        .list("token_endpoint_auth_methods_supported")
        .unwrap_or_default();
    let client = request.client;
    let mut builder = http.post(url.clone()).header("Accept", "application/json");
    match auth_method(client, &supported) {
        "client_secret_basic" => {
            let secret = client.client_secret.as_deref().unwrap_or_default();
            let pair = format!("{}:{secret}", client.client_id);
            let encoded = base64::engine::general_purpose::STANDARD.encode(pair);
            builder = builder.header("Authorization", format!("Basic {encoded}"));
        }
        method => {
            form.push(("client_id", client.client_id.clone()));
            if method == "client_secret_post"
                && let Some(secret) = &client.client_secret
            {
                form.push(("client_secret", secret.clone()));
            }
        }
    }
    let body: String = url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(form.iter().map(|(k, v)| (*k, v.as_str())))
        .finish();
    let response = builder
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| {
            OAuthError::Flow(format!("Could not reach {url}: {}", super::error_chain(&e)))
        })?;
    let status = response.status();
    let text = response.text().await.unwrap_or_default();
    let value: Option<Value> = serde_json::from_str(&text).ok();
    if let Some(code) = value
        .as_ref()
        .and_then(|v| v.get("error"))
        .and_then(Value::as_str)
    {
        let description = value
            .as_ref()
            .and_then(|v| v.get("error_description"))
            .and_then(Value::as_str)
            .unwrap_or(code);
        return Err(OAuthError::Server {
            code: code.to_owned(),
            message: description.to_owned(),
        });
    }
    if !status.is_success() {
        return Err(OAuthError::Server {
            code: "server_error".into(),
            message: format!("HTTP {}: {text}", status.as_u16()),
        });
    }
    let value = value.ok_or_else(|| OAuthError::Flow("Invalid OAuth token response".into()))?;
    parse_tokens(value)
}

/// A token response, with `expires_in` as a number.
fn parse_tokens(mut value: Value) -> Result<Tokens, OAuthError> {
    if let Some(expires) = value.get("expires_in").filter(|v| v.is_string())
        && let Some(n) = expires
            .as_str()
            .and_then(|s| s.parse::<serde_json::Number>().ok())
    {
        value["expires_in"] = Value::Number(n);
    }
    let tokens: Tokens = serde_json::from_value(value)
        .map_err(|_| OAuthError::Flow("Invalid OAuth token response".into()))?;
    if tokens.access_token.is_empty() {
        return Err(OAuthError::Flow("Invalid access_token".into()));
    }
    Ok(tokens)
}

/// Exchanges an authorization code.
pub async fn exchange_code(
    http: &reqwest::Client,
    request: &TokenRequest<'_>,
    code: &str,
    code_verifier: &str,
    redirect_uri: &str,
) -> Result<Tokens, OAuthError> {
    let form = vec![
        ("grant_type", "authorization_code".to_owned()),
        ("code", code.to_owned()),
        ("code_verifier", code_verifier.to_owned()),
        ("redirect_uri", redirect_uri.to_owned()),
    ];
    token(http, request, form).await
}

/// Uses a refresh token; an answer without a new refresh token keeps the old one.
pub async fn refresh(
    http: &reqwest::Client,
    request: &TokenRequest<'_>,
    refresh_token: &str,
) -> Result<Tokens, OAuthError> {
    let form = vec![
        ("grant_type", "refresh_token".to_owned()),
        ("refresh_token", refresh_token.to_owned()),
    ];
    let mut tokens = token(http, request, form).await?;
    if tokens.refresh_token.is_none() {
        tokens.refresh_token = Some(refresh_token.to_owned());
    }
    Ok(tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auth_method_follows_pi_mcp() {
        let public = ClientInformation::with_id("c", None);
        let secret = ClientInformation::with_id("c", Some("s"));
        assert_eq!(auth_method(&public, &[]), "none");
        assert_eq!(auth_method(&secret, &[]), "client_secret_basic");
        assert_eq!(
            auth_method(&secret, &["client_secret_post", "none"]),
            "client_secret_post"
        );
        assert_eq!(auth_method(&public, &["client_secret_basic"]), "none");
    }

    #[test]
    fn authorization_url_carries_pkce_state_scope_and_resource() {
        let discovered = Discovered {
            authorization_server_url: "http://127.0.0.1:9/".into(),
            metadata: Some(
                json!({"authorization_endpoint": "http://127.0.0.1:9/authorize", "response_types_supported": ["code"]}),
            ),
            resource_metadata: None,
        };
        let client = ClientInformation::with_id("cid", None);
        let auth = authorization_url(
            &discovered,
            &client,
            "http://127.0.0.1:5/callback",
            "st",
            Some("read offline_access"),
            Some("http://127.0.0.1:9/mcp"),
        )
        .unwrap();
        let url = url::Url::parse(&auth.url).unwrap();
        let get = |k: &str| {
            url.query_pairs()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.into_owned())
        };
        assert_eq!(get("client_id").as_deref(), Some("cid"));
        assert_eq!(get("state").as_deref(), Some("st"));
        assert_eq!(get("prompt").as_deref(), Some("consent"));
        assert_eq!(get("resource").as_deref(), Some("http://127.0.0.1:9/mcp"));
        assert_eq!(
            get("code_challenge").unwrap(),
            pi_ai::oauth::challenge_of(&auth.code_verifier)
        );
    }

    #[test]
    fn plain_http_tokens_only_on_loopback() {
        assert!(secure_endpoint("http://127.0.0.1:1/token").is_ok());
        assert!(secure_endpoint("https://as.test/token").is_ok());
        assert!(secure_endpoint("http://as.test/token").is_err());
    }
}
