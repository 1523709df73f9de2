//! `pi.sendMessage()` and `pi.sendUserMessage()` as pi 1.6.0 delivers them: a custom
//! message sent with `triggerTurn: false` while the agent runs is only recorded at the end
//! of the turn: from inside a tool it comes after the turn's tool results, never between a
//! tool call and its result; from the final answer's `message_end` it starts no turn; `sendUserMessage` sends its text as it is by default, and with
//! `expandPromptTemplates: true` expands prompt templates and runs extension commands. One
//! RPC session through ours and through 1.6.0 (`PI_TS16`); what the model got in each
//! request, the session's messages and the command's log must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, Rpc};
use support::ts16::{ts16, ts16_pi};

const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.registerTool({
    name: "note", label: "Note", description: "Records a note while it runs",
    parameters: { type: "object", properties: {} },
    async execute() {
      pi.sendMessage({ customType: "note", content: "noted during the tool", display: true }, { triggerTurn: false });
      return { content: [{ type: "text", text: "tool done" }], details: {} };
    },
  });
  pi.on("message_end", (event) => {
    const message = event.message;
    if (message.role === "assistant" && JSON.stringify(message.content).includes("final answer")) {
      pi.sendMessage({ customType: "late", content: "noted at the end", display: true }, { triggerTurn: false });
    }
  });
  pi.registerCommand("mark", {
    description: "logs its arguments",
    handler: async (args) => appendFileSync(process.env.SEND_LOG, "mark " + args + "\n"),
  });
  pi.registerCommand("send-plain", { description: "d", handler: async () => pi.sendUserMessage("/greet Ann") });
  pi.registerCommand("send-template", {
    description: "d", handler: async () => pi.sendUserMessage("/greet Bob", { expandPromptTemplates: true }),
  });
  pi.registerCommand("send-command", {
    description: "d", handler: async () => pi.sendUserMessage("/mark now", { expandPromptTemplates: true }),
  });
}
"#;

/// Each message of a request as `role: text` (tool calls by name).
fn summary(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| {
            let text = match &m["content"] {
                Value::String(text) => text.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join(""),
                _ => String::new(),
            };
            let calls: Vec<&str> = m["tool_calls"]
                .as_array()
                .map(|c| {
                    c.iter()
                        .filter_map(|c| c["function"]["name"].as_str())
                        .collect()
                })
                .unwrap_or_default();
            format!(
                "{}: {text}{}",
                m["role"].as_str().unwrap_or("?"),
                calls.join(",")
            )
        })
        .collect()
}

async fn session(program: Command, host: Option<PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("note", json!({})));
    // "never asked": what a steered late note would make the model answer.
    for answer in [
        "after the tool",
        "plain answer",
        "template answer",
        "final answer",
        "never asked",
    ] {
        server.push(Script::text(answer));
    }
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    std::fs::create_dir_all(env.agent.join("prompts")).unwrap();
    std::fs::write(
        env.agent.join("prompts/greet.md"),
        "---\ndescription: greets\n---\nHello $1, from the template",
    )
    .unwrap();
    let ext = env.dir.path().join("send-ext.ts");
    std::fs::write(&ext, EXTENSION).unwrap();
    let log = env.dir.path().join("send.log");
    let mut program = program;
    program.env("SEND_LOG", &log);
    if let Some(host) = host {
        program.env("PI_EXTENSION_HOST_DIR", host);
    }
    let (messages, marks) = {
        let server = server.clone();
        tokio::task::spawn_blocking(move || {
            let mut rpc = Rpc::start_program(&env, program, &["-e", ext.to_str().unwrap()]);
            let run = |rpc: &mut Rpc, id: &str, message: &str, requests: usize| {
                let answer = rpc.call(id, json!({"type": "prompt", "message": message}));
                assert_eq!(answer["success"], true, "{answer:#?}");
                // Wait for the model's requests, then for the run to settle.
                rpc.until("the run's end", |l| {
                    l["type"] == "agent_settled" && server.requests().len() >= requests
                });
            };
            run(&mut rpc, "p1", "use note", 2);
            run(&mut rpc, "p2", "/send-plain", 3);
            run(&mut rpc, "p3", "/send-template", 4);
            run(&mut rpc, "p5", "finish", 5);
            let answer = rpc.call("p4", json!({"type": "prompt", "message": "/send-command"}));
            assert_eq!(answer["success"], true, "{answer:#?}");
            let messages = rpc.call("m", json!({"type": "get_messages"}));
            let messages: Vec<String> = messages["data"]["messages"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|m| m["role"] != "system")
                .map(|m| {
                    let kind = m["customType"].as_str().unwrap_or("");
                    format!(
                        "{}{}",
                        m["role"].as_str().unwrap(),
                        if kind.is_empty() {
                            String::new()
                        } else {
                            format!(":{kind}")
                        }
                    )
                })
                .collect();
            // The command the message runs goes after /send-command's own answer.
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
            let marks = loop {
                let marks = std::fs::read_to_string(&log).unwrap_or_default();
                if !marks.is_empty() || std::time::Instant::now() > deadline {
                    break marks;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            };
            rpc.finish();
            drop(env);
            (messages, marks)
        })
        .await
        .unwrap()
    };
    let requests: Vec<Vec<String>> = server.requests().iter().map(|r| summary(&r.body)).collect();
    json!({"requests": requests, "messages": messages, "marks": marks})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn send_message_and_user_message_as_in_16() {
    let Some(host) = support::ext_host::host_dir() else {
        return;
    };
    let their = match ts16() {
        Some(wrapper) => Some(session(ts16_pi(&wrapper), None).await),
        None => None,
    };
    let our = session(Command::new(env!("CARGO_BIN_EXE_pi")), Some(host)).await;
    let requests = our["requests"].as_array().unwrap();
    // The note follows the tool's result (not between the call and the result), and the
    // next request of the run sees it.
    assert_eq!(
        requests[1],
        json!([
            "user: use note",
            "assistant: note",
            "tool: tool done",
            "user: noted during the tool"
        ]),
        "{our:#}"
    );
    assert!(
        requests[2]
            .as_array()
            .unwrap()
            .contains(&json!("user: /greet Ann")),
        "{our:#}"
    );
    assert!(
        requests[3]
            .as_array()
            .unwrap()
            .contains(&json!("user: Hello Bob, from the template")),
        "{our:#}"
    );
    assert_eq!(our["marks"], "mark now\n");
    // The late note started no turn; it follows the final answer in the session.
    assert_eq!(requests.len(), 5, "{our:#}");
    let messages = our["messages"].as_array().unwrap();
    assert_eq!(messages[messages.len() - 1], "custom:late", "{our:#}");
    if let Some(their) = their {
        assert_eq!(our, their);
    }
}
