//! Built-in tools are named `builtin:<name>` (pi 1.5.x): `pi.getAllTools()` gives each of
//! pi's own tools the source info `{path: "builtin:read", source: "builtin", scope:
//! "temporary", origin: "top-level"}`, and an extension tool its file. Ours and pi 1.6.0
//! (`PI_TS16`) run the same extension; every tool ours has is named as 1.6.0 names it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program_with_host, run};

/// Registers a tool and writes the source info of every tool to `$TOOLS_OUT` when a
/// prompt starts.
const EXTENSION: &str = r#"
import { writeFileSync } from "node:fs";
export default function (pi) {
  pi.registerTool({
    name: "mine", label: "Mine", description: "An extension tool",
    parameters: { type: "object", properties: {} },
    async execute() { return { content: [{ type: "text", text: "ok" }], details: {} }; },
  });
  pi.on("before_agent_start", () => {
    const tools = {};
    for (const tool of pi.getAllTools()) tools[tool.name] = tool.sourceInfo;
    writeFileSync(process.env.TOOLS_OUT, JSON.stringify(tools));
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn built_in_tools_are_named_builtin_as_pi_16_names_them() {
    let mut seen: Vec<(&str, Value)> = Vec::new();
    for (name, wrapper) in pis() {
        let server = MockServer::start().await.unwrap();
        server.push(Script::text("Done."));
        let env = Env::new(&server, 128_000, json!({}));
        let extension = env.work.join("names.ts");
        std::fs::write(&extension, EXTENSION).unwrap();
        let out = env.dir.path().join("tools.json");
        let mut program = program_with_host(&wrapper);
        program.env("TOOLS_OUT", &out);
        let extension_arg = extension.display().to_string();
        let output = tokio::task::block_in_place(|| {
            run(&env, program, &["-e", &extension_arg, "-p", "Hi."])
        });
        assert!(output.status.success(), "{name}: {output:?}");
        let tools: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        // The extension's path is the scratch folder's: checked, then left out.
        assert_eq!(
            tools["mine"]["path"],
            extension.display().to_string(),
            "{name}: {tools}"
        );
        let mut tools = tools;
        tools.as_object_mut().unwrap().remove("mine");
        seen.push((name, tools));
    }
    let ours = &seen[0].1;
    for tool in ["read", "bash", "edit", "write", "grep", "find", "ls"] {
        assert_eq!(
            ours[tool],
            json!({"path": format!("builtin:{tool}"), "source": "builtin", "scope": "temporary", "origin": "top-level"}),
            "{ours}"
        );
    }
    // pi 1.6.0 also lists `powershell`, `tool_search` (`builtin:tool-search`) and
    // `codemode`, tools ours does not have (issue 39 and the PowerShell rows).
    for (name, theirs) in &seen[1..] {
        for (tool, info) in ours.as_object().unwrap() {
            assert_eq!(&theirs[tool], info, "{name}: {tool}");
        }
    }
}
