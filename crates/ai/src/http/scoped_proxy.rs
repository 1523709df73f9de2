//! The proxy a provider's scoped environment (auth.json `env`) names for a request, as
//! pi-ai 1.6's Bedrock handler reads it (`getProxyForUrl`): `<scheme>_proxy`, then
//! `all_proxy`, each from the scoped env (lower case, then upper) before the process
//! environment, unless `no_proxy` covers the host.

use std::collections::{BTreeMap, HashMap};
use std::sync::{LazyLock, Mutex, PoisonError};
use std::time::Duration;

const PROXY_KEYS: [&str; 4] = ["http_proxy", "https_proxy", "all_proxy", "no_proxy"];

/// Clients made for scoped proxies, by proxy URL (`""`: none).
static CLIENTS: LazyLock<Mutex<HashMap<String, reqwest::Client>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Where a request to `url` goes under `scoped`: `None` when the scoped env names no proxy
/// setting (the shared client applies the process environment's), else the proxy URL, `""`
/// for a direct connection.
pub fn proxy_for(url: &str, scoped: Option<&BTreeMap<String, String>>) -> Option<String> {
    let scoped = scoped?;
    let names_one = scoped
        .keys()
        .any(|key| PROXY_KEYS.contains(&key.to_ascii_lowercase().as_str()));
    if !names_one {
        return None;
    }
    let get = |key: &str| -> String {
        let (lower, upper) = (key.to_ascii_lowercase(), key.to_ascii_uppercase());
        [scoped.get(&lower), scoped.get(&upper)]
            .into_iter()
            .flatten()
            .find(|v| !v.is_empty())
            .cloned()
            .or_else(|| {
                [&lower, &upper]
                    .into_iter()
                    .find_map(|k| std::env::var(k).ok().filter(|v| !v.is_empty()))
            })
            .unwrap_or_default()
    };
    let parsed = reqwest::Url::parse(url).ok()?;
    let scheme = parsed.scheme();
    let host = parsed
        .host_str()?
        .trim_start_matches('[')
        .trim_end_matches(']')
        .to_ascii_lowercase();
    let port = parsed.port_or_known_default().unwrap_or(0);
    if !should_proxy(&host, port, &get("no_proxy").to_ascii_lowercase()) {
        return Some(String::new());
    }
    let mut proxy = get(&format!("{scheme}_proxy"));
    if proxy.is_empty() {
        proxy = get("all_proxy");
    }
    if !proxy.is_empty() && !proxy.contains("://") {
        proxy = format!("{scheme}://{proxy}");
    }
    Some(proxy)
}

/// Whether `no_proxy` leaves `host:port` to the proxy: no entry names the host (or a
/// domain above it) with a matching port, and it is not `*`.
fn should_proxy(host: &str, port: u16, no_proxy: &str) -> bool {
    if no_proxy.is_empty() {
        return true;
    }
    if no_proxy == "*" {
        return false;
    }
    no_proxy
        .split([',', ' ', '\t', '\n'])
        .filter(|entry| !entry.trim().is_empty())
        .all(|entry| {
            let entry = entry.trim();
            let (domain, entry_port) = match entry.rsplit_once(':') {
                Some((domain, port)) if !domain.contains(':') => {
                    (domain, port.parse::<u16>().unwrap_or(0))
                }
                _ => (entry, 0),
            };
            if entry_port != 0 && entry_port != port {
                return true;
            }
            let domain = domain.trim_start_matches('[').trim_end_matches(']');
            let domain = domain
                .strip_prefix("*.")
                .or_else(|| domain.strip_prefix('.'))
                .or_else(|| domain.strip_prefix('*'))
                .unwrap_or(domain);
            domain.is_empty() || !(host == domain || host.ends_with(&format!(".{domain}")))
        })
}

/// A client sending through `proxy` (`""`: directly), made once per proxy.
pub fn client_for(proxy: &str) -> Result<reqwest::Client, String> {
    let mut clients = CLIENTS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(client) = clients.get(proxy) {
        return Ok(client.clone());
    }
    let _ = rustls::crypto::ring::default_provider().install_default();
    let mut builder = reqwest::Client::builder()
        .user_agent(concat!("pi-rs/", env!("CARGO_PKG_VERSION")))
        .connect_timeout(Duration::from_secs(30))
        .no_proxy();
    if !proxy.is_empty() {
        // The URL may carry a password: it is not quoted.
        let proxy = reqwest::Proxy::all(proxy)
            .map_err(|_| "Invalid proxy URL in the provider's environment".to_owned())?;
        builder = builder.proxy(proxy);
    }
    let client = builder
        .build()
        .map_err(|e| format!("Could not create the HTTP client: {e}"))?;
    clients.insert(proxy.to_owned(), client.clone());
    Ok(client)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn scoped_proxies_as_pi_ai_reads_them() {
        let url = "http://bedrock.example:8080/model/m/converse-stream";
        assert_eq!(proxy_for(url, None), None);
        assert_eq!(proxy_for(url, Some(&env(&[("AWS_PROFILE", "p")]))), None);
        let scoped = env(&[("HTTP_PROXY", "127.0.0.1:3128")]);
        assert_eq!(
            proxy_for(url, Some(&scoped)).as_deref(),
            Some("http://127.0.0.1:3128")
        );
        let skipped = env(&[
            ("http_proxy", "http://p:1"),
            ("NO_PROXY", "other.example,.example"),
        ]);
        assert_eq!(proxy_for(url, Some(&skipped)).as_deref(), Some(""));
        let other_port = env(&[
            ("http_proxy", "http://p:1"),
            ("no_proxy", "bedrock.example:9"),
        ]);
        assert_eq!(
            proxy_for(url, Some(&other_port)).as_deref(),
            Some("http://p:1")
        );
        let all = env(&[("ALL_PROXY", "http://all:2")]);
        assert_eq!(proxy_for(url, Some(&all)).as_deref(), Some("http://all:2"));
    }
}
