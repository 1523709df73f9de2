//! The router's address as pi stores and uses it: no trailing `/`, no `/v1`, no query or
//! fragment; chat requests go to `<url>/v1`.

use reqwest::Url;

use super::error::LlamaError;

/// Where the router listens unless told otherwise (`llama serve`'s default port).
pub const DEFAULT_SERVER_URL: &str = "http://127.0.0.1:9931";

/// `value` as a router URL: trimmed, http or https only, without query, fragment, trailing
/// slashes or a final `/v1` (users often paste the OpenAI base URL).
pub fn normalize_server_url(value: &str) -> Result<String, LlamaError> {
    let mut url = Url::parse(value.trim()).map_err(|_| LlamaError::InvalidUrl)?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(LlamaError::UnsupportedScheme);
    }
    url.set_fragment(None);
    url.set_query(None);
    let path = url.path().trim_end_matches('/');
    let path = path.strip_suffix("/v1").unwrap_or(path);
    let path = if path.is_empty() {
        "/".to_owned()
    } else {
        path.to_owned()
    };
    url.set_path(&path);
    let text = url.to_string();
    Ok(text.strip_suffix('/').unwrap_or(&text).to_owned())
}

/// The OpenAI-compatible base URL of a router: `<url>/v1`.
pub fn inference_url(server_url: &str) -> Result<String, LlamaError> {
    Ok(format!("{}/v1", normalize_server_url(server_url)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalizes_as_pi_does() {
        let n = |s: &str| normalize_server_url(s);
        assert_eq!(n("http://127.0.0.1:9931").unwrap(), "http://127.0.0.1:9931");
        assert_eq!(
            n("  http://127.0.0.1:9931/ ").unwrap(),
            "http://127.0.0.1:9931"
        );
        assert_eq!(
            n("http://127.0.0.1:9931/v1/").unwrap(),
            "http://127.0.0.1:9931"
        );
        assert_eq!(
            n("https://Example.com/llama/v1?x=1#top").unwrap(),
            "https://example.com/llama"
        );
        assert_eq!(
            n("http://host/base//").unwrap(),
            "http://host/base",
            "every trailing slash goes"
        );
        assert_eq!(n("http://host:80/").unwrap(), "http://host", "default port");
        assert_eq!(n("http://host/v1/v1").unwrap(), "http://host/v1");
        assert_eq!(n("ftp://host"), Err(LlamaError::UnsupportedScheme));
        assert_eq!(n("localhost:9931"), Err(LlamaError::UnsupportedScheme));
        assert_eq!(n("127.0.0.1:9931"), Err(LlamaError::InvalidUrl));
        assert_eq!(n("not a url"), Err(LlamaError::InvalidUrl));
        assert_eq!(n(""), Err(LlamaError::InvalidUrl));
    }

    #[test]
    fn chat_goes_to_v1() {
        assert_eq!(
            inference_url("http://127.0.0.1:9931/").unwrap(),
            "http://127.0.0.1:9931/v1"
        );
    }
}
