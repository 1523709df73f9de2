//! Tool argument validation of a schema with a relative root `$id` and local `$ref`s
//! (pi 1.5.1 stopped rejecting valid arguments for it): an extension tool called with valid,
//! coercible and invalid arguments gives the model the same results in ours and in pi 1.6.0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program_with_host as program, run};

/// A tool `count` whose schema names itself `schemas/tool.json` and reaches its fields
/// through `$defs`.
const EXTENSION: &str = r##"
export default function (pi) {
  pi.registerTool({
    name: "count", label: "Count", description: "Counts things",
    parameters: {
      $id: "schemas/tool.json",
      type: "object",
      properties: { n: { $ref: "#/$defs/amount" }, unit: { $ref: "#/$defs/unit" } },
      required: ["n"],
      $defs: {
        amount: { type: "integer", minimum: 1 },
        unit: { type: "string", enum: ["apples", "pears"] },
      },
    },
    async execute(_id, params) {
      return { content: [{ type: "text", text: `counted ${JSON.stringify(params)}` }], details: {} };
    },
  });
}
"##;

/// The text of each tool result the model got back, for calls with `calls` as arguments.
async fn results(wrapper: &Option<PathBuf>, calls: &[Value]) -> Vec<String> {
    let server = MockServer::start().await.unwrap();
    for args in calls {
        server.push(Script::tool_call("count", args.clone()));
    }
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({}));
    let extension = env.work.join("count.ts");
    std::fs::write(&extension, EXTENSION).unwrap();
    let extension = extension.display().to_string();
    let output = tokio::task::block_in_place(|| {
        run(
            &env,
            program(wrapper),
            &["-e", &extension, "-p", "Count them."],
        )
    });
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_refs_under_a_relative_id_validate() {
    let calls = [
        json!({"n": 3, "unit": "apples"}),
        json!({"n": "4"}),
        json!({"n": 0}),
        json!({"n": 2, "unit": "plums"}),
    ];
    let mut seen: Vec<(&str, Vec<String>)> = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, results(&wrapper, &calls).await));
    }
    let ours = &seen[0].1;
    assert_eq!(ours.len(), 4, "{ours:?}");
    assert_eq!(ours[0], r#"counted {"n":3,"unit":"apples"}"#);
    assert_eq!(ours[1], r#"counted {"n":4}"#);
    assert!(ours[2].starts_with("Validation failed"), "{ours:?}");
    assert!(ours[3].starts_with("Validation failed"), "{ours:?}");
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}
