//! Shutting down while an MCP server is still connecting closes its transport (pi 1.0.4):
//! a stdio server that never answers `initialize` is gone once the run is over, in ours
//! and pi 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::{MockServer, Script};
use support::mcp::{notes, process_gone, test_server, wait_until, write_config};
use support::rpc::Env;
use support::ts16::{pis, program, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_still_connecting_is_stopped_at_shutdown() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let (test, notes_path) = test_server(&env, json!({"env": {"TEST_SERVER_HANG_INIT": "1"}}));
        write_config(&env, json!({ "t": test }));
        server.clear_queue();
        server.push(Script::text("ok"));
        let out = run(&env, program(&wrapper), &["-p", "hi"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{who}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "ok\n", "{who}");
        let seen = notes(&notes_path);
        assert!(
            seen.contains("initialize"),
            "{who}: the server was not asked: {seen}"
        );
        let pid: i32 = seen
            .lines()
            .find_map(|l| l.strip_prefix("pid "))
            .unwrap()
            .parse()
            .unwrap();
        wait_until("the connecting server to stop", || process_gone(pid));
    }
}
