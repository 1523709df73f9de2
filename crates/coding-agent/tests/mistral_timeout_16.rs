//! Mistral's request timeout as pi 1.6.0 applies it (pi 1.2.0): `retry.provider.timeoutMs`
//! bounds only the wait for the response headers, failing with `Mistral response headers
//! timed out after <ms>ms`; a reply that pauses longer than that once it has begun still
//! completes. The same print-mode prompt runs through ours and pi 1.6.0 (`PI_TS16`) on the
//! mock, with a 1 s timeout and automatic retries off.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use mock_llm::{Fault, Script};
use serde_json::{Value, json};

use request_parity::apis::{MODEL, wire_api};
use support::pi_case::{Case, assistant_messages, compare};

/// A JSON-mode prompt to the mock's Mistral model answered by `script`, with a 1 s timeout.
fn timed(script: Script) -> Case {
    let providers = wire_api("mistral-conversations").models_json("{url}")["providers"].clone();
    let mut case = Case::new(providers, format!("parity/{MODEL}"));
    case.settings = json!({"retry": {"enabled": false, "provider": {"timeoutMs": 1000}}});
    case.args = vec!["--mode", "json", "-p", "Take your time."];
    case.scripts = vec![script];
    case
}

/// Each assistant message's stop reason, error and text, and how many requests were sent.
fn outcome(output: &std::process::Output, requests: &[mock_llm::RecordedRequest]) -> Value {
    let messages: Vec<Value> = assistant_messages(output)
        .iter()
        .map(|m| {
            let text: String = m["content"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["text"].as_str())
                .collect();
            json!({"stopReason": m["stopReason"], "errorMessage": m["errorMessage"], "text": text})
        })
        .collect();
    json!({"messages": messages, "requests": requests.len()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_response_headers_time_out_as_in_16() {
    let case = timed(Script::text("Too late.").with_fault(Fault::DelayHeaders { ms: 4_000 }));
    assert_eq!(
        compare(&case, outcome).await,
        json!({"messages": [{"stopReason": "error",
            "errorMessage": "Mistral response headers timed out after 1000ms", "text": ""}],
            "requests": 1})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reply_pausing_longer_than_the_timeout_completes_as_in_16() {
    let script = Script::text("Slow but steady.")
        .with_chunk_size(2)
        .with_fault(Fault::stall(3, 2_500));
    assert_eq!(
        compare(&timed(script), outcome).await,
        json!({"messages": [{"stopReason": "stop", "errorMessage": null,
            "text": "Slow but steady."}], "requests": 1})
    );
}
