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

/// A request as received: the body is kept as bytes and parsed only when the recorded
/// requests are asked for, so a large request costs the server a copy, not a parse.
#[derive(Clone, Debug)]
pub(crate) struct StoredRequest {
    method: String,
    path: String,
    headers: BTreeMap<String, String>,
    raw: bytes::Bytes,
}

impl StoredRequest {
    /// Keeps the request parts and raw body.
    pub(crate) fn new(method: &Method, uri: &Uri, headers: &HeaderMap, raw: bytes::Bytes) -> Self {
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
        Self {
            method: method.as_str().to_owned(),
            path: uri.path().to_owned(),
            headers: map,
            raw,
        }
    }

    /// The record with its body parsed (a `content-encoding: zstd` body, as pi 1.6.0's
    /// Codex client sends, decoded first).
    pub(crate) fn parsed(&self) -> RecordedRequest {
        let body = match self.headers.get("content-encoding").map(String::as_str) {
            Some("zstd") => zstd_decoded(&self.raw)
                .and_then(|raw| serde_json::from_slice(&raw).ok())
                .unwrap_or(Value::Null),
            _ => serde_json::from_slice(&self.raw).unwrap_or(Value::Null),
        };
        RecordedRequest {
            method: self.method.clone(),
            path: self.path.clone(),
            headers: self.headers.clone(),
            body,
            raw_body_len: self.raw.len(),
        }
    }
}

/// A zstd frame decoded, or `None` when it is not one.
pub(crate) fn zstd_decoded(raw: &[u8]) -> Option<Vec<u8>> {
    use std::io::Read;
    let mut decoder = ruzstd::decoding::StreamingDecoder::new(raw).ok()?;
    let mut out = Vec::new();
    decoder.read_to_end(&mut out).ok()?;
    Some(out)
}
