//! Entry points for the fuzz targets (`fuzz/` at the repository root): OpenClaw client
//! frames read as a connection reads them. Not an API; nothing else calls these.

use serde_json::Value;

use super::OpenClaw;
use super::conn::{check_connect, hello_ok};
use super::frames::{self, OcError, Req};
use super::keys;

/// The answer to a connection's first frame, by the handshake's steps: `None` when the
/// connection closes without one (not a `req` frame), else the frame sent back and whether
/// the client is now authenticated.
pub fn first_frame(oc: &OpenClaw, text: &str) -> Option<(String, bool)> {
    let request = serde_json::from_str::<Req>(text)
        .ok()
        .filter(|r| r.kind == "req")?;
    if request.method != "connect" {
        let error = OcError::invalid("invalid handshake: first request must be connect");
        return Some((frames::res_err(&request.id, &error, None), false));
    }
    Some(match check_connect(oc, &request.params) {
        Ok(hello) => (
            frames::res_ok(&request.id, &hello_ok(oc, &hello, "fuzz")),
            true,
        ),
        Err((error, _)) => (frames::res_err(&request.id, &error, None), false),
    })
}

/// A later frame as the connection and the method dispatch read it before acting: `None`
/// for a frame that is ignored, else its method and the session keys its params name
/// (`key`, `sessionKey`), made canonical with its `agentId`.
pub fn later_frame(text: &str) -> Option<(String, Vec<String>)> {
    let request = serde_json::from_str::<Req>(text)
        .ok()
        .filter(|r| r.kind == "req")?;
    let params = if request.params.is_null() {
        serde_json::json!({})
    } else {
        request.params
    };
    let agent = params.get("agentId").and_then(Value::as_str);
    let keys = ["key", "sessionKey"]
        .iter()
        .filter_map(|name| params.get(name).and_then(Value::as_str))
        .map(|key| keys::canonical(Some(key), agent))
        .collect();
    Some((request.method, keys))
}

/// A session key made canonical (`keys::canonical`).
pub fn canonical_key(key: Option<&str>, agent_id: Option<&str>) -> String {
    keys::canonical(key, agent_id)
}

/// The agent of a canonical key (`keys::agent_of`).
pub fn agent_of(key: &str) -> &str {
    keys::agent_of(key)
}
