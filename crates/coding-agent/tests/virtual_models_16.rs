//! Virtual models (`pi.registerVirtualModel`) as pi 1.6.0 runs them, over RPC through ours
//! and pi 1.6.0 (`PI_TS16`) on one mock: the router sees each request's reason, previous
//! and failed responses and its state; the selection is recorded as `model_change` and
//! `thinking_level_change`, each assistant message names the physical model, and new
//! router state becomes `pi.virtual-model-state` entries.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, read_jsonl};
use support::ts16::{ts16, ts16_pi};

/// `router/auto`: `high` goes to mock-thinker, anything else to mock-model; a user turn
/// counts up the state. Every request is logged to `$ROUTE_LOG`.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router", id: "auto", name: "Auto", thinkingLevels: ["low", "high"],
    contextWindow: 50000, maxTokens: 4000,
    route(request, ctx) {
      appendFileSync(process.env.ROUTE_LOG, JSON.stringify({
        reason: request.reason, level: request.thinkingLevel, model: request.model.id,
        previous: request.previous ? [request.previous.model.id, request.previous.thinkingLevel] : null,
        failed: request.failed ? [request.failed.model.id, request.failed.message.stopReason] : null,
        state: request.state ?? null, roles: request.messages.map((m) => m.role),
        ctxModel: ctx.model?.id, signal: request.signal instanceof AbortSignal,
      }) + "\n");
      const state = request.state ?? { turns: 0 };
      const next = request.reason === "user" ? { turns: state.turns + 1 } : request.state;
      const id = request.thinkingLevel === "high" ? "mock-thinker" : "mock-model";
      return { model: ctx.modelRegistry.find("mock", id), thinkingLevel: "medium", state: next };
    },
  });
  pi.registerCommand("models", { handler: async (_args, ctx) => {
    const found = ctx.modelRegistry.getAvailable().filter((m) => m.provider === "router");
    ctx.ui.notify(JSON.stringify(found.map((m) => [m.id, m.name, m.api, m.reasoning, m.contextWindow])), "info");
  } });
}
"#;

/// What a session entry shows of the selection and dispatch.
fn entry_digest(entry: &Value) -> Option<Value> {
    match entry["type"].as_str()? {
        "model_change" => Some(json!(["model_change", entry["provider"], entry["modelId"]])),
        "thinking_level_change" => Some(json!(["thinking_level_change", entry["thinkingLevel"]])),
        "custom" => Some(json!(["custom", entry["customType"], entry["data"]])),
        "message" if entry["message"]["role"] == "assistant" => {
            let m = &entry["message"];
            Some(json!([
                "assistant",
                m["provider"],
                m["model"],
                m["api"],
                m["thinkingLevel"],
                m["stopReason"]
            ]))
        }
        _ => None,
    }
}

async fn routed_session(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("bash", json!({"command": "echo hi"})));
    server.push(Script::text("First done."));
    server.push(Script::http_error(503));
    server.push(Script::text("Second done."));
    let env = Env::new(
        &server,
        128_000,
        json!({"retry": {"enabled": true, "maxRetries": 2, "baseDelayMs": 1}}),
    );
    let ext = env.dir.path().join("router.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("routes.jsonl");
    program.env("ROUTE_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let (shown, entries, routes) = tokio::task::spawn_blocking(move || {
        let args = ["-e", ext.to_str().unwrap(), "--model", "router/auto:low"];
        let mut rpc = Rpc::start_program(&env, program, &args);
        let state = rpc.call("s", json!({"type": "get_state"}));
        rpc.send(json!({"id": "m", "type": "prompt", "message": "/models"}));
        let listed = rpc.until("the model list", |l| l["method"] == "notify");
        let listed = listed.last().unwrap()["message"].clone();
        rpc.call("p1", json!({"type": "prompt", "message": "first"}));
        rpc.event("agent_end");
        rpc.call("t", json!({"type": "set_thinking_level", "level": "high"}));
        rpc.call("p2", json!({"type": "prompt", "message": "second"}));
        rpc.until("the retried answer", |l| {
            l["type"] == "agent_end" && l.to_string().contains("Second done.")
        });
        rpc.finish();
        let file = env.session_files().pop().expect("a session file");
        let entries: Vec<Value> = read_jsonl(&file).iter().filter_map(entry_digest).collect();
        let shown = json!({
            "model": [state["data"]["model"]["provider"], state["data"]["model"]["id"]],
            "level": state["data"]["thinkingLevel"],
            "listed": listed,
        });
        let routes: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        drop(env);
        (shown, entries, routes)
    })
    .await
    .unwrap();
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| json!([r.body["model"], r.body["reasoning_effort"]]))
        .collect();
    json!({"shown": shown, "routes": routes, "entries": entries, "requests": requests})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_virtual_model_routes_each_request_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = routed_session(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    let routes = ours["routes"].as_array().unwrap();
    let reasons: Vec<&str> = routes
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(
        reasons,
        ["user", "continuation", "user", "retry"],
        "{ours:#}"
    );
    assert_eq!(
        ours["shown"]["model"],
        json!(["router", "auto"]),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = routed_session(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
