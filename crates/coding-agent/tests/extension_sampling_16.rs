//! Sampling parameters on the models an extension registers (pi 1.6's `samplingParams` and
//! `samplingParamsByThinkingLevel`, A-1730b5b5): the same prompts through ours and pi 1.6.0
//! (`PI_TS16`) on one mock send the same sampling fields, on Chat Completions and on the
//! Responses API, at thinking levels with and without their own override.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Map, Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

/// Provider `sampled` with one model per API, each with sampling fields and a `high` override.
const EXTENSION: &str = r#"
const model = (id, api) => ({ id, name: id, api, reasoning: true, input: ["text"],
  contextWindow: 128000, maxTokens: 4000, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  samplingParams: { temperature: 0.4, top_p: 0.9, top_k: 30 },
  samplingParamsByThinkingLevel: { high: { top_p: 0.97, min_p: 0.02 } } });
export default function (pi) {
  pi.registerProvider("sampled", {
    baseUrl: process.env.MOCK_BASE, apiKey: "sample-key", api: "openai-completions",
    models: [model("s-chat", "openai-completions"), model("s-resp", "openai-responses")],
  });
}
"#;

/// The sampling fields of a request body.
fn sampling_fields(body: &Value) -> Value {
    let keys = ["temperature", "top_p", "top_k", "min_p"];
    let picked: Map<String, Value> = keys
        .iter()
        .filter_map(|k| body.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    Value::Object(picked)
}

/// Each request's path and sampling fields, prompting each model at `low` then `high`.
async fn sampled(mut program: Command) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    server.push_all((0..4).map(|_| Script::text("Sampled.")).collect::<Vec<_>>());
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("sampled.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    program.env("MOCK_BASE", server.openai_base_url());
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let server_requests = tokio::task::spawn_blocking(move || {
        let ext = ext.to_str().unwrap();
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext, "--no-session"]);
        for id in ["s-chat", "s-resp"] {
            let set = rpc.call(
                "m",
                json!({"type": "set_model", "provider": "sampled", "modelId": id}),
            );
            assert_eq!(set["success"], true, "{set}");
            for level in ["low", "high"] {
                let set = rpc.call("t", json!({"type": "set_thinking_level", "level": level}));
                assert_eq!(set["success"], true, "{set}");
                rpc.call(
                    "p",
                    json!({"type": "prompt", "message": format!("At {level}.")}),
                );
                rpc.event("agent_end");
            }
        }
        rpc.finish();
        drop(env);
    });
    server_requests.await.unwrap();
    server
        .requests()
        .iter()
        .map(|r| json!({"path": r.path, "sampling": sampling_fields(&r.body)}))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_models_send_their_sampling_params_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = sampled(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    let low = json!({"temperature": 0.4, "top_p": 0.9, "top_k": 30});
    let high = json!({"temperature": 0.4, "top_p": 0.97, "top_k": 30, "min_p": 0.02});
    let sampling: Vec<&Value> = ours.iter().map(|r| &r["sampling"]).collect();
    assert_eq!(sampling, vec![&low, &high, &low, &high], "{ours:#?}");
    assert!(
        ours[2]["path"].as_str().unwrap().ends_with("/responses"),
        "{ours:#?}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = sampled(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
