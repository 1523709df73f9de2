//! The `httpProxy` setting (pi 0.79.5): a proxy URL in the agent dir's `settings.json`
//! stands in for `HTTP_PROXY` and `HTTPS_PROXY` where those are not set: pi's HTTP client
//! uses it, and the extension host and the commands pi runs get it in their environment.
//! Project settings cannot set it.

use std::path::Path;

use serde_json::Value;

/// The proxy the global settings name, trimmed; none when unset or blank.
pub fn configured(agent_dir: &Path) -> Option<String> {
    let settings = super::settings::read_object(&super::paths::settings_path(agent_dir));
    let proxy = settings.get("httpProxy").and_then(Value::as_str)?.trim();
    (!proxy.is_empty()).then(|| proxy.to_owned())
}

/// Uses the setting for pi's HTTP client and the processes it starts. Call it before the
/// first request.
pub fn apply(agent_dir: &Path) {
    if let Some(proxy) = configured(agent_dir) {
        pi_ai::http::use_settings_proxy(proxy);
    }
}
