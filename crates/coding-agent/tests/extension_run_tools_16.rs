//! Extension hooks that change a run's tools while it runs, as pi 1.6.0 does: a tool that
//! calls `pi.setActiveTools()` changes the next request of the same run, which still carries
//! the system prompt `before_agent_start` set (pi 0.80.3); and `ctx.abort()` from a
//! `tool_call` handler stops the run before the later tool calls of that reply ask their own
//! handlers (pi 0.75.4); and progress a tool reports after it returned is dropped, not sent
//! as a stale `tool_execution_update` (pi 0.79.2). Ours and pi 1.6.0 (`PI_TS16`) run each
//! case over RPC on the mock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use mock_llm::{Item, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program_with_host};

/// Adds a `<marker>` section in `before_agent_start`; `ls` starts inactive and the tool
/// `enable_ls` turns it on.
const TOOL_CHANGE: &str = r#"
export default function (pi) {
  pi.on("session_start", () => {
    pi.setActiveTools(pi.getActiveTools().filter((name) => name !== "ls"));
  });
  pi.on("before_agent_start", (event) => ({
    systemPrompt: event.systemPrompt + "\n\n<marker>\nKeep me.\n</marker>",
  }));
  pi.registerTool({
    name: "enable_ls", label: "Enable ls", description: "Turns the ls tool on",
    parameters: { type: "object", properties: {} },
    async execute() {
      pi.setActiveTools([...pi.getActiveTools(), "ls"]);
      return { content: [{ type: "text", text: "ls is on" }], details: {} };
    },
  });
}
"#;

/// Logs each `tool_call` it is asked about and aborts the run at the first.
const ABORT_AT_FIRST: &str = r#"
import { appendFileSync } from "node:fs";
let asked = 0;
export default function (pi) {
  pi.on("tool_call", (event, ctx) => {
    asked += 1;
    appendFileSync(process.env.HOOK_LOG, JSON.stringify({ tool: event.toolName, asked }) + "\n");
    if (asked === 1) ctx.abort();
  });
}
"#;

/// The tool `late` reports progress before it returns, and twice after: while the run goes
/// on and once it has settled.
const LATE_PROGRESS: &str = r#"
const update = (onUpdate, text) => {
  try { onUpdate({ content: [{ type: "text", text }], details: {} }); } catch {}
};
export default function (pi) {
  pi.registerTool({
    name: "late", label: "Late", description: "Reports progress late",
    parameters: { type: "object", properties: {} },
    async execute(_id, _params, _signal, onUpdate) {
      update(onUpdate, "early");
      setTimeout(() => update(onUpdate, "late in the run"), 5);
      setTimeout(() => update(onUpdate, "late after the run"), 150);
      return { content: [{ type: "text", text: "done" }], details: {} };
    },
  });
}
"#;

/// Runs one prompt with `extension` loaded (`--tools` given) against `scripts`; returns the
/// recorded requests' tool names and whether their system prompt has the marker, the hook
/// log, and each session message as `role` (tool results with their text).
async fn run_case(
    wrapper: &Option<PathBuf>,
    extension: &str,
    tools: &str,
    scripts: Vec<Script>,
) -> Value {
    let server = MockServer::start().await.unwrap();
    for script in scripts {
        server.push(script);
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    std::fs::write(env.work.join("a.txt"), "alpha\n").unwrap();
    let ext = env.dir.path().join("run-tools.ts");
    std::fs::write(&ext, extension).unwrap();
    let log = env.dir.path().join("hooks.jsonl");
    let mut command = program_with_host(wrapper);
    command.env("HOOK_LOG", &log);
    let (file, updates) = tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(
            &env,
            command,
            &["-e", ext.to_str().unwrap(), "--tools", tools],
        );
        rpc.call("p", json!({"type": "prompt", "message": "Go."}));
        rpc.until("the run settled", |l| l["type"] == "agent_settled");
        // Time for progress reported after the run (the `late` tool's last update).
        std::thread::sleep(std::time::Duration::from_millis(400));
        let state = rpc.call("s", json!({"type": "get_state"}));
        let mut ended = false;
        let updates: Vec<Value> = rpc
            .seen
            .iter()
            .filter_map(|l| match l["type"].as_str() {
                Some("tool_execution_end") => {
                    ended = true;
                    None
                }
                Some("tool_execution_update") => Some(json!({
                    "text": l["partialResult"]["content"][0]["text"], "afterEnd": ended})),
                _ => None,
            })
            .collect();
        rpc.finish();
        (
            PathBuf::from(state["data"]["sessionFile"].as_str().unwrap()),
            updates,
        )
    });
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| {
            let names: Vec<Value> = r.body["tools"]
                .as_array()
                .map(|t| t.iter().map(|t| t["function"]["name"].clone()).collect())
                .unwrap_or_default();
            let system = r.body["messages"][0]["content"].to_string();
            json!({"tools": names, "marker": system.contains("<marker>")})
        })
        .collect();
    let hooks: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let messages: Vec<Value> = read_jsonl(&file)
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] != "system")
        .map(|e| {
            let m = &e["message"];
            match m["role"].as_str() {
                Some("toolResult") => json!({"toolResult": m["toolName"],
                    "isError": m["isError"], "text": m["content"][0]["text"]}),
                Some("assistant") => json!({"assistant": m["stopReason"]}),
                other => json!(other),
            }
        })
        .collect();
    json!({"requests": requests, "hooks": hooks, "messages": messages, "updates": updates})
}

/// Runs a case through ours and pi 1.6.0, asserts they agree and returns ours.
async fn ours_and_16(extension: &str, tools: &str, scripts: fn() -> Vec<Script>) -> Value {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, run_case(&wrapper, extension, tools, scripts()).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(
            &seen[0].1, theirs,
            "ours (left) and {who} (right) differ:\nours {:#}\n{who} {theirs:#}",
            seen[0].1
        );
    }
    seen.swap_remove(0).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_change_reaches_the_next_request_and_keeps_the_run_prompt_as_16() {
    let seen = ours_and_16(TOOL_CHANGE, "read,ls,enable_ls", || {
        vec![
            Script::tool_call("enable_ls", json!({})),
            Script::tool_call("ls", json!({})),
            Script::text("Listed."),
        ]
    })
    .await;
    let requests = seen["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 3, "{seen:#}");
    assert_eq!(
        requests[0],
        json!({"tools": ["read", "enable_ls"], "marker": true}),
        "{seen:#}"
    );
    for later in &requests[1..] {
        assert_eq!(
            *later,
            json!({"tools": ["read", "enable_ls", "ls"], "marker": true}),
            "{seen:#}"
        );
    }
    // The model's `ls` call ran: the tool was there for it.
    let ls = seen["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["toolResult"] == "ls")
        .cloned()
        .unwrap();
    assert_eq!(ls["isError"], false, "{seen:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn aborting_in_a_tool_call_hook_stops_the_later_calls_as_16() {
    let seen = ours_and_16(ABORT_AT_FIRST, "read,ls", || {
        vec![
            Script::new(vec![
                Item::tool_call("read", json!({"path": "a.txt"})),
                Item::tool_call("ls", json!({})),
            ]),
            Script::text("Not asked for."),
        ]
    })
    .await;
    // Only the first call's hook ran, and no request followed the aborted reply's tools.
    assert_eq!(
        seen["hooks"],
        json!([{"tool": "read", "asked": 1}]),
        "{seen:#}"
    );
    assert_eq!(seen["requests"].as_array().unwrap().len(), 1, "{seen:#}");
    let results: Vec<&Value> = seen["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["toolResult"].is_string())
        .collect();
    assert!(
        results.iter().all(|r| r["isError"] == true),
        "no tool ran: {seen:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_after_a_tool_returned_is_dropped_as_16() {
    let seen = ours_and_16(LATE_PROGRESS, "late", || {
        vec![Script::tool_call("late", json!({})), Script::text("Done.")]
    })
    .await;
    assert_eq!(
        seen["updates"],
        json!([{"text": "early", "afterEnd": false}]),
        "{seen:#}"
    );
    let result = seen["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["toolResult"] == "late")
        .cloned()
        .unwrap();
    assert_eq!(result["text"], "done", "{seen:#}");
}
