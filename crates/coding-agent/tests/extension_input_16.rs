//! Extension `input` and `user_bash` handlers over RPC as in pi 1.6.0: `input` events carry
//! `streamingBehavior` only for text queued while the agent streams; RPC `steer` and
//! `follow_up` go through `input` handlers (which may change or handle the text); RPC `bash`
//! emits `user_bash`, whose handler may answer with its own result; and `user_bash` fails
//! closed (a throwing handler or an invalid answer fails the command, runs nothing and asks
//! no later handler). One session runs through ours and through 1.6.0 (`PI_TS16`); what
//! the extension saw, the RPC answers, the extension errors and the model's last request
//! must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc, user_texts};
use support::ts16::{ts16, ts16_pi};

/// Logs every `input` and `user_bash` event; a `hold` tool that keeps the agent streaming
/// until `/release`; `input` turns "steer me" into "steered" and handles "drop me";
/// `user_bash` answers `ext-result` itself, throws on `throws`, answers `{}` on `invalid`.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.INPUT_LOG, JSON.stringify(entry) + "\n");
let release;
const held = new Promise((resolve) => { release = resolve; });
export default function (pi) {
  pi.registerTool({
    name: "hold", label: "Hold", description: "Waits for /release",
    parameters: { type: "object", properties: {} },
    async execute() {
      await held;
      return { content: [{ type: "text", text: "released" }], details: {} };
    },
  });
  pi.registerCommand("release", { description: "ends hold", handler: async () => release() });
  pi.on("input", (event) => {
    log({ type: "input", text: event.text, source: event.source,
          streamingBehavior: event.streamingBehavior ?? null });
    if (event.text === "steer me") return { action: "transform", text: "steered" };
    if (event.text === "drop me") return { action: "handled" };
    return undefined;
  });
  pi.on("user_bash", (event) => {
    log({ type: "user_bash", command: event.command, excludeFromContext: event.excludeFromContext,
          cwdIsSet: typeof event.cwd === "string" && event.cwd.length > 0 });
    if (event.command === "ext-result") {
      return { result: { output: "from ext\n", exitCode: 0, cancelled: false, truncated: false } };
    }
    if (event.command.includes("throws")) throw new Error("no bash for you");
    if (event.command.includes("invalid")) return {};
    return undefined;
  });
  pi.on("user_bash", (event) => {
    log({ type: "user_bash (second handler)", command: event.command });
  });
}
"#;

/// What one session through `program` produced: the extension's log, the RPC answers and
/// extension errors, and the user texts of the model's last request.
async fn session(program: Command, host: Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("hold", json!({})));
    for answer in [
        "after steering",
        "after follow-up",
        "after queued prompt",
        "idle run",
    ] {
        server.push(Script::text(answer));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("input-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("input.jsonl");
    let mut program = program;
    program.env("INPUT_LOG", &log);
    if let Some(host) = host {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let (answers, errors, logged, ran) = tokio::task::spawn_blocking(move || {
        let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
        let mut answers = Vec::new();
        let mut call = |rpc: &mut Rpc, id: &str, command: Value| {
            let answer = rpc.call(id, command);
            answers.push(json!({
                "id": id, "success": answer["success"], "data": answer["data"], "error": answer["error"],
            }));
        };
        call(&mut rpc, "p1", json!({"type": "prompt", "message": "hello"}));
        rpc.until("the hold tool running", |l| {
            l["type"] == "tool_execution_start" && l["toolName"] == "hold"
        });
        call(&mut rpc, "s1", json!({"type": "steer", "message": "steer me"}));
        call(&mut rpc, "f1", json!({"type": "follow_up", "message": "drop me"}));
        call(&mut rpc, "f2", json!({"type": "follow_up", "message": "later"}));
        call(&mut rpc, "p2", json!({"type": "prompt", "message": "queued prompt", "streamingBehavior": "followUp"}));
        call(&mut rpc, "s2", json!({"type": "steer", "message": "/release"}));
        call(&mut rpc, "r1", json!({"type": "prompt", "message": "/release"}));
        rpc.event("agent_settled");
        call(&mut rpc, "p3", json!({"type": "prompt", "message": "idle run", "streamingBehavior": "steer"}));
        rpc.event("agent_settled");
        call(&mut rpc, "b1", json!({"type": "bash", "command": "echo local"}));
        call(&mut rpc, "b2", json!({"type": "bash", "command": "ext-result", "excludeFromContext": true}));
        call(&mut rpc, "b3", json!({"type": "bash", "command": "touch ran-throws"}));
        call(&mut rpc, "b4", json!({"type": "bash", "command": "touch ran-invalid"}));
        let errors: Vec<Value> = rpc
            .seen
            .iter()
            .filter(|l| l["type"] == "extension_error")
            .map(|l| json!({"event": l["event"], "error": l["error"]}))
            .collect();
        rpc.finish();
        let ran = ["ran-throws", "ran-invalid"].map(|f| env.work.join(f).exists());
        let logged = read_log(&log);
        drop(env);
        (answers, errors, logged, ran)
    })
    .await
    .unwrap();
    let requests = server.requests();
    let last = requests.last().expect("the model was asked");
    json!({
        "log": logged,
        "answers": answers,
        "extensionErrors": errors,
        "lastRequestUserTexts": user_texts(&last.body),
        "ranThrows": ran[0],
        "ranInvalid": ran[1],
    })
}

fn read_log(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The parts of the session that are pi 1.6.0's by design (spelled out so a run without
/// `PI_TS16` still checks them).
fn check(session: &Value) {
    let inputs: Vec<(&str, &Value)> = session["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "input")
        .map(|e| (e["text"].as_str().unwrap(), &e["streamingBehavior"]))
        .collect();
    assert_eq!(
        inputs,
        [
            ("hello", &Value::Null),
            ("steer me", &json!("steer")),
            ("drop me", &json!("followUp")),
            ("later", &json!("followUp")),
            ("queued prompt", &json!("followUp")),
            ("idle run", &Value::Null),
        ],
        "{session:#}"
    );
    let answers = &session["answers"];
    let by_id = |id: &str| {
        answers
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["id"] == id)
            .unwrap()
            .clone()
    };
    assert_eq!(by_id("s1")["data"]["disposition"], "queued");
    assert_eq!(by_id("f1")["data"]["disposition"], "handled");
    assert_eq!(by_id("s2")["success"], false, "{session:#}");
    assert_eq!(by_id("b2")["data"]["output"], "from ext\n");
    assert_eq!(by_id("b3")["error"], "no bash for you");
    assert_eq!(by_id("b3")["success"], false);
    assert_eq!(by_id("b4")["success"], false);
    assert_eq!(session["ranThrows"], false);
    assert_eq!(session["ranInvalid"], false);
    let second: Vec<&Value> = session["log"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "user_bash (second handler)")
        .map(|e| &e["command"])
        .collect();
    assert_eq!(second, [&json!("echo local")], "{session:#}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn input_and_user_bash_over_rpc_as_in_16() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let their = match ts16() {
        Some(wrapper) => Some(session(ts16_pi(&wrapper), None).await),
        None => None,
    };
    let our = session(Command::new(env!("CARGO_BIN_EXE_pi")), Some(host)).await;
    if let Some(their) = their {
        check(&their);
        assert_eq!(our, their);
    }
    check(&our);
}
