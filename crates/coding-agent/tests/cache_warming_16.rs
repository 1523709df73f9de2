//! Prompt cache warming as pi 1.6.0 does it over RPC: with a model that declares an 11 s
//! cache lifetime (`promptCache.short`), the settled session re-sends its last request with
//! a one-token output cap about a second later, records a `usage` entry of kind
//! `cache_warm` and announces it (`entry_appended`); `"cacheWarming": "off"` and
//! `"streaming"` (between runs) send nothing; an extension's `cache_warming_decision`
//! handler sees pi's decision and may overrule it both ways. Our `pi` and pi 1.6.0
//! (`PI_TS16`) run the same steps against the mock model.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;
use std::time::{Duration, Instant};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program};

/// Answers `cache_warming_decision` with `$WARM_ACTION` (when set) and logs each event.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("cache_warming_decision", (event) => {
    appendFileSync(process.env.WARM_LOG, JSON.stringify(event) + "\n");
    if (process.env.WARM_ACTION) return { action: process.env.WARM_ACTION };
  });
}
"#;

/// A mock model with prices and an 11-second cache lifetime (a refresh 1 s after each
/// request).
fn models(server: &MockServer) -> Value {
    json!({"providers": {"mock": {
        "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 200000,
                    "maxTokens": 16384,
                    "cost": {"input": 15, "output": 75, "cacheRead": 1.5, "cacheWrite": 18.75},
                    "promptCache": {"short": 11}}]}}})
}

/// The output cap of a Chat Completions body.
fn cap(body: &Value) -> Option<u64> {
    body.get("max_completion_tokens")
        .or_else(|| body.get("max_tokens"))
        .and_then(Value::as_u64)
}

/// A body without its output cap.
fn uncapped(body: &Value) -> Value {
    let mut body = body.clone();
    if let Some(map) = body.as_object_mut() {
        map.remove("max_completion_tokens");
        map.remove("max_tokens");
    }
    body
}

struct Case {
    /// `cacheWarming`, when set.
    mode: Option<&'static str>,
    /// The prompt's reported input tokens (what a lost cache entry would cost).
    prompt_tokens: u64,
    /// The extension's answer, when it is loaded.
    extension_action: Option<Option<&'static str>>,
}

/// Prompts once, waits for the run to settle, then up to 4 s for a refresh; returns what
/// was warmed (the first refresh request against the prompt's, its recorded entry) and the
/// first decision the extension saw.
async fn warm(wrapper: &Option<std::path::PathBuf>, case: Case) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Answer.").with_usage(case.prompt_tokens, 5));
    server.push(Script::text("W").with_usage(0, 1));
    let mut settings = json!({"retry": {"enabled": false}});
    if let Some(mode) = case.mode {
        settings["cacheWarming"] = json!(mode);
    }
    let env = Env::new(&server, 200_000, settings);
    std::fs::write(env.agent.join("models.json"), models(&server).to_string()).unwrap();
    let log = env.dir.path().join("warm.jsonl");
    let ext = env.dir.path().join("warm-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let mut command: Command = program(wrapper);
    command.env("WARM_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        command.env("PI_EXTENSION_HOST_DIR", host);
    }
    let mut args: Vec<String> = Vec::new();
    if let Some(action) = case.extension_action {
        args.extend(["-e".into(), ext.to_string_lossy().into_owned()]);
        if let Some(action) = action {
            command.env("WARM_ACTION", action);
        }
    }
    let server_ref = &server;
    let env_ref = &env;
    let (entries, requests) = tokio::task::block_in_place(|| {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut rpc = Rpc::start_program(env_ref, command, &args);
        rpc.call("p", json!({"type": "prompt", "message": "Hello."}));
        rpc.event("agent_settled");
        // The refresh is due a second after the request; four give it ample room.
        let until = Instant::now() + Duration::from_secs(4);
        while Instant::now() < until && server_ref.requests().len() < 2 {
            std::thread::sleep(Duration::from_millis(50));
        }
        if server_ref.requests().len() >= 2 {
            rpc.until("the refresh's usage entry", |l| {
                l["type"] == "entry_appended" && l["entry"]["type"] == "usage"
            });
        }
        let entries: Vec<Value> = rpc
            .seen
            .iter()
            .filter(|l| l["type"] == "entry_appended" && l["entry"]["type"] == "usage")
            // The first refresh only: another may follow before pi stops.
            .take(1)
            .map(|l| {
                let e = &l["entry"];
                json!({"kind": e["kind"], "provider": e["provider"], "model": e["model"],
                       "note": e["note"], "output": e["usage"]["output"]})
            })
            .collect();
        rpc.finish();
        (entries, server_ref.requests())
    });
    let refresh = requests.get(1).map(|r| {
        json!({
            "cap": cap(&r.body),
            "sameRequestOtherwise": uncapped(&r.body) == uncapped(&requests[0].body),
        })
    });
    let decisions: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .take(1)
        .map(|l| {
            let event: Value = serde_json::from_str(l).unwrap();
            json!({"type": event["type"], "action": event["action"],
                   "continuationProbability": event["continuationProbability"],
                   "hasCosts": event["warmCost"].is_number() && event["missCost"].is_number()})
        })
        .collect();
    json!({"refresh": refresh, "entries": entries, "decisions": decisions})
}

/// Runs `case` through every pi and checks they agree; returns ours.
async fn agree(make: impl Fn() -> Case) -> Value {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, warm(&wrapper, make()).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
    seen.remove(0).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_session_refreshes_its_prompt_cache_as_pi_16() {
    let ours = agree(|| Case {
        mode: None,
        prompt_tokens: 100_000,
        extension_action: None,
    })
    .await;
    assert_eq!(
        ours,
        json!({
            "refresh": {"cap": 1, "sameRequestOtherwise": true},
            "entries": [{"kind": "cache_warm", "provider": "mock", "model": "mock-model",
                         "note": null, "output": 1}],
            "decisions": [],
        })
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn off_and_streaming_modes_send_nothing_between_runs_as_pi_16() {
    for mode in ["off", "streaming"] {
        let ours = agree(|| Case {
            mode: Some(mode),
            prompt_tokens: 100_000,
            extension_action: None,
        })
        .await;
        assert_eq!(
            ours,
            json!({"refresh": null, "entries": [], "decisions": []}),
            "{mode}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_see_and_overrule_the_decision_as_pi_16() {
    // pi would warm the large prompt; the extension says stop.
    let stopped = agree(|| Case {
        mode: None,
        prompt_tokens: 100_000,
        extension_action: Some(Some("stop")),
    })
    .await;
    assert_eq!(
        stopped,
        json!({"refresh": null, "entries": [], "decisions": [
            {"type": "cache_warming_decision", "action": "warm",
             "continuationProbability": 0.15, "hasCosts": true}]})
    );
    // pi would stop for the small prompt; the extension says warm.
    let warmed = agree(|| Case {
        mode: None,
        prompt_tokens: 1_000,
        extension_action: Some(Some("warm")),
    })
    .await;
    assert_eq!(warmed["refresh"]["cap"], 1, "{warmed}");
    assert_eq!(
        warmed["entries"][0]["note"], "extension override",
        "{warmed}"
    );
    assert_eq!(warmed["decisions"][0]["action"], "stop", "{warmed}");
}
