//! Strict JSON-schema sampling of tool arguments (pi 1.6): on a model whose API has strict
//! mode, the built-in tools, an extension's tool that asks for it and an extension's
//! re-registration of the built-in read tool (`createReadTool`) are sent `strict: true` with
//! strict schemas, and a tool that does not ask stays plain. The same session through pi
//! 1.6.0 (`PI_TS16`) must send the same tools.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// Registers `pick` (strict preferred), `note` (no preference) and the built-in read again.
const EXTENSION: &str = r#"
import { Type } from "@sinclair/typebox";
import { createReadTool } from "@mariozechner/pi-coding-agent";
export default function (pi) {
  const read = createReadTool(process.cwd());
  pi.registerTool({ ...read, async execute(...args) { return read.execute(...args); } });
  pi.registerTool({
    name: "pick",
    label: "pick",
    description: "Pick a colour",
    parameters: Type.Object({ colour: Type.String(), shade: Type.Optional(Type.Number()) }),
    constrainedSampling: { type: "json_schema", strict: "prefer" },
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
  pi.registerTool({
    name: "note",
    label: "note",
    description: "Take a note",
    parameters: Type.Object({ text: Type.String() }),
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
}
"#;

/// The tools of the one request `program` sends, by name: `strict` and `parameters`.
async fn sent_tools(program: Command) -> Vec<(String, Value, Value)> {
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("done"));
    let env = Env::new(&server, 128_000, json!({}));
    // The mock provider again, now with strict mode (as pi-ai's catalog marks models that
    // have it).
    let models = json!({"providers": {"mock": {
        "baseUrl": server.openai_base_url(), "api": "openai-completions", "apiKey": "mock-key",
        "compat": {"supportsStrictMode": true},
        "models": [{"id": "mock-model", "name": "Mock Model", "contextWindow": 128000, "maxTokens": 16384}]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
    let ext = env.work.join("strict.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let output = run(
        &env,
        program,
        &["-e", ext.to_str().unwrap(), "--no-session", "-p", "hi"],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let f = &t["function"];
            (
                f["name"].as_str().unwrap().to_owned(),
                f["strict"].clone(),
                f["parameters"].clone(),
            )
        })
        .collect()
}

// Multi-threaded: pi runs blocking while the mock answers on the runtime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_that_prefer_strict_sampling_are_sent_strict_as_pi_16() {
    let tools = sent_tools(ours()).await;
    let get = |name: &str| tools.iter().find(|t| t.0 == name).unwrap();
    for name in ["read", "bash", "edit", "write", "pick"] {
        assert_eq!(get(name).1, json!(true), "{name}");
        assert_eq!(get(name).2["additionalProperties"], false, "{name}");
    }
    // An optional property is required and nullable in the strict schema.
    assert_eq!(get("pick").2["required"], json!(["colour", "shade"]));
    assert_eq!(
        get("pick").2["properties"]["shade"]["anyOf"][1],
        json!({"type": "null"})
    );
    assert_eq!(get("note").1, json!(false));
    assert_eq!(get("note").2["required"], json!(["text"]));
    if let Some(wrapper) = ts16() {
        let theirs = sent_tools(ts16_pi(&wrapper)).await;
        let strictness = |tools: &[(String, Value, Value)]| -> Vec<(String, Value, Value)> {
            let mut out: Vec<_> = tools
                .iter()
                .map(|(n, s, p)| (n.clone(), s.clone(), p["required"].clone()))
                .collect();
            out.sort_by(|a, b| a.0.cmp(&b.0));
            out
        };
        assert_eq!(strictness(&tools), strictness(&theirs));
    }
}
