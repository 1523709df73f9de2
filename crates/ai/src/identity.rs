//! How requests name their client, as pi-ai 1.6's client identity does: a `User-Agent`
//! with the pi version this build stands in for, and attribution headers for the routers
//! that credit the client (OpenRouter, NVIDIA NIM, OpenCode) while the application allows
//! attribution (pi: `enableInstallTelemetry` / `PI_TELEMETRY`).

use std::sync::OnceLock;

use crate::http::HttpRequest;
use crate::types::Model;

/// Who the requests come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientIdentity {
    /// The pi version named in the `User-Agent`.
    pub version: String,
    /// Whether routers get the attribution headers.
    pub attribution: bool,
}

/// The attribution pi-ai gives: its name, site and category.
const NAME: &str = "pi";
const URL: &str = "https://pi.dev";
const CATEGORIES: &str = "cli-agent";

static IDENTITY: OnceLock<ClientIdentity> = OnceLock::new();

/// Sets the identity for the rest of the process (the first call wins). A library user
/// that never sets one sends the crate's own `User-Agent` and no attribution.
pub fn set_client_identity(identity: ClientIdentity) {
    let _ = IDENTITY.set(identity);
}

/// `pi/<version> (<os>; pi-rs/<crate version>; <arch>)`, in the shape of pi's detailed
/// `User-Agent` (`pi/1.6.0 (linux; node/v22.0.0; x64)`).
pub fn user_agent() -> String {
    let version = IDENTITY
        .get()
        .map_or(env!("CARGO_PKG_VERSION"), |i| i.version.as_str());
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        other => other,
    };
    format!(
        "pi/{version} ({}; pi-rs/{}; {arch})",
        std::env::consts::OS,
        env!("CARGO_PKG_VERSION")
    )
}

fn host_is(base_url: &str, host: &str) -> bool {
    reqwest::Url::parse(base_url)
        .ok()
        .and_then(|url| url.host_str().map(|h| h == host))
        .unwrap_or(false)
}

fn is_openrouter(model: &Model) -> bool {
    model.provider == "openrouter" || model.base_url.contains("openrouter.ai")
}

fn is_nvidia_nim(model: &Model) -> bool {
    model.provider == "nvidia" || host_is(&model.base_url, "integrate.api.nvidia.com")
}

/// OpenCode Zen and Go.
pub fn is_opencode(model: &Model) -> bool {
    matches!(model.provider.as_str(), "opencode" | "opencode-go")
        || host_is(&model.base_url, "opencode.ai")
}

/// Sets the `User-Agent` and the attribution headers `model`'s router takes. Called before
/// the model's and the caller's headers, which override these.
pub fn apply_identity(request: &mut HttpRequest, model: &Model) {
    request.set_header("user-agent", &user_agent());
    if !IDENTITY.get().is_some_and(|i| i.attribution) {
        return;
    }
    if is_openrouter(model) {
        request.set_header("http-referer", URL);
        request.set_header("x-openrouter-title", NAME);
        request.set_header("x-openrouter-categories", CATEGORIES);
    } else if is_nvidia_nim(model) {
        request.set_header("x-billing-invoke-origin", "Pi");
    } else if is_opencode(model) {
        request.set_header("x-opencode-client", NAME);
    }
}

/// OpenCode routes a session by `x-opencode-session` (pi-ai 1.6 adds it to the caller's
/// headers, so it overrides the model's and yields to the caller's own).
pub fn apply_opencode_session(request: &mut HttpRequest, model: &Model, session: Option<&str>) {
    if let Some(session) = session.filter(|s| !s.is_empty())
        && is_opencode(model)
    {
        request.set_header("x-opencode-session", session);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routers_are_told_apart_by_provider_or_exact_host() {
        let mut model = crate::models::get_models("openrouter").remove(0);
        assert!(is_openrouter(&model));
        model.provider = "custom".into();
        model.base_url = "https://integrate.api.nvidia.com/v1".into();
        assert!(is_nvidia_nim(&model) && !is_opencode(&model));
        model.base_url = "https://evil.example/integrate.api.nvidia.com".into();
        assert!(!is_nvidia_nim(&model));
        model.base_url = "https://opencode.ai/zen/v1".into();
        assert!(is_opencode(&model));
    }

    #[test]
    fn the_user_agent_has_pis_shape() {
        let agent = user_agent();
        assert!(agent.starts_with("pi/"), "{agent}");
        assert!(agent.contains("; pi-rs/"), "{agent}");
    }
}
