//! Recorded requests.

use std::collections::BTreeMap;

use axum::http::{HeaderMap, Method, Uri};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One request received by a provider endpoint.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// HTTP method, e.g. `POST`.
    pub method: String,
    /// Request path without the query string.
    pub path: String,
    /// Headers with lowercase names; repeated headers are joined with `", "`.
    pub headers: BTreeMap<String, String>,
    /// Parsed JSON body, or `Null` if the body was not JSON.
    pub body: Value,
    /// Raw body length in bytes.
    pub raw_body_len: usize,
}

impl RecordedRequest {
    /// Builds a record from the request parts and raw body.
    pub(crate) fn new(method: &Method, uri: &Uri, headers: &HeaderMap, raw: &[u8]) -> Self {
        let mut map: BTreeMap<String, String> = BTreeMap::new();
        for (name, value) in headers {
            let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
            map.entry(name.as_str().to_ascii_lowercase())
                .and_modify(|existing| {
                    existing.push_str(", ");
                    existing.push_str(&value);
                })
                .or_insert(value);
        }
        RecordedRequest {
            method: method.as_str().to_owned(),
            path: uri.path().to_owned(),
            headers: map,
            body: serde_json::from_slice(raw).unwrap_or(Value::Null),
            raw_body_len: raw.len(),
        }
    }
}
