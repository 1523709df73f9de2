//! Dynamic model catalogs of extension providers, as in pi 1.6.0: `pi.registerProvider`
//! with `refreshModels(context)`. An extension run through ours and pi 1.6.0 (`PI_TS16`) on
//! one mock: startup runs only the offline pass (RPC answers while the network pass still
//! waits), the network pass gets the provider's key, persists its catalog through
//! `context.publish` into `models-store.json` and replaces the provider's models (with
//! `models.json` `modelOverrides` applied); `ctx.modelRegistry.refresh()` is a Promise of
//! `{aborted, errors}`; a later offline run (print mode, `PI_OFFLINE`) starts from the
//! stored catalog and prompts its model. Of two refreshes at once, the older cannot publish.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, user_texts};
use support::ts16::{ts16, ts16_pi, ts16_pi_catalogs};

/// Provider `dyn` (seed model `dyn-seed`) whose `refreshModels` logs its context; offline it
/// returns the stored models, online it waits for `$RELEASE` to exist, then persists and
/// returns `dyn-live`. `/refresh` awaits an offline `ctx.modelRegistry.refresh()`.
const EXTENSION: &str = r#"
import { appendFileSync, existsSync } from "node:fs";
const log = (e) => appendFileSync(process.env.HOOK_LOG, JSON.stringify(e) + "\n");
const model = (id) => ({ id, name: id, reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 });
export default function (pi) {
  pi.registerProvider("dyn", {
    baseUrl: process.env.MOCK_BASE, apiKey: "dyn-key", api: "openai-completions",
    models: [model("dyn-seed")],
    async refreshModels(context) {
      log({ phase: context.allowNetwork ? "network" : "offline", stored: context.stored?.models?.map((m) => m.id) ?? null,
        credential: context.credential?.type ?? null, key: context.credential?.key ?? null,
        signal: context.signal instanceof AbortSignal, force: context.force ?? null,
        baseUrl: context.baseUrl === process.env.MOCK_BASE });
      if (!context.allowNetwork) return context.stored ? context.stored.models : undefined;
      while (process.env.RELEASE && !existsSync(process.env.RELEASE)) await new Promise((r) => setTimeout(r, 20));
      const live = [model("dyn-live")];
      log({ published: await context.publish({ persist: { models: live, note: "from extension" } }) });
      return live;
    },
  });
  pi.registerCommand("refresh", { handler: async (_args, ctx) => {
    const pending = ctx.modelRegistry.refresh({ allowNetwork: false });
    const result = await pending;
    log({ promise: pending instanceof Promise, aborted: result.aborted, errors: [...result.errors.keys()] });
    ctx.ui.notify("refreshed", "info");
  } });
}
"#;

/// The `dyn` models of a `get_available_models` answer: id, name, window, output limit.
fn dyn_models(rpc: &mut Rpc, id: &str) -> Vec<Value> {
    let answer = rpc.call(id, json!({"type": "get_available_models"}));
    answer["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["provider"] == "dyn")
        .map(|m| json!([m["id"], m["name"], m["contextWindow"], m["maxTokens"]]))
        .collect()
}

/// The distinct lines an extension logged, sorted (pi 1.6.0 runs the offline pass once per
/// registration and refresh, so how often it ran differs).
fn logged(path: &Path) -> Vec<Value> {
    let mut lines: Vec<String> = std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines.dedup();
    lines
        .iter()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Runs the RPC session, then the offline print run, with one pi; what each showed.
async fn catalogs(online: Command, offline: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("live answer"));
    server.push(Script::text("stored answer"));
    let env = Env::new(&server, 128_000, json!({}));
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("models.json")).unwrap())
            .unwrap();
    models["providers"]["dyn"] = json!({"modelOverrides": {
        "dyn-live": {"name": "Live (override)", "contextWindow": 4242},
        "dyn-seed": {"maxTokens": 77}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let ext = env.dir.path().join("catalog.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let base = server.openai_base_url();
    let (rpc_log, print_log) = (
        env.dir.path().join("rpc.jsonl"),
        env.dir.path().join("print.jsonl"),
    );
    let release = env.dir.path().join("release");
    let host = support::ext_host::host_dir();
    let mut online = online;
    let mut offline = offline;
    for (program, log) in [(&mut online, &rpc_log), (&mut offline, &print_log)] {
        program.env("HOOK_LOG", log).env("MOCK_BASE", &base);
        if let Some(host) = &host {
            program.env("PI_EXTENSION_HOST_DIR", host);
        }
    }
    online.env("RELEASE", &release);
    let shown = tokio::task::spawn_blocking(move || {
        let ext = ext.to_str().unwrap();
        let mut rpc = Rpc::start_program(&env, online, &["-e", ext]);
        // Startup did not wait for the network pass: RPC answers, with the seed model.
        let state = rpc.call("s", json!({"type": "get_state"}));
        assert_eq!(state["success"], true, "{state}");
        let before = dyn_models(&mut rpc, "m1");
        std::fs::write(&release, "").unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        let mut after = dyn_models(&mut rpc, "m2");
        while !after.iter().any(|m| m[0] == "dyn-live") && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(25));
            after = dyn_models(&mut rpc, "m2");
        }
        rpc.send(json!({"id": "r", "type": "prompt", "message": "/refresh"}));
        rpc.until("the refresh", |l| l["message"] == "refreshed");
        let set = rpc.call(
            "set",
            json!({"type": "set_model", "provider": "dyn", "modelId": "dyn-live"}),
        );
        assert_eq!(set["success"], true, "{set}");
        rpc.call("p", json!({"type": "prompt", "message": "hello live"}));
        rpc.event("agent_end");
        rpc.finish();
        let store: Value = serde_json::from_str(
            &std::fs::read_to_string(env.agent.join("models-store.json")).unwrap(),
        )
        .unwrap();
        let printed = support::ts16::run(
            &env,
            offline,
            &["-e", ext, "--model", "dyn/dyn-live", "-p", "hello stored"],
        );
        json!({
            "before": before,
            "after": after,
            "rpc_log": logged(&rpc_log),
            "print_log": logged(&print_log),
            "store": store["dyn"],
            "printed": String::from_utf8_lossy(&printed.stdout).trim(),
            "print_status": printed.status.code(),
        })
    })
    .await
    .unwrap();
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| {
            json!({"model": r.body["model"], "texts": user_texts(&r.body),
                   "auth": r.headers.get("authorization")})
        })
        .collect();
    json!({"shown": shown, "requests": requests})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_refresh_models_publish_persist_and_start_offline_from_the_store() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let mut online = Command::new(env!("CARGO_BIN_EXE_pi"));
    online.env_remove("PI_OFFLINE");
    let mut offline = Command::new(env!("CARGO_BIN_EXE_pi"));
    offline.env("PI_OFFLINE", "1");
    let ours = catalogs(online, offline).await;
    let offline_entry = |stored: Value| {
        json!({"phase": "offline", "stored": stored, "credential": null, "key": null,
               "signal": true, "force": null, "baseUrl": true})
    };
    let model = json!({"id": "dyn-live", "name": "dyn-live", "reasoning": false, "input": ["text"],
        "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0},
        "contextWindow": 100000, "maxTokens": 1000});
    assert_eq!(
        ours,
        json!({
            "shown": {
                "before": [["dyn-seed", "dyn-seed", 100000, 77]],
                "after": [["dyn-live", "Live (override)", 4242, 1000]],
                "rpc_log": [
                    {"phase": "network", "stored": null, "credential": "api_key", "key": "dyn-key",
                     "signal": true, "force": null, "baseUrl": true},
                    offline_entry(json!(["dyn-live"])),
                    offline_entry(Value::Null),
                    {"promise": true, "aborted": false, "errors": []},
                    {"published": true},
                ],
                "print_log": [offline_entry(json!(["dyn-live"]))],
                "store": {"models": [model], "note": "from extension"},
                "printed": "stored answer",
                "print_status": 0,
            },
            "requests": [
                {"model": "dyn-live", "texts": ["hello live"], "auth": "Bearer dyn-key"},
                {"model": "dyn-live", "texts": ["hello stored"], "auth": "Bearer dyn-key"},
            ],
        }),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = catalogs(ts16_pi_catalogs(&wrapper), ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}

/// Provider `race`: while `/race` runs two offline refreshes at once, the first waits
/// until the second supersedes it and then tries to publish `stale`; the second publishes
/// `fresh`. Each logs what its publication answered. Then a refresh of `broken` alone fails.
const RACE: &str = r#"
import { appendFileSync } from "node:fs";
const log = (e) => appendFileSync(process.env.HOOK_LOG, JSON.stringify(e) + "\n");
const model = (id) => ({ id, name: id, reasoning: false, input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 });
let racing = false;
let failing = false;
let calls = 0;
export default function (pi) {
  pi.registerProvider("race", {
    baseUrl: "http://127.0.0.1:9/v1", apiKey: "race-key", api: "openai-completions",
    models: [model("race-seed")],
    async refreshModels(context) {
      if (!racing) return;
      if (++calls === 1) {
        await new Promise((resolve) => context.signal.aborted ? resolve()
          : context.signal.addEventListener("abort", resolve, { once: true }));
        await context.publish({ persist: { models: [model("stale")] } })
          .then((ok) => log({ stale: ok }), (err) => log({ stale: err.name }));
        return [model("stale")];
      }
      log({ fresh: await context.publish({ persist: { models: [model("fresh")] } }) });
      return [model("fresh")];
    },
  });
  pi.registerProvider("broken", {
    baseUrl: "http://127.0.0.1:9/v1", apiKey: "broken-key", api: "openai-completions",
    models: [model("broken-seed")],
    async refreshModels() {
      if (failing) throw "catalog server said 503";
    },
  });
  pi.registerCommand("race", { handler: async (_args, ctx) => {
    racing = true;
    const results = await Promise.all([ctx.modelRegistry.refresh({ allowNetwork: false }),
      ctx.modelRegistry.refresh({ allowNetwork: false })]);
    racing = false;
    log({ results: results.map((r) => ({ aborted: r.aborted, errors: [...r.errors.keys()] })) });
    failing = true;
    const failed = await ctx.modelRegistry.refresh({ allowNetwork: false, providers: ["broken"] });
    failing = false;
    log({ failed: [...failed.errors].map(([id, e]) => [id, e.message, e.cause ?? null]) });
    ctx.ui.notify("raced", "info");
  } });
}
"#;

/// Runs `/race` over RPC (offline); the log, the `race` models and the stored entry.
async fn race(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("race.ts");
    std::fs::write(&ext, RACE).unwrap();
    let log = env.dir.path().join("race.jsonl");
    program.env("HOOK_LOG", &log).env("PI_OFFLINE", "1");
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
        rpc.send(json!({"id": "r", "type": "prompt", "message": "/race"}));
        rpc.until("the race", |l| l["message"] == "raced");
        let answer = rpc.call("m", json!({"type": "get_available_models"}));
        rpc.finish();
        let models: Vec<Value> = answer["data"]["models"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["provider"] == "race")
            .map(|m| m["id"].clone())
            .collect();
        let store: Value = serde_json::from_str(
            &std::fs::read_to_string(env.agent.join("models-store.json")).unwrap(),
        )
        .unwrap();
        // The two refreshes log in either order.
        let mut lines: Vec<String> = std::fs::read_to_string(&log)
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        let lines: Vec<Value> = lines
            .iter()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        json!({"log": lines, "models": models, "stored": store["race"]["models"][0]["id"]})
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_superseded_extension_refresh_cannot_publish() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = race(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(
        ours,
        json!({
            "log": [
                {"failed": [["broken", "Model refresh failed for broken: catalog server said 503",
                    "catalog server said 503"]]},
                {"fresh": true},
                {"results": [{"aborted": false, "errors": []}, {"aborted": false, "errors": []}]},
                {"stale": "AbortError"},
            ],
            "models": ["fresh"],
            "stored": "fresh",
        }),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = race(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
