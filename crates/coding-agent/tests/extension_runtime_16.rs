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

/// Loads an extension through a link to its entry file; its dependency lives beside the
/// real file. Returns what the extension logged and the exit code.
fn linked(program: Command) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(mock_llm::Script::text("done"));
    let env = Env::new(&server, 128_000, json!({}));
    let real = env.dir.path().join("real");
    let dep = real.join("node_modules/greeter");
    std::fs::create_dir_all(&dep).unwrap();
    std::fs::write(
        dep.join("package.json"),
        r#"{"name":"greeter","version":"1.0.0","main":"index.js"}"#,
    )
    .unwrap();
    std::fs::write(
        dep.join("index.js"),
        r#"module.exports = { greet: (n) => "hello " + n };"#,
    )
    .unwrap();
    std::fs::write(
        real.join("ext.ts"),
        r#"import { appendFileSync } from "node:fs";
import { greet } from "greeter";
export default function (pi) {
  pi.on("session_start", () => appendFileSync(process.env.HOOK_LOG, greet("pi") + "\n"));
}
"#,
    )
    .unwrap();
    let link = env.dir.path().join("link");
    std::fs::create_dir_all(&link).unwrap();
    std::os::unix::fs::symlink(real.join("ext.ts"), link.join("ext.ts")).unwrap();
    let log = env.dir.path().join("hooks.log");
    let mut program = program;
    program.env("HOOK_LOG", &log).env("PI_OFFLINE", "1");
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let ext = link.join("ext.ts");
    let out = support::ts16::run(&env, program, &["-e", ext.to_str().unwrap(), "-p", "hi"]);
    json!({
        "code": out.status.code(),
        "logged": std::fs::read_to_string(&log).unwrap_or_default(),
    })
}

#[test]
fn an_extension_loaded_through_a_link_finds_its_dependencies() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = linked(Command::new(env!("CARGO_BIN_EXE_pi")));
    assert_eq!(ours, json!({"code": 0, "logged": "hello pi\n"}));
    if let Some(wrapper) = ts16() {
        assert_eq!(ours, linked(ts16_pi(&wrapper)), "ours, then pi 1.6.0");
    }
}
