//! Tool argument validation of a schema with a relative root `$id` and local `$ref`s
//! (pi 1.5.1 stopped rejecting valid arguments for it): an extension tool called with valid,
//! coercible and invalid arguments gives the model the same results in ours and in pi 1.6.0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::ext_tool::tool_results;
use support::ts16::pis;

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
        seen.push((
            name,
            tool_results(&wrapper, EXTENSION, "count", &calls).await,
        ));
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
