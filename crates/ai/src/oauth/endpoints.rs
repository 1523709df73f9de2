//! Where the sign-in requests go. `PI_OAUTH_BASE_URL` sends every one of them to another
//! server (a test double or a proxy), with the original host as the first path segment:
//! `https://claude.ai/oauth/authorize` becomes `<base>/claude.ai/oauth/authorize`.

/// The environment variable that redirects every OAuth endpoint.
pub const BASE_URL_ENV: &str = "PI_OAUTH_BASE_URL";

/// `url`, redirected when `PI_OAUTH_BASE_URL` is set.
pub fn endpoint(url: &str) -> String {
    match std::env::var(BASE_URL_ENV) {
        Ok(base) if !base.trim().is_empty() => rewrite(url, base.trim()),
        _ => url.to_owned(),
    }
}

fn rewrite(url: &str, base: &str) -> String {
    let rest = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("http://"))
        .unwrap_or(url);
    format!("{}/{rest}", base.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::rewrite;

    #[test]
    fn host_becomes_the_first_segment() {
        assert_eq!(
            rewrite("https://claude.ai/oauth/authorize", "http://127.0.0.1:9/"),
            "http://127.0.0.1:9/claude.ai/oauth/authorize"
        );
    }
}
