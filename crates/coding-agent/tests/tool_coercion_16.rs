//! Tool argument coercion as pi 1.6's pi-schema does it (pi 1.5.0, 1.5.x): a plain JSON
//! Schema tool gets the same conversions as a TypeBox one (numeric strings, a single value
//! wrapped into an array), and TypeBox's `Type.BigInt()` and `Type.Undefined()` parameters
//! take what TypeBox converted (`"42"` and `42` to `42n`, `null` to `undefined`). The same
//! calls to an extension tool through ours and pi 1.6.0.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;
use support::ext_tool::tool_results;
use support::ts16::pis;

/// A plain JSON Schema tool `echo` with array, number and boolean parameters, answering
/// with the arguments it received.
const PLAIN: &str = r##"
export default function (pi) {
  pi.registerTool({
    name: "echo", label: "Echo", description: "Echoes its arguments",
    parameters: {
      type: "object",
      properties: {
        tags: { type: "array", items: { type: "string" } },
        sizes: { type: "array", items: { type: "number" } },
        limit: { type: "number" },
        count: { type: "integer" },
        all: { type: "boolean" },
        name: { type: "string" },
        kind: { enum: ["a", "1"] },
      },
    },
    async execute(_id, params) {
      return { content: [{ type: "text", text: `got ${JSON.stringify(params)}` }], details: {} };
    },
  });
}
"##;

/// A TypeBox tool `big` with a `Type.BigInt()` and a `Type.Undefined()` parameter, answering
/// with the type and value of each.
const TYPEBOX: &str = r##"
import { Type } from "typebox";
export default function (pi) {
  pi.registerTool({
    name: "big", label: "Big", description: "Reports its arguments",
    parameters: Type.Object({
      n: Type.Optional(Type.BigInt()),
      gone: Type.Optional(Type.Undefined()),
    }),
    async execute(_id, params) {
      const show = (v) => `${typeof v}:${String(v)}`;
      const keys = Object.keys(params).sort().join(",");
      return { content: [{ type: "text", text: `n=${show(params.n)} gone=${show(params.gone)} keys=${keys}` }], details: {} };
    },
  });
}
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_json_schema_tools_get_pi_schemas_coercion() {
    let calls = [
        json!({"tags": "one"}),
        json!({"sizes": "5"}),
        json!({"tags": 7}),
        json!({"limit": "12", "all": "true"}),
        json!({"tags": ["a", "b"]}),
        json!({"count": "5.5"}),
        json!({"limit": ""}),
        json!({"limit": "abc"}),
        json!({"name": null, "all": null}),
        json!({"kind": 1}),
        json!({"tags": null}),
    ];
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, tool_results(&wrapper, PLAIN, "echo", &calls).await));
    }
    for (name, theirs) in &seen {
        eprintln!("{name}: {theirs:#?}");
    }
    let ours = &seen[0].1;
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typebox_bigint_and_undefined_parameters_convert_as_pi_16() {
    let calls = [
        json!({"n": "42"}),
        json!({"n": 42}),
        json!({"gone": null}),
        json!({"n": "nope"}),
    ];
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, tool_results(&wrapper, TYPEBOX, "big", &calls).await));
    }
    for (name, theirs) in &seen {
        eprintln!("{name}: {theirs:#?}");
    }
    let ours = &seen[0].1;
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}

/// A plain JSON Schema tool `req` whose parameters are required.
const REQUIRED: &str = r##"
export default function (pi) {
  pi.registerTool({
    name: "req", label: "Req", description: "Echoes its arguments",
    parameters: {
      type: "object",
      properties: { name: { type: "string" }, count: { type: "integer" }, on: { type: "boolean" } },
      required: ["name", "count"],
    },
    async execute(_id, params) {
      return { content: [{ type: "text", text: `got ${JSON.stringify(params)}` }], details: {} };
    },
  });
}
"##;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn required_nulls_and_numbers_convert_as_pi_16() {
    let calls = [
        json!({"name": null, "count": null}),
        json!({"name": 5, "count": "5.5", "on": "0"}),
        json!({"count": " "}),
        json!({"name": true, "count": "7n", "on": null}),
    ];
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, tool_results(&wrapper, REQUIRED, "req", &calls).await));
    }
    for (name, theirs) in &seen {
        eprintln!("{name}: {theirs:#?}");
    }
    let ours = &seen[0].1;
    for (name, theirs) in &seen[1..] {
        assert_eq!(theirs, ours, "{name} differs from ours");
    }
}
