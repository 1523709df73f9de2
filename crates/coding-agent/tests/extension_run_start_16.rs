//! A run while it starts, as pi 1.6.0 treats it (pi 1.2.0): during `before_agent_start`
//! the session is busy (`ctx.isIdle()` is false) and a `pi.sendMessage()` made there joins
//! the starting run instead of starting another; and a run that `pi.sendMessage(…,
//! {triggerTurn: true})` started keeps the prompt section its `before_agent_start` added
//! on every request, also after a tool call. Our `pi` and pi 1.6.0 (`PI_TS16`) run the same
//! extension over RPC against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{pis, program};

/// Logs `isIdle()` in `before_agent_start`, sends a note from there on the first run, and
/// adds a `<marker>` section; `/kick` starts a run with `sendMessage(…, {triggerTurn})`.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.START_LOG, JSON.stringify(entry) + "\n");
let runs = 0;
export default function (pi) {
  pi.on("before_agent_start", (event, ctx) => {
    runs += 1;
    log({ run: runs, idle: ctx.isIdle(), type: event.messageType ?? null });
    if (runs === 1) {
      pi.sendMessage({ customType: "note", content: "noted while starting", display: true });
    }
    return { systemPrompt: event.systemPrompt + "\n\n<marker>\nKeep me.\n</marker>" };
  });
  pi.registerCommand("kick", {
    description: "Start a run from a custom message",
    handler: async () => {
      pi.sendMessage({ customType: "kick", content: "Please list the files.", display: true },
        { triggerTurn: true });
    },
  });
}
"#;

async fn run_starts(wrapper: &Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First."));
    server.push(Script::tool_call("ls", json!({})));
    server.push(Script::text("Listed."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("start-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("start.jsonl");
    let mut command = program(wrapper);
    command.env("START_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        command.env("PI_EXTENSION_HOST_DIR", host);
    }
    let file = tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(
            &env,
            command,
            &["-e", ext.to_str().unwrap(), "--tools", "read,ls"],
        );
        rpc.call("p", json!({"type": "prompt", "message": "Hello."}));
        rpc.until("the first run settled", |l| l["type"] == "agent_settled");
        rpc.call("k", json!({"type": "prompt", "message": "/kick"}));
        rpc.until("the kicked run settled", |l| l["type"] == "agent_settled");
        let state = rpc.call("s", json!({"type": "get_state"}));
        rpc.finish();
        std::path::PathBuf::from(state["data"]["sessionFile"].as_str().unwrap())
    });
    let starts: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let requests = server.requests();
    let marked: Vec<bool> = requests
        .iter()
        .map(|r| {
            r.body["messages"][0]["content"]
                .to_string()
                .contains("<marker>")
        })
        .collect();
    // The note joined the first run: its request carries it.
    let first_has_note = requests[0].body["messages"]
        .to_string()
        .contains("noted while starting");
    let kinds: Vec<Value> = read_jsonl(&file)
        .iter()
        .filter(|l| l["type"] == "message" || l["type"] == "custom_message")
        .map(|l| {
            if l["type"] == "custom_message" {
                l["customType"].clone()
            } else {
                l["message"]["role"].clone()
            }
        })
        .collect();
    json!({"starts": starts, "requests": requests.len(), "marked": marked,
           "firstHasNote": first_has_note, "entries": kinds})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_starting_run_is_busy_and_keeps_its_sections_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, run_starts(&wrapper).await));
    }
    let ours = &seen[0].1;
    assert_eq!(
        ours["starts"],
        json!([{"run": 1, "idle": false, "type": "user"},
               {"run": 2, "idle": false, "type": "custom"}]),
        "{ours}"
    );
    assert_eq!(ours["requests"], 3, "{ours}");
    assert_eq!(ours["marked"], json!([true, true, true]), "{ours}");
    assert_eq!(ours["firstHasNote"], true, "{ours}");
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
}

/// In `before_agent_start`: `/abort` prompts call `ctx.abort()`, `Plain.` sends a user
/// message without `deliverAs`, `Follow.` one as a follow-up.
const WHILE_STARTING: &str = r#"
export default function (pi) {
  pi.on("before_agent_start", (event, ctx) => {
    if (event.prompt === "Abort me.") ctx.abort();
    if (event.prompt === "Plain.") pi.sendUserMessage("Plain extra.");
    if (event.prompt === "Follow.") pi.sendUserMessage("Follow extra.", { deliverAs: "followUp" });
  });
}
"#;

/// Three prompts whose `before_agent_start` aborts, sends a user message without and with
/// `deliverAs`; returns the requests' last user texts, the extension errors reported and
/// each session message (assistants by stop reason).
async fn acts_while_starting(wrapper: &Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    for text in ["Plain answer.", "Follow answer.", "Extra answer."] {
        server.push(Script::text(text));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("while-starting.ts");
    std::fs::write(&ext, WHILE_STARTING).unwrap();
    let (file, errors) = tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(
            &env,
            support::ts16::program_with_host(wrapper),
            &["-e", ext.to_str().unwrap()],
        );
        for (id, text) in [("a", "Abort me."), ("p", "Plain."), ("f", "Follow.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.until("the run settled", |l| l["type"] == "agent_settled");
        }
        let state = rpc.call("s", json!({"type": "get_state"}));
        let errors: Vec<Value> = rpc
            .seen
            .iter()
            .filter(|l| l["type"] == "extension_error")
            .map(|l| json!({"event": l["event"], "error": l["error"]}))
            .collect();
        rpc.finish();
        let file = std::path::PathBuf::from(state["data"]["sessionFile"].as_str().unwrap());
        (file, errors)
    });
    let requests: Vec<String> = server
        .requests()
        .iter()
        .map(|r| support::rpc::last_user_text(&r.body))
        .collect();
    let messages: Vec<Value> = read_jsonl(&file)
        .iter()
        .filter(|e| e["type"] == "message" && e["message"]["role"] != "system")
        .map(|e| match e["message"]["role"].as_str() {
            Some("assistant") => json!({"assistant": e["message"]["stopReason"]}),
            _ => e["message"]["content"][0]["text"].clone(),
        })
        .collect();
    json!({"requests": requests, "errors": errors, "messages": messages})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_starting_run_takes_aborts_and_needs_deliver_as_as_pi_16() {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, acts_while_starting(&wrapper).await));
    }
    let ours = &seen[0].1;
    // The aborted run made no request; the plain message was refused (the run was busy);
    // the follow-up ran after its run.
    assert_eq!(
        ours["requests"],
        json!(["Plain.", "Follow.", "Follow extra."]),
        "{ours:#}"
    );
    assert_eq!(ours["errors"].as_array().unwrap().len(), 1, "{ours:#}");
    assert_eq!(
        ours["messages"][1],
        json!({"assistant": "aborted"}),
        "{ours:#}"
    );
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours (left) and {who} (right)");
    }
}
