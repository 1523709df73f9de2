//! Extension model calls and imports of pi 1.6.0: `ctx.modelRegistry.complete()` and
//! `streamSimple()` run a request on a configured model with its resolved credentials, and
//! `@earendil-works/pi-ai/models` (`clampThinkingLevel`), `/compat` (the old global API with
//! the per-API stream aliases) and `Type` from `@earendil-works/pi-ai` load. An extension
//! command does both over RPC through ours and pi 1.6.0 (`PI_TS16`) on one mock; what it
//! logged and what the mock received must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, user_texts};
use support::ts16::{ts16, ts16_pi};

const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
import { clampThinkingLevel } from "@earendil-works/pi-ai/models";
import { getModel, streamSimpleOpenAICompletions } from "@earendil-works/pi-ai/compat";
import { Type } from "@earendil-works/pi-ai";
const log = (entry) => appendFileSync(process.env.HOOK_LOG, JSON.stringify(entry) + "\n");
export default function (pi) {
  pi.registerCommand("ask", {
    description: "Asks the model on the side",
    handler: async (_args, ctx) => {
      log({
        clamped: clampThinkingLevel(ctx.model, "xhigh"),
        compat: [typeof getModel, typeof streamSimpleOpenAICompletions],
        schema: Type.Object({ a: Type.String() }).type,
      });
      const answer = await ctx.modelRegistry.complete(ctx.model, {
        messages: [{ role: "user", content: [{ type: "text", text: "side question" }], timestamp: Date.now() }],
      });
      log({ completed: answer.content.filter((c) => c.type === "text").map((c) => c.text).join(""), stop: answer.stopReason });
      const kinds = [];
      const stream = ctx.modelRegistry.streamSimple(ctx.model, {
        messages: [{ role: "user", content: [{ type: "text", text: "streamed question" }], timestamp: Date.now() }],
      });
      for await (const event of stream) kinds.push(event.type);
      const final = await stream.result();
      log({ streamed: final.content.filter((c) => c.type === "text").map((c) => c.text).join(""), first: kinds[0], last: kinds[kinds.length - 1] });
      ctx.ui.notify("asked", "info");
    },
  });
}
"#;

async fn ask(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("side answer"));
    server.push(Script::text("streamed answer"));
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("ask.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("hooks.jsonl");
    program.env("HOOK_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let logged = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
        rpc.send(json!({"id": "a", "type": "prompt", "message": "/ask"}));
        rpc.until("the command's end", |l| l["message"] == "asked");
        rpc.finish();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        drop(env);
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect::<Vec<Value>>()
    })
    .await
    .unwrap();
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| json!({"texts": user_texts(&r.body), "auth": r.headers.get("authorization")}))
        .collect();
    json!({"logged": logged, "requests": requests})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extensions_call_configured_models_and_import_pi_ai_subpaths() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = ask(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(
        ours["logged"],
        json!([
            {"clamped": "off", "compat": ["function", "function"], "schema": "object"},
            {"completed": "side answer", "stop": "stop"},
            {"streamed": "streamed answer", "first": "start", "last": "done"},
        ]),
        "{ours:#}"
    );
    assert_eq!(
        ours["requests"],
        json!([
            {"texts": ["side question"], "auth": "Bearer mock-key"},
            {"texts": ["streamed question"], "auth": "Bearer mock-key"},
        ])
    );
    if let Some(wrapper) = ts16() {
        let theirs = ask(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
