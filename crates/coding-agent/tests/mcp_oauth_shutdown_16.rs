//! Shutting down with an MCP OAuth token about to expire (pi 1.1.0): the session is closed
//! without refreshing the token first, in ours and pi 1.6.0 (`PI_TS16`). The test server
//! holds the model's tool call while the test moves the stored expiry to within pi's
//! refresh margin (30 s), so the token is still good but "about to expire" at shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Stdio;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::logins::now_ms;
use support::mcp::{text, tool_results, wait_until, write_config};
use support::oauth::{OAuthServer, login_visiting};
use support::rpc::Env;
use support::ts16::{pis, program};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_does_not_refresh_a_token_about_to_expire() {
    let server = MockServer::start().await.unwrap();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let oauth = OAuthServer::start(env.dir.path(), 3600);
        write_config(
            &env,
            json!({"secure": {"url": oauth.url(), "exposure": "direct"}}),
        );
        let pi = wrapper
            .clone()
            .unwrap_or_else(|| env!("CARGO_BIN_EXE_pi").into());
        assert_eq!(
            login_visiting(&pi, &env, "secure", 60).code,
            Some(0),
            "{who}"
        );

        oauth.get("/_hold");
        server.clear_queue();
        server.clear_requests();
        server.push(Script::tool_call("mcp__secure__whoami", json!({})));
        server.push(Script::text("done"));
        let child = program(&wrapper)
            .args(["-p", "who am I"])
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env("PI_OFFLINE", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("the tool call", || {
            oauth.get("/_state")["calls"]
                .as_array()
                .is_some_and(|c| !c.is_empty())
        });
        // The token stays valid at the server but is now within pi's refresh margin.
        let path = env.agent.join("mcp-auth.json");
        let mut all: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        all[format!("mcp__secure|{}", oauth.url())]["tokensExpireAt"] = json!(now_ms() + 5_000);
        std::fs::write(&path, serde_json::to_string_pretty(&all).unwrap()).unwrap();
        oauth.get("/_release");
        let out = child.wait_with_output().unwrap();
        assert_eq!(out.status.code(), Some(0), "{who}: {}", text(&out.stderr));
        assert_eq!(text(&out.stdout), "done\n", "{who}");
        assert_eq!(
            tool_results(&server.requests()[1].body),
            vec!["signed in with access-1".to_owned()],
            "{who}"
        );
        let state = oauth.get("/_state");
        assert_eq!(state["refreshed"], json!(0), "{who}: {state}");
    }
}
