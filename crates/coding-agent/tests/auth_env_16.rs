//! Provider-scoped auth environments: an `auth.json` API-key entry's `env` configures its
//! provider's requests (Amazon Bedrock profile, keys and region; Cloudflare account and
//! gateway ids; Azure endpoint and deployments) without touching the process environment,
//! as in pi 1.6.0. The same
//! print-mode prompt runs through ours and pi 1.6.0 (`PI_TS16`) against the mock, and what
//! each case is about (who signed a Bedrock request, for which region; where a Cloudflare
//! request went) is compared. Without `PI_TS16` only ours runs, against the values here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Output;

use serde_json::{Value, json};

use mock_llm::RecordedRequest;
use support::pi_case::{Case, bedrock_case, compare};

/// The Bedrock case: a custom Claude model, `auth.json` and the environment as given.
fn bedrock(auth: Value, env: &[(&'static str, &'static str)]) -> Case {
    let mut case = bedrock_case("anthropic.claude-parity", json!({"reasoning": false}));
    case.auth = auth;
    case.env.extend_from_slice(env);
    case
}

/// The access key id and region of each request's SigV4 `authorization` header.
fn signers(output: &Output, requests: &[RecordedRequest]) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    requests
        .iter()
        .map(|r| {
            let auth = r.headers.get("authorization").cloned().unwrap_or_default();
            let scope = auth
                .split([' ', ','])
                .find_map(|part| part.strip_prefix("Credential="))
                .unwrap_or_default();
            let fields: Vec<&str> = scope.split('/').collect();
            json!({"key": fields.first(), "region": fields.get(2)})
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_bedrock_profile_signs_bedrock_requests_as_in_16() {
    // `/login` with an AWS profile stores only `env.AWS_PROFILE`; nothing in the process
    // environment authenticates Bedrock.
    let auth = json!({"amazon-bedrock": {"type": "api_key", "env": {"AWS_PROFILE": "scoped"}}});
    let signed = compare(&bedrock(auth, &[]), signers).await;
    assert_eq!(
        signed,
        json!([{"key": "AKIDSCOPEDPROFILE", "region": "us-east-1"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_profile_wins_over_ambient_keys_but_an_ambient_one_does_not_as_in_16() {
    let keys = [
        ("AWS_ACCESS_KEY_ID", "AKIDAMBIENTKEYS"),
        ("AWS_SECRET_ACCESS_KEY", "ambient-secret"),
    ];
    // The profile stored for Bedrock is named for its requests: the ambient keys do not
    // override it.
    let auth = json!({"amazon-bedrock": {"type": "api_key", "env": {"AWS_PROFILE": "scoped"}}});
    let signed = compare(&bedrock(auth, &keys), signers).await;
    assert_eq!(
        signed,
        json!([{"key": "AKIDSCOPEDPROFILE", "region": "us-east-1"}])
    );
    // An ambient AWS_PROFILE beside ambient keys: pi 1.6.0 signs with the keys.
    let mut env = keys.to_vec();
    env.push(("AWS_PROFILE", "scoped"));
    env.push(("AWS_REGION", "us-west-2"));
    let signed = compare(&bedrock(json!({}), &env), signers).await;
    assert_eq!(
        signed,
        json!([{"key": "AKIDAMBIENTKEYS", "region": "us-west-2"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stored_env_values_configure_bedrock_ahead_of_the_process_environment_as_in_16() {
    // The stored region beats the ambient one, and the stored profile the ambient profile.
    let auth = json!({"amazon-bedrock": {"type": "api_key",
        "env": {"AWS_PROFILE": "scoped", "AWS_REGION": "eu-west-3"}}});
    let env = [("AWS_PROFILE", "default"), ("AWS_REGION", "ap-south-1")];
    let signed = compare(&bedrock(auth, &env), signers).await;
    assert_eq!(
        signed,
        json!([{"key": "AKIDSCOPEDPROFILE", "region": "eu-west-3"}])
    );
    // Stored keys without a profile: they sign, for the stored region, ahead of the
    // ambient keys (an ambient profile lets the stored env apply).
    let auth = json!({"amazon-bedrock": {"type": "api_key", "env": {
        "AWS_ACCESS_KEY_ID": "AKIDSTOREDKEYS", "AWS_SECRET_ACCESS_KEY": "stored-secret",
        "AWS_DEFAULT_REGION": "sa-east-1"}}});
    let env = [
        ("AWS_PROFILE", "default"),
        ("AWS_ACCESS_KEY_ID", "AKIDAMBIENTKEYS"),
        ("AWS_SECRET_ACCESS_KEY", "ambient-secret"),
    ];
    let signed = compare(&bedrock(auth, &env), signers).await;
    assert_eq!(
        signed,
        json!([{"key": "AKIDSTOREDKEYS", "region": "sa-east-1"}])
    );
}

/// A Cloudflare case: the provider's base URL on the mock, its placeholders kept.
fn cloudflare(provider: &str, path: &str, model: &str, auth: Value) -> Case {
    let mut case = Case::new(
        json!({provider: {"baseUrl": format!("{{url}}{path}")}}),
        format!("{provider}/{model}"),
    );
    case.auth = auth;
    case
}

/// The path and auth headers of each request, or the run's failure.
fn routes(output: &Output, requests: &[RecordedRequest]) -> Value {
    if !output.status.success() {
        return json!({"failed": requests.len()});
    }
    requests
        .iter()
        .map(|r| {
            json!({"path": r.path, "authorization": r.headers.get("authorization"),
                   "cf-aig-authorization": r.headers.get("cf-aig-authorization")})
        })
        .collect()
}

const WORKERS_MODEL: &str = "@cf/meta/llama-3.3-70b-instruct-fp8-fast";
const WORKERS_PATH: &str = "/client/v4/accounts/{CLOUDFLARE_ACCOUNT_ID}/ai/v1";
const GATEWAY_PATH: &str = "/v1/{CLOUDFLARE_ACCOUNT_ID}/{CLOUDFLARE_GATEWAY_ID}/compat";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloudflare_ids_come_from_the_stored_env_or_else_the_environment_as_in_16() {
    // Stored with the key: the account id goes into the request's URL.
    let stored = json!({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-stored",
        "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored"}}});
    let mut case = cloudflare("cloudflare-workers-ai", WORKERS_PATH, WORKERS_MODEL, stored);
    case.env.push(("CLOUDFLARE_ACCOUNT_ID", "acct-ambient"));
    assert_eq!(
        compare(&case, routes).await,
        json!([{"path": "/client/v4/accounts/acct-stored/ai/v1/chat/completions",
                "authorization": "Bearer cf-stored", "cf-aig-authorization": null}])
    );
    // A stored key alone: the ambient account and gateway ids complete it.
    let key_only = json!({"cloudflare-ai-gateway": {"type": "api_key", "key": "cf-stored"}});
    let mut case = cloudflare(
        "cloudflare-ai-gateway",
        GATEWAY_PATH,
        &format!("workers-ai/{WORKERS_MODEL}"),
        key_only,
    );
    case.env.push(("CLOUDFLARE_ACCOUNT_ID", "acct-ambient"));
    case.env.push(("CLOUDFLARE_GATEWAY_ID", "gw-ambient"));
    assert_eq!(
        compare(&case, routes).await,
        json!([{"path": "/v1/acct-ambient/gw-ambient/compat/chat/completions",
                "authorization": null, "cf-aig-authorization": "Bearer cf-stored"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cloudflare_without_its_ids_sends_nothing_as_in_16() {
    // A key but no account id anywhere: Workers AI is not configured.
    let key_only = json!({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-stored"}});
    let case = cloudflare(
        "cloudflare-workers-ai",
        WORKERS_PATH,
        WORKERS_MODEL,
        key_only,
    );
    assert_eq!(compare(&case, routes).await, json!({"failed": 0}));
    // The gateway with its account id but no gateway id.
    let mut case = cloudflare(
        "cloudflare-ai-gateway",
        GATEWAY_PATH,
        &format!("workers-ai/{WORKERS_MODEL}"),
        json!({"cloudflare-ai-gateway": {"type": "api_key", "key": "cf-stored",
            "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored"}}}),
    );
    case.env.push(("CLOUDFLARE_API_KEY", "cf-ambient"));
    assert_eq!(compare(&case, routes).await, json!({"failed": 0}));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_azure_endpoint_and_deployment_beat_the_environment_as_in_16() {
    let mut case = Case::new(json!({}), "azure/gpt-4.1");
    case.auth = json!({"azure": {"type": "api_key", "key": "az-stored", "env": {
        "AZURE_OPENAI_BASE_URL": "{url}/stored/openai/v1",
        "AZURE_OPENAI_DEPLOYMENT_NAME_MAP": "gpt-4.1=dep-stored"}}});
    // The ambient endpoint is a closed port: a request sent there would fail the run.
    case.env.extend([
        (
            "AZURE_OPENAI_BASE_URL",
            "http://127.0.0.1:9/ambient/openai/v1",
        ),
        ("AZURE_OPENAI_DEPLOYMENT_NAME_MAP", "gpt-4.1=dep-ambient"),
    ]);
    let sent = compare(&case, |output, requests| {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        requests
            .iter()
            .map(|r| {
                json!({"path": r.path, "model": r.body["model"],
                            "api-key": r.headers.get("api-key")})
            })
            .collect()
    })
    .await;
    assert_eq!(
        sent,
        json!([{"path": "/stored/openai/v1/responses", "model": "dep-stored", "api-key": "az-stored"}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_runtime_api_key_resolves_cloudflare_ids_for_itself_as_in_16() {
    // `--api-key` is the request's own credential: the ids stored with another key do not
    // come with it, the environment's do.
    let stored = json!({"cloudflare-workers-ai": {"type": "api_key", "key": "cf-stored",
        "env": {"CLOUDFLARE_ACCOUNT_ID": "acct-stored"}}});
    let mut case = cloudflare("cloudflare-workers-ai", WORKERS_PATH, WORKERS_MODEL, stored);
    case.args = vec!["--api-key", "cf-runtime", "-p", "Which configuration?"];
    case.env.push(("CLOUDFLARE_ACCOUNT_ID", "acct-ambient"));
    assert_eq!(
        compare(&case, routes).await,
        json!([{"path": "/client/v4/accounts/acct-ambient/ai/v1/chat/completions",
                "authorization": "Bearer cf-runtime", "cf-aig-authorization": null}])
    );
}

/// The `cache_control` marks of an Anthropic request's body, in order.
fn cache_marks(output: &Output, requests: &[RecordedRequest]) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    fn collect(value: &Value, marks: &mut Vec<Value>) {
        match value {
            Value::Object(map) => {
                if let Some(mark) = map.get("cache_control") {
                    marks.push(mark.clone());
                }
                map.values().for_each(|v| collect(v, marks));
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, marks)),
            _ => {}
        }
    }
    requests
        .iter()
        .map(|r| {
            let mut marks = Vec::new();
            collect(&r.body, &mut marks);
            Value::Array(marks)
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_cache_retention_lengthens_the_providers_prompt_cache_as_in_16() {
    let anthropic = json!({"anthropic": {"baseUrl": "{url}"}});
    // `PI_CACHE_RETENTION=long` stored with the Anthropic key asks for the hour-long cache.
    let mut case = Case::new(anthropic.clone(), "anthropic/claude-fable-5");
    case.auth = json!({"anthropic": {"type": "api_key", "key": "sk-ant-stored",
        "env": {"PI_CACHE_RETENTION": "long"}}});
    let marks = compare(&case, cache_marks).await;
    let long = json!({"type": "ephemeral", "ttl": "1h"});
    let first = marks[0].as_array().unwrap();
    assert!(
        !first.is_empty() && first.iter().all(|m| m == &long),
        "{marks}"
    );
    // Without it the default five minutes; the stored value also beats the environment's.
    let mut case = Case::new(anthropic, "anthropic/claude-fable-5");
    case.auth = json!({"anthropic": {"type": "api_key", "key": "sk-ant-stored",
        "env": {"PI_CACHE_RETENTION": "short"}}});
    case.env.push(("PI_CACHE_RETENTION", "long"));
    let marks = compare(&case, cache_marks).await;
    let first = marks[0].as_array().unwrap();
    assert!(
        !first.is_empty() && first.iter().all(|m| m == &json!({"type": "ephemeral"})),
        "{marks}"
    );
}

/// Google Vertex reads its project, location and credentials from the login's scoped `env`
/// before the process environment (pi-ai 1.6's `getProviderEnvValue(name, options.env)`).
/// Ours only: without an API key, pi 1.6.0 takes its token from Google's OAuth endpoint
/// (Application Default Credentials), which cannot be pointed at the mock; ours takes a
/// ready one (`GOOGLE_CLOUD_ACCESS_TOKEN`), here from the scoped env too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_vertex_project_and_location_configure_vertex_requests() {
    let vertex = json!({"google-vertex": {"baseUrl": "{url}/v1"}});
    let scoped = |env: Value| {
        let mut case = Case::new(vertex.clone(), "google-vertex/gemini-2.5-flash");
        case.auth = json!({"google-vertex": {"type": "api_key", "env": env}});
        case
    };
    let stored = json!({"GOOGLE_CLOUD_PROJECT": "proj-stored",
        "GOOGLE_CLOUD_LOCATION": "europe-west4", "GOOGLE_CLOUD_ACCESS_TOKEN": "ya29.stored"});
    let (output, requests) = support::pi_case::prompt(support::ts16::ours(), &scoped(stored)).await;
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert_eq!(requests.len(), 1);
    assert_eq!(
        requests[0].headers.get("authorization").map(String::as_str),
        Some("Bearer ya29.stored")
    );
    // No project anywhere: Vertex is not signed in, nothing is sent.
    let no_project = json!({"GOOGLE_CLOUD_LOCATION": "europe-west4",
        "GOOGLE_CLOUD_ACCESS_TOKEN": "ya29.stored"});
    let (output, requests) =
        support::pi_case::prompt(support::ts16::ours(), &scoped(no_project)).await;
    assert!(requests.is_empty());
    assert!(
        String::from_utf8_lossy(&output.stderr).contains("No API key found for google-vertex"),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// A relay standing in for an HTTP proxy: it takes CONNECT tunnels and absolute-form
/// requests, records each target and passes the bytes on to the mock (a target elsewhere
/// is recorded and the connection closed).
async fn relay() -> (String, std::sync::Arc<std::sync::Mutex<Vec<String>>>) {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    use tokio::net::{TcpListener, TcpStream};
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let targets = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&targets);
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let seen = std::sync::Arc::clone(&seen);
            tokio::spawn(async move {
                let mut client = BufReader::new(client);
                let mut first = String::new();
                if client.read_line(&mut first).await.is_err() {
                    return;
                }
                let mut parts = first.split_whitespace();
                let method = parts.next().unwrap_or_default().to_owned();
                let target = parts.next().unwrap_or_default();
                let authority = match method.as_str() {
                    "CONNECT" => target.to_owned(),
                    _ => target
                        .trim_start_matches("http://")
                        .split('/')
                        .next()
                        .unwrap_or_default()
                        .to_owned(),
                };
                seen.lock().unwrap().push(authority.clone());
                // Only the mock on this machine is reached; other targets are only noted.
                if !authority.starts_with("127.0.0.1:") {
                    return;
                }
                let Ok(mut upstream) = TcpStream::connect(&authority).await else {
                    return;
                };
                if method == "CONNECT" {
                    let mut line = String::new();
                    while client.read_line(&mut line).await.is_ok_and(|n| n > 2) {
                        line.clear();
                    }
                    let _ = client
                        .get_mut()
                        .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                        .await;
                } else if upstream.write_all(first.as_bytes()).await.is_err() {
                    return;
                }
                let buffered = client.buffer().to_vec();
                let _ = upstream.write_all(&buffered).await;
                let mut client = client.into_inner();
                let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
            });
        }
    });
    (url, targets)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_proxy_carries_bedrock_requests_as_in_16() {
    let runs = support::ts16::pis().len();
    let (proxy, targets) = relay().await;
    // The proxy stored with the Bedrock login carries its requests (pi-ai 1.6's Bedrock
    // handler reads HTTP_PROXY from the scoped env); the process environment has none.
    let auth = json!({"amazon-bedrock": {"type": "api_key",
        "env": {"AWS_PROFILE": "scoped", "HTTP_PROXY": proxy}}});
    let signed = compare(&bedrock(auth, &[]), signers).await;
    assert_eq!(
        signed,
        json!([{"key": "AKIDSCOPEDPROFILE", "region": "us-east-1"}])
    );
    let seen = targets.lock().unwrap().clone();
    assert_eq!(
        seen.len(),
        runs,
        "one request through the relay per pi: {seen:?}"
    );
    assert!(seen.iter().all(|t| t.starts_with("127.0.0.1:")), "{seen:?}");
    // A stored NO_PROXY naming the endpoint's host sends it directly.
    let auth = json!({"amazon-bedrock": {"type": "api_key",
        "env": {"AWS_PROFILE": "scoped", "HTTP_PROXY": proxy, "NO_PROXY": "localhost,127.0.0.1"}}});
    let signed = compare(&bedrock(auth, &[]), signers).await;
    assert_eq!(
        signed,
        json!([{"key": "AKIDSCOPEDPROFILE", "region": "us-east-1"}])
    );
    assert_eq!(
        targets.lock().unwrap().len(),
        runs,
        "nothing more through the relay"
    );
}

/// Which Bedrock endpoint a built-in model's request goes to when the login's scoped env,
/// or else the environment, names the AWS profile (whose region is eu-west-1), for a model
/// on the standard endpoint and for an inference profile: the scoped proxy's relay records
/// the tunnel each pi asks for (and goes no further), ours and pi 1.6.0 alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_or_ambient_profile_resolves_bedrock_endpoints_as_in_16() {
    let (proxy, targets) = relay().await;
    let mut tunnels = Vec::new();
    let standard = "amazon-bedrock/anthropic.claude-haiku-4-5-20251001-v1:0";
    let inference_profile = "amazon-bedrock/eu.amazon.nova-lite-v1:0";
    for (model, ambient) in [
        (standard, false),
        (inference_profile, false),
        (standard, true),
        (inference_profile, true),
    ] {
        let mut case = Case::new(json!({}), model);
        let mut env = json!({"HTTPS_PROXY": proxy});
        if ambient {
            case.env.push(("AWS_PROFILE", "scoped"));
        } else {
            env["AWS_PROFILE"] = json!("scoped");
        }
        case.auth = json!({"amazon-bedrock": {"type": "api_key", "env": env}});
        case.files = vec![("aws-config", "[profile scoped]\nregion = eu-west-1\n")];
        case.env.push(("AWS_CONFIG_FILE", "aws-config"));
        case.settings = json!({"retry": {"enabled": false}});
        let targets = std::sync::Arc::clone(&targets);
        let seen = compare(&case, move |output, _| {
            assert!(!output.status.success(), "the relay goes no further");
            // Where, not how often: ours asks the proxy again when it closes the tunnel.
            let mut seen: Vec<String> = targets.lock().unwrap().drain(..).collect();
            seen.dedup();
            json!(seen)
        })
        .await;
        tunnels.push(seen);
    }
    // A profile stored with the login signs, but the catalog's endpoint keeps its region
    // (the standard one's us-east-1, the EU inference profile's eu-central-1); the same
    // profile named by the environment gives its own region (eu-west-1) to both.
    assert_eq!(
        tunnels,
        [
            json!(["bedrock-runtime.us-east-1.amazonaws.com:443"]),
            json!(["bedrock-runtime.eu-central-1.amazonaws.com:443"]),
            json!(["bedrock-runtime.eu-west-1.amazonaws.com:443"]),
            json!(["bedrock-runtime.eu-west-1.amazonaws.com:443"]),
        ]
    );
}
