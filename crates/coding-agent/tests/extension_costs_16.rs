//! Request-wide input-token price tiers (pi 0.80.6) on the models an extension registers:
//! a tier in the extension's own model cost, and one that `models.json` `modelOverrides`
//! adds to another of its models (overrides apply to extension models, pi 0.80.4). The same
//! long prompts through ours and pi 1.6.0 (`PI_TS16`) on one mock are priced the same.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script, ScriptUsage};
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

/// Provider `tiered` with `t-1` (its cost has a tier above 200k input tokens) and `t-2`
/// (base prices only).
const EXTENSION: &str = r#"
const cost = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const model = (id, extra) => ({ id, name: id, reasoning: false, input: ["text"], contextWindow: 1000000,
  maxTokens: 1000, cost: { ...cost, ...extra } });
export default function (pi) {
  pi.registerProvider("tiered", {
    baseUrl: process.env.MOCK_BASE, apiKey: "tier-key", api: "openai-completions",
    models: [model("t-1", { tiers: [{ inputTokensAbove: 200000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 }] }),
      model("t-2", {})],
  });
}
"#;

/// A reply reporting `input` uncached and `cached` cached prompt tokens.
fn reply(input: u64, cached: u64) -> Script {
    let mut script = Script::text("Priced.");
    script.usage = Some(ScriptUsage {
        input,
        output: 20,
        cache_read: cached,
        ..ScriptUsage::default()
    });
    script
}

/// The cost of each assistant reply, prompting `t-1` then `t-2`, each above and below
/// the tier.
async fn priced(mut program: Command) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    server.push_all(vec![
        reply(150_000, 60_000),
        reply(150_000, 0),
        reply(150_000, 60_000),
        reply(150_000, 0),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let mut models: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("models.json")).unwrap())
            .unwrap();
    models["providers"]["tiered"] = json!({"modelOverrides": {"t-2": {"cost": {"tiers": [
        {"inputTokensAbove": 200000, "input": 9, "output": 30, "cacheRead": 0.9, "cacheWrite": 11}]}}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let ext = env.dir.path().join("tiered.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    program.env("MOCK_BASE", server.openai_base_url());
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    tokio::task::spawn_blocking(move || {
        let ext = ext.to_str().unwrap();
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext, "--no-session"]);
        let mut costs = Vec::new();
        for id in ["t-1", "t-2"] {
            let set = rpc.call(
                "m",
                json!({"type": "set_model", "provider": "tiered", "modelId": id}),
            );
            assert_eq!(set["success"], true, "{set}");
            for prompt in ["long", "short"] {
                rpc.call("p", json!({"type": "prompt", "message": prompt}));
                let lines = rpc.event("agent_end");
                let end = lines.last().unwrap();
                let reply = end["messages"].as_array().unwrap().last().unwrap().clone();
                costs.push(json!({"model": id, "prompt": prompt, "cost": reply["usage"]["cost"]}));
            }
        }
        rpc.finish();
        drop(env);
        costs
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_model_costs_and_overrides_take_input_token_tiers_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = priced(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    let per_million = |tokens: f64, price: f64| price / 1_000_000.0 * tokens;
    let inputs: Vec<Value> = ours.iter().map(|c| c["cost"]["input"].clone()).collect();
    // Above 200k (150k + 60k cached) the tier's input price, below it the base price.
    assert_eq!(
        inputs,
        vec![
            json!(per_million(150_000.0, 6.0)),
            json!(per_million(150_000.0, 3.0)),
            json!(per_million(150_000.0, 9.0)),
            json!(per_million(150_000.0, 3.0)),
        ],
        "{ours:#?}"
    );
    assert_eq!(
        ours[2]["cost"]["cacheRead"],
        json!(per_million(60_000.0, 0.9))
    );
    if let Some(wrapper) = ts16() {
        let theirs = priced(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
