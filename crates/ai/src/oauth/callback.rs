//! The localhost server a browser sign-in redirects to: it takes the first request on its
//! path with the right `state`, answers with a small page and hands the code over.

use std::sync::{Arc, Mutex, PoisonError};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::OAuthError;

/// Where and how to listen.
pub struct CallbackOptions<'a> {
    pub provider: &'a str,
    pub port: u16,
    pub path: &'a str,
    /// The host name the redirect URI names (`localhost` for most providers).
    pub redirect_host: &'a str,
    /// The `state` the callback must carry (`None`: the provider sends none, as OpenRouter).
    pub state: Option<&'a str>,
    /// The address to listen on; `None`: `PI_OAUTH_CALLBACK_HOST` or 127.0.0.1.
    pub bind_host: Option<&'a str>,
    /// The line of the success page; `None`: "Signed in to <provider>. …".
    pub success_message: Option<&'a str>,
}

/// What a successful callback carried: the code, the `iss` parameter when the
/// authorization server sent one (RFC 9207), and the `client_id` ChatGPT's agent
/// registration issues with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallbackCode {
    pub code: String,
    pub iss: Option<String>,
    pub client_id: Option<String>,
}

/// What the callback delivered: a code, or the provider's error.
type Outcome = Option<Result<CallbackCode, String>>;

/// A running callback server; dropping it stops listening.
pub struct CallbackServer {
    redirect_uri: String,
    outcome: watch::Receiver<Outcome>,
    task: JoinHandle<()>,
}

impl Drop for CallbackServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// The host the server binds to: `PI_OAUTH_CALLBACK_HOST` or 127.0.0.1, as pi does.
pub(crate) fn bind_host() -> String {
    std::env::var("PI_OAUTH_CALLBACK_HOST")
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "127.0.0.1".into())
}

impl CallbackServer {
    /// Listens on the options' port (0: any free port).
    pub async fn start(options: CallbackOptions<'_>) -> Result<Self, OAuthError> {
        let host = options.bind_host.map_or_else(bind_host, str::to_owned);
        let listener = TcpListener::bind((host.as_str(), options.port))
            .await
            .map_err(|e| {
                OAuthError::Failed(format!(
                    "Could not listen for the sign-in callback on port {}: {e}",
                    options.port
                ))
            })?;
        let port = listener
            .local_addr()
            .map_err(|e| OAuthError::Failed(e.to_string()))?
            .port();
        let redirect_uri = format!("http://{}:{port}{}", options.redirect_host, options.path);
        let (sender, outcome) = watch::channel(None);
        let sender = Arc::new(Mutex::new(Some(sender)));
        let path = options.path.to_owned();
        let state = options.state.map(str::to_owned);
        let provider = options.provider.to_owned();
        let success = options.success_message.map_or_else(
            || format!("Signed in to {provider}. You may now close this page."),
            str::to_owned,
        );
        let task = tokio::spawn(async move {
            while let Ok((mut stream, _)) = listener.accept().await {
                let (path, state, provider) = (path.clone(), state.clone(), provider.clone());
                let success = success.clone();
                let sender = Arc::clone(&sender);
                tokio::spawn(async move {
                    let Some(target) = read_target(&mut stream).await else {
                        return;
                    };
                    let (status, page, result) =
                        answer(&target, &path, state.as_deref(), &provider, &success);
                    let taken = result.and_then(|r| {
                        sender
                            .lock()
                            .unwrap_or_else(PoisonError::into_inner)
                            .take()
                            .map(|s| (s, r))
                    });
                    let (status, page) = match (&taken, status) {
                        (None, 200) => (
                            409,
                            page_html(
                                "Authentication failed",
                                "This sign-in has already been handled.",
                                None,
                            ),
                        ),
                        _ => (status, page),
                    };
                    let response = format!(
                        "HTTP/1.1 {status} {}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
                        reason(status),
                        page.len()
                    );
                    let _ = stream.write_all(response.as_bytes()).await;
                    let _ = stream.shutdown().await;
                    if let Some((sender, result)) = taken {
                        let _ = sender.send(Some(result));
                    }
                });
            }
        });
        Ok(Self {
            redirect_uri,
            outcome,
            task,
        })
    }

    /// The redirect URI to send with the authorization request.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// Waits for the callback: the code, or the provider's error.
    pub async fn wait(&mut self) -> Result<String, OAuthError> {
        self.wait_with_issuer()
            .await
            .map(|delivered| delivered.code)
    }

    /// Waits for the callback: the code with the `iss` it came with, or the error.
    pub async fn wait_with_issuer(&mut self) -> Result<CallbackCode, OAuthError> {
        loop {
            if let Some(outcome) = self.outcome.borrow().clone() {
                return outcome.map_err(OAuthError::Failed);
            }
            if self.outcome.changed().await.is_err() {
                return Err(OAuthError::Failed("OAuth callback server closed".into()));
            }
        }
    }
}

/// Reads the request head and returns its target (`/path?query`).
async fn read_target(stream: &mut tokio::net::TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") && head.len() < 64 * 1024 {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        head.extend_from_slice(&buf[..n]);
    }
    let text = String::from_utf8_lossy(&head);
    let mut parts = text.lines().next()?.split_whitespace();
    let method = parts.next()?;
    let target = parts.next()?;
    (method == "GET").then(|| target.to_owned())
}

/// The status, page and (when this request settles the sign-in) the outcome.
fn answer(
    target: &str,
    path: &str,
    state: Option<&str>,
    provider: &str,
    success: &str,
) -> (u16, String, Outcome) {
    let (route, query) = target.split_once('?').unwrap_or((target, ""));
    if route != path {
        return (
            404,
            page_html("Authentication failed", "Callback route not found.", None),
            None,
        );
    }
    let params: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect();
    let param = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    if state.is_some_and(|state| param("state").as_deref() != Some(state)) {
        return (
            400,
            page_html("Authentication failed", "State mismatch.", None),
            None,
        );
    }
    if let Some(error) = param("error") {
        let description = param("error_description").unwrap_or(error);
        let page = page_html(
            "Authentication failed",
            &format!("{provider} authorization failed."),
            Some(&description),
        );
        return (
            400,
            page,
            Some(Err(format!(
                "{provider} authorization failed: {description}"
            ))),
        );
    }
    match param("code") {
        Some(code) if !code.is_empty() => (
            200,
            page_html("Authentication successful", success, None),
            Some(Ok(CallbackCode {
                code,
                iss: param("iss"),
                client_id: param("client_id"),
            })),
        ),
        _ => (
            400,
            page_html("Authentication failed", "Missing authorization code.", None),
            None,
        ),
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        409 => "Conflict",
        _ => "Error",
    }
}

/// pi's logo in its colours, as pi 1.6.0's sign-in pages show it.
const LOGO_SVG: &str = concat!(
    r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 800 800" aria-hidden="true">"##,
    r##"<path fill="#F09082" d="M165.29 165.29H517.36V400H400V282.65H165.29Z"/>"##,
    r##"<path fill="#4D9ABF" d="M165.29 282.65H282.65V400H400V517.36H282.65V634.72H165.29Z"/>"##,
    r##"<path fill="#F1BE58" d="M517.36 400H634.72V634.72H517.36Z"/></svg>"##,
);

/// The look of the page: dark, centred, the logo above the heading.
const PAGE_STYLE: &str = "\
:root{--text:#fafafa;--text-dim:#a1a1aa;--page-bg:#09090b;\
--font-sans:ui-sans-serif,system-ui,-apple-system,\"Segoe UI\",Roboto,Arial,sans-serif;\
--font-mono:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}\
*{box-sizing:border-box}html{color-scheme:dark}\
body{margin:0;min-height:100vh;display:flex;align-items:center;justify-content:center;\
padding:24px;background:var(--page-bg);color:var(--text);font-family:var(--font-sans);\
text-align:center}\
main{width:100%;max-width:560px;display:flex;flex-direction:column;align-items:center}\
.logo{width:72px;height:72px;display:block;margin-bottom:24px}\
h1{margin:0 0 10px;font-size:28px;line-height:1.15;font-weight:650}\
p{margin:0;line-height:1.7;color:var(--text-dim);font-size:15px}\
.details{margin-top:16px;font-family:var(--font-mono);font-size:13px;color:var(--text-dim);\
white-space:pre-wrap;word-break:break-word}";

/// A sign-in page in pi's look: the logo, a heading, a line and optional details, all
/// text HTML-escaped.
fn page_html(heading: &str, message: &str, details: Option<&str>) -> String {
    let escape = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
            .replace('\'', "&#39;")
    };
    let details = details.map_or_else(String::new, |d| {
        format!("<div class=\"details\">{}</div>", escape(d))
    });
    format!(
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\" />\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\" />\n\
         <title>{h}</title>\n<style>{PAGE_STYLE}</style>\n</head>\n<body>\n<main>\n\
         <div class=\"logo\">{LOGO_SVG}</div>\n<h1>{h}</h1>\n<p>{m}</p>\n{details}\n\
         </main>\n</body>\n</html>",
        h = escape(heading),
        m = escape(message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_with_matching_state_settles() {
        let (status, _, outcome) = answer(
            "/callback?code=abc&state=s1",
            "/callback",
            Some("s1"),
            "X",
            "ok",
        );
        assert_eq!(status, 200);
        assert_eq!(
            outcome,
            Some(Ok(CallbackCode {
                code: "abc".into(),
                iss: None,
                client_id: None,
            }))
        );
        let (_, _, outcome) = answer(
            "/callback?code=abc&state=s1&iss=https%3A%2F%2Fas.test%2F",
            "/callback",
            Some("s1"),
            "X",
            "ok",
        );
        assert_eq!(
            outcome.and_then(Result::ok).and_then(|c| c.iss).as_deref(),
            Some("https://as.test/")
        );
    }

    #[test]
    fn wrong_state_or_path_is_refused_without_settling() {
        assert_eq!(
            answer(
                "/callback?code=a&state=bad",
                "/callback",
                Some("s1"),
                "X",
                "ok"
            )
            .2,
            None
        );
        assert_eq!(
            answer("/other?code=a&state=s1", "/callback", Some("s1"), "X", "ok").0,
            404
        );
    }

    #[test]
    fn without_a_state_any_code_on_the_path_settles() {
        let (status, _, outcome) = answer("/cb/1?code=abc", "/cb/1", None, "OpenRouter", "ok");
        assert_eq!(status, 200);
        assert_eq!(
            outcome.and_then(Result::ok).map(|c| c.code).as_deref(),
            Some("abc")
        );
    }

    #[test]
    fn pages_show_the_logo_and_escape_their_text() {
        let (_, page, _) = answer(
            "/callback?code=a&state=s1",
            "/callback",
            Some("s1"),
            "X",
            "Done <now>",
        );
        assert!(page.contains(LOGO_SVG));
        assert!(page.contains("<h1>Authentication successful</h1>"));
        assert!(page.contains("<p>Done &lt;now&gt;</p>"));
        let (_, page, _) = answer(
            "/callback?state=s1&error=e&error_description=It%27s%20off",
            "/callback",
            Some("s1"),
            "X",
            "ok",
        );
        assert!(page.contains("<p>X authorization failed.</p>"));
        assert!(page.contains("<div class=\"details\">It&#39;s off</div>"));
    }

    #[test]
    fn provider_error_settles_with_its_description() {
        let (_, _, outcome) = answer(
            "/callback?state=s1&error=access_denied&error_description=No%20thanks",
            "/callback",
            Some("s1"),
            "X",
            "ok",
        );
        assert_eq!(
            outcome,
            Some(Err("X authorization failed: No thanks".into()))
        );
    }
}
