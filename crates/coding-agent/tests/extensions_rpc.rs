//! TypeScript extensions through the real `pi` binary and its node host, against mock-llm:
//! the combination rules with several extensions at once, extension commands and flags,
//! project trust, and every fault (a broken extension, an explicit `-e` that fails, node
//! missing, the host dying mid-session, a handler that never answers).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, of_type, user_texts};

fn write(path: &Path, text: &str) -> PathBuf {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
    path.to_path_buf()
}

/// Rewrites bash commands, adds a context note, and appends " (a)" to input.
const EXT_A: &str = r#"
export default function (pi) {
  pi.on("tool_call", async (event) => {
    if (event.toolName === "bash") event.input.command = "echo from-a";
  });
  pi.on("context", async (event) => {
    return { messages: [...event.messages, { role: "user", content: [{ type: "text", text: "note-a" }], timestamp: 1 }] };
  });
  pi.on("input", async (event) => ({ action: "transform", text: event.text + " (a)" }));
};
"#;

/// Blocks what A rewrote, adds its own context note after A's, handles "skip" inputs, and
/// cancels compactions.
const EXT_B: &str = r#"
export default function (pi) {
  pi.on("tool_call", async (event) => {
    if (event.input.command === "echo from-a") return { block: true, reason: "blocked by b" };
  });
  pi.on("tool_call", async () => ({ block: true, reason: "second handler of b must not run" }));
  pi.on("context", async (event) => {
    const last = event.messages[event.messages.length - 1];
    const text = last.content[0].text;
    return { messages: [...event.messages, { role: "user", content: [{ type: "text", text: "note-b after " + text }], timestamp: 1 }] };
  });
  pi.on("input", async (event) => (event.text.startsWith("skip") ? { action: "handled" } : undefined));
  pi.on("session_before_compact", async () => ({ cancel: true }));
};
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rules_combine_across_typescript_extensions_in_load_order() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::tool_call("bash", json!({"command": "rm -rf /"})),
        Script::text("done"),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let a = write(&env.work.join("a.ts"), EXT_A);
    let b = write(&env.work.join("b.ts"), EXT_B);
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", a.to_str().unwrap(), "-e", b.to_str().unwrap()],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    // A transforms every input; B handles the transformed "skip" one: nothing is sent.
    let skipped = rpc.call("s", json!({"type": "prompt", "message": "skip me"}));
    assert_eq!(skipped["success"], true, "{skipped}");
    let response = rpc.call("p", json!({"type": "prompt", "message": "ping"}));
    assert_eq!(response["success"], true, "{response}");
    let lines = rpc.event("agent_end");
    let ends = of_type(&lines, "tool_execution_end");
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["isError"], true);
    assert_eq!(ends[0]["result"]["content"][0]["text"], "blocked by b");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the handled input made no request");
    // The input transform reached the model, and both context notes, chained in order.
    let first = user_texts(&requests[0].body);
    assert_eq!(first, ["ping (a)", "note-a", "note-b after note-a"]);
    // The compaction is cancelled by B.
    let compact = rpc.call("c", json!({"type": "compact"}));
    assert_eq!(compact["success"], false, "{compact}");
    assert_eq!(rpc.finish(), Some(0));
}

/// A command that reports its flag, a tool, and a handler that never answers.
const EXT_TOOLS: &str = r#"
export default function (pi) {
  pi.registerFlag("greeting", { type: "string", default: "hi", description: "What /greet says" });
  pi.registerCommand("greet", {
    description: "Says the greeting",
    handler: async (args, ctx) => { ctx.ui.notify(pi.getFlag("greeting") + " " + args, "info"); },
  });
  pi.registerTool({
    name: "crash_host", label: "Crash", description: "Ends the extension host",
    parameters: { type: "object", properties: {} },
    async execute() { setTimeout(() => process.exit(3), 10); await new Promise(() => {}); },
  });
  pi.registerTool({
    name: "upper", label: "Upper", description: "Upper-cases text",
    parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
    async execute(id, params) { return { content: [{ type: "text", text: params.text.toUpperCase() }], details: {} }; },
  });
};
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_flags_tools_and_a_host_that_dies_mid_session() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::tool_call("upper", json!({"text": "shout"})),
        Script::text("ok"),
        Script::tool_call("crash_host", json!({})),
        Script::text("after the crash"),
        Script::text("still here"),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let ext = write(&env.work.join("tools.ts"), EXT_TOOLS);
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", ext.to_str().unwrap(), "--greeting", "hello"],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    let commands = rpc.call("c", json!({"type": "get_commands"}));
    let greet = &commands["data"]["commands"][0];
    assert_eq!(greet["name"], "greet");
    assert_eq!(greet["source"], "extension");
    assert_eq!(greet["sourceInfo"]["source"], "cli");
    // The command runs at once; its notify comes before the prompt's response.
    rpc.send(json!({"id": "g", "type": "prompt", "message": "/greet world"}));
    let lines = rpc.until("greet response", |l| l["id"] == "g");
    let notify = lines
        .iter()
        .find(|l| l["type"] == "extension_ui_request")
        .expect("a notify request");
    assert_eq!(notify["method"], "notify");
    assert_eq!(notify["message"], "hello world");
    assert!(
        server.requests().is_empty(),
        "a command sends nothing to the model"
    );
    // An extension tool runs in the host.
    rpc.call("p1", json!({"type": "prompt", "message": "use upper"}));
    let lines = rpc.event("agent_end");
    let end = of_type(&lines, "tool_execution_end")[0];
    assert_eq!(end["result"]["content"][0]["text"], "SHOUT");
    // The host dies while a tool runs: the tool fails clearly, the session goes on.
    rpc.call("p2", json!({"type": "prompt", "message": "crash it"}));
    let lines = rpc.event("agent_end");
    let end = of_type(&lines, "tool_execution_end")[0];
    assert_eq!(end["isError"], true);
    let text = end["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("Extension host exited"), "{text}");
    // The crash is reported once, with the way to start without extensions.
    let crash = rpc
        .seen
        .iter()
        .find(|l| l["type"] == "extension_error" && l["event"] == "host")
        .expect("the host's crash is reported");
    let reported = crash["error"].as_str().unwrap();
    assert!(reported.contains("Extension host exited"), "{reported}");
    assert!(reported.contains("pi -ne"), "{reported}");
    rpc.call("p3", json!({"type": "prompt", "message": "are you there"}));
    let lines = rpc.event("agent_end");
    assert!(
        lines
            .iter()
            .any(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
    );
    assert_eq!(rpc.finish(), Some(0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_cancels_a_handler_that_never_answers() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all([Script::tool_call("bash", json!({"command": "ls"}))]);
    let env = Env::new(&server, 128_000, json!({}));
    let ext = write(
        &env.work.join("stuck.ts"),
        r#"export default function (pi) { pi.on("tool_call", () => new Promise(() => {})); }"#,
    );
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", ext.to_str().unwrap()],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    rpc.call("p", json!({"type": "prompt", "message": "list"}));
    rpc.event("tool_execution_start");
    let aborted = rpc.call("a", json!({"type": "abort"}));
    assert_eq!(aborted["success"], true);
    // abort answers once the run ended.
    let lines = rpc.seen.clone();
    assert_eq!(of_type(&lines, "agent_end").len(), 1);
    let ends = of_type(&lines, "tool_execution_end");
    assert_eq!(ends.len(), 1);
    assert_eq!(ends[0]["isError"], true);
    assert_eq!(rpc.finish(), Some(0));
}

/// Runs `pi -p` with these extension args and returns (code, stdout, stderr).
fn print_run(
    env: &Env,
    host: Option<&Path>,
    args: &[&str],
    vars: &[(&str, &str)],
) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_pi"));
    command
        .args(["--no-session", "-p", "hello"])
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .stdin(Stdio::null());
    if let Some(host) = host {
        command.env("PI_EXTENSION_HOST_DIR", host);
    }
    for (key, value) in vars {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load_failures_and_missing_node_are_reported_and_lose_nothing() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let bad = write(
        &env.agent.join("extensions/bad.ts"),
        "export default function () { throw new Error(\"kaput\"); }",
    );
    write(
        &env.agent.join("extensions/good.ts"),
        r#"export default function (pi) { pi.on("agent_end", () => console.error("good ran")); }"#,
    );
    // A discovered extension that throws is named; the others load; the run goes on.
    server.push(Script::text("answer one"));
    let (code, stdout, stderr) = print_run(&env, Some(&host), &[], &[]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "answer one");
    assert!(
        stderr.contains(bad.to_str().unwrap()) && stderr.contains("kaput"),
        "{stderr}"
    );
    assert!(stderr.contains("good ran"), "{stderr}");
    // The same file given with -e ends pi with exit code 1.
    let (code, _, stderr) = print_run(&env, Some(&host), &["-e", bad.to_str().unwrap()], &[]);
    assert_eq!(code, 1);
    assert!(stderr.contains("Failed to load extension"), "{stderr}");
    // Without node: one message naming what was skipped and what to install.
    server.push(Script::text("answer two"));
    let (code, stdout, stderr) =
        print_run(&env, Some(&host), &[], &[("PI_NODE", "/nonexistent/node")]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "answer two");
    assert!(
        stderr.contains("Node.js was not found") && stderr.contains("good.ts"),
        "{stderr}"
    );
    // With no extension at all nothing starts and nothing is said.
    std::fs::remove_dir_all(env.agent.join("extensions")).unwrap();
    server.push(Script::text("answer three"));
    let (code, _, stderr) = print_run(&env, None, &[], &[("PI_NODE", "/nonexistent/node")]);
    assert_eq!(code, 0);
    assert!(!stderr.contains("Node.js"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn project_extensions_load_only_in_a_trusted_folder() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    write(
        &env.work.join(".pi/extensions/proj.ts"),
        r#"export default function (pi) { pi.registerCommand("proj", { handler: async () => {} }); }"#,
    );
    let names = |args: &[&str]| -> Vec<String> {
        let mut rpc = Rpc::start_with_env(&env, args, &[("PI_EXTENSION_HOST_DIR", &host)]);
        let commands = rpc.call("c", json!({"type": "get_commands"}));
        rpc.finish();
        // The built-in `mcp` command is listed whatever the trust (as in pi 1.6.0).
        commands["data"]["commands"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c["sourceInfo"]["source"] != "builtin")
            .map(|c| c["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert!(
        names(&[]).is_empty(),
        "RPC cannot ask: untrusted by default"
    );
    assert_eq!(names(&["--approve"]), ["proj"]);
    // A saved decision for the folder (or a parent) counts.
    let canonical = std::fs::canonicalize(&env.work).unwrap();
    std::fs::write(
        env.agent.join("trust.json"),
        json!({ canonical.parent().unwrap().display().to_string(): true }).to_string(),
    )
    .unwrap();
    assert_eq!(names(&[]), ["proj"]);
    assert!(names(&["-na"]).is_empty());
    std::fs::remove_file(env.agent.join("trust.json")).unwrap();
    let mut settings: Value =
        serde_json::from_str(&std::fs::read_to_string(env.agent.join("settings.json")).unwrap())
            .unwrap();
    settings["defaultProjectTrust"] = "always".into();
    std::fs::write(env.agent.join("settings.json"), settings.to_string()).unwrap();
    assert_eq!(names(&[]), ["proj"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn help_lists_extension_flags_and_unknown_flags_are_errors() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = write(&env.work.join("tools.ts"), EXT_TOOLS);
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--help", "-e", ext.to_str().unwrap()])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("PI_EXTENSION_HOST_DIR", &host)
        .output()
        .unwrap();
    let help =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    for flag in [
        "--extension, -e",
        "--no-extensions, -ne",
        "--approve, -a",
        "--no-approve, -na",
    ] {
        assert!(help.contains(flag), "{flag} missing from:\n{help}");
    }
    assert!(
        help.contains("--greeting <value>") && help.contains("What /greet says"),
        "{help}"
    );
    let (code, _, stderr) = print_run(
        &env,
        Some(&host),
        &["-e", ext.to_str().unwrap(), "--nope"],
        &[],
    );
    assert_eq!(code, 1);
    assert!(stderr.contains("Unknown option: --nope"), "{stderr}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reload_and_session_replacement_run_the_factories_again() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let counter = env.work.join("loads.txt");
    let ext = write(
        &env.work.join("reloading.ts"),
        &format!(
            r#"import * as fs from "node:fs";
export default function (pi) {{
  fs.appendFileSync({path:?}, "load " + process.pid + "\n");
  pi.on("session_start", async (event, ctx) => ctx.ui.notify("start " + event.reason, "info"));
  pi.on("session_shutdown", async (event) => fs.appendFileSync({path:?}, "shutdown " + event.reason + "\n"));
  pi.registerCommand("again", {{ handler: async (args, ctx) => {{ await ctx.reload(); }} }});
}}"#,
            path = counter.display().to_string()
        ),
    );
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", ext.to_str().unwrap()],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    let started = rpc.until("startup notify", |l| l["method"] == "notify");
    assert_eq!(started.last().unwrap()["message"], "start startup");
    rpc.send(json!({"id": "r", "type": "prompt", "message": "/again"}));
    let lines = rpc.until("reload notify", |l| l["message"] == "start reload");
    assert!(!lines.is_empty());
    let commands = rpc.call("c", json!({"type": "get_commands"}));
    assert_eq!(commands["data"]["commands"][0]["name"], "again");
    // A new session loads the extensions again too and announces the session once (pi
    // 1.6.0; 0.73 and 1.5 announced it a second time).
    let replaced = rpc.call("n", json!({"type": "new_session"}));
    assert_eq!(replaced["data"]["cancelled"], false, "{replaced}");
    let starts = rpc
        .seen
        .iter()
        .filter(|l| l["message"] == "start new")
        .count();
    assert_eq!(starts, 1);
    assert_eq!(rpc.finish(), Some(0));
    let log = std::fs::read_to_string(&counter).unwrap();
    let loads: Vec<&str> = log.lines().filter(|l| l.starts_with("load ")).collect();
    assert_eq!(loads.len(), 3, "{log}");
    assert_eq!(
        loads[0], loads[1],
        "reloaded in the same host process: {log}"
    );
    for reason in ["reload", "new", "quit"] {
        assert!(log.contains(&format!("shutdown {reason}")), "{log}");
    }
}

/// Several tool calls of one reply: their `tool_call` handlers run one after the other in
/// call order (answered in one exchange with the host), a block and an input change apply
/// to their own call only, and calls that fail validation are not hooked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_calls_of_one_reply_are_hooked_in_order() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::new(vec![
            mock_llm::Item::tool_call("bash", json!({"command": "echo one"})),
            mock_llm::Item::tool_call("bash", json!({"command": "echo two"})),
            mock_llm::Item::tool_call("bash", json!({"command": "echo three"})),
            mock_llm::Item::tool_call("bash", json!({"cmd": "no command"})),
        ]),
        Script::text("done"),
    ]);
    let env = Env::new(&server, 128_000, json!({}));
    let ext = write(
        &env.work.join("order.ts"),
        r#"export default function (pi) {
  let seen = [];
  pi.on("tool_call", async (event, ctx) => {
    await new Promise((r) => setTimeout(r, 5));
    seen.push(event.input.command);
    pi.appendEntry("hooked", { command: event.input.command });
    const entries = ctx.sessionManager.getEntries().filter((e) => e.customType === "hooked").length;
    if (event.input.command === "echo two") return { block: true, reason: "two is blocked after " + seen.join(",") };
    if (event.input.command === "echo three") event.input.command = "echo changed " + entries;
  });
}"#,
    );
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", ext.to_str().unwrap()],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    let response = rpc.call("p", json!({"type": "prompt", "message": "go"}));
    assert_eq!(response["success"], true, "{response}");
    let lines = rpc.event("agent_end");
    let ends = of_type(&lines, "tool_execution_end");
    let text_of = |id: usize| {
        ends.iter()
            .find(|e| e["toolCallId"] == lines_id(&lines, id))
            .map(|e| {
                e["result"]["content"][0]["text"]
                    .as_str()
                    .unwrap_or("")
                    .to_owned()
            })
            .unwrap()
    };
    assert_eq!(text_of(0).trim(), "one");
    assert_eq!(text_of(1), "two is blocked after echo one,echo two");
    assert!(text_of(2).starts_with("changed "), "{}", text_of(2));
    // The fourth call fails validation and is never hooked.
    assert!(text_of(3).contains("Validation failed"), "{}", text_of(3));
    assert_eq!(rpc.finish(), Some(0));
}

/// The id of the `n`-th tool call the run started.
fn lines_id(lines: &[Value], n: usize) -> Value {
    of_type(lines, "tool_execution_start")[n]["toolCallId"].clone()
}

/// The first event of `kind` among the lines seen from index `from` on, waiting for it
/// when none came yet (a command's answer may come before or after the events it caused).
fn event_since(rpc: &mut Rpc, from: usize, kind: &str) -> Value {
    if let Some(line) = rpc.seen[from..].iter().find(|l| l["type"] == kind) {
        return line.clone();
    }
    rpc.event(kind).last().cloned().unwrap()
}

/// `ctx.compact()` from a command starts before the command answers (as in pi); from a
/// `turn_end` handler, while the run that waits for that handler still streams, it neither
/// holds up the host (the handler answers, the run ends) nor is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctx_compact_starts_at_once_and_waits_for_a_running_turn() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::text("first answer"),
        Script::text("## Goal\nfrom the command"),
        Script::tool_call("bash", json!({"command": "echo hi"})),
        Script::text("second answer"),
        Script::text("## Goal\nfrom turn_end"),
    ]);
    // Keep as little as possible, so that each compaction has turns to summarize (with
    // everything kept, pi says there is nothing to compact).
    let env = Env::new(
        &server,
        128_000,
        json!({"compaction": {"keepRecentTokens": 1}}),
    );
    let ext = write(
        &env.work.join("compactor.ts"),
        r#"export default function (pi) {
  let armed = false;
  const compact = (ctx, label) => ctx.compact({
    onComplete: () => pi.sendMessage({ customType: "compacted", content: label, display: false }),
    onError: (e) => pi.sendMessage({ customType: "compact-failed", content: label + ": " + e.message, display: false }),
  });
  pi.registerCommand("now", { handler: async (_args, ctx) => compact(ctx, "command") });
  pi.registerCommand("arm", { handler: async () => { armed = true; } });
  pi.on("turn_end", (_event, ctx) => {
    if (armed) { armed = false; compact(ctx, "turn_end"); }
  });
}"#,
    );
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", ext.to_str().unwrap()],
        &[("PI_EXTENSION_HOST_DIR", &host)],
    );
    rpc.call("1", json!({"type": "prompt", "message": "hello"}));
    // Idle first: right after `agent_end` the run may still be finishing, and a compaction
    // asked for during a run starts (and lets the command answer) only once it aborted.
    rpc.event("agent_settled");
    // The command's answer comes after compaction_start, every time.
    let before = rpc.seen.len();
    let answered = rpc.call("2", json!({"type": "prompt", "message": "/now"}));
    assert_eq!(answered["success"], true, "{answered}");
    let started = rpc.seen[before..]
        .iter()
        .any(|line| line["type"] == "compaction_start");
    assert!(started, "the command answered before compaction_start");
    // The compaction runs beside the command, so it may also end before the answer.
    event_since(&mut rpc, before, "compaction_end");

    rpc.call("3", json!({"type": "prompt", "message": "/arm"}));
    let before = rpc.seen.len();
    rpc.call("4", json!({"type": "prompt", "message": "run bash"}));
    // The compaction aborts the run at its first turn_end, so which of the two scripts
    // left becomes the summary depends on whether the next request went out first.
    let end = event_since(&mut rpc, before, "compaction_end");
    assert!(end["result"]["summary"].is_string(), "{end}");
    let lines = rpc.seen.clone();
    assert_eq!(of_type(&lines, "compaction_end").len(), 2);
    assert!(!of_type(&lines, "agent_end").is_empty());
    assert_eq!(rpc.finish(), Some(0));
}
