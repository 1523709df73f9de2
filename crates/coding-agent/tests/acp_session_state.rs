//! What `pi --mode acp` tells the editor about the session besides the conversation: how
//! full the context is and what the session cost after each prompt (`usage_update`, as
//! pi-acp sends), its name as the editor's title (`session_info_update`), and the config
//! options again when a command or an extension changed them (`config_option_update`).
//! Driven by the protocol's official TypeScript SDK client (tests/acp/pi-acp-client.mjs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

/// A command that switches to the reasoning model at a high thinking level.
const THINK_EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("think", {
    description: "Switch to the thinker",
    handler: async (_args, ctx) => {
      await pi.setModel(ctx.modelRegistry.find("mock", "mock-thinker"));
      pi.setThinkingLevel("high");
    },
  });
}
"#;

fn kinds_of(lines: &[Value], step: u64, kind: &str) -> Vec<Value> {
    lines
        .iter()
        .filter(|l| l["step"] == step && l["update"]["sessionUpdate"] == kind)
        .map(|l| l["update"].clone())
        .collect()
}

fn option<'a>(options: &'a Value, id: &str) -> &'a Value {
    options
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["id"] == id)
        .unwrap_or_else(|| panic!("no option {id}: {options}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn usage_title_and_changed_options_reach_the_editor() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::text("hello"));
    let env = fresh_env(&server);
    std::fs::write(env.agent.join("extensions/think.ts"), THINK_EXTENSION).unwrap();
    let steps = json!([
        {"op": "initialize"},
        {"op": "new"},
        {"op": "prompt", "text": "hi"},
        {"op": "prompt", "text": "/name Refactor work"},
        {"op": "prompt", "text": "/think"},
        {"op": "list"},
    ]);
    let lines = run_in(&env, steps, json!([]));

    // After the answer: the context's fill and the session's cost, once, last.
    let usage = kinds_of(&lines, 3, "usage_update");
    assert_eq!(usage.len(), 1, "{lines:#?}");
    assert_eq!(usage[0]["size"], 128_000);
    assert!(usage[0]["used"].as_u64().unwrap() > 0, "{usage:?}");
    assert_eq!(usage[0]["cost"]["currency"], "USD");
    assert!(usage[0]["cost"]["amount"].is_number());
    assert_eq!(
        updates(&lines, 3).last().unwrap()["sessionUpdate"],
        "usage_update"
    );
    // Nothing changed the options in that prompt.
    assert!(kinds_of(&lines, 3, "config_option_update").is_empty());

    // The session's name is its title.
    let info = kinds_of(&lines, 4, "session_info_update");
    assert_eq!(info.len(), 1, "{lines:#?}");
    assert_eq!(info[0]["title"], "Refactor work");
    assert!(info[0]["updatedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        result(&lines, 6)["result"]["sessions"][0]["title"],
        "Refactor work"
    );

    // An extension's command changed the model and the thinking level: the options again.
    let changed = kinds_of(&lines, 5, "config_option_update");
    assert_eq!(changed.len(), 1, "{lines:#?}");
    let options = &changed[0]["configOptions"];
    assert_eq!(
        option(options, "model")["currentValue"],
        "mock/mock-thinker"
    );
    assert_eq!(option(options, "thinking")["currentValue"], "high");
    let before = &result(&lines, 2)["result"]["configOptions"];
    assert_eq!(option(before, "model")["currentValue"], "mock/mock-model");
}
