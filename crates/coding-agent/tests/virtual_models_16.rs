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
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path, ts16, ts16_pi};

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
  pi.registerCommand("ask", { handler: async (_args, ctx) => {
    const reply = await ctx.modelRegistry.streamSimple(ctx.model,
      { messages: [{ role: "user", content: "asked directly", timestamp: 1 }] }, { reasoning: "high" }).result();
    ctx.ui.notify(`${reply.provider}/${reply.model}: ${reply.content.map((c) => c.text ?? "").join("")}`, "info");
  } });
  pi.registerCommand("models", { handler: async (_args, ctx) => {
    const found = ctx.modelRegistry.getAvailable().filter((m) => m.provider === "router");
    ctx.ui.notify(JSON.stringify(found.map((m) => [m.id, m.name, m.api, m.reasoning, m.contextWindow])), "info");
  } });
}
"#;

/// Writes the router extension `source` as `name` in the test's folder and points
/// `program` at it: the route log (`$ROUTE_LOG`) and the shared extension host. Gives the
/// extension's path and the log's.
fn with_router(
    env: &Env,
    program: &mut Command,
    name: &str,
    source: &str,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let ext = env.dir.path().join(name);
    std::fs::write(&ext, source).unwrap();
    let log = env.dir.path().join("routes.jsonl");
    program.env("ROUTE_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    (ext, log)
}

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
    let (ext, log) = with_router(&env, &mut program, "router.ts", EXTENSION);
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

/// The footer's last row after one answer, from its context window on, from `router/auto:high` (routed to
/// mock-thinker at medium).
fn footer_after_an_answer(name: &str, wrapper: &Option<std::path::PathBuf>, host: &str) -> String {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::text("Routed answer."));
    let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
    let ext = env.dir.path().join("router.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("routes.jsonl");
    let log = log.to_str().unwrap();
    let pi = program_path(wrapper);
    let vars = [
        ("PI_OFFLINE", "1"),
        ("ROUTE_LOG", log),
        ("PI_EXTENSION_HOST_DIR", host),
    ];
    let args = ["-e", ext.to_str().unwrap(), "--model", "router/auto:high"];
    let tmux = Tmux::start_program(&env, &pi, &vars, &args, 120, 30);
    tmux.wait(&format!("{name}: started"), WAIT, |s| {
        s.contains("auto • high")
    });
    tmux.type_text("hello");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait(&format!("{name}: routed footer"), WAIT, |s| {
        s.contains("Routed answer.") && s.contains("→")
    });
    // From the context window on: the token counts depend on each pi's own prompt.
    let footer = screen
        .lines()
        .rev()
        .find(|l| l.contains("→"))
        .and_then(|l| l.split_once('%'))
        .unwrap()
        .1
        .to_owned();
    drop(tmux);
    drop(env);
    footer
}

const WAIT: std::time::Duration = std::time::Duration::from_secs(20);

#[test]
fn the_footer_shows_the_routed_model_as_in_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let host = host.to_str().unwrap().to_owned();
    let footers: Vec<(&str, String)> = pis()
        .into_iter()
        .map(|(name, wrapper)| (name, footer_after_an_answer(name, &wrapper, &host)))
        .collect();
    assert!(
        footers[0]
            .1
            .ends_with("auto • high → mock-thinker • medium"),
        "{footers:?}"
    );
    for (name, footer) in &footers[1..] {
        assert_eq!(&footers[0].1, footer, "ours, then {name}");
    }
}

/// The model `pi -c` restores after a routed answer, with the router's extension loaded
/// and without it.
async fn resumed_selection(wrapper: Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Routed."));
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("router.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("routes.jsonl");
    let make = move || {
        let mut program = match &wrapper {
            Some(wrapper) => ts16_pi(wrapper),
            None => Command::new(env!("CARGO_BIN_EXE_pi")),
        };
        program.env("ROUTE_LOG", &log);
        if let Some(host) = support::ext_host::host_dir() {
            program.env("PI_EXTENSION_HOST_DIR", host);
        }
        program
    };
    tokio::task::spawn_blocking(move || {
        let ext = ext.to_str().unwrap();
        let mut rpc = Rpc::start_program(&env, make(), &["-e", ext, "--model", "router/auto:high"]);
        rpc.call("p", json!({"type": "prompt", "message": "route me"}));
        rpc.event("agent_end");
        rpc.finish();
        let mut shown = Vec::new();
        for args in [vec!["-c", "-e", ext], vec!["-c"]] {
            let mut rpc = Rpc::start_program(&env, make(), &args);
            let state = rpc.call("s", json!({"type": "get_state"}));
            rpc.finish();
            let model = &state["data"]["model"];
            shown.push(json!([
                model["provider"],
                model["id"],
                state["data"]["thinkingLevel"]
            ]));
        }
        drop(env);
        Value::Array(shown)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resumed_session_keeps_or_falls_back_from_its_virtual_model_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = resumed_selection(None).await;
    assert_eq!(
        ours,
        json!([["router", "auto", "high"], ["mock", "mock-thinker", "high"]]),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = resumed_selection(Some(wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}

/// A compaction summary and an extension's own model call, both made with the virtual
/// model: routed with reason `direct`.
async fn direct_requests(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("First."));
    server.push(Script::text("Second."));
    server.push(Script::text("The summary."));
    server.push(Script::text("Asked."));
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let (ext, log) = with_router(&env, &mut program, "router.ts", EXTENSION);
    let (compacted, asked, routes) = tokio::task::spawn_blocking(move || {
        let args = ["-e", ext.to_str().unwrap(), "--model", "router/auto:high"];
        let mut rpc = Rpc::start_program(&env, program, &args);
        for (id, text) in [("p1", "first"), ("p2", "second")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.event("agent_end");
        }
        let compacted = rpc.call("c", json!({"type": "compact"}));
        rpc.send(json!({"id": "a", "type": "prompt", "message": "/ask"}));
        let asked = rpc.until("the direct answer", |l| l["method"] == "notify");
        let asked = asked.last().unwrap()["message"].clone();
        rpc.finish();
        let routes: Vec<Value> = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .map(|r| json!([r["reason"], r["level"], r["state"]]))
            .collect();
        drop(env);
        (compacted["data"]["summary"].clone(), asked, routes)
    })
    .await
    .unwrap();
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| json!([r.body["model"], r.body["reasoning_effort"]]))
        .collect();
    json!({"compacted": compacted, "asked": asked, "routes": routes, "requests": requests})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn direct_requests_are_routed_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = direct_requests(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    let reasons: Vec<&str> = ours["routes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["user", "user", "direct", "direct"], "{ours:#}");
    if let Some(wrapper) = ts16() {
        let theirs = direct_requests(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}

/// `router/small`: the first two user turns go to mock-model, later ones to mock-small, whose
/// window the conversation has outgrown by then; compaction summaries to mock-model.
const SMALL_ROUTER: &str = r#"
export default function (pi) {
  pi.registerVirtualModel({
    provider: "router", id: "small", name: "Small",
    route(request, ctx) {
      const turns = request.messages.filter((m) => m.role === "user").length;
      const id = request.reason === "direct" || turns < 3 ? "mock-model" : "mock-small";
      return { model: ctx.modelRegistry.find("mock", id), thinkingLevel: "off" };
    },
  });
}
"#;

/// A conversation past the routed model's window: compacted before the request is sent.
async fn compacted_for_the_routed_model(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Noted."));
    server.push(Script::text("Second."));
    server.push(Script::text("The summary."));
    server.push(Script::text("Small answer."));
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"reserveTokens": 500, "keepRecentTokens": 50}}),
    );
    let models = json!({"providers": {"mock": {"baseUrl": server.openai_base_url(),
        "api": "openai-completions", "apiKey": "mock-key", "models": [
            {"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384},
            {"id": "mock-small", "name": "Mock Small", "contextWindow": 3000, "maxTokens": 400}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let (ext, _) = with_router(&env, &mut program, "small.ts", SMALL_ROUTER);
    let (events, entries) = tokio::task::spawn_blocking(move || {
        let args = ["-e", ext.to_str().unwrap(), "--model", "router/small"];
        let mut rpc = Rpc::start_program(&env, program, &args);
        let long = format!(
            "Remember this: {}",
            "lorem ipsum dolor sit amet ".repeat(800)
        );
        rpc.call("p0", json!({"type": "prompt", "message": "first"}));
        rpc.event("agent_end");
        rpc.call("p1", json!({"type": "prompt", "message": long}));
        rpc.event("agent_end");
        rpc.call("p2", json!({"type": "prompt", "message": "and now?"}));
        let seen = rpc.event("agent_end");
        rpc.finish();
        let events: Vec<Value> = seen
            .iter()
            .filter(|l| {
                l["type"]
                    .as_str()
                    .is_some_and(|t| t.starts_with("compaction"))
            })
            .map(|l| json!([l["type"], l["reason"]]))
            .collect();
        let file = env.session_files().pop().expect("a session file");
        let entries: Vec<Value> = read_jsonl(&file)
            .iter()
            .filter(|e| e["type"] == "compaction" || e["message"]["role"] == "assistant")
            .map(|e| json!([e["type"], e["message"]["model"], e["summary"]]))
            .collect();
        drop(env);
        (events, entries)
    })
    .await
    .unwrap();
    // Each request's model, and for the last (after the compaction) how many messages it
    // carried and whether the summary leads them.
    let bodies: Vec<Value> = server.requests().iter().map(|r| r.body.clone()).collect();
    let requests: Vec<Value> = bodies.iter().map(|b| json!(b["model"])).collect();
    let last = bodies.last().map(|b| {
        let texts = support::rpc::user_texts(b);
        json!([
            texts.len(),
            texts.first().is_some_and(|t| t.contains("The summary."))
        ])
    });
    json!({"events": events, "entries": entries, "requests": requests, "last": last})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_the_routed_model_s_window_is_compacted_first_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = compacted_for_the_routed_model(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(
        ours["requests"],
        json!(["mock-model", "mock-model", "mock-model", "mock-small"]),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = compacted_for_the_routed_model(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
