//! Issue 36, item 9: every RPC prompt ends with `agent_settled`, also one that an extension
//! command or `input` handler took. pi 1.6.0 answers such a prompt with
//! `{disposition: "handled"}` and sends no `agent_settled`, so a client that waits for it
//! (pi-acp) never completes the prompt; ours answers the same and then settles. A command
//! that asks for a run is ended by that run's own `agent_settled`, never by two.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};

/// A quiet command, a command that asks for a run, and an `input` handler that takes
/// "skip…" prompts.
const EXTENSION: &str = r#"
export default function (pi) {
  pi.registerCommand("quiet", {
    description: "only notifies",
    handler: async (_args, ctx) => { ctx.ui.notify("quiet ran", "info"); },
  });
  pi.registerCommand("ask", {
    description: "asks the model",
    handler: async (args) => { pi.sendUserMessage("asked: " + args); },
  });
  pi.on("input", async (event) => (event.text.startsWith("skip") ? { action: "handled" } : undefined));
};
"#;

fn settled_count(lines: &[Value]) -> usize {
    lines
        .iter()
        .filter(|l| l["type"] == "agent_settled")
        .count()
}

/// Sends `message` as prompt `id` and reads up to its `agent_settled`; returns the lines.
fn prompt_to_settled(rpc: &mut Rpc, id: &str, message: &str) -> Vec<Value> {
    rpc.send(json!({"id": id, "type": "prompt", "message": message}));
    let lines = rpc.until(&format!("agent_settled after {message}"), |l| {
        l["type"] == "agent_settled"
    });
    let response = lines
        .iter()
        .position(|l| l["id"] == id)
        .unwrap_or_else(|| panic!("no response to {message}: {lines:#?}"));
    let settled = lines.len() - 1;
    assert!(response < settled, "the response comes first: {lines:#?}");
    lines
}

/// A round trip after a prompt settled: no second `agent_settled` may come before it.
fn assert_no_more_settled(rpc: &mut Rpc, id: &str) {
    let lines = rpc.until("get_state", |l| l["id"] == id && l["type"] == "response");
    assert_eq!(
        settled_count(&lines),
        0,
        "a second agent_settled: {lines:#?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_handled_prompt_ends_with_agent_settled() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push_all([Script::text("answered")]);
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.work.join("commands.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let mut rpc = Rpc::start_with_env(
        &env,
        &["-e", ext.to_str().unwrap()],
        &[("PI_EXTENSION_HOST_DIR", Path::new(&host))],
    );

    // A command that only notifies: handled, then settled.
    let lines = prompt_to_settled(&mut rpc, "q", "/quiet");
    let response = lines.iter().find(|l| l["id"] == "q").unwrap();
    assert_eq!(response["success"], true);
    assert_eq!(response["data"], json!({"disposition": "handled"}));
    assert_eq!(lines.last().unwrap()["aborted"], false);
    assert!(
        lines
            .iter()
            .any(|l| l["method"] == "notify" && l["message"] == "quiet ran")
    );
    rpc.send(json!({"id": "s1", "type": "get_state"}));
    assert_no_more_settled(&mut rpc, "s1");

    // A command that asks for a run: that run's agent_settled ends the prompt, after its
    // agent_end, and it is the only one.
    let lines = prompt_to_settled(&mut rpc, "a", "/ask now");
    let response = lines.iter().find(|l| l["id"] == "a").unwrap();
    assert_eq!(response["data"], json!({"disposition": "handled"}));
    let end = lines
        .iter()
        .position(|l| l["type"] == "agent_end")
        .unwrap_or_else(|| panic!("the asked-for run ends before the prompt settles: {lines:#?}"));
    assert!(end < lines.len() - 1);
    assert_eq!(settled_count(&lines), 1);
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "the command's run asked the model once");
    rpc.send(json!({"id": "s2", "type": "get_state"}));
    assert_no_more_settled(&mut rpc, "s2");

    // An input handler that takes the prompt: handled, then settled, nothing sent.
    let lines = prompt_to_settled(&mut rpc, "k", "skip this one");
    let response = lines.iter().find(|l| l["id"] == "k").unwrap();
    assert_eq!(response["data"], json!({"disposition": "handled"}));
    assert_eq!(server.requests().len(), 1);
    rpc.send(json!({"id": "s3", "type": "get_state"}));
    assert_no_more_settled(&mut rpc, "s3");
    assert_eq!(rpc.finish(), Some(0));
}

/// pi 1.6.0 gives the same answer to a handled prompt, and no `agent_settled` after it:
/// the one line ours adds.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pi_16_answers_a_handled_prompt_alike_but_never_settles_it() {
    let Some(wrapper) = support::ts16::ts16() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.work.join("commands.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let mut rpc = Rpc::start_program(
        &env,
        support::ts16::ts16_pi(&wrapper),
        &["-e", ext.to_str().unwrap()],
    );
    let response = rpc.call("q", json!({"type": "prompt", "message": "/quiet"}));
    assert_eq!(response["data"], json!({"disposition": "handled"}));
    rpc.send(json!({"id": "s1", "type": "get_state"}));
    assert_no_more_settled(&mut rpc, "s1");
    assert_eq!(
        settled_count(&rpc.seen),
        0,
        "pi 1.6.0 settled it: {:#?}",
        rpc.seen
    );
    assert_eq!(rpc.finish(), Some(0));
}
