//! A branch summary with a provider that authenticates from its environment instead of an
//! API key (pi 0.80.7): Amazon Bedrock with AWS access keys (SigV4), on mock-llm. The
//! `/nav` extension command navigates the session tree with a summary over RPC; ours and pi 1.6.0
//! (`PI_TS16`) must both summarize with the same signed request and record the summary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program_with_host};

const MODEL: &str = "amazon-bedrock/amazon.nova-pro-v1:0";

fn summary_run(wrapper: &Option<PathBuf>) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push_all([
        Script::text("First answer."),
        Script::text("Second answer."),
        Script::text("## Goal\nThe abandoned branch."),
    ]);
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    std::fs::write(
        env.agent.join("models.json"),
        json!({"providers": {"amazon-bedrock": {"baseUrl": server.url()}}}).to_string(),
    )
    .unwrap();
    let extension = support::nav::install(&env.work, true);
    let mut command = program_with_host(wrapper);
    command
        .env("AWS_ACCESS_KEY_ID", "AKIDAMBIENTEXAMPLE")
        .env("AWS_SECRET_ACCESS_KEY", "ambient-secret-example")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_BEDROCK_FORCE_HTTP1", "1")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_BEARER_TOKEN_BEDROCK");
    let mut rpc = Rpc::start_program(&env, command, &["-e", &extension, "--model", MODEL]);
    let (file, target) =
        support::nav::exchanges(&mut rpc, &["First question.", "Second question."]);
    // The prompt's answer comes once the command (and its summary) finished.
    let navigated = support::nav::go(&mut rpc, "nav", &target)["success"].clone();
    rpc.finish();
    let summaries: Vec<Value> = read_jsonl(&file)
        .into_iter()
        .filter(|e| e["type"] == "branch_summary")
        // The preamble before the model's summary is each pi's own wording.
        .map(|e| {
            let summary = e["summary"].as_str().unwrap_or_default();
            json!(summary.split_once("\n\n").map_or(summary, |(_, text)| text))
        })
        .collect();
    let requests = server.requests();
    let signed: Vec<bool> = requests
        .iter()
        .map(|r| {
            r.headers
                .get("authorization")
                .is_some_and(|a| a.starts_with("AWS4-HMAC-SHA256 Credential=AKIDAMBIENTEXAMPLE/"))
        })
        .collect();
    json!({
        "navigated": navigated,
        "summaries": summaries,
        "paths": requests.iter().map(|r| r.path.clone()).collect::<Vec<_>>(),
        "signed": signed,
    })
}

#[test]
fn a_branch_summary_works_with_ambient_bedrock_credentials_as_16() {
    let runs: Vec<(&str, Value)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, summary_run(&wrapper)))
        .collect();
    let ours = &runs[0].1;
    assert_eq!(ours["navigated"], true, "{ours:#}");
    assert_eq!(ours["signed"], json!([true, true, true]), "{ours:#}");
    assert_eq!(
        ours["summaries"],
        json!(["## Goal\nThe abandoned branch."]),
        "{ours:#}"
    );
    for (name, theirs) in &runs[1..] {
        assert_eq!(ours, theirs, "ours against {name}");
    }
}
