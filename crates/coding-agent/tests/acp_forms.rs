//! Extension dialogs that ask for text under ACP: `ctx.ui.input` and `ctx.ui.editor` become
//! one-field forms (`elicitation/create`) in an editor that fills in forms, answered,
//! declined or left open until the dialog's timeout; an editor without forms gets a note and
//! the extension its empty answer at once. Driven by the protocol's official TypeScript SDK
//! client (tests/acp/pi-acp-client.mjs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::acp::*;

/// A command asking for a name, notes (prefilled) and a quick answer with a timeout, then
/// saying what it got.
const ASKING_EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("ask", {
    description: "Asks for text",
    handler: async (_args, ctx) => {
      const name = await ctx.ui.input("Your name?", "a name");
      const notes = await ctx.ui.editor("Notes", "first line");
      const quick = await ctx.ui.input("Quick?", "", { timeout: 300 });
      const show = (v) => (v === undefined ? "none" : JSON.stringify(v));
      ctx.ui.notify(`name=${show(name)} notes=${show(notes)} quick=${show(quick)}`, "info");
    },
  });
}
"#;

fn asking_env(server: &MockServer) -> support::rpc::Env {
    let env = fresh_env(server);
    std::fs::write(env.agent.join("extensions/ask.ts"), ASKING_EXTENSION).unwrap();
    env
}

fn said(lines: &[Value], step: u64) -> Vec<String> {
    updates(lines, step)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "agent_message_chunk")
        .filter_map(|u| u["content"]["text"].as_str().map(str::to_owned))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_dialogs_are_forms_in_an_editor_that_fills_them_in() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = asking_env(&server);
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "/ask"}]);
    let lines = run_scenario(
        &env,
        steps,
        json!({"clientCapabilities": {"elicitation": {"form": {}}},
               "forms": [{"accept": {"text": "Ada"}}, "decline", "never"]}),
    );
    let session = result(&lines, 2)["result"]["sessionId"].clone();
    let forms: Vec<&Value> = lines.iter().filter_map(|l| l.get("elicitation")).collect();
    assert_eq!(forms.len(), 3, "{lines:#?}");
    assert_eq!(
        *forms[0],
        json!({"mode": "form", "sessionId": session, "message": "Your name?",
               "requestedSchema": {"type": "object",
                                   "properties": {"text": {"type": "string", "description": "a name"}},
                                   "required": ["text"]}})
    );
    assert_eq!(forms[1]["message"], "Notes");
    assert_eq!(
        forms[1]["requestedSchema"]["properties"]["text"],
        json!({"type": "string", "default": "first line"})
    );
    assert_eq!(forms[2]["message"], "Quick?");
    // Accepted, declined, and unanswered until the dialog's 300 ms passed.
    assert_eq!(result(&lines, 3)["result"]["stopReason"], "end_turn");
    assert_eq!(
        said(&lines, 3),
        ["name=\"Ada\" notes=none quick=none"],
        "{lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_forms_the_extension_gets_no_text_at_once_and_the_user_a_note() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = asking_env(&server);
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "/ask"}]);
    let lines = run_scenario(&env, steps, json!({}));
    assert!(lines.iter().all(|l| l.get("elicitation").is_none()));
    let note = |title: &str| {
        format!(
            "An extension asked for text (\"{title}\"), which this editor cannot ask for; it got no answer."
        )
    };
    assert_eq!(
        said(&lines, 3),
        [
            note("Your name?"),
            note("Notes"),
            note("Quick?"),
            "name=none notes=none quick=none".to_owned()
        ],
        "{lines:#?}"
    );
}
