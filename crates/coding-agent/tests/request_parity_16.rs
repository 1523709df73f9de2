//! Request parity with pi 1.6.0 on every wire API: the scenarios of
//! `request_parity/scenarios.rs` (a plain prompt, each thinking level, an image, a tool
//! round trip, a system prompt and an appended one, a long context near compaction, a
//! resumed session) run through our `pi` against a capturing mock server, and the
//! requests it makes (method, path, the headers that matter, the JSON body, normalized)
//! must be those pi 1.6.0 made in the same scenarios, kept as fixtures. The differences
//! that stay are listed with their reasons in `request_parity/known.rs`.
//!
//! `scripts/refresh-request-parity.sh` reruns pi 1.6.0 (`PI_TS16`) with
//! `PI_REQUEST_PARITY_REFRESH=1`, and these tests then rewrite the fixtures instead of
//! comparing.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use serde_json::{Value, json};

use request_parity::{
    Pi, Recorded, apis, compare, read_fixture, record_all, refreshing, write_fixture,
};

/// Compares ours with the fixture of `api`, or rewrites the fixture from pi 1.6.0.
fn check(api: &str) {
    let wire = apis::wire_api(api);
    if refreshing() {
        let Some(wrapper) = support::ts16::ts16() else {
            panic!("PI_REQUEST_PARITY_REFRESH=1 needs PI_TS16 (pi 1.6.0's wrapper)");
        };
        write_fixture(api, &record_all(&Pi::Ts16(wrapper), wire));
        return;
    }
    let theirs = read_fixture(api);
    let ours = record_all(&Pi::Ours, wire);
    let differences = compare(api, &ours, &theirs);
    assert!(
        differences.is_empty(),
        "{api}: {} differences from pi 1.6.0 ({}):\n{}",
        differences.len(),
        request_parity::fixtures_dir().display(),
        differences.join("\n")
    );
}

#[test]
fn openai_completions_requests_as_pi_16() {
    check("openai-completions");
}

#[test]
fn openai_responses_requests_as_pi_16() {
    check("openai-responses");
}

#[test]
fn anthropic_messages_requests_as_pi_16() {
    check("anthropic-messages");
}

#[test]
fn azure_openai_responses_requests_as_pi_16() {
    check("azure-openai-responses");
}

#[test]
fn openai_codex_responses_requests_as_pi_16() {
    check("openai-codex-responses");
}

#[test]
fn bedrock_converse_stream_requests_as_pi_16() {
    check("bedrock-converse-stream");
}

#[test]
fn google_generative_ai_requests_as_pi_16() {
    check("google-generative-ai");
}

#[test]
fn google_vertex_requests_as_pi_16() {
    check("google-vertex");
}

#[test]
fn mistral_conversations_requests_as_pi_16() {
    check("mistral-conversations");
}

/// pi 1.6.0 has no `google-gemini-cli` (pi 0.71.0 removed Gemini CLI support: "Removed
/// built-in Google Gemini CLI and Google Antigravity support" in its changelog), so it can
/// neither be pointed at the mock for it nor read for what it sends. A Cloud Code Assist
/// request wraps a Gemini `generateContent` body (`request`) in an envelope naming the
/// project and model; that body is compared with 1.6.0's `google-generative-ai` requests
/// in the same scenarios.
#[test]
fn google_gemini_cli_requests_wrap_pi_16_gemini_bodies() {
    if refreshing() {
        return;
    }
    let bodies = |recorded: &Recorded, inner: fn(&Value) -> &Value| -> Recorded {
        recorded
            .iter()
            .map(|(name, requests)| {
                let bodies = requests
                    .iter()
                    .map(|r| json!({"body": inner(&r["body"])}))
                    .collect();
                (name.clone(), bodies)
            })
            .collect()
    };
    let ours = record_all(&Pi::Ours, apis::wire_api("google-gemini-cli"));
    for requests in ours.values() {
        for request in requests {
            assert_eq!(request["body"]["project"], "parity-project", "{request}");
            assert!(request["body"]["model"].is_string(), "{request}");
        }
    }
    let theirs = read_fixture("google-generative-ai");
    let differences = compare(
        "google-gemini-cli",
        &bodies(&ours, |body| &body["request"]),
        &bodies(&theirs, |body| body),
    );
    assert!(
        differences.is_empty(),
        "google-gemini-cli: {} differences from pi 1.6.0's Gemini bodies:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
