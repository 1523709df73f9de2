//! Startup's model choice with a saved default whose provider has no key (pi 0.80.4): the
//! default gives way to a configured local model that has one, through our `pi -p` and
//! pi 1.6.0 (`PI_TS16`) on one mock; a saved default with a key is still used, also one of
//! an extension provider whose key is stored in `auth.json`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// One print run with `settings` saved; its exit status and the models the mock was asked
/// for.
async fn chosen(program: Command, settings: Value) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Hello."));
    let env = Env::new(&server, 128_000, settings);
    let output = run(&env, program, &["--no-session", "-p", "Say hello."]);
    let models: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| r.body["model"].clone())
        .collect();
    json!({"success": output.status.success(), "models": models,
           "stdout": String::from_utf8_lossy(&output.stdout).trim()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unauthenticated_saved_default_gives_way_to_a_keyed_model_as_in_16() {
    let cases = [
        // Anthropic has no key here: the keyed mock model is chosen instead.
        (
            json!({"defaultProvider": "anthropic", "defaultModel": "claude-sonnet-4-5"}),
            json!({"success": true, "models": ["mock-model"], "stdout": "Hello."}),
        ),
        // A keyed saved default stays.
        (
            json!({"defaultProvider": "mock", "defaultModel": "mock-thinker"}),
            json!({"success": true, "models": ["mock-thinker"], "stdout": "Hello."}),
        ),
    ];
    for (settings, expected) in cases {
        let our = chosen(ours(), settings.clone()).await;
        assert_eq!(our, expected, "ours with {settings}");
        if let Some(wrapper) = ts16() {
            let their = chosen(ts16_pi(&wrapper), settings.clone()).await;
            assert_eq!(our, their, "ours, then pi 1.6.0, with {settings}");
        }
    }
}

/// Provider `ext`, registered without a key (the key is stored in `auth.json`).
const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerProvider("ext", { baseUrl: process.env.MOCK_BASE, api: "openai-completions",
    models: [{ id: "ext-1", name: "ext-1", reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 }] });
}
"#;

/// A print run whose saved default is the extension's model; the model and key the mock
/// was asked with.
async fn extension_default(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("From ext."));
    let env = Env::new(
        &server,
        128_000,
        json!({"defaultProvider": "ext", "defaultModel": "ext-1"}),
    );
    std::fs::write(
        env.agent.join("auth.json"),
        json!({"ext": {"type": "api_key", "key": "stored-key"}}).to_string(),
    )
    .unwrap();
    let ext = env.dir.path().join("ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    program.env("MOCK_BASE", server.openai_base_url());
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let output = run(
        &env,
        program,
        &[
            "--no-session",
            "-e",
            ext.to_str().unwrap(),
            "-p",
            "Say hello.",
        ],
    );
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| json!([r.body["model"], r.headers.get("authorization")]))
        .collect();
    json!({"success": output.status.success(), "requests": requests,
           "stdout": String::from_utf8_lossy(&output.stdout).trim()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_providers_saved_default_with_a_stored_key_is_used_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let our = extension_default(ours()).await;
    assert_eq!(
        our,
        json!({"success": true, "requests": [["ext-1", "Bearer stored-key"]], "stdout": "From ext."})
    );
    if let Some(wrapper) = ts16() {
        let their = extension_default(ts16_pi(&wrapper)).await;
        assert_eq!(our, their, "ours, then pi 1.6.0");
    }
}
