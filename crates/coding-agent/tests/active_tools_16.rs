//! Active tools as pi 1.6.0 keeps them: `defaultTools` picks among the built-ins without
//! dropping extension tools (pi 0.84.2), and `pi.setActiveTools()` with the same tools in
//! another order changes nothing, not even the recorded system message (pi 1.5). Ours and
//! pi 1.6.0 (`PI_TS16`) run the same case on one mock; what they sent and recorded must match.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::{Env, read_jsonl};
use support::ts16::{pis, program_with_host as program, run};

/// An extension with a tool `greet` and a command `/flip` that reverses the active tools.
const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerTool({
    name: "greet", label: "Greet", description: "Greets someone",
    parameters: { type: "object", properties: { name: { type: "string" } } },
    async execute() { return { content: [{ type: "text", text: "hi" }], details: {} }; },
  });
  pi.registerCommand("flip", {
    description: "reverses the active tools",
    handler: async () => { pi.setActiveTools([...pi.getActiveTools()].reverse()); },
  });
}
"#;

/// What one pi sent and recorded: the tool names of each request and the roles of the
/// session's messages.
#[derive(Debug, PartialEq)]
struct Run {
    tools: Vec<Vec<String>>,
    roles: Vec<String>,
}

async fn run_case(wrapper: &Option<PathBuf>, settings: Value, prompts: &[&str]) -> Run {
    let server = MockServer::start().await.unwrap();
    for _ in prompts.iter().filter(|p| !p.starts_with('/')) {
        server.push(Script::text("Ok."));
    }
    let env = Env::new(&server, 128_000, settings);
    let extension = env.work.join("tools.ts");
    std::fs::write(&extension, EXTENSION).unwrap();
    let extension = extension.display().to_string();
    let mut args = vec!["-e", extension.as_str(), "-p"];
    args.extend(prompts);
    let output = tokio::task::block_in_place(|| run(&env, program(wrapper), &args));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let tools = server
        .requests()
        .iter()
        .map(|request| {
            request.body["tools"]
                .as_array()
                .map(|tools| {
                    tools
                        .iter()
                        .map(|t| t["function"]["name"].as_str().unwrap_or("").to_owned())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    let files = env.session_files();
    assert_eq!(files.len(), 1, "{files:?}");
    let roles = read_jsonl(&files[0])
        .iter()
        .filter(|line| line["type"] == "message")
        .map(|line| line["message"]["role"].as_str().unwrap_or("").to_owned())
        .collect();
    Run { tools, roles }
}

/// Ours and pi 1.6.0 agree; ours matches `expected`.
async fn same(settings: Value, prompts: &[&str], expected: &dyn Fn(&Run)) {
    let mut first: Option<Run> = None;
    for (name, wrapper) in pis() {
        let got = run_case(&wrapper, settings.clone(), prompts).await;
        match &first {
            None => {
                expected(&got);
                first = Some(got);
            }
            Some(ours) => assert_eq!(&got, ours, "{name} differs from ours"),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn default_tools_keep_extension_tools_active() {
    same(
        json!({"defaultTools": ["read", "bash"]}),
        &["Hello."],
        &|run| assert_eq!(run.tools, [["read", "bash", "greet"]], "{run:?}"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reordering_the_active_tools_changes_nothing() {
    same(json!({}), &["Hello.", "/flip", "Again."], &|run| {
        assert_eq!(run.tools.len(), 2, "{run:?}");
        assert_eq!(run.tools[0], run.tools[1], "{run:?}");
        assert_eq!(
            run.roles,
            ["system", "user", "assistant", "user", "assistant"],
            "no second system message: {run:?}"
        );
    })
    .await;
}
