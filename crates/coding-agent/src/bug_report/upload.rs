//! Talking to Radius: the gateway's address, its token, uploading a bug report as
//! `multipart/form-data` (pi 1.6's `core/bug-report-upload.ts`) and a session as an
//! artifact (`/share`).

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::{BugReportError, ReportFile};

/// The provider whose credential Radius takes.
pub const RADIUS_PROVIDER_ID: &str = "radius";
/// The gateway pi uses unless `PI_RADIUS_GATEWAY` names another.
pub const DEFAULT_RADIUS_GATEWAY: &str = "https://radius.pi.dev";
/// An OAuth token used must stay valid this long (pi 1.6's `minOAuthValidityMs`).
const MIN_OAUTH_VALIDITY_MS: i64 = 5 * 60_000;

/// A gateway address as pi 1.6 normalises it: `https://` when it has no scheme, no
/// trailing `/`.
pub fn normalize_gateway(url: &str) -> String {
    let url = url.trim();
    let with_scheme = if url.contains("://") {
        url.to_owned()
    } else {
        format!("https://{url}")
    };
    with_scheme.trim_end_matches('/').to_owned()
}

/// The Radius gateway: `PI_RADIUS_GATEWAY`, else `https://radius.pi.dev`.
pub fn gateway_url() -> String {
    normalize_gateway(
        &std::env::var("PI_RADIUS_GATEWAY").unwrap_or_else(|_| DEFAULT_RADIUS_GATEWAY.to_owned()),
    )
}

/// The gateway's host (and port), as the `/bug` dialog names it.
pub fn gateway_host() -> String {
    let url = gateway_url();
    reqwest::Url::parse(&url)
        .ok()
        .and_then(|u| {
            u.host_str().map(|host| match u.port() {
                Some(port) => format!("{host}:{port}"),
                None => host.to_owned(),
            })
        })
        .unwrap_or(url)
}

/// The Radius credential, when the `radius` provider exists and has one: its OAuth token
/// (refreshed when about to expire) or its API key (`auth.json`, `RADIUS_API_KEY`).
pub async fn radius_token(registry: &crate::model_registry::ModelRegistry) -> Option<String> {
    if !registry.has_provider(RADIUS_PROVIDER_ID) {
        return None;
    }
    if let Some(path) = registry.auth_path()
        && let Ok(Some(token)) = crate::config::oauth_refresh::fresh_oauth_key(
            path,
            RADIUS_PROVIDER_ID,
            MIN_OAUTH_VALIDITY_MS,
        )
        .await
    {
        return Some(token);
    }
    registry
        .provider_key(RADIUS_PROVIDER_ID)
        .filter(|k| !k.is_empty())
}

/// A `multipart/form-data` body: one part per file, named after it, with its file name and
/// content type. Returns the body and the content type header (with the boundary).
pub fn multipart_body(files: &[ReportFile], boundary: &str) -> (Vec<u8>, String) {
    let mut body = Vec::new();
    for file in files {
        body.extend_from_slice(
            format!(
                "--{boundary}\r\nContent-Disposition: form-data; name=\"{name}\"; filename=\"{name}\"\r\nContent-Type: {kind}\r\n\r\n",
                name = file.name,
                kind = file.content_type,
            )
            .as_bytes(),
        );
        body.extend_from_slice(file.data.as_bytes());
        body.extend_from_slice(b"\r\n");
    }
    body.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    (body, format!("multipart/form-data; boundary={boundary}"))
}

fn client() -> Result<reqwest::Client, BugReportError> {
    pi_ai::http::shared_client()
        .cloned()
        .map_err(BugReportError::Request)
}

/// What a failed request says: `fetch failed` for a connection that could not be made or
/// broke (the words of pi 1.6's fetch), otherwise the error's own text.
fn request_error(error: &reqwest::Error) -> BugReportError {
    if error.is_connect() || error.is_request() || error.is_timeout() {
        BugReportError::Request("fetch failed".to_owned())
    } else {
        BugReportError::Request(error.without_url_text())
    }
}

trait WithoutUrl {
    fn without_url_text(&self) -> String;
}

impl WithoutUrl for reqwest::Error {
    /// The error's text without the URL (which could carry a secret).
    fn without_url_text(&self) -> String {
        let mut text = self.to_string();
        if let Some(url) = self.url() {
            text = text.replace(url.as_str(), "<url>");
        }
        text
    }
}

/// Sends `request` unless `cancel` fires first (then `Cancelled`).
async fn send(
    request: reqwest::RequestBuilder,
    cancel: &CancellationToken,
) -> Result<(reqwest::StatusCode, Option<Value>), BugReportError> {
    let exchange = async {
        let response = request.send().await.map_err(|e| request_error(&e))?;
        let status = response.status();
        let json = response.json::<Value>().await.ok();
        Ok::<_, BugReportError>((status, json))
    };
    tokio::select! {
        result = exchange => result,
        () = cancel.cancelled() => Err(BugReportError::Cancelled),
    }
}

/// The reason phrase of a status (fetch's `statusText`), else its number.
fn status_text(status: reqwest::StatusCode) -> String {
    status
        .canonical_reason()
        .map_or_else(|| status.as_u16().to_string(), str::to_owned)
}

/// Uploads a report to `<gateway>/v1/bug-reports`; the server's report id.
pub async fn upload_bug_report(
    files: &[ReportFile],
    token: Option<&str>,
    gateway: &str,
    cancel: &CancellationToken,
) -> Result<String, BugReportError> {
    let boundary = format!("----pi-bug-report-{}", uuid::Uuid::new_v4().simple());
    let (body, content_type) = multipart_body(files, &boundary);
    let mut request = client()?
        .post(format!("{gateway}/v1/bug-reports"))
        .header(reqwest::header::CONTENT_TYPE, content_type)
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let (status, json) = send(request, cancel).await?;
    let id = json
        .as_ref()
        .filter(|j| j["ok"] == Value::Bool(true))
        .and_then(|j| j["bug_report"]["id"].as_str());
    if status.is_success()
        && let Some(id) = id
    {
        return Ok(id.to_owned());
    }
    let detail = json
        .as_ref()
        .filter(|j| j["ok"] != Value::Bool(true))
        .and_then(|j| {
            [&j["description"], &j["error"]]
                .into_iter()
                .filter_map(Value::as_str)
                .find(|s| !s.is_empty())
                .map(str::to_owned)
        });
    Err(BugReportError::Upload(
        detail.unwrap_or_else(|| status_text(status)),
    ))
}

/// Uploads a session (JSONL) as a Radius artifact; its canonical URL.
///
/// pi 1.6.0 always posts to `https://radius.pi.dev` here; ours honours
/// `PI_RADIUS_GATEWAY` as the bug report upload does (a deliberate difference, so that a
/// local stand-in can take the upload in tests).
pub async fn upload_artifact(
    jsonl: Vec<u8>,
    token: &str,
    gateway: &str,
    cancel: &CancellationToken,
) -> Result<String, BugReportError> {
    let request = client()?
        .post(format!(
            "{gateway}/v1/artifacts?visibility=organization&title=Pi+session"
        ))
        .bearer_auth(token)
        .header(reqwest::header::CONTENT_TYPE, "application/x-ndjson")
        .body(jsonl);
    let (status, json) = send(request, cancel).await?;
    let url = json
        .as_ref()
        .and_then(|j| j["artifact"]["canonical_url"].as_str());
    match url {
        Some(url) if status.is_success() => Ok(url.to_owned()),
        _ => Err(BugReportError::Artifact(
            json.as_ref()
                .and_then(|j| j["error"].as_str())
                .filter(|s| !s.is_empty())
                .map_or_else(|| status_text(status), str::to_owned),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gateways_are_normalised() {
        assert_eq!(normalize_gateway("radius.pi.dev/"), "https://radius.pi.dev");
        assert_eq!(
            normalize_gateway("http://127.0.0.1:5000//"),
            "http://127.0.0.1:5000"
        );
    }

    #[test]
    fn multipart_bodies_have_one_part_per_file() {
        let files = [
            ReportFile {
                name: "report.json",
                content_type: "application/json",
                data: "{}\n".to_owned(),
            },
            ReportFile {
                name: "summary.md",
                content_type: "text/markdown",
                data: "# x\n".to_owned(),
            },
        ];
        let (body, kind) = multipart_body(&files, "XyZ");
        assert_eq!(kind, "multipart/form-data; boundary=XyZ");
        assert_eq!(
            String::from_utf8(body).unwrap(),
            "--XyZ\r\nContent-Disposition: form-data; name=\"report.json\"; filename=\"report.json\"\r\n\
             Content-Type: application/json\r\n\r\n{}\n\r\n\
             --XyZ\r\nContent-Disposition: form-data; name=\"summary.md\"; filename=\"summary.md\"\r\n\
             Content-Type: text/markdown\r\n\r\n# x\n\r\n--XyZ--\r\n"
        );
    }
}
