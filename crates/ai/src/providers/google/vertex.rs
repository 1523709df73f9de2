//! `google-vertex`: the endpoint and credentials of a Vertex AI request, as the Gen AI SDK
//! resolves them.
//!
//! - An API key (the option, else `GOOGLE_CLOUD_API_KEY`) uses express mode:
//!   `https://aiplatform.googleapis.com/v1/publishers/google/models/{model}` with
//!   `x-goog-api-key`.
//! - Otherwise `GOOGLE_CLOUD_PROJECT` (or `GCLOUD_PROJECT`) and `GOOGLE_CLOUD_LOCATION` name
//!   the endpoint (`https://{location}-aiplatform.googleapis.com/v1/projects/{p}/locations/{l}/
//!   publishers/google/models/{model}`; `global` and the `us`/`eu` multi-regions have their
//!   own hosts), authenticated by `GOOGLE_CLOUD_ACCESS_TOKEN` or Application Default
//!   Credentials.
//! - A model `baseUrl` without `{location}` replaces the host (and the `projects/…` prefix).

use super::auth::{Credentials, adc_path};
use crate::types::Model;

/// The key the TypeScript pi stores for "use the ambient Vertex credentials".
const CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";
const API_VERSION: &str = "v1";

/// Where a Vertex request goes and how it authenticates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub url: String,
    pub credentials: Credentials,
}

/// `<…>` placeholders such as `<authenticated>` are not keys.
fn is_placeholder(key: &str) -> bool {
    key.len() >= 3
        && key.starts_with('<')
        && key.ends_with('>')
        && !key[1..key.len() - 1].contains('>')
}

/// The Vertex API key: the option, else `GOOGLE_CLOUD_API_KEY`; markers and placeholders
/// mean "no key".
pub fn api_key(option: Option<&str>, env: &dyn Fn(&str) -> Option<String>) -> Option<String> {
    let key = option
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .or_else(|| env("GOOGLE_CLOUD_API_KEY").map(|k| k.trim().to_owned()))?;
    (!key.is_empty() && key != CREDENTIALS_MARKER && !is_placeholder(&key)).then_some(key)
}

/// The model's resource path: `publishers/google/models/{id}` unless the id is already one.
fn model_path(id: &str) -> String {
    if id.starts_with("publishers/") || id.starts_with("projects/") || id.starts_with("models/") {
        id.to_owned()
    } else if let Some((publisher, name)) = id.split_once('/') {
        format!("publishers/{publisher}/models/{name}")
    } else {
        format!("publishers/google/models/{id}")
    }
}

/// A usable custom base URL (the catalog's `{location}` template is not one).
fn custom_base_url(base_url: &str) -> Option<&str> {
    let trimmed = base_url.trim();
    (!trimmed.is_empty() && !trimmed.contains("{location}")).then_some(trimmed)
}

/// Whether a URL path already names an API version (`v1`, `v1beta1`, …).
fn includes_api_version(base_url: &str) -> bool {
    let path = base_url.split_once("://").map_or(base_url, |(_, rest)| {
        rest.split_once('/').map_or("", |(_, p)| p)
    });
    path.split('/').any(|segment| {
        let Some(rest) = segment.strip_prefix('v') else {
            return false;
        };
        let digits = rest.trim_start_matches(|c: char| c.is_ascii_digit());
        digits.len() < rest.len()
            && (digits.is_empty()
                || digits
                    .strip_prefix("beta")
                    .is_some_and(|d| d.chars().all(|c| c.is_ascii_digit())))
    })
}

fn regional_host(location: &str) -> String {
    match location {
        "global" => "https://aiplatform.googleapis.com".to_owned(),
        "us" | "eu" => format!("https://aiplatform.{location}.rep.googleapis.com"),
        _ => format!("https://{location}-aiplatform.googleapis.com"),
    }
}

fn streaming_url(prefix: &str, path: &str) -> String {
    format!(
        "{}/{path}:streamGenerateContent?alt=sse",
        prefix.trim_end_matches('/')
    )
}

/// Resolves the URL and credentials for `model` (`env` reads non-empty variables).
pub fn resolve(
    model: &Model,
    api_key_option: Option<&str>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Target, String> {
    let path = model_path(&model.id);
    let custom = custom_base_url(&model.base_url).map(|base| {
        if includes_api_version(base) {
            base.trim_end_matches('/').to_owned()
        } else {
            format!("{}/{API_VERSION}", base.trim_end_matches('/'))
        }
    });
    if let Some(key) = api_key(api_key_option, env) {
        let prefix =
            custom.unwrap_or_else(|| format!("https://aiplatform.googleapis.com/{API_VERSION}"));
        return Ok(Target {
            url: streaming_url(&prefix, &path),
            credentials: Credentials::ApiKey(key),
        });
    }
    let project = env("GOOGLE_CLOUD_PROJECT")
        .or_else(|| env("GCLOUD_PROJECT"))
        .ok_or("Vertex AI requires a project ID. Set GOOGLE_CLOUD_PROJECT/GCLOUD_PROJECT.")?;
    let location = env("GOOGLE_CLOUD_LOCATION")
        .ok_or("Vertex AI requires a location. Set GOOGLE_CLOUD_LOCATION.")?;
    let url = match custom {
        Some(prefix) => streaming_url(&prefix, &path),
        None if path.starts_with("projects/") => streaming_url(
            &format!("{}/{API_VERSION}", regional_host(&location)),
            &path,
        ),
        None => streaming_url(
            &format!(
                "{}/{API_VERSION}/projects/{project}/locations/{location}",
                regional_host(&location)
            ),
            &path,
        ),
    };
    let credentials = match env("GOOGLE_CLOUD_ACCESS_TOKEN") {
        Some(token) => Credentials::AccessToken(token.trim().to_owned()),
        None => Credentials::AdcFile(adc_path(env).ok_or(
            "Vertex AI has no Google Cloud credentials: set GOOGLE_CLOUD_API_KEY, \
             GOOGLE_CLOUD_ACCESS_TOKEN (e.g. `gcloud auth print-access-token`) or Application \
             Default Credentials (`gcloud auth application-default login`, or \
             GOOGLE_APPLICATION_CREDENTIALS)",
        )?),
    };
    Ok(Target { url, credentials })
}

/// Reads a non-empty environment variable.
pub fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;
    use std::path::PathBuf;

    use super::*;
    use crate::types::{InputKind, ModelCost};

    fn model(base_url: &str, id: &str) -> Model {
        Model {
            id: id.into(),
            name: id.into(),
            api: "google-vertex".into(),
            provider: "google-vertex".into(),
            base_url: base_url.into(),
            reasoning: true,
            thinking_level_map: None,
            input: vec![InputKind::Text],
            cost: ModelCost::default(),
            context_window: 1,
            max_tokens: 1,
            headers: None,
            compat: None,
            extras: Default::default(),
        }
    }

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| map.get(name).cloned()
    }

    const CATALOG_BASE: &str = "https://{location}-aiplatform.googleapis.com";

    #[test]
    fn api_key_uses_express_mode() {
        let target = resolve(
            &model(CATALOG_BASE, "gemini-2.5-pro"),
            Some(" AIza-key "),
            &env(&[
                ("GOOGLE_CLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "us-central1"),
            ]),
        )
        .unwrap();
        assert_eq!(
            target.url,
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        );
        assert_eq!(target.credentials, Credentials::ApiKey("AIza-key".into()));
        let from_env = resolve(
            &model(CATALOG_BASE, "gemini-2.5-pro"),
            None,
            &env(&[("GOOGLE_CLOUD_API_KEY", "env-key")]),
        )
        .unwrap();
        assert_eq!(from_env.credentials, Credentials::ApiKey("env-key".into()));
    }

    #[test]
    fn project_and_location_name_the_endpoint() {
        let vars = [
            ("GOOGLE_CLOUD_PROJECT", "my-proj"),
            ("GOOGLE_CLOUD_LOCATION", "europe-west4"),
            ("GOOGLE_CLOUD_ACCESS_TOKEN", "ya29.token"),
        ];
        // Placeholders and the marker are not keys.
        for key in [
            None,
            Some("<authenticated>"),
            Some("gcp-vertex-credentials"),
        ] {
            let target =
                resolve(&model(CATALOG_BASE, "gemini-2.5-flash"), key, &env(&vars)).unwrap();
            assert_eq!(
                target.url,
                "https://europe-west4-aiplatform.googleapis.com/v1/projects/my-proj/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse"
            );
            assert_eq!(
                target.credentials,
                Credentials::AccessToken("ya29.token".into())
            );
        }
        let global = resolve(
            &model("", "gemini-3-pro-preview"),
            None,
            &env(&[
                ("GCLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "global"),
                ("GOOGLE_APPLICATION_CREDENTIALS", "/x/adc.json"),
            ]),
        )
        .unwrap();
        assert_eq!(
            global.url,
            "https://aiplatform.googleapis.com/v1/projects/p/locations/global/publishers/google/models/gemini-3-pro-preview:streamGenerateContent?alt=sse"
        );
        assert_eq!(
            global.credentials,
            Credentials::AdcFile(PathBuf::from("/x/adc.json"))
        );
        let us = resolve(
            &model(CATALOG_BASE, "gemini-2.5-pro"),
            None,
            &env(&[
                ("GCLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "us"),
                ("GOOGLE_CLOUD_ACCESS_TOKEN", "t"),
            ]),
        )
        .unwrap();
        assert!(
            us.url.starts_with(
                "https://aiplatform.us.rep.googleapis.com/v1/projects/p/locations/us/"
            ),
            "{}",
            us.url
        );
    }

    #[test]
    fn custom_base_url_replaces_host_and_resource_prefix() {
        let vars = [
            ("GOOGLE_CLOUD_PROJECT", "p"),
            ("GOOGLE_CLOUD_LOCATION", "l"),
            ("GOOGLE_CLOUD_ACCESS_TOKEN", "t"),
        ];
        let plain = resolve(&model("http://127.0.0.1:9/", "gemini-x"), None, &env(&vars)).unwrap();
        assert_eq!(
            plain.url,
            "http://127.0.0.1:9/v1/publishers/google/models/gemini-x:streamGenerateContent?alt=sse"
        );
        let versioned = resolve(
            &model("https://proxy.example/api/v1beta1", "anthropic/claude"),
            None,
            &env(&vars),
        )
        .unwrap();
        assert_eq!(
            versioned.url,
            "https://proxy.example/api/v1beta1/publishers/anthropic/models/claude:streamGenerateContent?alt=sse"
        );
    }

    #[test]
    fn missing_settings_are_explained() {
        let m = model(CATALOG_BASE, "gemini-2.5-pro");
        let error = resolve(&m, None, &env(&[])).unwrap_err();
        assert!(error.contains("GOOGLE_CLOUD_PROJECT"), "{error}");
        let error = resolve(&m, None, &env(&[("GOOGLE_CLOUD_PROJECT", "p")])).unwrap_err();
        assert!(error.contains("GOOGLE_CLOUD_LOCATION"), "{error}");
        let error = resolve(
            &m,
            None,
            &env(&[
                ("GOOGLE_CLOUD_PROJECT", "p"),
                ("GOOGLE_CLOUD_LOCATION", "l"),
            ]),
        )
        .unwrap_err();
        assert!(error.contains("GOOGLE_CLOUD_ACCESS_TOKEN"), "{error}");
    }

    #[test]
    fn api_version_detection() {
        assert!(includes_api_version("https://x/v1"));
        assert!(includes_api_version("https://x/a/v1beta1/"));
        assert!(includes_api_version("https://x/v1beta"));
        assert!(!includes_api_version("https://x/api"));
        assert!(!includes_api_version("https://v1.example.com/"));
        assert!(!includes_api_version("https://x/vbeta"));
    }
}
