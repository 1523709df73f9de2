//! pi 1.6's redaction for bug reports (`core/bug-report.ts`): values under secret-looking
//! keys become `<redacted>`, and strings that are URLs lose their credentials and
//! secret-looking query parameters. A string that only contains a URL (a command line, say)
//! is not a URL and stays as it is, as in pi 1.6.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::{Map, Value};

/// What a redacted value becomes.
pub const REDACTED: &str = "<redacted>";

static SENSITIVE_KEY: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(
        r"(?i)(?:^|[-_])(api[-_]?key|secret|token|password|passwd|credential|authorization|cookie)(?:$|[-_])",
    )
    .ok()
});
static CAMEL: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"([a-z0-9])([A-Z])").ok());
static NESTED_URL: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"(?i)^([a-z][a-z0-9+.-]*:)([a-z][a-z0-9+.-]*://.*)$").ok());

/// Whether a key names a secret (`apiKey`, `x-api-key`, `clientSecret`, `Authorization`;
/// not `maxTokens`).
pub fn is_sensitive_key(key: &str) -> bool {
    let (Some(sensitive), Some(camel)) = (SENSITIVE_KEY.as_ref(), CAMEL.as_ref()) else {
        return false;
    };
    sensitive.is_match(&camel.replace_all(key, "${1}_${2}"))
}

/// A URL without user name, password and secret-looking query values; anything that is
/// not a URL unchanged. An unchanged URL keeps its original spelling.
pub fn redact_url(value: &str) -> String {
    if let Some(caps) = NESTED_URL.as_ref().and_then(|re| re.captures(value)) {
        let (outer, inner) = (&caps[1], &caps[2]);
        return format!("{outer}{}", redact_url(inner));
    }
    let Ok(mut url) = reqwest::Url::parse(value) else {
        return value.to_owned();
    };
    let mut changed = false;
    if !url.username().is_empty() || url.password().is_some() {
        let _ = url.set_username("");
        let _ = url.set_password(None);
        changed = true;
    }
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    if pairs.iter().any(|(key, _)| is_sensitive_key(key)) {
        // URLSearchParams.set: the first pair of the name gets the value, the others go.
        let mut kept: Vec<(String, String)> = Vec::with_capacity(pairs.len());
        for (key, val) in pairs {
            if !is_sensitive_key(&key) {
                kept.push((key, val));
            } else if !kept.iter().any(|(k, _)| *k == key) {
                kept.push((key, REDACTED.to_owned()));
            }
        }
        url.query_pairs_mut().clear().extend_pairs(kept);
        changed = true;
    }
    if changed {
        url.to_string()
    } else {
        value.to_owned()
    }
}

/// A copy of a JSON value with every non-null value under a sensitive key replaced by
/// `<redacted>` and every string passed through [`redact_url`].
pub fn redact_json(value: &Value) -> Value {
    match value {
        Value::String(s) => Value::String(redact_url(s)),
        Value::Array(items) => Value::Array(items.iter().map(redact_json).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, child)| {
                    let child = if !child.is_null() && is_sensitive_key(key) {
                        Value::String(REDACTED.to_owned())
                    } else {
                        redact_json(child)
                    };
                    (key.clone(), child)
                })
                .collect::<Map<String, Value>>(),
        ),
        other => other.clone(),
    }
}

/// A settings object for the report: without `trackingId` and `deviceId`, redacted.
pub fn redact_settings(settings: &Value) -> Value {
    let mut settings = settings.clone();
    if let Value::Object(map) = &mut settings {
        map.shift_remove("trackingId");
        map.shift_remove("deviceId");
    }
    redact_json(&settings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sensitive_keys_are_pi_16s() {
        for key in [
            "apiKey",
            "api_key",
            "x-api-key",
            "accessToken",
            "clientSecret",
            "Authorization",
            "myApiKey",
            "COOKIE",
            "db-password",
        ] {
            assert!(is_sensitive_key(key), "{key}");
        }
        for key in ["maxTokens", "tokens", "secretive", "keys", "author"] {
            assert!(!is_sensitive_key(key), "{key}");
        }
    }

    #[test]
    fn urls_lose_credentials_and_secret_parameters() {
        assert_eq!(
            redact_url("http://bob:pw@proxy.local:8080"),
            "http://proxy.local:8080/"
        );
        assert_eq!(
            redact_url("https://x.example/p?api_key=abc&page=2"),
            "https://x.example/p?api_key=%3Credacted%3E&page=2"
        );
        assert_eq!(
            redact_url("git+https://u:p@github.com/a/b"),
            "git+https://github.com/a/b"
        );
        // Unchanged URLs keep their spelling; non-URLs stay as they are.
        assert_eq!(
            redact_url("http://proxy.local:8080"),
            "http://proxy.local:8080"
        );
        let command = "curl https://user:pw@x.example/p?api_key=abc";
        assert_eq!(redact_url(command), command);
        assert_eq!(redact_url("just text"), "just text");
    }

    #[test]
    fn json_values_are_redacted_as_pi_16_does() {
        let settings = json!({
            "trackingId": "t-1",
            "myApiKey": "sk-secret",
            "retry": {"clientSecret": "s", "maxRetries": 3, "token": null},
            "maxTokens": 5,
            "httpProxy": "http://bob:pw@proxy.local:8080",
            "nested": {"apiKey": {"deep": 1}},
            "list": ["http://a:b@h.example/x"],
            "shellCommandPrefix": "curl https://user:pw@x.example/p?api_key=abc",
        });
        assert_eq!(
            redact_settings(&settings),
            json!({
                "myApiKey": "<redacted>",
                "retry": {"clientSecret": "<redacted>", "maxRetries": 3, "token": null},
                "maxTokens": 5,
                "httpProxy": "http://proxy.local:8080/",
                "nested": {"apiKey": "<redacted>"},
                "list": ["http://h.example/x"],
                "shellCommandPrefix": "curl https://user:pw@x.example/p?api_key=abc",
            })
        );
    }
}
