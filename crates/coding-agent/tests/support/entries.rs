//! Session file lines written by hand for tests that open a prepared session: message
//! entries in pi's v3 format, with fixed timestamps.
#![allow(dead_code)]

use serde_json::{Value, json};

/// A user message entry (`parent` `None` for the first entry).
pub fn user(id: &str, parent: Option<&str>, text: &str) -> Value {
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:00.000Z",
           "message": {"role": "user", "content": text, "timestamp": 1_767_225_600_000_u64}})
}

/// An assistant message entry from the mock model.
pub fn assistant(id: &str, parent: &str, text: &str) -> Value {
    let zero = json!({"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0});
    json!({"type": "message", "id": id, "parentId": parent, "timestamp": "2026-01-01T00:00:01.000Z",
           "message": {"role": "assistant", "content": [{"type": "text", "text": text}],
                       "api": "openai-completions", "provider": "mock", "model": "mock-model",
                       "usage": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                 "totalTokens": 0, "cost": zero},
                       "stopReason": "stop", "timestamp": 1_767_225_601_000_u64}})
}

/// A session header for `cwd`.
pub fn header(id: &str, cwd: &std::path::Path) -> Value {
    json!({"type": "session", "version": 3, "id": id, "timestamp": "2026-01-01T00:00:00.000Z",
           "cwd": cwd})
}

/// Writes `lines` as a session file at `path`.
pub fn write(path: &std::path::Path, lines: &[Value]) {
    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(path, text).unwrap();
}

/// Continues the prepared session at `path` with `pi -p "Go on."` on `model` (the caller
/// scripts the reply) and returns the body of the one request it sent.
pub fn continue_once(
    env: &super::rpc::Env,
    program: std::process::Command,
    server: &mock_llm::MockServer,
    model: &str,
    path: &std::path::Path,
) -> Value {
    let path = path.to_str().unwrap();
    let args = ["--model", model, "--session", path, "-p", "Go on."];
    let output = tokio::task::block_in_place(|| super::ts16::run(env, program, &args));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    requests[0].body.clone()
}
