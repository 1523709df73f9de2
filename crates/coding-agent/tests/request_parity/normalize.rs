//! What of a recorded request is compared, and how what differs from run to run is made
//! alike: the headers only the HTTP stack or an SDK adds are left out (each listed with its
//! reason), and the run's temporary folder, the session id and the date become
//! placeholders.

use std::sync::LazyLock;

use mock_llm::RecordedRequest;
use serde_json::{Map, Value, json};

use super::apis::SESSION_ID;

/// Headers left out of the comparison, and why. Everything else a request carries is
/// compared.
pub const IGNORED_HEADERS: &[(&str, &str)] = &[
    ("host", "the mock's port, different every run"),
    ("content-length", "follows from the body, which is compared"),
    ("connection", "the HTTP stack's (undici: keep-alive)"),
    ("transfer-encoding", "the HTTP stack's"),
    (
        "user-agent",
        "each client names itself (pi 1.6.0: the SDK's or undici's name and version)",
    ),
    (
        "accept-language",
        "undici's (fetch) default, not the provider's",
    ),
    (
        "sec-fetch-mode",
        "undici's (fetch) default, not the provider's",
    ),
    (
        "x-stainless-",
        "the OpenAI and Anthropic SDKs' identification: SDK version, OS, arch, runtime, retry count, timeout",
    ),
    (
        "x-goog-api-client",
        "the Google GenAI SDK's identification (its version and node's)",
    ),
    (
        "amz-sdk-",
        "the AWS SDK's identification and per-request invocation id",
    ),
    ("x-amz-user-agent", "the AWS SDK's identification"),
];

/// Whether `name` (lowercase) is left out.
pub fn ignored_header(name: &str) -> bool {
    IGNORED_HEADERS.iter().any(|(ignored, _)| {
        name == *ignored || (ignored.ends_with('-') && name.starts_with(ignored))
    })
}

/// What differs from run to run, replaced by placeholders in every string.
pub struct Placeholders {
    /// The run's temporary folder, as given and as the OS resolves it.
    pub tmp: Vec<String>,
    /// Where the pi that ran is installed (pi 1.6.0 names its docs in the system prompt).
    pub install: Option<String>,
}

impl Placeholders {
    /// `text` with the placeholders in.
    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_owned();
        if let Some(install) = &self.install {
            out = out.replace(install.as_str(), "<pi-install>");
        }
        for tmp in &self.tmp {
            out = out.replace(tmp.as_str(), "<tmp>");
        }
        out = out.replace(SESSION_ID, "<session-id>");
        replace_uuids(&replace_dates(&out))
    }

    /// `value` with the placeholders in every string.
    pub fn value(&self, value: &Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.apply(s)),
            Value::Array(items) => Value::Array(items.iter().map(|v| self.value(v)).collect()),
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (self.apply(k), self.value(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
}

/// Every other UUID (ids made per request, such as a summarization's session id) as
/// `<uuid>`.
fn replace_uuids(text: &str) -> String {
    static PATTERN: LazyLock<regex::Regex> = LazyLock::new(|| {
        regex::Regex::new(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}").unwrap()
    });
    PATTERN.replace_all(text, "<uuid>").into_owned()
}

/// The system prompt's `Current date: YYYY-MM-DD` with the date left out.
fn replace_dates(text: &str) -> String {
    const LABEL: &str = "Current date: ";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(LABEL) {
        let (head, tail) = rest.split_at(at + LABEL.len());
        out.push_str(head);
        let date_len = tail
            .char_indices()
            .take_while(|(_, c)| c.is_ascii_digit() || *c == '-')
            .count();
        if date_len > 0 {
            out.push_str("<date>");
        }
        rest = &tail[date_len..];
    }
    out.push_str(rest);
    out
}

/// One request as compared: method, path, the headers that matter, the JSON body.
pub fn request(recorded: &RecordedRequest, placeholders: &Placeholders) -> Value {
    let headers: Map<String, Value> = recorded
        .headers
        .iter()
        .filter(|(name, _)| !ignored_header(name))
        .map(|(name, value)| (name.clone(), Value::String(placeholders.apply(value))))
        .collect();
    json!({
        "method": recorded.method,
        "path": placeholders.apply(&recorded.path),
        "headers": headers,
        "body": placeholders.value(&recorded.body),
    })
}

/// Every place `ours` and `theirs` differ, as `pointer: ours ≠ theirs` lines.
pub fn differences(ours: &Value, theirs: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("", ours, theirs, &mut out);
    out
}

fn walk(at: &str, ours: &Value, theirs: &Value, out: &mut Vec<String>) {
    match (ours, theirs) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let here = format!("{at}/{}", key.replace('~', "~0").replace('/', "~1"));
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) => walk(&here, x, y, out),
                    (Some(x), None) => {
                        out.push(format!("{here}: ours {} ≠ theirs (absent)", shown(x)))
                    }
                    (None, Some(y)) => {
                        out.push(format!("{here}: ours (absent) ≠ theirs {}", shown(y)))
                    }
                    (None, None) => {}
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (n, (x, y)) in a.iter().zip(b).enumerate() {
                walk(&format!("{at}/{n}"), x, y, out);
            }
        }
        _ if ours == theirs => {}
        _ => out.push(format!(
            "{at}: ours {} ≠ theirs {}",
            shown(ours),
            shown(theirs)
        )),
    }
}

/// A value cut to a readable length.
fn shown(value: &Value) -> String {
    let text = value.to_string();
    if text.chars().count() > 300 {
        let cut: String = text.chars().take(300).collect();
        format!("{cut}…")
    } else {
        text
    }
}

#[test]
fn dates_and_paths_become_placeholders() {
    let p = Placeholders {
        tmp: vec!["/tmp/.tmpAbC".into()],
        install: None,
    };
    assert_eq!(
        p.apply("Current date: 2026-11-29\nCurrent working directory: /tmp/.tmpAbC/work"),
        "Current date: <date>\nCurrent working directory: <tmp>/work"
    );
    assert!(ignored_header("x-stainless-os"));
    assert!(!ignored_header("x-api-key"));
}

#[test]
fn differences_name_the_pointer() {
    let diffs = differences(
        &json!({"a": [1, {"b": 2}], "c": 1}),
        &json!({"a": [1, {"b": 3}], "d": 1}),
    );
    assert_eq!(
        diffs,
        vec![
            "/a/1/b: ours 2 ≠ theirs 3",
            "/c: ours 1 ≠ theirs (absent)",
            "/d: ours (absent) ≠ theirs 1"
        ]
    );
}
