//! The tools of a resumed session as pi 1.6.0 gives them: a continued session keeps the
//! tools its transcript recorded, `--tools +name`/`-name` edit them and a plain `--tools`
//! list replaces them; extension tools registered after the branch recorded its tools are
//! active unless they are registered with `defaultActive: false`; `/reload` (an
//! extension's `ctx.reload()` over RPC) turns on tools newly added to `defaultTools`. Each
//! case runs through ours and pi 1.6.0 (`PI_TS16`) on one mock and compares the tools each
//! request declared.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program, run};

/// Registers `late_tool` when `$LATE` is set and `shy_tool` with `defaultActive: false`;
/// the command `/reload-now` reloads.
const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";
const tool = (name, extra) => ({
  name, label: name, description: `The ${name}.`,
  parameters: Type.Object({}),
  async execute() { return { content: [{ type: "text", text: name }], details: {} }; },
  ...extra,
});
export default function (pi) {
  pi.registerTool(tool("shy_tool", { defaultActive: false }));
  if (process.env.LATE) pi.registerTool(tool("late_tool", {}));
  pi.registerCommand("reload-now", {
    description: "Reload",
    handler: async (_args, ctx) => { await ctx.reload(); },
  });
}
"#;

/// The tool names each request declared, in order.
fn declared(server: &MockServer) -> Vec<Vec<String>> {
    server
        .requests()
        .iter()
        .map(|r| {
            r.body["tools"]
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .map(|t| t["function"]["name"].as_str().unwrap_or("?").to_owned())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect()
}

fn with_host(mut program: Command) -> Command {
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    program
}

/// Runs one print-mode prompt per argument list, each continuing the last session.
async fn runs(
    wrapper: &Option<std::path::PathBuf>,
    steps: &[(&[&str], bool)],
    extension: bool,
) -> Vec<Vec<String>> {
    let server = MockServer::start().await.unwrap();
    for _ in steps {
        server.push(Script::text("Done."));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("tools-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    for (index, (args, late)) in steps.iter().enumerate() {
        let mut command = with_host(program(wrapper));
        if *late {
            command.env("LATE", "1");
        }
        let mut all: Vec<&str> = Vec::new();
        if extension {
            all.extend(["-e", ext.to_str().unwrap()]);
        }
        if index > 0 {
            all.push("-c");
        }
        all.extend(args.iter());
        let prompt = format!("Step {index}.");
        all.extend(["-p", &prompt]);
        let out = run(&env, command, &all);
        assert!(
            out.status.success(),
            "{all:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    declared(&server)
}

fn names(list: &[&str]) -> Vec<String> {
    list.iter().map(|n| (*n).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_continued_session_keeps_its_recorded_tools_as_pi_16() {
    let steps: &[(&[&str], bool)] = &[
        (&["--tools", "+grep,+ls"], false),
        (&[], false),
        (&["--tools", "-bash"], false),
        (&[], false),
        (&["--tools", "read,find"], false),
    ];
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, runs(&wrapper, steps, false).await));
    }
    let edited = names(&["read", "bash", "edit", "write", "grep", "ls"]);
    let without_bash = names(&["read", "edit", "write", "grep", "ls"]);
    assert_eq!(
        seen[0].1,
        vec![
            edited.clone(),
            edited,
            without_bash.clone(),
            without_bash,
            names(&["read", "find"]),
        ]
    );
    for (name, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn extension_tools_registered_later_join_a_restored_session_as_pi_16() {
    let steps: &[(&[&str], bool)] = &[
        (&[], false),
        (&[], true),
        (&["--tools", "+shy_tool"], true),
        (&[], true),
    ];
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, runs(&wrapper, steps, true).await));
    }
    let defaults = names(&["read", "bash", "edit", "write"]);
    let late = names(&["read", "bash", "edit", "write", "late_tool"]);
    let shy = names(&["read", "bash", "edit", "write", "late_tool", "shy_tool"]);
    assert_eq!(seen[0].1, vec![defaults, late, shy.clone(), shy]);
    for (name, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {name}");
    }
}

/// Prompts, adds `+grep` to `defaultTools` and a removal of `write`, reloads, prompts.
async fn reload_with_new_default_tools(wrapper: &Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("One."));
    server.push(Script::text("Two."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("tools-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let settings = env.agent.join("settings.json");
    let command = with_host(program(wrapper));
    tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, command, &["-e", ext.to_str().unwrap()]);
        rpc.call("p1", json!({"type": "prompt", "message": "One."}));
        rpc.event("agent_settled");
        let mut all: Value =
            serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
        all["defaultTools"] = json!(["+grep", "-write"]);
        std::fs::write(&settings, all.to_string()).unwrap();
        let reloaded = rpc.call("r", json!({"type": "prompt", "message": "/reload-now"}));
        assert_eq!(reloaded["success"], true, "{reloaded}");
        let state = rpc.call("s", json!({"type": "get_state"}));
        assert_eq!(state["success"], true, "{state}");
        rpc.call("p2", json!({"type": "prompt", "message": "Two."}));
        rpc.event("agent_settled");
        rpc.finish();
    })
    .await
    .unwrap();
    json!(declared(&server))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_turns_on_tools_newly_added_to_default_tools_as_pi_16() {
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, reload_with_new_default_tools(&wrapper).await));
    }
    assert_eq!(
        seen[0].1,
        json!([
            ["read", "bash", "edit", "write"],
            ["read", "bash", "edit", "write", "grep"]
        ])
    );
    for (name, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {name}");
    }
}
