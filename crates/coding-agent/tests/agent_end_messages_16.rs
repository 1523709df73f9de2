//! Messages an extension sends from its `agent_end` handler, as pi 1.6.0 handles them: a
//! follow-up (`sendUserMessage` with `deliverAs: "followUp"`) and a custom message with
//! `triggerTurn: true` run before the agent goes idle, so `agent_settled` comes once, after
//! them; a custom message with `triggerTurn: false` is only recorded. One RPC session per
//! case through ours and through pi 1.6.0 (`PI_TS16`): the run's lifecycle events, what the
//! model got and the session's messages must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, user_texts};
use support::ts16::{ts16, ts16_pi};

/// The extension: on the first `agent_end` it sends what `AGENT_END_SEND` names.
const EXTENSION: &str = r#"
export default function (pi) {
  let sent = false;
  pi.on("agent_end", () => {
    if (sent) return;
    sent = true;
    const kind = process.env.AGENT_END_SEND;
    if (kind === "follow-up") {
      pi.sendUserMessage("follow-up from agent_end", { deliverAs: "followUp" });
    } else if (kind === "trigger") {
      pi.sendMessage({ customType: "ping", content: "custom from agent_end", display: true }, { triggerTurn: true });
    } else if (kind === "record") {
      pi.sendMessage({ customType: "ping", content: "recorded from agent_end", display: true }, { triggerTurn: false });
    }
  });
}
"#;

/// The lifecycle events a run printed, the user texts of each request, and the session's
/// messages as `role[:customType]`.
async fn session(mut program: Command, host: Option<PathBuf>, kind: &'static str) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("first answer"));
    server.push(Script::text("second answer"));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("agent-end-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    program.env("AGENT_END_SEND", kind);
    if let Some(host) = host {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let expected_requests = if kind == "record" { 1 } else { 2 };
    let (events, messages) = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || {
            let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
            let answer = rpc.call("p", json!({"type": "prompt", "message": "start"}));
            assert_eq!(answer["success"], true, "{answer:#?}");
            rpc.until("the run's end", |l| {
                l["type"] == "agent_settled" && server.requests().len() >= expected_requests
            });
            let messages = rpc.call("m", json!({"type": "get_messages"}));
            let events: Vec<Value> = rpc
                .seen
                .iter()
                .filter_map(|l| l["type"].as_str())
                .filter(|t| {
                    matches!(
                        *t,
                        "agent_start" | "agent_end" | "agent_settled" | "turn_start"
                    )
                })
                .map(Value::from)
                .collect();
            let messages: Vec<String> = messages["data"]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] != "system")
                .map(|m| match m["customType"].as_str() {
                    Some(kind) => format!("{}:{kind}", m["role"].as_str().unwrap_or("?")),
                    None => m["role"].as_str().unwrap_or("?").to_owned(),
                })
                .collect();
            rpc.finish();
            drop(env);
            (events, messages)
        })
        .await
        .unwrap()
    };
    let requests: Vec<Vec<String>> = server
        .requests()
        .iter()
        .map(|r| user_texts(&r.body))
        .collect();
    json!({"events": events, "requests": requests, "messages": messages})
}

async fn compare(kind: &'static str, expected_requests: Value) {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let ours = session(Command::new(env!("CARGO_BIN_EXE_pi")), Some(host), kind).await;
    assert_eq!(ours["requests"], expected_requests, "{kind}: {ours:#}");
    let settled = ours["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| *e == "agent_settled")
        .count();
    assert_eq!(settled, 1, "{kind}: {ours:#}");
    if let Some(wrapper) = ts16() {
        let theirs = session(ts16_pi(&wrapper), None, kind).await;
        assert_eq!(ours, theirs, "{kind}: ours, then pi 1.6.0");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follow_up_from_agent_end_runs_before_idle() {
    compare(
        "follow-up",
        json!([["start"], ["start", "follow-up from agent_end"]]),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_triggering_custom_message_from_agent_end_runs_before_idle() {
    compare(
        "trigger",
        json!([["start"], ["start", "custom from agent_end"]]),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_custom_message_from_agent_end_starts_no_turn() {
    compare("record", json!([["start"]])).await;
}
