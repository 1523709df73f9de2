//! codemode against pi 1.6.0: the same scripts (the model's `codemode` calls, scripted by
//! the mock) run through ours and pi 1.6.0 (`PI_TS16`) in print mode with
//! `--tools +codemode`; the tool results the model got back and the session entries must
//! agree once wall times and temp file names are normalized.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, read_jsonl};
use support::ts16::{pis, program, run};

/// What one run of a script left: the tool result texts the model saw (in order) and the
/// session's entries after the header, normalized.
#[derive(Debug, Clone, PartialEq)]
struct Outcome {
    results: Vec<String>,
    entries: Vec<Value>,
}

/// Wall times, time-outs, temp file names and the work folder made the same for both
/// programs.
fn normalize(text: &str, work: &Path) -> String {
    let wall = regex::Regex::new(r"Wall time [0-9.]+ seconds").unwrap();
    let temp = regex::Regex::new(r"/tmp/pi-codemode-[0-9a-f]{16}\.(txt|png|jpg|gif|webp)").unwrap();
    let timeout = regex::Regex::new(r"Execution timed out after [0-9]+ ms").unwrap();
    let text = text.replace(&work.display().to_string(), "<work>");
    let text = wall.replace_all(&text, "Wall time T seconds");
    let text = timeout.replace_all(&text, "Execution timed out after N ms");
    temp.replace_all(&text, "/tmp/pi-codemode-X.$1")
        .into_owned()
}

/// A session entry with ids, times, usage and model details left out; of the system
/// message (whose prompt texts are our own) the names of the tools it declares, with the
/// codemode note each carries.
fn entry_shape(entry: &Value, work: &Path) -> Value {
    let mut entry = entry.clone();
    if entry["message"]["role"] == "system" {
        let names: Vec<Value> = entry["message"]["toolsAdded"]
            .as_array()
            .map(|tools| {
                tools
                    .iter()
                    .map(|t| {
                        let note = t["description"]
                            .as_str()
                            .and_then(|d| d.split_once("\n\nCodemode: "))
                            .map(|(_, note)| note.to_owned());
                        json!([t["name"], note])
                    })
                    .collect()
            })
            .unwrap_or_default();
        return json!({"system": names});
    }
    for key in ["id", "parentId", "timestamp"] {
        entry.as_object_mut().unwrap().remove(key);
    }
    if let Some(message) = entry.get_mut("message").and_then(Value::as_object_mut) {
        for key in [
            "timestamp",
            "usage",
            "api",
            "provider",
            "model",
            "responseId",
            "durationMs",
            "stopReason",
        ] {
            message.remove(key);
        }
        if message.get("role") == Some(&json!("toolResult")) {
            message.remove("details");
            if let Some(calls) = message
                .get_mut("nestedCalls")
                .and_then(|n| n.get_mut("calls"))
                .and_then(Value::as_array_mut)
            {
                for call in calls {
                    call.as_object_mut().unwrap().remove("durationMs");
                }
            }
        }
    }
    let text = normalize(&entry.to_string(), work);
    serde_json::from_str(&text).unwrap()
}

/// Runs `scripts` (each one model turn calling codemode, then a final answer) in `work`,
/// with `tools` as the `--tools` value.
fn run_scripts(
    wrapper: &Option<PathBuf>,
    tools: &str,
    scripts: &[&str],
    setup: impl Fn(&Path),
) -> Outcome {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for code in scripts {
        server.push(Script::tool_call("codemode", json!({ "code": code })));
    }
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({}));
    setup(&env.work);
    let output = run(&env, program(wrapper), &["--tools", tools, "-p", "Go."]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    let results = last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| normalize(m["content"].as_str().unwrap_or_default(), &env.work))
        .collect();
    let files = env.session_files();
    let entries = read_jsonl(&files[0])
        .iter()
        .skip(1)
        .filter(|e| e["type"] != "model_change" && e["type"] != "thinking_level_change")
        .map(|e| entry_shape(e, &env.work))
        .collect();
    Outcome { results, entries }
}

/// The outcome of ours and of pi 1.6.0 for the same scripts; they must agree.
fn compare(scripts: &[&str], setup: impl Fn(&Path)) -> Outcome {
    compare_with("+codemode", scripts, setup)
}

/// [`compare`] with another `--tools` value.
#[allow(dead_code)]
fn compare_with(tools: &str, scripts: &[&str], setup: impl Fn(&Path)) -> Outcome {
    let mut outcomes = Vec::new();
    for (who, wrapper) in pis() {
        outcomes.push((who, run_scripts(&wrapper, tools, scripts, &setup)));
    }
    let (_, ours) = &outcomes[0];
    for (who, theirs) in &outcomes[1..] {
        assert_eq!(ours.results, theirs.results, "tool results: ours and {who}");
        assert_eq!(
            ours.entries, theirs.entries,
            "session entries: ours and {who}"
        );
    }
    outcomes.remove(0).1
}

fn three_files(work: &Path) {
    for (name, text) in [
        ("a.txt", "alpha\n"),
        ("b.txt", "beta\n"),
        ("c.txt", "gamma\n"),
    ] {
        std::fs::write(work.join(name), text).unwrap();
    }
}

#[test]
fn a_script_reads_three_files_in_parallel_as_16() {
    let outcome = compare(
        &[
            "const [a, b, c] = await Promise.all([\"a.txt\", \"b.txt\", \"c.txt\"].map((path) => tools.read({ path })));\nconsole.log(\"read\", 3);\nreturn { a, b, c };",
        ],
        three_files,
    );
    assert_eq!(
        outcome.results,
        [
            "Script completed\nWall time T seconds\nOutput:\n\n{\"a\":\"alpha\\n\",\"b\":\"beta\\n\",\"c\":\"gamma\\n\"}\n<console_output>\nread 3\n</console_output>"
        ]
    );
}

#[test]
fn a_script_filters_a_large_grep_as_16() {
    let outcome = compare(
        &[
            "const found = await tools.bash({ command: \"grep -n needle big.txt\" });\nconst lines = found.output.trim().split(\"\\n\").filter((line) => line.endsWith(\"7\"));\ntext(`${lines.length} of ${found.output.trim().split(\"\\n\").length}, exit ${found.exit_code}, cut ${found.truncated}`);\nreturn lines.slice(0, 3);",
        ],
        |work| {
            let text: String = (0..3000)
                .map(|i| {
                    if i % 3 == 0 {
                        format!("needle {i}\n")
                    } else {
                        format!("hay {i}\n")
                    }
                })
                .collect();
            std::fs::write(work.join("big.txt"), text).unwrap();
        },
    );
    assert!(
        outcome.results[0].contains("==> text 1/2 <==\n100 of 1000, exit 0, cut false"),
        "{outcome:?}"
    );
}

#[test]
fn a_script_failing_halfway_keeps_its_output_as_16() {
    let outcome = compare(
        &[
            "text(\"before\");\nconst a = await tools.read({ path: \"a.txt\" });\ntext(a);\nawait tools.read({ path: \"missing.txt\" });\ntext(\"after\");",
        ],
        three_files,
    );
    let result = &outcome.results[0];
    assert!(result.starts_with("Script failed\n"), "{result}");
    assert!(
        result.ends_with(
            "Tool calls made before the failure (they are not undone): read (ok), read (error)"
        ),
        "{result}"
    );
}

#[test]
fn output_past_max_output_tokens_is_cut_as_16() {
    let outcome = compare(
        &[
            "// @options: {\"max_output_tokens\": 10}\ntext(\"A\".repeat(30) + \"B\".repeat(30));\ntext(\"C\".repeat(30));",
        ],
        |_| {},
    );
    assert!(
        outcome.results[0].contains("Warning: truncated output (original token count: "),
        "{outcome:?}"
    );
}

/// (No output before the loop: pi 1.6.0's deadline counts its worker's start, which on a
/// busy machine can use up the 300 ms before the script's first line runs.)
#[test]
fn a_runaway_script_is_stopped_by_its_deadline_as_16() {
    let outcome = compare(
        &["// @options: {\"timeout_ms\": 300}\nlet n = 0;\nwhile (true) { n++; }"],
        |_| {},
    );
    assert_eq!(
        outcome.results,
        [
            "Script failed\nWall time T seconds\nOutput:\n\nScript error:\nScript timed out: Execution timed out after N ms\n\nNo tool calls were made."
        ]
    );
}

#[test]
fn stored_values_last_across_scripts_as_16() {
    let outcome = compare(
        &[
            "store(\"k\", { a: 1 });\nstore(\"gone\", [1]);\nreturn load(\"k\");",
            "store(\"gone\", undefined);\nreturn [load(\"k\"), load(\"gone\") === undefined];",
            "store(\"k\", 2);\nthrow new Error(\"no\");",
            "return load(\"k\");",
        ],
        |_| {},
    );
    assert_eq!(
        outcome.results[1],
        "Script completed\nWall time T seconds\nOutput:\n\n[{\"a\":1},true]"
    );
    assert_eq!(
        outcome.results[3],
        "Script completed\nWall time T seconds\nOutput:\n\n{\"a\":1}"
    );
    let stores: Vec<&Value> = outcome
        .entries
        .iter()
        .filter(|e| e["customType"] == "codemode-store")
        .collect();
    assert_eq!(stores.len(), 2, "{:?}", outcome.entries);
}

#[test]
fn a_script_cannot_reach_the_host_as_16() {
    let outcome = compare(
        &[
            "return [typeof process, typeof require, typeof setTimeout, typeof fetch, typeof std, typeof os, typeof WebAssembly, typeof Deno, typeof Bun];",
            "await import(\"fs\");",
            "await new Promise(() => {});\nreturn 1;",
            "text(\"a\");\nthrow { code: 7 };",
            "const big = [];\nfor (;;) big.push(\"x\".repeat(1 << 20));",
        ],
        |_| {},
    );
    assert_eq!(
        outcome.results[0],
        "Script completed\nWall time T seconds\nOutput:\n\n[\"undefined\",\"undefined\",\"undefined\",\"undefined\",\"undefined\",\"undefined\",\"undefined\",\"undefined\",\"undefined\"]"
    );
    assert!(
        outcome.results[1].starts_with("Script failed\n"),
        "{outcome:?}"
    );
    assert!(outcome.results[4].contains("out of memory"), "{outcome:?}");
}

#[test]
fn a_script_finds_and_calls_an_mcp_tool_as_16() {
    let Some(servers) = support::mcp::servers_dir() else {
        return;
    };
    let outcome = compare(
        &[
            "const found = await searchTools(\"echo the message\", { limit: 2 });\nconst echoed = await tools.mcp__everything__echo({ message: \"hi\" });\nconst space = await describeNamespace(\"mcp__everything\");\nreturn { found: found.map((t) => t.name), echoed, listed: ALL_TOOLS.some((t) => t.name === \"mcp__everything__echo\"), inSpace: space.tools.includes(\"mcp__everything__echo\") };",
        ],
        |work| {
            let config =
                json!({"mcpServers": {"everything": support::mcp::everything_default(&servers)}});
            let agent = work.parent().unwrap().join("agent");
            std::fs::write(agent.join("mcp.json"), config.to_string()).unwrap();
        },
    );
    let result = &outcome.results[0];
    assert!(
        result.contains("\"echoed\":{\"content\":[{\"type\":\"text\",\"text\":\"Echo: hi\"}]}"),
        "{result}"
    );
    assert!(
        result.contains("\"found\":[\"mcp__everything__echo\""),
        "{result}"
    );
}

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==";

#[test]
fn images_are_checked_saved_and_shown_as_16() {
    let outcome = compare(
        &[
            "const shot = await tools.read({ path: \"dot.png\" });\ntext(shot.note);\nimage(shot);\nimage(\"data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAEElEQVR4nGP4z8AARAwQCgAf7gP9i18U1AAAAABJRU5ErkJggg==\");\ntext(\"two\");",
            "image(\"data:image/png;base64,abc\");",
            "image(\"https://example.com/x.png\");",
            "image({ type: \"image\", data: \"aGVsbG8gd29ybGQh\", mimeType: \"image/png\" });",
        ],
        |work| {
            use base64::Engine;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(PNG)
                .unwrap();
            std::fs::write(work.join("dot.png"), bytes).unwrap();
        },
    );
    assert!(
        outcome.results[0].contains("[Image saved to /tmp/pi-codemode-X.png (image/png, "),
        "{outcome:?}"
    );
    for failed in &outcome.results[1..] {
        assert!(failed.starts_with("Script failed"), "{failed}");
    }
}

#[test]
fn output_limits_and_numbers_print_as_16() {
    let outcome = compare(
        &[
            "console.log(NaN, Infinity, -Infinity, 0.5, [1, 2], null, undefined);\nthrow NaN;",
            "// @options: {\"max_output_tokens\": 50}\nfor (let i = 0; i < 100001; i++) console.log(i);",
            "text(\"a\");\nexit();\ntext(\"b\");",
            "const x = ;",
            "tools.reed({ path: \"a\" });",
        ],
        |_| {},
    );
    assert!(
        outcome.results[0].contains("NaN Infinity -Infinity 0.5 [1,2] null undefined"),
        "{outcome:?}"
    );
    // The error ends the (cut) output: its last words are kept.
    assert!(
        outcome.results[1].contains("large data to a file with a tool.\n    at "),
        "{outcome:?}"
    );
    assert!(
        outcome.results[4]
            .contains("tools.reed does not exist. Available: read, bash, edit, write."),
        "{outcome:?}"
    );
}

#[test]
fn models_lists_the_catalog_and_answers_model_calls_as_16() {
    let outcome = compare(
        &[
            "const chat = await models.getModelsOfType(\"chat\", \"mock\");\n\
             console.log(chat.map((m) => `${m.provider}/${m.id} ${m.api} ${m.contextWindow}`).join(\"; \"));\n\
             const ready = await models.getAvailableOfType(\"chat\", \"mock\");\n\
             console.log(ready.length, (await models.getModelOfType(\"chat\", \"mock\", \"mock-thinker\"))?.name);\n\
             console.log(await models.getModelOfType(\"chat\", \"mock\", \"nope\"));\n\
             console.log((await models.getModelsOfType(\"image\", \"mock\")).length);",
            "await models.getModelsOfType(\"audio\");",
            "models.listAll();",
            "const r = await models.classify({ provider: \"mock\", id: \"mock-model\" }, { state: {}, questions: {} });\n\
             return [r.stopReason, r.errorMessage, r.provider, r.model, JSON.stringify(r.answers)].join(\" | \");",
            "await models.classify({ provider: \"mock\", id: \"nope\" }, { state: {}, questions: {} });",
            "await models.generateImages(undefined, { input: [] });",
            "await models.generateImages({ model: \"x\" }, { input: [] });",
            "await models.getModelOfType(\"chat\", \"mock/mock-model\");",
        ],
        |_| {},
    );
    assert!(
        outcome.results[0].contains("mock/mock-model openai-completions 128000"),
        "{outcome:?}"
    );
    assert!(outcome.results[0].contains("2 Mock Thinker"), "{outcome:?}");
}

/// The tool events of a `--mode json` run: type, call id, tool and parent call.
fn tool_events(
    wrapper: &Option<PathBuf>,
    code: &str,
) -> Vec<(String, String, String, Option<String>)> {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.push(Script::tool_call("codemode", json!({ "code": code })));
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({}));
    three_files(&env.work);
    let output = run(
        &env,
        program(wrapper),
        &["--tools", "+codemode", "--mode", "json", "-p", "Go."],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|e| {
            e["type"]
                .as_str()
                .is_some_and(|t| t == "tool_execution_start" || t == "tool_execution_end")
        })
        .map(|e| {
            (
                e["type"].as_str().unwrap().to_owned(),
                e["toolCallId"].as_str().unwrap_or_default().to_owned(),
                e["toolName"].as_str().unwrap_or_default().to_owned(),
                e["parentToolCallId"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

#[test]
fn a_script_s_calls_are_events_with_their_parent_as_16() {
    let code = "const a = await tools.read({ path: \"a.txt\" });\nconst b = await tools.read({ path: \"nope.txt\" }).catch((e) => e.message);\nreturn [a, b.length > 0];";
    let mut all = Vec::new();
    for (who, wrapper) in pis() {
        all.push((who, tool_events(&wrapper, code)));
    }
    let (_, ours) = &all[0];
    let parent = Some("call_1".to_owned());
    assert_eq!(
        ours.iter()
            .map(|e| (e.0.as_str(), e.1.as_str(), e.3.clone()))
            .collect::<Vec<_>>(),
        vec![
            ("tool_execution_start", "call_1", None),
            ("tool_execution_start", "call_1/1", parent.clone()),
            ("tool_execution_end", "call_1/1", parent.clone()),
            ("tool_execution_start", "call_1/2", parent.clone()),
            ("tool_execution_end", "call_1/2", parent.clone()),
            ("tool_execution_end", "call_1", None),
        ]
    );
    for (who, theirs) in &all[1..] {
        assert_eq!(ours, theirs, "ours and {who}");
    }
}

#[test]
fn scripts_wait_for_a_free_worker_as_16() {
    for (who, wrapper) in pis() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime.block_on(MockServer::start()).unwrap();
        let code = "const r = await tools.bash({ command: \"sleep 0.3; echo ok\" });\nreturn r.output.trim();";
        server.push(Script::new(vec![
            mock_llm::Item::tool_call("codemode", json!({ "code": code })),
            mock_llm::Item::tool_call("codemode", json!({ "code": code })),
        ]));
        server.push(Script::text("Done."));
        let env = Env::new(&server, 128_000, json!({}));
        let mut command = program(&wrapper);
        command.env("PI_CODEMODE_MAX_WORKERS", "1");
        let output = run(&env, command, &["--tools", "+codemode", "-p", "Go."]);
        assert!(
            output.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let requests = server.requests();
        let results: Vec<String> = requests.last().unwrap().body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "tool")
            .map(|m| normalize(m["content"].as_str().unwrap_or_default(), &env.work))
            .collect();
        assert_eq!(
            results, ["Script completed\nWall time T seconds\nOutput:\n\nok"; 2],
            "{who}"
        );
    }
}

/// An extension logging each `tool_call` (name, id, parent) to `calls.log` and blocking
/// `write`.
const GATE: &str = r#"import * as fs from "node:fs";
export default function (pi) {
  pi.on("tool_call", async (event) => {
    fs.appendFileSync("calls.log", JSON.stringify([event.toolName, event.toolCallId, event.parentToolCallId ?? null]) + "\n");
    if (event.toolName === "write") return { block: true, reason: "no writing here" };
  });
}
"#;

#[test]
fn a_script_s_calls_pass_the_extensions_gate_as_16() {
    let code = "const a = await tools.read({ path: \"a.txt\" });\nconst w = await tools.write({ path: \"x.txt\", content: a }).catch((e) => e.message);\nreturn [a, w];";
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let server = runtime.block_on(MockServer::start()).unwrap();
        server.push(Script::tool_call("codemode", json!({ "code": code })));
        server.push(Script::text("Done."));
        let env = Env::new(&server, 128_000, json!({}));
        three_files(&env.work);
        let extensions = env.agent.join("extensions");
        std::fs::create_dir_all(&extensions).unwrap();
        std::fs::write(extensions.join("gate.ts"), GATE).unwrap();
        let output = run(
            &env,
            support::ts16::program_with_host(&wrapper),
            &["--tools", "+codemode", "-p", "Go."],
        );
        assert!(
            output.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let requests = server.requests();
        let result = requests.last().unwrap().body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "tool")
            .map(|m| normalize(m["content"].as_str().unwrap_or_default(), &env.work))
            .unwrap();
        let log = std::fs::read_to_string(env.work.join("calls.log")).unwrap_or_default();
        assert!(
            !env.work.join("x.txt").exists(),
            "{who}: the blocked write ran"
        );
        seen.push((who, result, log));
    }
    let (_, result, log) = &seen[0];
    assert_eq!(
        result,
        "Script completed\nWall time T seconds\nOutput:\n\n[\"alpha\\n\",\"no writing here\"]"
    );
    assert_eq!(
        log,
        "[\"codemode\",\"call_1\",null]\n[\"read\",\"call_1/1\",\"call_1\"]\n[\"write\",\"call_1/2\",\"call_1\"]\n"
    );
    for (who, their_result, their_log) in &seen[1..] {
        assert_eq!(result, their_result, "ours and {who}");
        assert_eq!(log, their_log, "ours and {who}");
    }
}

/// A hundred calls at once: each call's events go through the agent's ordered sink while
/// the others run (ours once waited forever for a call holding that order, about one run
/// in two).
#[test]
fn a_hundred_calls_at_once_all_answer_as_16() {
    let outcome = compare(
        &[
            "const all = await Promise.all(Array.from({ length: 100 }, (_, i) => tools.read({ path: [\"a.txt\", \"b.txt\", \"c.txt\"][i % 3] })));\nreturn all.join(\"\").length;",
        ],
        three_files,
    );
    assert_eq!(
        outcome.results,
        ["Script completed\nWall time T seconds\nOutput:\n\n567"]
    );
}
