//! MCP tools whose names differ only in `-` and `_` (pi 0.99.2, as Codex): both get the
//! hash suffix, whichever the server lists first, and the model reaches each by its own
//! name, in ours and pi 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::mcp::{declared, test_server, text, tool_results, write_config};
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// pi's hashed name of a tool: `mcp__<server>__<tool, sanitized>_` and the first 8 hex
/// digits of the SHA-256 of `<server>\0<tool>`.
fn hashed(server: &str, tool: &str) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import sys,hashlib;print(hashlib.sha256((sys.argv[1]+'\\0'+sys.argv[2]).encode()).hexdigest()[:8])",
            server,
            tool,
        ])
        .output()
        .unwrap();
    format!(
        "mcp__{server}__{}_{}",
        tool.replace('-', "_"),
        text(&out.stdout).trim()
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_differing_only_in_dash_and_underscore_both_get_a_hash() {
    let server = MockServer::start().await.unwrap();
    let dashed = hashed("t", "read-file");
    let underscored = hashed("t", "read_file");
    assert_ne!(dashed, underscored);
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let (test, _) = test_server(
            &env,
            json!({"env": {"TEST_SERVER_TWINS": "1"}, "exposure": "direct"}),
        );
        write_config(&env, json!({ "t": test }));
        server.clear_queue();
        server.clear_requests();
        server.push(Script::tool_call(&dashed, json!({})));
        server.push(Script::tool_call(&underscored, json!({})));
        server.push(Script::text("done"));
        let out = run(&env, program(&wrapper), &["-p", "read both"]);
        assert_eq!(out.status.code(), Some(0), "{who}: {}", text(&out.stderr));
        let requests = server.requests();
        let names: Vec<String> = declared(&requests[0].body)
            .into_iter()
            .filter(|n| n.starts_with("mcp__t__read"))
            .collect();
        let mut expected = vec![dashed.clone(), underscored.clone()];
        let mut sorted = names.clone();
        sorted.sort();
        expected.sort();
        assert_eq!(sorted, expected, "{who}: {names:?}");
        assert_eq!(
            tool_results(&requests[2].body),
            vec![
                "this is read-file".to_owned(),
                "this is read_file".to_owned()
            ],
            "{who}"
        );
    }
}
