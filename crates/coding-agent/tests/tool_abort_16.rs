//! An abort during a batch of tool calls, as pi 1.6.0 records it: the running call ends as
//! its tool reports, and the calls that had not started get an "Operation aborted" result
//! instead of none, without running. The batch is sequential (an extension tool asks for
//! it); our `pi` and pi 1.6.0 (`PI_TS16`) run it over RPC against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{Item, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program};

/// `slow` says it is waiting (a partial result), then runs until the run is aborted; it
/// must not run alongside other calls.
const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";
export default function (pi) {
  pi.registerTool({
    name: "slow", label: "slow", description: "Waits until stopped.",
    parameters: Type.Object({}),
    executionMode: "sequential",
    async execute(_id, _params, signal, onUpdate) {
      onUpdate?.({ content: [{ type: "text", text: "waiting" }], details: {} });
      await new Promise((resolve) => {
        if (signal?.aborted) return resolve();
        signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      throw new Error("slow was stopped");
    },
  });
}
"#;

async fn aborted_batch(wrapper: &Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::new(vec![
        Item::tool_call("slow", json!({})),
        Item::tool_call("bash", json!({"command": "touch second.txt"})),
    ]));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("slow-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let mut command = program(wrapper);
    if let Some(host) = support::ext_host::host_dir() {
        command.env("PI_EXTENSION_HOST_DIR", host);
    }
    let work = env.work.clone();
    let file = tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &["-e", ext.to_str().unwrap()]);
        rpc.call("p", json!({"type": "prompt", "message": "Run both."}));
        // Its partial result shows it runs (a start event comes before preparing the call).
        rpc.until("slow running", |l| {
            l["type"] == "tool_execution_update" && l["toolName"] == "slow"
        });
        let aborted = rpc.call("a", json!({"type": "abort"}));
        assert_eq!(aborted["success"], true, "{aborted}");
        // pi answers an abort once the run settled, so `agent_settled` may be in already.
        if !rpc.seen.iter().any(|l| l["type"] == "agent_settled") {
            rpc.until("the run settled", |l| l["type"] == "agent_settled");
        }
        let state = rpc.call("s", json!({"type": "get_state"}));
        rpc.finish();
        std::path::PathBuf::from(state["data"]["sessionFile"].as_str().unwrap())
    });
    let results: Vec<Value> = read_jsonl(&file)
        .iter()
        .filter(|l| l["message"]["role"] == "toolResult")
        .map(|l| {
            let m = &l["message"];
            json!({"tool": m["toolName"], "isError": m["isError"],
                   "text": m["content"][0]["text"]})
        })
        .collect();
    json!({"results": results, "secondRan": work.join("second.txt").exists()})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_not_started_get_operation_aborted_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, aborted_batch(&wrapper).await));
    }
    assert_eq!(
        seen[0].1,
        json!({"results": [
            {"tool": "slow", "isError": true, "text": "slow was stopped"},
            {"tool": "bash", "isError": true, "text": "Operation aborted"},
        ], "secondRan": false})
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
}
