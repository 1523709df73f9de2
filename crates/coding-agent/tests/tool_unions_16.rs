//! Tool arguments against `anyOf`/`oneOf` unions (pi 0.84.0): a value that already matches
//! one arm is kept as it is, before any coercion is tried (a `null` for a nullable string
//! stays `null`, a numeric string for `number | string` stays a string); only a value no arm
//! accepts is coerced. The same calls to an extension tool through ours and pi 1.6.0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::ext_tool::tool_results;
use support::ts16::pis;

/// A tool `echo` with a nullable string `label` and a `number | string` `size`, answering
/// with the arguments it received.
const EXTENSION: &str = r##"
export default function (pi) {
  pi.registerTool({
    name: "echo", label: "Echo", description: "Echoes its arguments",
    parameters: {
      type: "object",
      properties: {
        label: { anyOf: [{ type: "string" }, { type: "null" }] },
        size: { oneOf: [{ type: "number" }, { type: "string" }] },
        flag: { anyOf: [{ type: "boolean" }, { type: "null" }] },
      },
    },
    async execute(_id, params) {
      return { content: [{ type: "text", text: `got ${JSON.stringify(params)}` }], details: {} };
    },
  });
}
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn values_matching_a_union_arm_are_kept_before_coercion() {
    let calls = [
        json!({"label": null}),
        json!({"size": "5"}),
        json!({"label": 7}),
        json!({"flag": "true"}),
        json!({"flag": null}),
    ];
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((
            name,
            tool_results(&wrapper, EXTENSION, "echo", &calls).await,
        ));
    }
    let ours = &seen[0].1;
    assert_eq!(ours[0], r#"got {"label":null}"#, "{ours:?}");
    assert_eq!(ours[1], r#"got {"size":"5"}"#, "{ours:?}");
    assert_eq!(ours[2], r#"got {"label":"7"}"#, "{ours:?}");
    assert_eq!(ours[3], r#"got {"flag":true}"#, "{ours:?}");
    assert_eq!(ours[4], r#"got {"flag":null}"#, "{ours:?}");
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}
