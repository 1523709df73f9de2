//! The message fields pi-ai 1.6 added, as each wire API stores them: `rawStopReason`,
//! `durationMs` and `thinkingLevel` on assistant messages, `durationMs` on tool results and
//! `tool_execution_end`, `usage.reasoning`, `usage.cacheWrite1h` and
//! `usage.cost.totalFromProvider`. The same tool round trip runs through ours and, when
//! `PI_TS16` names it, through pi 1.6.0 on every API; the shapes of what each printed in
//! JSON mode and wrote to its session must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Map, Value, json};

use mock_llm::{MockServer, Script, ScriptUsage};
use request_parity::apis::{APIS, MODEL, WireApi};
use request_parity::scenarios::{NOTES_FILE, NOTES_TEXT};
use support::ts16::ts16;

/// The APIs pi 1.6.0 no longer has; only ours runs them.
const OURS_ONLY: &[&str] = &["google-gemini-cli"];

/// Leaves out what differs for a reason outside these fields:
/// - Mistral: pi 1.6.0 reads `prompt_tokens_details.cached_tokens` as ours does, but its
///   Mistral SDK drops that field from the mock's usage first, so its cache reads are 0.
fn without_known(api: &str, mut outcome: Value) -> Value {
    for list in ["printed", "stored"] {
        for message in outcome[list].as_array_mut().into_iter().flatten() {
            if api == "mistral-conversations"
                && let Some(usage) = message.get_mut("usage").and_then(Value::as_object_mut)
            {
                for field in ["input", "cacheRead", "cost"] {
                    usage.remove(field);
                }
            }
        }
    }
    outcome
}

fn usage(reasoning: u64) -> ScriptUsage {
    ScriptUsage {
        input: 120,
        output: 40,
        cache_read: 30,
        cache_write: 10,
        reasoning,
    }
}

/// `models.json` for `api` with prices, so cost fields are computed, not zero.
fn models_json(api: WireApi, url: &str) -> Value {
    let mut models = api.models_json(url);
    for model in models["providers"]["parity"]["models"]
        .as_array_mut()
        .unwrap()
    {
        model["cost"] = json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75});
    }
    models
}

/// Runs a read-then-answer turn on `api` through `program`; returns the JSON-mode lines
/// and the session file's entries.
fn run(program: &Path, api: WireApi) -> (Vec<Value>, Vec<Value>) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::tool_call("read", json!({"path": NOTES_FILE})).with_full_usage(usage(12)));
    server.push(Script::text("The notes say one line.").with_full_usage(usage(0)));
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(
        agent.join("models.json"),
        models_json(api, &server.url()).to_string(),
    )
    .unwrap();
    std::fs::write(work.join(NOTES_FILE), NOTES_TEXT).unwrap();
    let output = Command::new(program)
        .args(["--model", &format!("parity/{MODEL}"), "--thinking", "low"])
        .args(["--mode", "json", "-p", "Read the notes."])
        .current_dir(&work)
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", dir.path())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("OPENAI_API_KEY")
        .env_remove("AWS_REGION")
        .env_remove("AWS_PROFILE")
        .envs(api.env())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{} on {}: {stdout}\n{}",
        program.display(),
        api.api,
        String::from_utf8_lossy(&output.stderr)
    );
    let lines = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let entries = session_file(&agent)
        .map(|path| support::rpc::read_jsonl(&path))
        .unwrap_or_default();
    (lines, entries)
}

fn session_file(agent: &Path) -> Option<PathBuf> {
    let mut stack = vec![agent.join("sessions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).ok()?.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "jsonl") {
                return Some(path);
            }
        }
    }
    None
}

/// A message's new fields and its key set; times become `<ms>`, ids and texts are left out.
fn shape(message: &Value) -> Value {
    let Some(object) = message.as_object() else {
        return Value::Null;
    };
    let mut keys: Vec<&String> = object.keys().collect();
    keys.sort();
    let mut out = Map::new();
    out.insert("role".into(), message["role"].clone());
    out.insert("keys".into(), json!(keys));
    for field in ["stopReason", "rawStopReason", "thinkingLevel", "isError"] {
        if let Some(v) = object.get(field) {
            out.insert(field.into(), v.clone());
        }
    }
    if let Some(ms) = object.get("durationMs") {
        out.insert("durationMs".into(), json!(ms.is_u64().then_some("<ms>")));
    }
    if let Some(usage) = object.get("usage") {
        let mut usage = usage.clone();
        if let Some(cost) = usage.get_mut("cost").and_then(Value::as_object_mut) {
            for value in cost.values_mut() {
                if let Some(n) = value.as_f64() {
                    // Float sums may differ in the last digit between engines.
                    *value = json!(format!("{n:.9}"));
                }
            }
        }
        out.insert("usage".into(), usage);
    }
    Value::Object(out)
}

/// What a run showed: the shapes of the ended messages and tool executions it printed, and
/// of the messages it stored.
fn outcome(lines: &[Value], entries: &[Value]) -> Value {
    let printed: Vec<Value> = lines
        .iter()
        .filter_map(|l| match l["type"].as_str() {
            Some("message_end") => Some(shape(&l["message"])),
            Some("tool_execution_end") => {
                let mut keys: Vec<&String> = l.as_object()?.keys().collect();
                keys.sort();
                Some(json!({"tool_execution_end": keys,
                            "durationMs": l["durationMs"].is_u64()}))
            }
            _ => None,
        })
        .collect();
    let stored: Vec<Value> = entries
        .iter()
        .filter(|e| e["type"] == "message")
        .map(|e| shape(&e["message"]))
        .collect();
    json!({"printed": printed, "stored": stored})
}

/// What ours must show on every API whatever pi 1.6.0 does: the fields are there.
fn assert_fields_present(api: &str, outcome: &Value) {
    let stored = outcome["stored"].as_array().unwrap();
    let assistants: Vec<&Value> = stored.iter().filter(|m| m["role"] == "assistant").collect();
    assert_eq!(assistants.len(), 2, "{api}: {outcome:#}");
    for message in &assistants {
        assert_eq!(message["thinkingLevel"], "low", "{api}: {message:#}");
        assert_eq!(message["durationMs"], "<ms>", "{api}: {message:#}");
        assert!(message["rawStopReason"].is_string(), "{api}: {message:#}");
        assert_eq!(
            message["usage"]["cost"]["totalFromProvider"], false,
            "{api}"
        );
    }
    let tool_result = stored.iter().find(|m| m["role"] == "toolResult").unwrap();
    assert_eq!(tool_result["durationMs"], "<ms>", "{api}: {tool_result:#}");
    let printed = outcome["printed"].as_array().unwrap();
    assert!(
        printed
            .iter()
            .any(|p| p.get("tool_execution_end").is_some() && p["durationMs"] == true),
        "{api}: {outcome:#}"
    );
}

#[test]
fn new_message_fields_are_stored_as_pi_16_on_every_api() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_pi"));
    let theirs = ts16();
    let mut differences = Vec::new();
    for api in APIS {
        let (lines, entries) = run(&ours, api);
        let our_outcome = outcome(&lines, &entries);
        assert_fields_present(api.api, &our_outcome);
        let our_outcome = without_known(api.api, our_outcome);
        let Some(wrapper) = theirs.as_ref().filter(|_| !OURS_ONLY.contains(&api.api)) else {
            continue;
        };
        let (lines, entries) = run(wrapper, api);
        let their_outcome = without_known(api.api, outcome(&lines, &entries));
        if our_outcome != their_outcome {
            differences.push(format!(
                "{}:\nours   {our_outcome:#}\npi 1.6 {their_outcome:#}",
                api.api
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n\n"));
}

#[test]
fn usage_reasoning_is_read_where_the_wire_reports_it() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_pi"));
    for (api, expected) in [
        ("openai-completions", Some(12)),
        ("openai-responses", Some(12)),
        ("anthropic-messages", Some(12)),
        ("google-generative-ai", Some(12)),
        // Bedrock's and Mistral's streams have no reasoning count.
        ("bedrock-converse-stream", None),
        ("mistral-conversations", None),
    ] {
        let (_, entries) = run(&ours, request_parity::apis::wire_api(api));
        let first = entries
            .iter()
            .find(|e| e["type"] == "message" && e["message"]["role"] == "assistant")
            .unwrap();
        assert_eq!(
            first["message"]["usage"]["reasoning"].as_u64(),
            expected,
            "{api}: {first:#}"
        );
    }
}

/// An Anthropic stream whose cache writes are 200 five-minute and 100 one-hour tokens.
const ONE_HOUR_WRITES: &str = concat!(
    "event: message_start\n",
    r#"data: {"type":"message_start","message":{"id":"msg_1h","type":"message","role":"assistant","model":"m","content":[],"stop_reason":null,"usage":{"input_tokens":100,"output_tokens":1,"cache_read_input_tokens":0,"cache_creation_input_tokens":300,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":100}}}}"#,
    "\n\nevent: content_block_start\n",
    r#"data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#,
    "\n\nevent: content_block_delta\n",
    r#"data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cached"}}"#,
    "\n\nevent: content_block_stop\n",
    r#"data: {"type":"content_block_stop","index":0}"#,
    "\n\nevent: message_delta\n",
    r#"data: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5,"cache_creation":{"ephemeral_5m_input_tokens":200,"ephemeral_1h_input_tokens":100}}}"#,
    "\n\nevent: message_stop\n",
    r#"data: {"type":"message_stop"}"#,
    "\n\n"
);

/// The stored usage of one answer from `model` on a built-in provider pointed at the mock.
fn one_hour_usage(program: &Path, provider: &str, model: &str, key_var: &str) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::raw(ONE_HOUR_WRITES));
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    std::fs::create_dir_all(&agent).unwrap();
    let models = json!({"providers": {provider: {"baseUrl": server.url()}}});
    std::fs::write(agent.join("models.json"), models.to_string()).unwrap();
    let output = Command::new(program)
        .args([
            "--model",
            &format!("{provider}/{model}"),
            "--thinking",
            "off",
        ])
        .args(["-p", "Hello."])
        .current_dir(dir.path())
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", dir.path())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env_remove("ANTHROPIC_API_KEY")
        .env(key_var, "sk-one-hour")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{provider}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let entries = support::rpc::read_jsonl(&session_file(&agent).unwrap());
    let answer = entries
        .iter()
        .find(|e| e["type"] == "message" && e["message"]["role"] == "assistant")
        .unwrap();
    shape(&answer["message"])["usage"].clone()
}

#[test]
fn one_hour_cache_writes_cost_twice_the_input_price_directly_and_through_vercel() {
    let ours = PathBuf::from(env!("CARGO_BIN_EXE_pi"));
    let theirs = ts16();
    for (provider, model, key_var) in [
        ("anthropic", "claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
        (
            "vercel-ai-gateway",
            "anthropic/claude-sonnet-4.5",
            "AI_GATEWAY_API_KEY",
        ),
    ] {
        let usage = one_hour_usage(&ours, provider, model, key_var);
        assert_eq!(usage["cacheWrite"], 300, "{provider}: {usage:#}");
        assert_eq!(usage["cacheWrite1h"], 100, "{provider}: {usage:#}");
        // 200 five-minute writes at $3.75/M and 100 one-hour writes at 2 × $3/M.
        let expected = format!("{:.9}", (3.75 * 200.0 + 3.0 * 2.0 * 100.0) / 1_000_000.0);
        assert_eq!(usage["cost"]["cacheWrite"], json!(expected), "{provider}");
        if let Some(wrapper) = &theirs {
            let their_usage = one_hour_usage(wrapper, provider, model, key_var);
            assert_eq!(usage, their_usage, "{provider}: ours, then pi 1.6.0");
        }
    }
}

/// Writes what each `tool_execution_end` an extension saw says about `durationMs`.
const DURATION_EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("tool_execution_end", (event) => {
    appendFileSync(process.env.DURATION_LOG, `${event.toolName} ${typeof event.durationMs}\n`);
  });
}
"#;

/// What the extension logged for a turn that reads a file and calls an unknown tool.
fn extension_durations(program: &Path, host: Option<&Path>) -> String {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::new(vec![
        mock_llm::Item::tool_call("read", json!({"path": NOTES_FILE})),
        mock_llm::Item::tool_call("no_such_tool", json!({})),
    ]));
    server.push(Script::text("Done."));
    let dir = tempfile::tempdir().unwrap();
    let agent = dir.path().join("agent");
    let work = dir.path().join("work");
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let api = request_parity::apis::wire_api("openai-completions");
    std::fs::write(
        agent.join("models.json"),
        models_json(api, &server.url()).to_string(),
    )
    .unwrap();
    std::fs::write(work.join(NOTES_FILE), NOTES_TEXT).unwrap();
    let ext = dir.path().join("durations.ts");
    std::fs::write(&ext, DURATION_EXTENSION).unwrap();
    let log = dir.path().join("durations.log");
    let mut command = Command::new(program);
    if let Some(host) = host {
        command.env("PI_EXTENSION_HOST_DIR", host);
    }
    let output = command
        .args(["--model", &format!("parity/{MODEL}"), "-e"])
        .arg(&ext)
        .args(["-p", "Read the notes."])
        .current_dir(&work)
        .env("PI_CODING_AGENT_DIR", &agent)
        .env("HOME", dir.path())
        .env("PI_OFFLINE", "1")
        .env("PI_SKIP_VERSION_CHECK", "1")
        .env("DURATION_LOG", &log)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    // Calls of one message run side by side: their ends may come in either order.
    let mut lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines.join("\n")
}

#[test]
fn extensions_see_the_duration_of_tools_that_ran() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let ours = extension_durations(Path::new(env!("CARGO_BIN_EXE_pi")), Some(&host));
    // The read ran; the unknown tool never started, so it has no duration.
    assert_eq!(ours, "no_such_tool undefined\nread number");
    if let Some(wrapper) = ts16() {
        assert_eq!(
            ours,
            extension_durations(&wrapper, None),
            "ours, then pi 1.6.0"
        );
    }
}
