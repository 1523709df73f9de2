//! The text of a request that could not reach its server, as pi 1.6.0 words it:
//! `Connection error.` and its underlying cause, in Node's terms where ours can tell them
//! (`connect ECONNREFUSED 127.0.0.1:8080`, `getaddrinfo ENOTFOUND example.invalid`), else the
//! deepest cause's own text (a certificate error, say), so the cause is never hidden.

use std::error::Error;
use std::io::ErrorKind;

use super::CONNECTION_ERROR;

/// `Connection error.: <cause>` for a failed send of a request to `url`.
pub fn connection_error_text(error: &reqwest::Error, url: &str) -> String {
    match cause(error, url) {
        Some(cause) => format!("{CONNECTION_ERROR}: {cause}"),
        None => CONNECTION_ERROR.to_owned(),
    }
}

/// The cause of `error`: a socket error code with the address, a failed name lookup with
/// the host, or the innermost error's text. Only the URL's host and port are named (never
/// its path or query, which may carry credentials).
fn cause(error: &reqwest::Error, url: &str) -> Option<String> {
    let parsed = reqwest::Url::parse(url).ok();
    let host = parsed
        .as_ref()
        .and_then(|u| u.host_str())
        .map(|h| h.trim_matches(['[', ']']).to_owned())
        .unwrap_or_default();
    let address = match parsed
        .as_ref()
        .and_then(reqwest::Url::port_or_known_default)
    {
        Some(port) => format!("{host}:{port}"),
        None => host.clone(),
    };
    let mut deepest = None;
    let mut source: Option<&(dyn Error + 'static)> = error.source();
    while let Some(current) = source {
        if let Some(io) = current.downcast_ref::<std::io::Error>() {
            let code = match io.kind() {
                ErrorKind::ConnectionRefused => Some("ECONNREFUSED"),
                ErrorKind::TimedOut => Some("ETIMEDOUT"),
                _ => None,
            };
            if let Some(code) = code {
                return Some(format!("connect {code} {address}"));
            }
        }
        let text = current.to_string();
        if text.contains("Temporary failure in name resolution") {
            return Some(format!("getaddrinfo EAI_AGAIN {host}"));
        }
        if text.starts_with("dns error") || text.contains("failed to lookup address") {
            return Some(format!("getaddrinfo ENOTFOUND {host}"));
        }
        deepest = Some(text).filter(|t| !t.is_empty());
        source = current.source();
    }
    deepest
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_refused_connection_names_its_address() {
        // A port held bound but not listening: connections to it are refused, and no
        // other test's server can take it meanwhile.
        let socket = tokio::net::TcpSocket::new_v4().unwrap();
        socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let port = socket.local_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}/v1/chat?key=secret");
        let client = crate::http::shared_client().unwrap();
        let error = client.get(&url).send().await.unwrap_err();
        assert_eq!(
            connection_error_text(&error, &url),
            format!("Connection error.: connect ECONNREFUSED 127.0.0.1:{port}")
        );
        drop(socket);
    }
}
