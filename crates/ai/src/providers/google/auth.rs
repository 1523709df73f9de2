//! Google Cloud access tokens for Vertex AI: `GOOGLE_CLOUD_ACCESS_TOKEN`, or Application
//! Default Credentials of type `authorized_user` (what `gcloud auth application-default login`
//! writes), exchanged for an access token at Google's OAuth endpoint and cached until shortly
//! before it expires.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde::Deserialize;

const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// A cached token is refreshed when less than this is left.
const EXPIRY_MARGIN: Duration = Duration::from_secs(120);

/// How a Vertex request authenticates.
#[derive(Clone, PartialEq, Eq)]
pub enum Credentials {
    /// A Vertex AI API key (express mode), sent as `x-goog-api-key`.
    ApiKey(String),
    /// A ready OAuth access token (`GOOGLE_CLOUD_ACCESS_TOKEN`).
    AccessToken(String),
    /// An Application Default Credentials file.
    AdcFile(PathBuf),
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Secrets never reach logs.
        match self {
            Self::ApiKey(_) => f.write_str("ApiKey(<redacted>)"),
            Self::AccessToken(_) => f.write_str("AccessToken(<redacted>)"),
            Self::AdcFile(path) => f.debug_tuple("AdcFile").field(path).finish(),
        }
    }
}

/// The Application Default Credentials file: `GOOGLE_APPLICATION_CREDENTIALS`, else gcloud's
/// well-known location. `None` when neither exists.
pub fn adc_path(env: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    if let Some(path) = env("GOOGLE_APPLICATION_CREDENTIALS") {
        return Some(PathBuf::from(path));
    }
    let well_known = if cfg!(windows) {
        env("APPDATA").map(|dir| Path::new(&dir).join("gcloud"))
    } else {
        env("HOME").map(|home| Path::new(&home).join(".config").join("gcloud"))
    }?
    .join("application_default_credentials.json");
    well_known.exists().then_some(well_known)
}

/// The headers that authenticate a Vertex request.
pub async fn auth_headers(credentials: &Credentials) -> Result<Vec<(String, String)>, String> {
    match credentials {
        Credentials::ApiKey(key) => Ok(vec![("x-goog-api-key".into(), key.clone())]),
        Credentials::AccessToken(token) => {
            Ok(vec![("authorization".into(), format!("Bearer {token}"))])
        }
        Credentials::AdcFile(path) => {
            let token = adc_token(path).await?;
            let mut headers = vec![("authorization".into(), format!("Bearer {}", token.token))];
            if let Some(project) = token.quota_project {
                headers.push(("x-goog-user-project".into(), project));
            }
            Ok(headers)
        }
    }
}

#[derive(Clone)]
struct AccessToken {
    token: String,
    quota_project: Option<String>,
    expires: Instant,
}

/// Tokens by credentials file contents.
static CACHE: LazyLock<Mutex<HashMap<String, AccessToken>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

static CLIENT: LazyLock<Result<reqwest::Client, String>> = LazyLock::new(|| {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .connect_timeout(Duration::from_secs(30))
        .timeout(Duration::from_secs(60))
        .build()
        .map_err(|e| format!("Could not create the HTTP client: {e}"))
});

#[derive(Deserialize)]
struct CredentialsFile {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    client_id: String,
    #[serde(default)]
    client_secret: String,
    #[serde(default)]
    refresh_token: String,
    #[serde(default)]
    quota_project_id: Option<String>,
    #[serde(default)]
    token_uri: Option<String>,
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: Option<u64>,
}

#[derive(Deserialize, Default)]
struct TokenError {
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    error_description: Option<String>,
}

async fn adc_token(path: &Path) -> Result<AccessToken, String> {
    let shown = path.display();
    // A small local file: reading it blocking is cheaper than a blocking-pool round trip.
    let contents = std::fs::read_to_string(path)
        .map_err(|e| format!("Could not read Google Cloud credentials {shown}: {e}"))?;
    if let Some(token) = CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(&contents)
        .filter(|t| t.expires > Instant::now() + EXPIRY_MARGIN)
    {
        return Ok(token.clone());
    }
    let file: CredentialsFile = serde_json::from_str(&contents)
        .map_err(|e| format!("Invalid Google Cloud credentials {shown}: {e}"))?;
    let token = match file.kind.as_str() {
        "authorized_user" => refresh(&file).await?,
        other => {
            return Err(format!(
                "Google Cloud credentials of type \"{other}\" ({shown}) are not supported; use \
                 `gcloud auth application-default login`, GOOGLE_CLOUD_ACCESS_TOKEN or GOOGLE_CLOUD_API_KEY"
            ));
        }
    };
    CACHE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(contents, token.clone());
    Ok(token)
}

/// Exchanges an `authorized_user` refresh token for an access token.
async fn refresh(file: &CredentialsFile) -> Result<AccessToken, String> {
    let client = CLIENT.as_ref().map_err(Clone::clone)?;
    let body = form_encode(&[
        ("grant_type", "refresh_token"),
        ("client_id", &file.client_id),
        ("client_secret", &file.client_secret),
        ("refresh_token", &file.refresh_token),
    ]);
    let uri = file.token_uri.as_deref().unwrap_or(DEFAULT_TOKEN_URI);
    let started = Instant::now();
    let response = client
        .post(uri)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(body)
        .send()
        .await
        .map_err(|e| format!("Could not refresh the Google Cloud access token: {e}"))?;
    let status = response.status();
    let bytes = response
        .bytes()
        .await
        .map_err(|e| format!("Could not refresh the Google Cloud access token: {e}"))?;
    if !status.is_success() {
        let error: TokenError = serde_json::from_slice(&bytes).unwrap_or_default();
        let detail = [error.error, error.error_description]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(": ");
        return Err(format!(
            "Could not refresh the Google Cloud access token: {} {detail}",
            status.as_u16()
        )
        .trim_end()
        .to_owned());
    }
    let token: TokenResponse = serde_json::from_slice(&bytes)
        .map_err(|e| format!("Invalid Google OAuth token response: {e}"))?;
    Ok(AccessToken {
        token: token.access_token,
        quota_project: file.quota_project_id.clone().filter(|p| !p.is_empty()),
        expires: started + Duration::from_secs(token.expires_in.unwrap_or(3600)),
    })
}

/// `application/x-www-form-urlencoded` encoding of key/value pairs.
fn form_encode(pairs: &[(&str, &str)]) -> String {
    fn encode(text: &str, out: &mut String) {
        for byte in text.bytes() {
            match byte {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    out.push(char::from(byte));
                }
                b' ' => out.push('+'),
                other => out.push_str(&format!("%{other:02X}")),
            }
        }
    }
    let mut out = String::new();
    for (i, (key, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        encode(key, &mut out);
        out.push('=');
        encode(value, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[test]
    fn form_encoding() {
        assert_eq!(
            form_encode(&[("a", "x y"), ("b", "1/2&=")]),
            "a=x+y&b=1%2F2%26%3D"
        );
    }

    #[test]
    fn debug_redacts_secrets() {
        let shown = format!("{:?}", Credentials::ApiKey("AIza-secret".into()));
        assert!(!shown.contains("secret"));
        let shown = format!("{:?}", Credentials::AccessToken("ya29.secret".into()));
        assert!(!shown.contains("secret"));
    }

    #[test]
    fn adc_path_prefers_the_variable() {
        let env = |name: &str| {
            (name == "GOOGLE_APPLICATION_CREDENTIALS").then(|| "/tmp/creds.json".to_owned())
        };
        assert_eq!(adc_path(&env), Some(PathBuf::from("/tmp/creds.json")));
        let none = |_: &str| None;
        assert_eq!(adc_path(&none), None);
    }

    /// Serves one HTTP response on a local port and returns the request it got.
    async fn one_shot(
        status: &'static str,
        body: &'static str,
    ) -> (String, tokio::task::JoinHandle<String>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/token", listener.local_addr().unwrap());
        let task = tokio::spawn(async move {
            let (mut socket, _) = listener.accept().await.unwrap();
            let mut request = Vec::new();
            let mut buf = [0u8; 4096];
            loop {
                let n = socket.read(&mut buf).await.unwrap();
                request.extend_from_slice(&buf[..n]);
                let text = String::from_utf8_lossy(&request).to_string();
                if let Some(head_end) = text.find("\r\n\r\n") {
                    let length = text[..head_end]
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse::<usize>().unwrap())
                        })
                        .unwrap_or(0);
                    if request.len() >= head_end + 4 + length {
                        break;
                    }
                }
                if n == 0 {
                    break;
                }
            }
            let response = format!(
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
            socket.write_all(response.as_bytes()).await.unwrap();
            String::from_utf8_lossy(&request).to_string()
        });
        (url, task)
    }

    #[tokio::test]
    async fn authorized_user_refresh_token_is_exchanged_and_cached() {
        let (url, server) = one_shot(
            "200 OK",
            r#"{"access_token":"ya29.fresh","expires_in":3599,"token_type":"Bearer"}"#,
        )
        .await;
        let dir = std::env::temp_dir().join(format!("pi-adc-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("adc.json");
        let creds = serde_json::json!({
            "type": "authorized_user", "client_id": "cid.apps.googleusercontent.com",
            "client_secret": "s3cret", "refresh_token": "1//refresh", "quota_project_id": "quota-p",
            "token_uri": url,
        });
        std::fs::write(&path, creds.to_string()).unwrap();
        let credentials = Credentials::AdcFile(path.clone());
        let headers = auth_headers(&credentials).await.unwrap();
        assert_eq!(
            headers,
            vec![
                ("authorization".to_owned(), "Bearer ya29.fresh".to_owned()),
                ("x-goog-user-project".to_owned(), "quota-p".to_owned()),
            ]
        );
        let request = server.await.unwrap();
        assert!(request.starts_with("POST /token "), "{request}");
        assert!(request.contains("grant_type=refresh_token"));
        assert!(request.contains("client_id=cid.apps.googleusercontent.com"));
        assert!(request.contains("refresh_token=1%2F%2Frefresh"));
        // The second call is served from the cache (the one-shot server is gone).
        let again = auth_headers(&credentials).await.unwrap();
        assert_eq!(again[0].1, "Bearer ya29.fresh");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[tokio::test]
    async fn refresh_errors_and_unsupported_types_are_reported() {
        let (url, _server) = one_shot(
            "400 Bad Request",
            r#"{"error":"invalid_grant","error_description":"Bad Request"}"#,
        )
        .await;
        let dir = std::env::temp_dir().join(format!("pi-adc-err-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("adc.json");
        let creds = serde_json::json!({"type": "authorized_user", "client_id": "c",
            "client_secret": "s", "refresh_token": "r", "token_uri": url});
        std::fs::write(&path, creds.to_string()).unwrap();
        let error = auth_headers(&Credentials::AdcFile(path.clone()))
            .await
            .unwrap_err();
        assert_eq!(
            error,
            "Could not refresh the Google Cloud access token: 400 invalid_grant: Bad Request"
        );
        std::fs::write(&path, r#"{"type":"service_account","client_email":"x"}"#).unwrap();
        let error = auth_headers(&Credentials::AdcFile(path.clone()))
            .await
            .unwrap_err();
        assert!(error.contains("\"service_account\""), "{error}");
        let missing = dir.join("missing.json");
        let error = auth_headers(&Credentials::AdcFile(missing))
            .await
            .unwrap_err();
        assert!(
            error.starts_with("Could not read Google Cloud credentials"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
