//! OpenClaw's protocol v4 on pi-gateway: arbitrary client frames (one a line) read as a
//! connection reads them: the first through the handshake (`connect`, protocol range,
//! token), the others as requests whose session keys are made canonical. Properties:
//! nothing panics, every answer is a `res` frame whose error has a non-empty code and
//! message, and a canonical session key stays the same when made canonical again.
#![no_main]

use std::sync::{Arc, LazyLock};

use libfuzzer_sys::fuzz_target;
use pi_gateway::openclaw::OpenClaw;
use pi_gateway::openclaw::fuzzing::{agent_of, canonical_key, first_frame, later_frame};
use pi_gateway::server::{Gateway, GatewayConfig};
use serde_json::Value;

/// One gateway for the whole process, in an empty agent dir, with the token `fuzz-token`.
static OPENCLAW: LazyLock<Arc<OpenClaw>> = LazyLock::new(|| {
    let dir = std::env::temp_dir().join(format!("pi-fuzz-openclaw-{}", std::process::id()));
    if let Err(e) = std::fs::create_dir_all(&dir) {
        panic!("cannot make {}: {e}", dir.display());
    }
    let config = GatewayConfig::new(dir).with_token("fuzz-token", "fuzzer");
    match Gateway::new(config) {
        Ok(gateway) => OpenClaw::new(gateway, None),
        Err(e) => panic!("no gateway: {e}"),
    }
});

fn check_answer(answer: &str) {
    let Ok(frame) = serde_json::from_str::<Value>(answer) else {
        panic!("the answer is not JSON: {answer}")
    };
    assert_eq!(frame["type"], "res", "{answer}");
    if frame["ok"] == false {
        let code = frame["error"]["code"].as_str().unwrap_or("");
        let message = frame["error"]["message"].as_str().unwrap_or("");
        assert!(!code.is_empty() && !message.is_empty(), "{answer}");
    }
}

fn check_key(key: &str, agent: Option<&str>) {
    assert!(key.starts_with("agent:"), "{key}");
    assert!(!agent_of(key).is_empty(), "{key}");
    let again = canonical_key(Some(key), agent);
    assert_eq!(
        again, key,
        "a canonical key changed when made canonical again"
    );
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut lines = text.split('\n');
    let first = lines.next().unwrap_or("");
    let Some((answer, authenticated)) = first_frame(&OPENCLAW, first) else {
        return;
    };
    check_answer(&answer);
    if !authenticated {
        return;
    }
    for line in lines {
        let Some((_, keys)) = later_frame(line) else {
            continue;
        };
        let agent = serde_json::from_str::<Value>(line)
            .ok()
            .and_then(|v| v["params"]["agentId"].as_str().map(str::to_owned));
        for key in keys {
            check_key(&key, agent.as_deref());
        }
    }
});
