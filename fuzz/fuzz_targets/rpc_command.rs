//! The RPC mode's input lines (`pi --mode rpc`): an arbitrary line through the parser that
//! turns it into a command, a UI answer, or an error response. Properties: nothing panics,
//! a command's `type` is the one the line names, and every error response is the protocol's
//! shape (`type: response`, `success: false`, an `error` text).
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_coding_agent::modes::rpc::command::{COMMAND_TYPES, Input, parse_line};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let line = String::from_utf8_lossy(data);
    match parse_line(&line) {
        Input::Command { kind, .. } => {
            assert!(COMMAND_TYPES.contains(&kind.as_str()), "unknown {kind}");
            let named = serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|v| v.get("type").and_then(Value::as_str).map(str::to_owned));
            assert_eq!(named.as_deref(), Some(kind.as_str()));
        }
        Input::UiResponse(_) => {}
        Input::Invalid(response) => {
            assert_eq!(response.get("type"), Some(&Value::from("response")));
            assert_eq!(response.get("success"), Some(&Value::Bool(false)));
            assert!(
                response.get("error").is_some_and(Value::is_string),
                "an error response without its text: {response:?}"
            );
            assert!(serde_json::to_string(&response).is_ok());
        }
    }
});
