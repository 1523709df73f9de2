//! The request hooks extensions got in pi 1.6.0, through ours and pi 1.6.0 (`PI_TS16`) on
//! each wire API against one mock: `provider_stream_event` (the parsed provider events),
//! `before_provider_headers` (a header added, one of `models.json` removed),
//! `context_with_system` (the full transcript, rewritten for the request) and
//! `before_agent_start`'s `messageType`. What the extension recorded and what reached the
//! mock must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

use mock_llm::{MockServer, Script, ScriptUsage};
use request_parity::apis::{MODEL, WireApi, wire_api};
use support::ts16::ts16;

/// Records every hook it sees to `$HOOK_LOG` (one JSON line each) and changes the request:
/// adds `x-ext-added`, removes `x-drop-me`, and rewrites the last user text when asked.
const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
const log = (entry) => appendFileSync(process.env.HOOK_LOG, JSON.stringify(entry) + "\n");
export default function (pi) {
  pi.registerCommand("ping", {
    description: "Starts a run with a custom message",
    handler: async () => {
      pi.sendMessage({ customType: "ping", content: "ping from a command", display: true }, { triggerTurn: true });
    },
  });
  pi.on("before_agent_start", (event) => {
    log({ hook: "before_agent_start", messageType: event.messageType, prompt: event.prompt, message: event.message?.customType });
  });
  pi.on("before_provider_headers", (event) => {
    log({ hook: "before_provider_headers", names: Object.keys(event.headers).sort() });
    event.headers["x-ext-added"] = "yes";
    event.headers["x-drop-me"] = null;
  });
  pi.on("provider_stream_event", (event) => {
    log({ hook: "provider_stream_event", provider: event.provider, api: event.api, model: event.model, data: event.data });
  });
  pi.on("context_with_system", (event) => {
    log({ hook: "context_with_system", roles: event.messages.map((m) => m.role) });
    if (process.env.HOOK_REWRITE !== "1") return;
    const messages = structuredClone(event.messages);
    const last = messages[messages.length - 1];
    if (last.role === "user") last.content = [{ type: "text", text: "rewritten by the extension" }];
    return { messages };
  });
}
"#;

/// What one run left: the hook log and, per request, the headers and texts that matter.
fn run(program: &Path, api: WireApi, rewrite: bool) -> Value {
    run_prompt(program, api, rewrite, "Say hello.")
}

/// The same, with `prompt` as the print-mode prompt.
fn run_prompt(program: &Path, api: WireApi, rewrite: bool, prompt: &str) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    // Fixed usage: the mock would otherwise count the request, whose prompt differs.
    server.push(
        Script::text("Hello from the mock.").with_full_usage(ScriptUsage {
            input: 100,
            output: 6,
            cache_read: 0,
            cache_write: 0,
            reasoning: 0,
        }),
    );
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let mut models = api.models_json(&server.url());
    models["providers"]["parity"]["headers"] = json!({"x-drop-me": "1", "x-kept": "1"});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let ext = dir.path().join("hooks.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = dir.path().join("hooks.jsonl");
    let output = Command::new(program)
        .args(["--model", &format!("parity/{MODEL}"), "--thinking", "off"])
        .args(["-e", ext.to_str().unwrap()])
        .args(["--mode", "json", "-p", prompt])
        .current_dir(&work)
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", dir.path())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("HOOK_LOG", &log)
        .env("HOOK_REWRITE", if rewrite { "1" } else { "0" })
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("AWS_REGION")
        .env_remove("AWS_PROFILE")
        .envs(api.env())
        .envs(support::ext_host::host_dir().map(|d| ("PI_EXTENSION_HOST_DIR", d)))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{} on {}: {}\n{}",
        program.display(),
        api.api,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let hooks: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let requests: Vec<Value> = server
        .requests()
        .iter()
        .map(|r| {
            json!({
                "x-ext-added": r.headers.get("x-ext-added"),
                "x-drop-me": r.headers.get("x-drop-me"),
                "x-kept": r.headers.get("x-kept"),
                "texts": (api.api == "openai-completions")
                    .then(|| support::rpc::user_texts(&r.body)),
            })
        })
        .collect();
    let mut outcome = json!({"hooks": hooks, "requests": requests});
    without_clock(&mut outcome);
    without_sdk_additions(&mut outcome);
    outcome
}

/// Leaves out what the providers' SDKs add to the events they parse: Google's client
/// attaches the HTTP response's headers (`sdkHttpResponse`) to every chunk; ours hands on
/// the chunk as the provider sent it.
fn without_sdk_additions(outcome: &mut Value) {
    for hook in outcome["hooks"].as_array_mut().unwrap() {
        if let Some(data) = hook.get_mut("data").and_then(Value::as_object_mut) {
            data.remove("sdkHttpResponse");
        }
    }
}

/// Zeroes the mock's clock readings (`created`, `created_at`, `createTime`), which differ
/// between the two runs.
fn without_clock(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, field) in map.iter_mut() {
                if matches!(key.as_str(), "created" | "created_at" | "createTime") {
                    *field = json!(0);
                } else {
                    without_clock(field);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(without_clock),
        _ => {}
    }
}

/// The first differing hook log entry or request, for a readable failure.
fn first_difference(ours: &Value, theirs: &Value) -> String {
    for list in ["hooks", "requests"] {
        let (a, b) = (
            ours[list].as_array().unwrap(),
            theirs[list].as_array().unwrap(),
        );
        for (i, (x, y)) in a.iter().zip(b).enumerate() {
            if x != y {
                return format!("{list}[{i}]:\n ours   {x}\n theirs {y}");
            }
        }
        if a.len() != b.len() {
            return format!("{list}: ours has {}, pi 1.6.0 {}", a.len(), b.len());
        }
    }
    String::new()
}

/// The APIs compared; Codex and Cloud Code Assist are left out (pi 1.6.0 tries a
/// WebSocket for Codex first and has no Cloud Code Assist).
const COMPARED: &[&str] = &[
    "openai-completions",
    "openai-responses",
    "anthropic-messages",
    "google-generative-ai",
    "mistral-conversations",
    "bedrock-converse-stream",
];

fn ours() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_pi"))
}

/// The hook log entries of one kind.
fn hooks<'a>(outcome: &'a Value, kind: &str) -> Vec<&'a Value> {
    outcome["hooks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|h| h["hook"] == kind)
        .collect()
}

#[test]
fn request_hooks_run_as_pi_16_on_every_api() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let theirs_pi = ts16();
    for api in COMPARED {
        let api = wire_api(api);
        let ours = run(&ours(), api, false);
        // The request carries the added header and not the removed one; the other
        // models.json header stays.
        let request = &ours["requests"][0];
        assert_eq!(request["x-ext-added"], "yes", "{}: {ours:#}", api.api);
        assert_eq!(request["x-drop-me"], Value::Null, "{}: {ours:#}", api.api);
        assert_eq!(request["x-kept"], "1", "{}: {ours:#}", api.api);
        let start = hooks(&ours, "before_agent_start");
        assert_eq!(start[0]["messageType"], "user", "{}", api.api);
        assert_eq!(start[0]["prompt"], "Say hello.", "{}", api.api);
        assert!(
            !hooks(&ours, "provider_stream_event").is_empty(),
            "{}: {ours:#}",
            api.api
        );
        assert_eq!(
            hooks(&ours, "context_with_system")[0]["roles"],
            json!(["system", "user"]),
            "{}",
            api.api
        );
        if let Some(wrapper) = &theirs_pi {
            let theirs = run(wrapper, api, false);
            assert!(
                ours == theirs,
                "{}: {}",
                api.api,
                first_difference(&ours, &theirs)
            );
        }
    }
}

#[test]
fn context_with_system_rewrites_the_request() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let api = wire_api("openai-completions");
    let ours = run(&ours(), api, true);
    assert_eq!(
        ours["requests"][0]["texts"],
        json!(["rewritten by the extension"]),
        "{ours:#}"
    );
    if let Some(wrapper) = ts16() {
        let theirs = run(&wrapper, api, true);
        assert!(ours == theirs, "{}", first_difference(&ours, &theirs));
    }
}

/// Runs `/ping` over RPC through `program` until the run it starts settled; returns the
/// hook log and the user texts of each request.
async fn ping_over_rpc(mut program: Command) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("pong"));
    let env = support::rpc::Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let ext = env.dir.path().join("hooks.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("hooks.jsonl");
    program.env("HOOK_LOG", &log);
    if let Some(host) = support::ext_host::host_dir() {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let hooks = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || {
            let mut rpc =
                support::rpc::Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
            let answer = rpc.call("p", json!({"type": "prompt", "message": "/ping"}));
            assert_eq!(answer["success"], true, "{answer:#?}");
            rpc.until("the run's end", |l| {
                l["type"] == "agent_settled" && !server.requests().is_empty()
            });
            rpc.finish();
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            drop(env);
            text.lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|h| h["hook"] == "before_agent_start")
                .collect::<Vec<Value>>()
        })
        .await
        .unwrap()
    };
    let requests: Vec<Vec<String>> = server
        .requests()
        .iter()
        .map(|r| support::rpc::user_texts(&r.body))
        .collect();
    json!({"before_agent_start": hooks, "requests": requests})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_a_custom_message_starts_is_announced_with_its_message() {
    if support::ext_host::host_dir().is_none() {
        return;
    }
    let ours = ping_over_rpc(Command::new(env!("CARGO_BIN_EXE_pi"))).await;
    assert_eq!(
        ours,
        json!({
            "before_agent_start": [{"hook": "before_agent_start", "messageType": "custom", "message": "ping"}],
            "requests": [["ping from a command"]],
        })
    );
    if let Some(wrapper) = ts16() {
        let theirs = ping_over_rpc(support::ts16::ts16_pi(&wrapper)).await;
        assert_eq!(ours, theirs, "ours, then pi 1.6.0");
    }
}
