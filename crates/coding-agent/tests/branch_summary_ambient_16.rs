//! A branch summary with a provider that authenticates from its environment instead of an
//! API key (pi 0.80.7): Amazon Bedrock with AWS access keys (SigV4), on mock-llm. An
//! extension command navigates the session tree with a summary over RPC; ours and pi 1.6.0
//! (`PI_TS16`) must both summarize with the same signed request and record the summary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program_with_host};

/// `/nav <id>` navigates there with a summary and writes how it ended to `NAV_LOG`.
const NAVIGATOR: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.registerCommand("nav", {
    description: "Navigate with a summary",
    handler: async (args, ctx) => {
      let outcome;
      try {
        const result = await ctx.navigateTree(args.trim(), { summarize: true });
        outcome = result?.cancelled ? "cancelled" : "done";
      } catch (error) {
        outcome = String(error?.message ?? error);
      }
      writeFileSync(process.env.NAV_LOG, outcome);
    },
  });
}
"#;

const MODEL: &str = "amazon-bedrock/amazon.nova-pro-v1:0";

/// The navigation's outcome once the command wrote it.
fn outcome(log: &Path) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(log)
            && !text.is_empty()
        {
            return text;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no navigation outcome"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

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
    let ext = env.dir.path().join("navigator.ts");
    std::fs::write(&ext, NAVIGATOR).unwrap();
    let log = env.dir.path().join("nav.txt");
    let mut command = program_with_host(wrapper);
    command
        .env("NAV_LOG", &log)
        .env("AWS_ACCESS_KEY_ID", "AKIDAMBIENTEXAMPLE")
        .env("AWS_SECRET_ACCESS_KEY", "ambient-secret-example")
        .env("AWS_REGION", "us-east-1")
        .env("AWS_BEDROCK_FORCE_HTTP1", "1")
        .env_remove("AWS_PROFILE")
        .env_remove("AWS_SESSION_TOKEN")
        .env_remove("AWS_BEARER_TOKEN_BEDROCK");
    let mut rpc = Rpc::start_program(
        &env,
        command,
        &["-e", ext.to_str().unwrap(), "--model", MODEL],
    );
    for (id, text) in [("p1", "First question."), ("p2", "Second question.")] {
        rpc.call(id, json!({"type": "prompt", "message": text}));
        rpc.until("the run settled", |l| l["type"] == "agent_settled");
    }
    let file = rpc.call("s", json!({"type": "get_state"}))["data"]["sessionFile"]
        .as_str()
        .map(PathBuf::from)
        .unwrap();
    let first_reply = read_jsonl(&file)
        .into_iter()
        .find(|e| e["message"]["role"] == "assistant")
        .unwrap();
    let target = first_reply["id"].as_str().unwrap().to_owned();
    rpc.call(
        "nav",
        json!({"type": "prompt", "message": format!("/nav {target}")}),
    );
    let navigated = outcome(&log);
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
    assert_eq!(ours["navigated"], "done", "{ours:#}");
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
