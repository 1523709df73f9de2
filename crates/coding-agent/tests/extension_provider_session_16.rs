//! A provider an extension registered while loading stays through a new session, as in
//! pi 1.6.0: reading `auth.json` and `models.json` again for the new session keeps it, and
//! `pi.unregisterProvider` removes it. Over RPC through ours and pi 1.6.0 (`PI_TS16`) on one
//! mock: its models before and after `new_session`, a prompt to it afterwards, and its
//! models once an extension command unregistered it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, user_texts};
use support::ts16::{ts16, ts16_pi};

/// Provider `ext` with one model, registered while the extension loads.
const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("drop-ext", { handler: async (_args, ctx) => {
    pi.unregisterProvider("ext");
    ctx.ui.notify("dropped", "info");
  } });
  pi.registerProvider("ext", { baseUrl: process.env.MOCK_BASE, apiKey: "ext-key", api: "openai-completions",
    models: [{ id: "ext-1", name: "ext-1", reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 }] });
}
"#;

/// The `ext` models of a `get_available_models` answer.
fn ext_models(rpc: &mut Rpc, id: &str) -> Vec<Value> {
    rpc.call(id, json!({"type": "get_available_models"}))["data"]["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["provider"] == "ext")
        .map(|m| m["id"].clone())
        .collect()
}

async fn through_new_session(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("Still here."));
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    program.env("MOCK_BASE", server.openai_base_url());
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let shown = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
        let before = ext_models(&mut rpc, "a");
        let new = rpc.call("n", json!({"type": "new_session"}));
        assert_eq!(new["success"], true, "{new}");
        let after = ext_models(&mut rpc, "b");
        let set = rpc.call(
            "m",
            json!({"type": "set_model", "provider": "ext", "modelId": "ext-1"}),
        );
        rpc.call(
            "p",
            json!({"type": "prompt", "message": "after the new session"}),
        );
        rpc.event("agent_end");
        // Unregistered, the provider registered while loading is gone.
        rpc.send(json!({"id": "d", "type": "prompt", "message": "/drop-ext"}));
        rpc.until("the unregistration", |l| l["message"] == "dropped");
        let dropped = ext_models(&mut rpc, "c");
        rpc.finish();
        drop(env);
        json!({"before": before, "after": after, "set": set["success"], "dropped": dropped})
    })
    .await
    .unwrap();
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| json!([r.body["model"], user_texts(&r.body)]))
        .collect();
    json!({"shown": shown, "requests": requests})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_registered_while_loading_stays_through_a_new_session_as_in_16() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = through_new_session(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(
        ours,
        json!({
            "shown": {"before": ["ext-1"], "after": ["ext-1"], "set": true, "dropped": []},
            "requests": [["ext-1", ["after the new session"]]],
        }),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = through_new_session(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
