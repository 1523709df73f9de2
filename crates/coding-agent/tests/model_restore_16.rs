//! A resumed session whose model is gone, as pi 1.6.0 reports it outside the interactive
//! UI: `Warning: Could not restore model <provider>/<id>. Using <fallback>` on stderr, and
//! the run goes on with the fallback. Each pi writes its own first session, then continues
//! it with the model's provider removed from `models.json`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

fn models(server: &MockServer, with_old: bool) -> Value {
    let model =
        |id: &str| json!({"id": id, "name": id, "contextWindow": 128000, "maxTokens": 16384});
    let mut providers = json!({"fresh": {
        "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "k",
        "models": [model("now")]}});
    if with_old {
        providers["old"] = json!({
            "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "k",
            "models": [model("then")]});
    }
    json!({"providers": providers})
}

/// The warning lines and the model of the continued run's request.
async fn continue_without_the_model(make: impl Fn() -> Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First."));
    server.push(Script::text("Second."));
    let env = Env::new(
        &server,
        128_000,
        json!({"defaultProvider": "fresh", "defaultModel": "now"}),
    );
    let write = |with_old| {
        std::fs::write(
            env.agent.join("models.json"),
            models(&server, with_old).to_string(),
        )
        .unwrap();
    };
    write(true);
    let first = run(&env, make(), &["--model", "old/then", "-p", "Hello."]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    write(false);
    let second = run(&env, make(), &["-c", "-p", "Again."]);
    assert!(
        second.status.success(),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    let stderr = String::from_utf8_lossy(&second.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("Could not restore"))
        .collect();
    let requests = server.requests();
    json!({"warnings": warnings, "model": requests[1].body["model"]})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lost_model_is_reported_in_print_mode_as_in_pi_16() {
    let ours = continue_without_the_model(ours).await;
    assert_eq!(
        ours,
        json!({"warnings": ["Warning: Could not restore model old/then. Using fresh/now"],
               "model": "now"})
    );
    if let Some(wrapper) = ts16() {
        let theirs = continue_without_the_model(|| ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
