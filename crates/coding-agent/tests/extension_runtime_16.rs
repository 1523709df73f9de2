//! The extension runtime across a reload, as pi 1.6.0 keeps it: event-bus listeners of the
//! replaced extensions stop hearing events, and `pi.getAllTools()` lists each tool's
//! `promptGuidelines`. Commands drive one RPC session through ours and pi 1.6.0
//! (`PI_TS16`); what the extension logged must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.HOOK_LOG, JSON.stringify(entry) + "\n");
export default function (pi) {
  pi.events.on("ping", (data) => log({ heard: data }));
  pi.registerTool({
    name: "guided",
    label: "Guided",
    description: "A tool with guidelines",
    promptSnippet: "Use guided for guided things",
    promptGuidelines: ["Call guided before anything else."],
    parameters: { type: "object", properties: {} },
    async execute() {
      return { content: [{ type: "text", text: "ok" }], details: {} };
    },
  });
  pi.registerCommand("emit", {
    description: "Emits a ping",
    handler: async (args, ctx) => {
      pi.events.emit("ping", args);
      ctx.ui.notify("emitted " + args, "info");
    },
  });
  pi.registerCommand("again", {
    description: "Reloads",
    handler: async (_args, ctx) => {
      await ctx.reload();
    },
  });
  pi.registerCommand("tools", {
    description: "Lists the guided tool",
    handler: async (_args, ctx) => {
      const tool = pi.getAllTools().find((t) => t.name === "guided");
      log({ name: tool?.name, promptGuidelines: tool?.promptGuidelines, description: tool?.description });
      ctx.ui.notify("listed", "info");
    },
  });
}
"#;

async fn session(mut program: Command) -> Vec<Value> {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("runtime.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("hooks.jsonl");
    program.env("HOOK_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
        let command = |rpc: &mut Rpc, text: &str, done: &str| {
            rpc.send(json!({"id": text, "type": "prompt", "message": text}));
            rpc.until(done, |l| l["message"] == done);
        };
        command(&mut rpc, "/emit first", "emitted first");
        rpc.call("r", json!({"type": "prompt", "message": "/again"}));
        command(&mut rpc, "/emit second", "emitted second");
        command(&mut rpc, "/tools", "listed");
        rpc.finish();
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        drop(env);
        text.lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .collect()
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reload_drops_old_listeners_and_tools_keep_their_guidelines() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = session(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(
        ours,
        vec![
            json!({"heard": "first"}),
            json!({"heard": "second"}),
            json!({"name": "guided", "promptGuidelines": ["Call guided before anything else."],
                   "description": "A tool with guidelines"}),
        ]
    );
    if let Some(wrapper) = ts16() {
        let theirs = session(ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
