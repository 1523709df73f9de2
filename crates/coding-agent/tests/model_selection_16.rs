//! `--model` and `--models` resolved as pi 1.6.0 resolves them, compared whole: the same
//! `models.json` and command line through our `pi -p` and through 1.6.0 (`PI_TS16`) end
//! the same way (exit status) and reach the same provider with the same request (each
//! provider has its own path on the mock, so the path names the provider that was
//! chosen). Without `PI_TS16` only our side runs, against the outcomes written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::ts16::{ours, ts16, ts16_pi};

/// A custom provider on the mock at `/<name>/v1`, keyed when `key`, with `models`
/// (`[id, reasoning]`).
fn provider(url: &str, name: &str, key: bool, models: &[(&str, bool)]) -> Value {
    let models: Vec<Value> = models
        .iter()
        .map(|(id, reasoning)| {
            json!({"id": id, "name": id, "reasoning": reasoning, "contextWindow": 128000,
                   "maxTokens": 16384})
        })
        .collect();
    let mut provider = json!({"baseUrl": format!("{url}/{name}/v1"),
        "api": "openai-completions", "models": models});
    if key {
        provider["apiKey"] = json!("sk-selection");
    }
    provider
}

/// How one run ended: its exit status and, per request the mock got, the path (which
/// names the provider), the model and the reasoning fields asked for.
fn outcome(program: Command, providers: &dyn Fn(&str) -> Value, args: &[&str]) -> (Value, String) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::text("Hello."));
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let models = json!({"providers": providers(&server.url())});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let mut program = program;
    let output = program
        .args(args)
        .args(["--no-session", "-p", "Say hello."])
        .current_dir(dir.path())
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", dir.path())
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENROUTER_API_KEY")
        .output()
        .unwrap();
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| {
            json!({"path": r.path, "model": r.body["model"],
                   "reasoning_effort": r.body["reasoning_effort"]})
        })
        .collect();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    (
        json!({"success": output.status.success(), "requests": requests}),
        stderr,
    )
}

/// Ours for one case, checked against 1.6.0's when it is installed.
fn compare(case: &str, providers: &dyn Fn(&str) -> Value, args: &[&str]) -> (Value, String) {
    let our = outcome(ours(), providers, args);
    if let Some(wrapper) = ts16() {
        let their = outcome(ts16_pi(&wrapper), providers, args);
        assert_eq!(
            our.0, their.0,
            "{case}: ours (left) and pi 1.6.0 (right) differ\nours: {}\ntheirs: {}",
            our.1, their.1
        );
    }
    our
}

/// pi 0.79.2: a keyed custom model whose id starts with a built-in provider's name
/// (`openai/…`, OpenAI unkeyed) is found by that id.
#[test]
fn a_custom_id_with_a_builtin_providers_prefix_resolves_as_in_16() {
    let providers =
        |url: &str| json!({"proxy": provider(url, "proxy", true, &[("openai/gpt-5.4", false)])});
    let (got, stderr) = compare("slash prefix", &providers, &["--model", "openai/gpt-5.4"]);
    assert_eq!(
        got,
        json!({"success": true, "requests": [{"path": "/proxy/v1/chat/completions",
               "model": "openai/gpt-5.4", "reasoning_effort": null}]}),
        "{stderr}"
    );
}

/// pi 0.84.0 / 1.3: a bare id several providers offer goes to the one with a key, and
/// is an ambiguity (no request) when none or several have one.
#[test]
fn a_bare_id_offered_twice_resolves_as_in_16() {
    let one_keyed = |url: &str| {
        json!({"alpha": provider(url, "alpha", false, &[("shared-model", false)]),
               "beta": provider(url, "beta", true, &[("shared-model", false)])})
    };
    let (got, stderr) = compare("one keyed", &one_keyed, &["--model", "shared-model"]);
    assert_eq!(
        got["requests"],
        json!([{"path": "/beta/v1/chat/completions", "model": "shared-model",
                "reasoning_effort": null}]),
        "{stderr}"
    );
    let both_keyed = |url: &str| {
        json!({"alpha": provider(url, "alpha", true, &[("shared-model", false)]),
               "beta": provider(url, "beta", true, &[("shared-model", false)])})
    };
    let (got, stderr) = compare("both keyed", &both_keyed, &["--model", "shared-model"]);
    assert_eq!(got, json!({"success": false, "requests": []}), "{stderr}");
    // `--models` takes every provider's, with a warning; the first starts.
    let (got, stderr) = compare("scoped twice", &both_keyed, &["--models", "shared-model"]);
    assert_eq!(
        got["requests"][0]["path"], "/alpha/v1/chat/completions",
        "{stderr}"
    );
    assert!(
        stderr.contains("matches several providers: alpha, beta"),
        "{stderr}"
    );
}

/// pi 1.5.0: a provider id with slashes (`local/llama`) takes `--model <provider>/<id>`.
#[test]
fn a_provider_id_with_slashes_resolves_as_in_16() {
    let providers =
        |url: &str| json!({"local/llama": provider(url, "local", true, &[("small-model", false)])});
    let (got, stderr) = compare(
        "slashed provider",
        &providers,
        &["--model", "local/llama/small-model"],
    );
    assert_eq!(
        got,
        json!({"success": true, "requests": [{"path": "/local/v1/chat/completions",
               "model": "small-model", "reasoning_effort": null}]}),
        "{stderr}"
    );
}

/// pi 0.79.2: an id the provider does not list, with a `:<thinking>` suffix, is tried on
/// the provider with that thinking level even though its listed model does not reason.
#[test]
fn an_unlisted_id_with_a_thinking_suffix_resolves_as_in_16() {
    let providers =
        |url: &str| json!({"proxy": provider(url, "proxy", true, &[("listed-model", false)])});
    let (got, stderr) = compare(
        "fallback with thinking",
        &providers,
        &["--model", "proxy/unlisted-model:high"],
    );
    assert_eq!(got["success"], true, "{stderr}");
    assert_eq!(
        got["requests"][0]["path"], "/proxy/v1/chat/completions",
        "{stderr}"
    );
    assert_eq!(got["requests"][0]["model"], "unlisted-model", "{stderr}");
    assert_eq!(got["requests"][0]["reasoning_effort"], "high", "{stderr}");
    assert!(stderr.contains("Using custom model id."), "{stderr}");
}

/// pi 0.82.0: a scoped pattern with brackets is the model of that exact id before it is
/// a glob (`br[a]ve` would match `brave`).
#[test]
fn a_scoped_id_with_brackets_is_literal_first_as_in_16() {
    let providers = |url: &str| json!({"proxy": provider(url, "proxy", true, &[("brave", false), ("br[a]ve", false)])});
    let (got, stderr) = compare("brackets", &providers, &["--models", "proxy/br[a]ve"]);
    assert_eq!(
        got,
        json!({"success": true, "requests": [{"path": "/proxy/v1/chat/completions",
               "model": "br[a]ve", "reasoning_effort": null}]}),
        "{stderr}"
    );
}

/// What `cycle_model` answers over RPC in a session started with `--models <patterns>`
/// on the two models of `support::rpc::Env` (`mock/mock-model`, `mock/mock-thinker`).
async fn cycled(program: Command, patterns: &str) -> Value {
    let server = MockServer::start().await.unwrap();
    let env = support::rpc::Env::new(&server, 128_000, json!({}));
    let mut rpc = support::rpc::Rpc::start_program(&env, program, &["--models", patterns]);
    let answer = rpc.call("c", json!({"type": "cycle_model"}));
    json!({"success": answer["success"], "model": answer["data"]["model"]["id"]})
}

/// pi 1.0.1: a trailing comma in `--models` adds no model to the cycle.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_trailing_comma_in_models_adds_nothing_as_in_16() {
    for patterns in ["mock/mock-model,", "mock/mock-model, ,mock/mock-thinker,"] {
        let ours = cycled(ours(), patterns).await;
        let expected = if patterns.contains("thinker") {
            json!({"success": true, "model": "mock-thinker"})
        } else {
            json!({"success": true, "model": null})
        };
        assert_eq!(ours, expected, "{patterns}");
        if let Some(wrapper) = ts16() {
            let theirs = cycled(ts16_pi(&wrapper), patterns).await;
            assert_eq!(
                ours, theirs,
                "{patterns}: ours (left) and pi 1.6.0 (right) differ"
            );
        }
    }
}
