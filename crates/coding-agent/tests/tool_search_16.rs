//! `tool_search` against pi 1.6.0 (`PI_TS16`): a server with `deferred` exposure, the model
//! searches, then calls what it loaded; the tool results must agree. Then the session is
//! continued (`pi -c`) and the model searches again: what the search finds and the tools
//! the last request declares agree too. (In print mode the server is still connecting when
//! the resumed session restores its tools, so pi 1.6.0 loads the tool again rather than
//! keeping it; ours does the same.)
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::mcp::{declared, everything, servers_dir, text, tool_results, write_config};
use support::rpc::Env;
use support::ts16::{pis, program, run};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_found_by_search_are_loaded_and_called_before_and_after_a_resume_as_16() {
    let Some(dir) = servers_dir() else { return };
    let server = MockServer::start().await.unwrap();
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        let mut entry = everything(&dir);
        entry["exposure"] = json!("deferred");
        write_config(&env, json!({ "everything": entry }));
        server.clear_queue();
        server.clear_requests();
        server.push(Script::tool_call(
            "tool_search",
            json!({"query": "echo the message", "limit": 1}),
        ));
        server.push(Script::tool_call(
            "mcp__everything__echo",
            json!({"message": "hi"}),
        ));
        server.push(Script::text("done"));
        let out =
            tokio::task::block_in_place(|| run(&env, program(&wrapper), &["-p", "find echo"]));
        assert_eq!(out.status.code(), Some(0), "{who}: {}", text(&out.stderr));
        let requests = server.requests();
        let first: Vec<String> = declared(&requests[0].body);
        let results = tool_results(&requests.last().unwrap().body);
        server.clear_requests();
        server.push(Script::tool_call(
            "tool_search",
            json!({"query": "echo the message", "limit": 1}),
        ));
        server.push(Script::text("again"));
        let out =
            tokio::task::block_in_place(|| run(&env, program(&wrapper), &["-c", "-p", "more"]));
        assert_eq!(out.status.code(), Some(0), "{who}: {}", text(&out.stderr));
        let requests = server.requests();
        let last = &requests.last().unwrap().body;
        let mut results = results;
        results.extend(tool_results(last).into_iter().skip(2));
        seen.push((who, first, results, declared(last)));
    }
    let (_, first, results, resumed) = &seen[0];
    assert!(first.contains(&"tool_search".to_owned()), "{first:?}");
    assert!(
        !first.contains(&"mcp__everything__echo".to_owned()),
        "{first:?}"
    );
    assert_eq!(results[1], "Echo: hi", "{results:?}");
    for (who, their_first, their_results, their_resumed) in &seen[1..] {
        let names = |list: &[String]| -> Vec<String> {
            let mut list: Vec<String> = list
                .iter()
                .filter(|n| n.starts_with("mcp__") || *n == "tool_search")
                .cloned()
                .collect();
            list.sort();
            list
        };
        assert_eq!(
            names(first),
            names(their_first),
            "first request: ours and {who}"
        );
        assert_eq!(results, their_results, "tool results: ours and {who}");
        assert_eq!(
            names(resumed),
            names(their_resumed),
            "after the resume: ours and {who}"
        );
    }
}
