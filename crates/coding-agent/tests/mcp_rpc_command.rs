//! `/mcp` over RPC, as pi 1.6.0's built-in MCP extension answers it: the servers' status,
//! a usage warning, an unknown server, a reconnect, and no servers at all, each as an
//! `extension_ui_request` notify and a `{disposition: "handled"}` answer. Compared with
//! pi 1.6.0 when `PI_TS16` is set. Needs the MCP test servers
//! (`scripts/install-mcp-servers.sh`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::MockServer;
use support::rpc::{Env, Rpc};

/// The prompts sent, in order.
const PROMPTS: [&str; 4] = [
    "/mcp",
    "/mcp frobnicate now please",
    "/mcp reconnect nosuch",
    "/mcp reconnect everything",
];

/// The notices and answers `pi` gives to [`PROMPTS`] with `servers` in mcp.json.
fn notices(program: Command, servers: Value) -> Vec<Value> {
    let server = tokio::runtime::Handle::current().block_on(MockServer::start());
    let server = server.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    support::mcp::write_config(&env, servers);
    let mut rpc = Rpc::start_program(&env, program, &[]);
    let mut seen = Vec::new();
    for (n, prompt) in PROMPTS.iter().enumerate() {
        let id = format!("p{n}");
        rpc.send(json!({"id": id, "type": "prompt", "message": prompt}));
        let lines = rpc.until(prompt, |l| {
            l["id"] == id.as_str() && l["type"] == "response"
        });
        for line in lines {
            if line["type"] == "extension_ui_request" && line["method"] == "notify" {
                seen.push(json!([prompt, line["notifyType"], line["message"]]));
            } else if line["id"] == id.as_str() {
                seen.push(json!([prompt, line["data"]]));
            }
        }
    }
    let text = serde_json::to_string(&seen)
        .unwrap()
        .replace(&env.dir.path().display().to_string(), "<ROOT>");
    assert_eq!(rpc.finish(), Some(0));
    serde_json::from_str(&text).unwrap()
}

#[test]
fn mcp_over_rpc_answers_as_pi_16() {
    let Some(dir) = support::mcp::servers_dir() else {
        return;
    };
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let _guard = runtime.enter();
    let servers = json!({"everything": support::mcp::everything(&dir)});
    let ours = notices(support::ts16::ours(), servers.clone());
    let handled = json!({"disposition": "handled"});
    assert_eq!(
        ours,
        [
            json!(["/mcp", "info", "everything: connected, 14 tools (direct)"]),
            json!(["/mcp", handled]),
            json!([
                "/mcp frobnicate now please",
                "warning",
                "Usage: /mcp, /mcp login [server], /mcp logout [server], /mcp reconnect [server]"
            ]),
            json!(["/mcp frobnicate now please", handled]),
            json!([
                "/mcp reconnect nosuch",
                "error",
                "No MCP server named \"nosuch\"."
            ]),
            json!(["/mcp reconnect nosuch", handled]),
            json!([
                "/mcp reconnect everything",
                "info",
                "Reconnected to MCP server \"everything\" (connected · 14 tools · resources)."
            ]),
            json!(["/mcp reconnect everything", handled]),
        ]
    );
    let none = notices(support::ts16::ours(), json!({}));
    assert_eq!(
        none[0],
        json!([
            "/mcp",
            "info",
            "No MCP servers configured. Add them to <ROOT>/agent/mcp.json or .pi/mcp.json."
        ])
    );
    if let Some(wrapper) = support::ts16::ts16() {
        let theirs = notices(support::ts16::ts16_pi(&wrapper), servers);
        assert_eq!(ours, theirs);
        assert_eq!(none, notices(support::ts16::ts16_pi(&wrapper), json!({})));
    }
}
