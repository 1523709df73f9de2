//! Request parity with pi 1.6.0 for the upstream ledger's OpenAI-family provider rows
//! (`request_parity/provider_rows.rs`): named catalog models and custom providers set up
//! as each row says. What ours sends must be what pi 1.6.0 sent in the same runs, kept as
//! a fixture (`tests/fixtures/request_parity_16/provider-rows.json`) that
//! `scripts/refresh-request-parity.sh` rewrites; the differences that stay are in
//! `request_parity/known.rs` and `request_parity/catalog_known.rs`. An RPC prompt of only
//! an image is compared with pi 1.6.0 live.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use std::collections::BTreeMap;

use request_parity::catalog_known::CATALOG_KNOWN;
use request_parity::known::without_known_in;
use request_parity::provider_rows::{ProviderRow, cases};
use request_parity::{Pi, Recorded, compare, read_fixture, record_with, refreshing, write_fixture};

const FIXTURE: &str = "provider-rows";

/// Runs every case through `pi`, keyed by case name.
fn record_rows(pi: &Pi, rows: &[ProviderRow]) -> Recorded {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    rows.iter()
        .map(|row| {
            let requests = record_with(&runtime, pi, &row.scenario, &*row.setup)
                .unwrap_or_else(|e| panic!("{}: {e}", row.name));
            (row.name.clone(), requests)
        })
        .collect()
}

#[test]
fn openai_family_provider_rows_request_as_pi_16() {
    let rows = cases();
    if refreshing() {
        let Some(wrapper) = support::ts16::ts16() else {
            panic!("PI_REQUEST_PARITY_REFRESH=1 needs PI_TS16 (pi 1.6.0's wrapper)");
        };
        write_fixture(FIXTURE, &record_rows(&Pi::Ts16(wrapper), &rows));
        return;
    }
    let theirs = read_fixture(FIXTURE);
    let ours = record_rows(&Pi::Ours, &rows);
    assert_eq!(
        ours.keys().collect::<Vec<_>>(),
        theirs.keys().collect::<Vec<_>>(),
        "{FIXTURE}: the cases changed; run scripts/refresh-request-parity.sh"
    );
    let mut differences = Vec::new();
    for row in &rows {
        // Compared under the scenario's own name, so the API's known differences apply,
        // after a catalog model's own.
        let one = |recorded: &Recorded| -> Recorded {
            let requests = match &row.catalog {
                Some(key) => {
                    without_known_in(CATALOG_KNOWN, key, &row.scenario.name, &recorded[&row.name])
                }
                None => recorded[&row.name].clone(),
            };
            BTreeMap::from([(row.scenario.name.clone(), requests)])
        };
        for line in compare(&row.api, &one(&ours), &one(&theirs)) {
            differences.push(format!("{}: {line}", row.name));
        }
    }
    assert!(
        differences.is_empty(),
        "{FIXTURE}: {} differences from pi 1.6.0:\n{}",
        differences.len(),
        differences.join("\n")
    );
}

/// The user message an RPC `prompt` of only an image (empty text) sends on `api`.
async fn image_only_message(program: std::process::Command, api: &str) -> serde_json::Value {
    use serde_json::json;
    use support::rpc::{Env, Rpc};
    let server = mock_llm::MockServer::start().await.unwrap();
    server.push(mock_llm::Script::text("Red."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let models = json!({"providers": {"mock": {"baseUrl": server.openai_base_url(),
        "api": api, "apiKey": "mock-key", "models": [{"id": "mock-model",
        "name": "Mock Model", "input": ["text", "image"], "contextWindow": 128000,
        "maxTokens": 16384}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let data = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        request_parity::scenarios::PIXEL_PNG,
    );
    let mut rpc = Rpc::start_program(&env, program, &[]);
    rpc.call(
        "p",
        json!({"type": "prompt", "message": "",
               "images": [{"type": "image", "data": data, "mimeType": "image/png"}]}),
    );
    rpc.event("agent_settled");
    let body = &server.requests()[0].body;
    let items = body.get("messages").or_else(|| body.get("input"));
    items
        .and_then(|m| m.as_array())
        .and_then(|m| m.iter().rev().find(|m| m["role"] == "user"))
        .cloned()
        .unwrap_or_default()
}

/// pi 0.87.1: a prompt of only an image sends no empty text part beside it to Chat
/// Completions servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_only_prompt_sends_no_empty_text_as_in_16() {
    for api in ["openai-completions", "openai-responses"] {
        let ours = image_only_message(support::ts16::ours(), api).await;
        // Chat Completions servers reject the empty part; Responses keeps it, as 1.6.0.
        let parts = ours["content"].as_array().map_or(0, Vec::len);
        assert_eq!(
            parts,
            if api == "openai-completions" { 1 } else { 2 },
            "{api}: {ours}"
        );
        if let Some(wrapper) = support::ts16::ts16() {
            let theirs = image_only_message(support::ts16::ts16_pi(&wrapper), api).await;
            assert_eq!(
                ours, theirs,
                "{api}: ours (left) and pi 1.6.0 (right) differ"
            );
        }
    }
}

/// The headers of the first request one `-p` run of the catalog model `provider`/`id`
/// sends through `program`, with `env` set over the case's own credentials.
fn catalog_headers(
    mut program: std::process::Command,
    provider: &str,
    id: &str,
    env: &[(&str, &str)],
) -> BTreeMap<String, String> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(mock_llm::MockServer::start()).unwrap();
    server.push(mock_llm::Script::text("Hello."));
    let case = request_parity::catalog::CatalogCase::named(provider, id);
    let setup = case.setup(&server.url());
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::write(agent.join("models.json"), setup.models_json.to_string()).unwrap();
    let output = program
        .args(["--model", &setup.model, "--no-session", "-p", "Say hello."])
        .current_dir(dir.path())
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", dir.path())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .envs(setup.env.iter().map(|(k, v)| (*k, v.as_str())))
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    server.requests()[0].headers.clone()
}

/// The `User-Agent` one `-p` run of the catalog's `kimi-coding/k3` sends.
fn kimi_coding_user_agent(program: std::process::Command) -> String {
    catalog_headers(program, "kimi-coding", "k3", &[])["user-agent"].clone()
}

/// A `User-Agent`'s product, its first detail (the OS) and how many details it has: pi's own
/// is `pi/<version> (<os>; <runtime>; <arch>)`, the runtime part each pi's own.
fn user_agent_shape(agent: &str) -> (String, Option<String>, usize) {
    let (product, rest) = agent.split_once(' ').unwrap_or((agent, ""));
    let parts: Vec<&str> = rest
        .trim_start_matches('(')
        .trim_end_matches(')')
        .split("; ")
        .collect();
    (
        product.to_owned(),
        parts.first().map(|s| (*s).to_owned()),
        parts.len(),
    )
}

/// Asserts ours names pi itself in `ours` and, when pi 1.6.0 sent `theirs`, in its shape.
fn assert_pis_user_agent(case: &str, ours: &str, theirs: Option<&str>) {
    let expected = format!("pi/{}", pi_coding_agent::PI_VERSION);
    assert_eq!(user_agent_shape(ours).0, expected, "{case}: {ours}");
    assert_eq!(user_agent_shape(ours).2, 3, "{case}: {ours}");
    if let Some(theirs) = theirs {
        assert_eq!(
            user_agent_shape(ours),
            user_agent_shape(theirs),
            "{case}: ours {ours}, theirs {theirs}"
        );
    }
}

/// pi 0.84.2: Kimi Coding requests name pi itself, not another client.
#[test]
fn kimi_coding_requests_carry_pis_user_agent_as_in_16() {
    let ours = kimi_coding_user_agent(support::ts16::ours());
    let theirs = support::ts16::ts16()
        .map(|wrapper| kimi_coding_user_agent(support::ts16::ts16_pi(&wrapper)));
    assert_pis_user_agent("kimi-coding/k3", &ours, theirs.as_deref());
}

/// pi 0.84.3: the Anthropic, Azure OpenAI, Google, Mistral and OpenAI adapters send pi's own
/// `User-Agent` (not their SDK's) when no header overrides it.
#[test]
fn provider_adapters_send_pis_user_agent_as_in_16() {
    for (provider, id) in [
        ("anthropic", "claude-haiku-4-5"),
        ("azure", "gpt-5"),
        ("google", "gemini-2.5-flash"),
        ("mistral", "codestral-2508"),
        ("openai", "gpt-5.4"),
    ] {
        let agent = |program| catalog_headers(program, provider, id, &[])["user-agent"].clone();
        let ours = agent(support::ts16::ours());
        let theirs = support::ts16::ts16().map(|wrapper| agent(support::ts16::ts16_pi(&wrapper)));
        assert_pis_user_agent(&format!("{provider}/{id}"), &ours, theirs.as_deref());
    }
}

/// pi 0.87.1 and 1.5.2: a Claude subscription (OAuth) token is sent as a bearer token by a
/// client naming the current Claude Code version (`claude-cli/2.1.322`), never as a key.
#[test]
fn anthropic_oauth_requests_name_the_current_claude_code_as_in_16() {
    let env = [("ANTHROPIC_OAUTH_TOKEN", "sk-ant-oat01-parity-token")];
    let auth_headers = |program| {
        let headers = catalog_headers(program, "anthropic", "claude-haiku-4-5", &env);
        [
            "user-agent",
            "authorization",
            "x-api-key",
            "x-app",
            "anthropic-beta",
        ]
        .map(|name| (name, headers.get(name).cloned()))
    };
    let ours = auth_headers(support::ts16::ours());
    let value = |name: &str| {
        ours.iter()
            .find(|(n, _)| *n == name)
            .and_then(|(_, v)| v.clone())
    };
    assert_eq!(value("user-agent").as_deref(), Some("claude-cli/2.1.322"));
    assert_eq!(
        value("authorization").as_deref(),
        Some("Bearer sk-ant-oat01-parity-token")
    );
    assert_eq!(value("x-api-key"), None);
    if let Some(wrapper) = support::ts16::ts16() {
        let theirs = auth_headers(support::ts16::ts16_pi(&wrapper));
        assert_eq!(ours, theirs, "ours (left) and pi 1.6.0 (right) differ");
    }
}

/// pi 0.82.1: `ANTHROPIC_AUTH_TOKEN` authenticates Anthropic (or a gateway at its base URL)
/// as `Authorization: Bearer`, ahead of the key variables, and no `x-api-key` is sent.
#[test]
fn anthropic_auth_token_is_sent_as_a_bearer_token_as_in_16() {
    let env = [
        ("ANTHROPIC_AUTH_TOKEN", "gateway-token"),
        ("ANTHROPIC_API_KEY", "sk-ant-api03-unused"),
    ];
    let auth_headers = |program| {
        let headers = catalog_headers(program, "anthropic", "claude-haiku-4-5", &env);
        ["authorization", "x-api-key", "anthropic-beta", "x-app"]
            .map(|name| (name, headers.get(name).cloned()))
    };
    let ours = auth_headers(support::ts16::ours());
    assert_eq!(ours[0].1.as_deref(), Some("Bearer gateway-token"));
    assert_eq!(ours[1].1, None);
    if let Some(wrapper) = support::ts16::ts16() {
        let theirs = auth_headers(support::ts16::ts16_pi(&wrapper));
        assert_eq!(ours, theirs, "ours (left) and pi 1.6.0 (right) differ");
    }
}
