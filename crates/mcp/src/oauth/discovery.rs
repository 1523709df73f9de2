//! Finding the authorization server of an MCP server: its protected resource metadata
//! (RFC 9728), then the authorization server's metadata (RFC 8414 or OpenID), in the order
//! and with the checks pi-mcp uses.

use serde_json::Value;

use super::OAuthError;

/// What discovery found; stored in `mcp-auth.json` as pi stores it.
#[derive(Debug, Clone)]
pub struct Discovered {
    pub authorization_server_url: String,
    pub metadata: Option<Value>,
    pub resource_metadata: Option<Value>,
}

impl Discovered {
    /// `{authorizationServerUrl, authorizationServerMetadata, resourceMetadata}`.
    pub fn to_value(&self) -> Value {
        let mut out = serde_json::Map::new();
        out.insert(
            "authorizationServerUrl".into(),
            Value::String(self.authorization_server_url.clone()),
        );
        if let Some(m) = &self.metadata {
            out.insert("authorizationServerMetadata".into(), m.clone());
        }
        if let Some(r) = &self.resource_metadata {
            out.insert("resourceMetadata".into(), r.clone());
        }
        Value::Object(out)
    }

    /// Reads the stored form back; `None` when it lacks the server URL.
    pub fn from_value(value: &Value) -> Option<Self> {
        Some(Self {
            authorization_server_url: value.get("authorizationServerUrl")?.as_str()?.to_owned(),
            metadata: value.get("authorizationServerMetadata").cloned(),
            resource_metadata: value.get("resourceMetadata").cloned(),
        })
    }

    /// A string field of the authorization server's metadata.
    pub fn endpoint(&self, field: &str) -> Option<&str> {
        self.metadata.as_ref()?.get(field)?.as_str()
    }

    /// A list field of the authorization server's metadata.
    pub fn list(&self, field: &str) -> Option<Vec<&str>> {
        let items = self.metadata.as_ref()?.get(field)?.as_array()?;
        Some(items.iter().filter_map(Value::as_str).collect())
    }

    /// A boolean field of the authorization server's metadata.
    pub fn flag(&self, field: &str) -> bool {
        self.metadata
            .as_ref()
            .and_then(|m| m.get(field))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    }

    /// The scopes the protected resource lists, joined.
    pub fn resource_scopes(&self) -> Option<String> {
        let scopes = self
            .resource_metadata
            .as_ref()?
            .get("scopes_supported")?
            .as_array()?;
        let joined: Vec<&str> = scopes.iter().filter_map(Value::as_str).collect();
        (!joined.is_empty()).then(|| joined.join(" "))
    }

    /// The `resource` to request: the protected resource's, when it covers the server URL.
    pub fn resource(&self, server_url: &str) -> Result<Option<String>, OAuthError> {
        let Some(resource) = self
            .resource_metadata
            .as_ref()
            .and_then(|r| r.get("resource"))
            .and_then(Value::as_str)
        else {
            return Ok(None);
        };
        let mismatch = || {
            OAuthError::Flow(format!(
                "Protected resource {resource} does not match MCP server {server_url}"
            ))
        };
        let (Ok(requested), Ok(configured)) =
            (url::Url::parse(server_url), url::Url::parse(resource))
        else {
            return Err(mismatch());
        };
        if requested.origin() != configured.origin() {
            return Err(mismatch());
        }
        let slash = |p: &str| {
            if p.ends_with('/') {
                p.to_owned()
            } else {
                format!("{p}/")
            }
        };
        if !slash(requested.path()).starts_with(&slash(configured.path())) {
            return Err(mismatch());
        }
        Ok(Some(resource.to_owned()))
    }
}

/// A `WWW-Authenticate` challenge's fields pi uses.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Challenge {
    pub resource_metadata_url: Option<String>,
    pub scope: Option<String>,
    pub error: Option<String>,
}

impl Challenge {
    /// Parses a Bearer (or DPoP) challenge; other schemes give nothing.
    pub fn parse(header: &str) -> Self {
        let scheme = header
            .split_whitespace()
            .next()
            .unwrap_or("")
            .to_ascii_lowercase();
        if scheme != "bearer" && scheme != "dpop" {
            return Self::default();
        }
        Self {
            resource_metadata_url: field(header, "resource_metadata")
                .filter(|u| url::Url::parse(u).is_ok()),
            scope: field(header, "scope"),
            error: field(header, "error"),
        }
    }
}

/// `name="value"` or `name=value` in a challenge.
fn field(header: &str, name: &str) -> Option<String> {
    let lower = header.to_ascii_lowercase();
    let needle = format!("{name}=");
    let mut from = 0;
    while let Some(found) = lower[from..].find(&needle) {
        let at = from + found;
        let before = lower[..at].chars().last();
        from = at + needle.len();
        if before.is_some_and(|c| !(c == ',' || c.is_whitespace())) {
            continue;
        }
        let rest = &header[from..];
        let value = if let Some(quoted) = rest.strip_prefix('"') {
            quoted.split('"').next().unwrap_or("")
        } else {
            rest.split(|c: char| c == ',' || c.is_whitespace())
                .next()
                .unwrap_or("")
        };
        return (!value.is_empty()).then(|| value.to_owned());
    }
    None
}

/// A status that means "look elsewhere" rather than "fail".
fn is_miss(status: u16) -> bool {
    (400..500).contains(&status) || status == 502
}

fn trim_slash(path: &str) -> &str {
    path.strip_suffix('/').unwrap_or(path)
}

async fn get_json(http: &reqwest::Client, url: &str) -> Result<(u16, Option<Value>), OAuthError> {
    let response = http
        .get(url)
        .header("Accept", "application/json")
        .header("MCP-Protocol-Version", "2025-06-18")
        .send()
        .await
        .map_err(|e| {
            OAuthError::Flow(format!("Could not reach {url}: {}", super::error_chain(&e)))
        })?;
    let status = response.status().as_u16();
    if !response.status().is_success() {
        return Ok((status, None));
    }
    let value = response
        .json::<Value>()
        .await
        .map_err(|e| OAuthError::Flow(format!("Invalid metadata from {url}: {e}")))?;
    Ok((status, Some(value)))
}

/// The protected resource metadata, or `None` when the server publishes none.
async fn resource_metadata(
    http: &reqwest::Client,
    server_url: &url::Url,
    explicit: Option<&str>,
) -> Result<Option<Value>, OAuthError> {
    let origin = server_url.origin().ascii_serialization();
    let first = explicit.map_or_else(
        || {
            format!(
                "{origin}/.well-known/oauth-protected-resource{}",
                trim_slash(server_url.path())
            )
        },
        str::to_owned,
    );
    let (mut status, mut value) = get_json(http, &first).await?;
    if value.is_none() && explicit.is_none() && server_url.path() != "/" && is_miss(status) {
        (status, value) = get_json(
            http,
            &format!("{origin}/.well-known/oauth-protected-resource"),
        )
        .await?;
    }
    let Some(value) = value else {
        let _ = status;
        return Ok(None);
    };
    let valid = value
        .get("resource")
        .and_then(Value::as_str)
        .is_some_and(is_http_url);
    Ok(valid.then_some(value))
}

fn is_http_url(text: &str) -> bool {
    url::Url::parse(text).is_ok_and(|u| matches!(u.scheme(), "http" | "https"))
}

/// Checks the fields pi requires of authorization server metadata, worded as pi 1.6.0's
/// `parseAuthorizationServerMetadata` (`Invalid authorization endpoint`, …); `from` is kept
/// for callers that name the URL elsewhere.
fn check_metadata(value: &Value, _from: &str) -> Result<(), OAuthError> {
    let invalid = |what: &str| OAuthError::Flow(format!("Invalid {what}"));
    if !value.is_object() {
        return Err(invalid("authorization server metadata"));
    }
    if !value
        .get("response_types_supported")
        .is_some_and(Value::is_array)
    {
        return Err(invalid("response_types_supported"));
    }
    for (field, what) in [
        ("issuer", "authorization server issuer"),
        ("authorization_endpoint", "authorization endpoint"),
        ("token_endpoint", "token endpoint"),
    ] {
        if !value
            .get(field)
            .and_then(Value::as_str)
            .is_some_and(is_http_url)
        {
            return Err(invalid(what));
        }
    }
    match value.get("registration_endpoint") {
        None | Some(Value::Null) => Ok(()),
        Some(url) if url.as_str().is_some_and(is_http_url) => Ok(()),
        Some(_) => Err(invalid("registration endpoint")),
    }
}

/// The authorization server's metadata from its well-known URLs; `None` when it has none.
async fn server_metadata(
    http: &reqwest::Client,
    authorization_server_url: &str,
) -> Result<Option<Value>, OAuthError> {
    let issuer = url::Url::parse(authorization_server_url).map_err(|e| {
        OAuthError::Flow(format!(
            "Invalid authorization server URL {authorization_server_url}: {e}"
        ))
    })?;
    let origin = issuer.origin().ascii_serialization();
    let path = trim_slash(issuer.path());
    let mut urls = vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}/.well-known/openid-configuration{path}"),
    ];
    if !path.is_empty() {
        urls.push(format!("{origin}{path}/.well-known/openid-configuration"));
    }
    for url in urls {
        let (status, value) = get_json(http, &url).await?;
        let Some(value) = value else {
            if is_miss(status) {
                continue;
            }
            return Err(OAuthError::Flow(format!(
                "HTTP {status} loading authorization server metadata from {url}"
            )));
        };
        check_metadata(&value, &url)?;
        let found = value.get("issuer").and_then(Value::as_str).unwrap_or("");
        if trim_slash(found) != trim_slash(authorization_server_url) {
            return Err(OAuthError::Flow(format!(
                "OAuth issuer mismatch: expected {authorization_server_url:?}, received {found:?}"
            )));
        }
        return Ok(Some(value));
    }
    Ok(None)
}

/// Discovers the authorization server of `server_url`.
pub async fn discover(
    http: &reqwest::Client,
    server_url: &str,
    challenge: Option<&Challenge>,
    metadata_url: Option<&str>,
) -> Result<Discovered, OAuthError> {
    let server = url::Url::parse(server_url)
        .map_err(|e| OAuthError::Flow(format!("Invalid MCP server URL {server_url}: {e}")))?;
    let explicit = challenge.and_then(|c| c.resource_metadata_url.as_deref());
    let resource_metadata = resource_metadata(http, &server, explicit).await?;
    if let Some(url) = metadata_url {
        let (status, value) = get_json(http, url).await?;
        let value = value.ok_or_else(|| {
            OAuthError::Flow(format!(
                "HTTP {status} loading authorization server metadata from {url}"
            ))
        })?;
        check_metadata(&value, url)?;
        return Ok(Discovered {
            authorization_server_url: value["issuer"].as_str().unwrap_or(url).to_owned(),
            metadata: Some(value),
            resource_metadata,
        });
    }
    let authorization_server_url = resource_metadata
        .as_ref()
        .and_then(|r| r.get("authorization_servers"))
        .and_then(Value::as_array)
        .and_then(|servers| servers.first())
        .and_then(Value::as_str)
        .map_or_else(
            || format!("{}/", server.origin().ascii_serialization()),
            str::to_owned,
        );
    let metadata = server_metadata(http, &authorization_server_url).await?;
    Ok(Discovered {
        authorization_server_url,
        metadata,
        resource_metadata,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn challenge_fields() {
        let c = Challenge::parse(
            r#"Bearer error="invalid_token", resource_metadata="http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp", scope=read"#,
        );
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope.as_deref(), Some("read"));
        assert_eq!(
            c.resource_metadata_url.as_deref(),
            Some("http://127.0.0.1:9/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(Challenge::parse("Basic realm=x"), Challenge::default());
    }

    #[test]
    fn resource_must_cover_the_server_url() {
        let d = |resource: &str| Discovered {
            authorization_server_url: "https://as.test/".into(),
            metadata: None,
            resource_metadata: Some(serde_json::json!({"resource": resource})),
        };
        assert_eq!(
            d("https://x.test/")
                .resource("https://x.test/mcp")
                .unwrap()
                .as_deref(),
            Some("https://x.test/")
        );
        assert!(
            d("https://x.test/other")
                .resource("https://x.test/mcp")
                .is_err()
        );
        assert!(d("https://y.test/").resource("https://x.test/mcp").is_err());
    }
}
