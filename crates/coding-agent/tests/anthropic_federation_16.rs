//! Anthropic workload identity federation (pi 0.99.2): with no Anthropic key or token, the
//! `ANTHROPIC_FEDERATION_RULE_ID`, `ANTHROPIC_ORGANIZATION_ID` and
//! `ANTHROPIC_IDENTITY_TOKEN_FILE` variables (and the optional workspace and service account)
//! make pi trade the identity token for an access token at `<base URL>/v1/oauth/token` and
//! send the messages as `Authorization: Bearer <access token>`. The token is kept for the
//! process until it is within 30 s of expiry. The mock's token endpoint stands in for
//! Anthropic's (pi 1.6.0 posts to the model's base URL, so it reaches the mock too); ours and
//! pi 1.6.0 (`PI_TS16`) run the same two-request prompt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{RecordedRequest, Script};
use serde_json::{Value, json};
use support::pi_case::{Case, assistant_messages, compare};

/// A prompt to Anthropic on the mock with federation variables and the identity token
/// `identity` in `identity.jwt` (relative to the work dir, where the pis run).
fn federated(identity: &'static str) -> Case {
    let mut case = Case::new(
        json!({"anthropic": {"baseUrl": "{url}"}}),
        "anthropic/claude-sonnet-4-5",
    );
    case.files = vec![("identity.jwt", identity)];
    case.env.extend([
        ("ANTHROPIC_API_KEY", ""),
        ("ANTHROPIC_OAUTH_TOKEN", ""),
        ("ANTHROPIC_AUTH_TOKEN", ""),
        ("ANTHROPIC_FEDERATION_RULE_ID", "fdrl_parity"),
        ("ANTHROPIC_ORGANIZATION_ID", "org-parity"),
        ("ANTHROPIC_IDENTITY_TOKEN_FILE", "identity.jwt"),
        ("ANTHROPIC_WORKSPACE_ID", "wrkspc_parity"),
    ]);
    case.args = vec!["--mode", "json", "-p", "Run it."];
    case
}

/// Each request: the token exchange (its body and headers) or the messages request's
/// credentials.
fn exchanges(requests: &[RecordedRequest]) -> Value {
    requests
        .iter()
        .map(|r| match r.path.as_str() {
            "/v1/oauth/token" => json!({"token": r.body, "anthropic-beta": r.headers.get("anthropic-beta"),
                "content-type": r.headers.get("content-type"), "user-agent": r.headers.get("user-agent")}),
            path => json!({path: {"authorization": r.headers.get("authorization"),
                "x-api-key": r.headers.get("x-api-key")}}),
        })
        .collect()
}

/// The exchange pi sends for the identity token `assertion`.
fn exchange_of(assertion: &str) -> Value {
    json!({"token": {"grant_type": "urn:ietf:params:oauth:grant-type:jwt-bearer",
            "assertion": assertion, "federation_rule_id": "fdrl_parity",
            "organization_id": "org-parity", "workspace_id": "wrkspc_parity"},
        "anthropic-beta": "oauth-2025-04-20,oidc-federation-2026-04-01",
        "content-type": "application/json", "user-agent": "Anthropic/JS 0.129.0"})
}

fn messages_with(token: &str) -> Value {
    json!({"/v1/messages": {"authorization": format!("Bearer {token}"), "x-api-key": null}})
}

/// A tool call, then the answer: two messages requests in one process.
fn two_turns() -> Vec<Script> {
    vec![
        Script::tool_call("bash", json!({"command": "echo federated"})),
        Script::text("Done."),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn federation_trades_the_identity_token_once_per_process_as_in_16() {
    let mut case = federated("eyJhbGciOiJSUzI1NiJ9.parity.sig\n");
    case.scripts = two_turns();
    let sent = compare(&case, |output, requests| {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        exchanges(requests)
    })
    .await;
    let exchange = exchange_of("eyJhbGciOiJSUzI1NiJ9.parity.sig");
    assert_eq!(
        sent,
        json!([
            exchange,
            messages_with("wif-access-1"),
            messages_with("wif-access-1")
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_token_close_to_expiry_is_exchanged_again_as_in_16() {
    // 20 s left is inside the 30 s margin: every request exchanges afresh.
    let mut case = federated("eyJhbGciOiJSUzI1NiJ9.short.sig");
    case.scripts = two_turns();
    case.mock_oauth = Some(json!({"accessTtlSecs": 20}));
    let sent = compare(&case, |_, requests| exchanges(requests)).await;
    let exchange = exchange_of("eyJhbGciOiJSUzI1NiJ9.short.sig");
    assert_eq!(
        sent,
        json!([
            exchange,
            messages_with("wif-access-1"),
            exchange,
            messages_with("wif-access-2")
        ])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_identity_token_fails_the_prompt_with_the_endpoints_reason_as_in_16() {
    let case = federated("refused");
    let failed = compare(&case, |output, requests| {
        let messages: Vec<Value> = assistant_messages(output)
            .iter()
            .map(|m| json!({"stopReason": m["stopReason"], "errorMessage": m["errorMessage"]}))
            .collect();
        json!({"requests": exchanges(requests), "messages": messages})
    })
    .await;
    let reason = r#"{"error":"invalid_grant","error_description":"the identity token does not match the federation rule"}"#;
    assert_eq!(
        failed,
        json!({"requests": [exchange_of("refused")], "messages": [{"stopReason": "error",
            "errorMessage": format!("Token exchange failed with status 401: {reason} Ensure your \
federation rule matches your identity token. View your authentication events in the Workload \
identity page of Claude Console for more details.")}]})
    );
}
