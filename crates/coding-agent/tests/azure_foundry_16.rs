//! Microsoft Foundry endpoints on the Azure OpenAI Responses provider (pi 0.80.3): a
//! `*.services.ai.azure.com` resource URL, bare or naming `/openai/v1/responses` (with its
//! own query), is sent to `/openai/v1/responses?api-version=v1`; a project URL keeps its path.
//! The base URL is stored with the `azure` key in `auth.json`; a relay stands in for DNS so
//! the Foundry host name reaches the mock, and records the request line each pi sent. Ours
//! and pi 1.6.0 (`PI_TS16`) run the same prompt.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::host_relay::{self, HostRelay};
use support::pi_case::{Case, compare};

/// A prompt to `azure/gpt-4.1` with the endpoint `base_url` stored with its key, the
/// relay as the HTTP proxy.
fn foundry_case(relay: &'static HostRelay, base_url: &str) -> Case {
    let mut case = Case::new(json!({}), "azure/gpt-4.1");
    case.auth = json!({"azure": {"type": "api_key", "key": "az-foundry",
        "env": {"AZURE_OPENAI_BASE_URL": base_url}}});
    let proxy: &'static str = Box::leak(relay.url.clone().into_boxed_str());
    case.env.extend([
        ("HTTP_PROXY", proxy),
        ("http_proxy", proxy),
        ("NO_PROXY", ""),
        ("no_proxy", ""),
    ]);
    case
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn foundry_endpoint_urls_reach_the_responses_api_as_in_16() {
    let relay: &'static HostRelay = Box::leak(Box::new(host_relay::start().await));
    let mut sent = Vec::new();
    for base_url in [
        "http://res.services.ai.azure.com:{port}",
        "http://res.services.ai.azure.com:{port}/openai/v1/responses?api-version=2024-10-21",
        "http://res.services.ai.azure.com:{port}/api/projects/demo",
    ] {
        let case = foundry_case(relay, base_url);
        let requests = compare(&case, |output, requests| {
            assert!(
                output.status.success(),
                "{}",
                String::from_utf8_lossy(&output.stderr)
            );
            let relayed: Vec<Value> = relay
                .seen()
                .iter()
                .map(|r| json!({"host": r.host, "line": r.request_line}))
                .collect();
            relay.clear();
            json!({"relayed": relayed,
                   "received": requests.iter().map(|r| json!({"path": r.path,
                        "api-key": r.headers.get("api-key"), "model": r.body["model"]}))
                        .collect::<Vec<_>>()})
        })
        .await;
        sent.push(requests);
    }
    let expect = |line: &str, path: &str| {
        json!({"relayed": [{"host": "res.services.ai.azure.com", "line": line}],
               "received": [{"path": path, "api-key": "az-foundry", "model": "gpt-4.1"}]})
    };
    assert_eq!(
        sent,
        [
            expect(
                "POST /openai/v1/responses?api-version=v1",
                "/openai/v1/responses"
            ),
            expect(
                "POST /openai/v1/responses?api-version=v1",
                "/openai/v1/responses"
            ),
            expect(
                "POST /api/projects/demo/responses?api-version=v1",
                "/api/projects/demo/responses"
            ),
        ]
    );
}
