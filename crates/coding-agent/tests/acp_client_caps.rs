//! What an editor offers under ACP, used as ACP intends: MCP servers handed over with a
//! session, the editor's files (`fs/read_text_file`, `fs/write_text_file`) and its terminals
//! (`terminal/*`), through `pi --mode acp` and the protocol's TypeScript SDK client.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::acp::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_server_the_client_hands_over_is_used() {
    if sdk_dir().is_none() {
        return;
    }
    let Some(servers) = support::mcp::servers_dir() else {
        return;
    };
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "mcp__everything__echo",
        json!({"message": "from the editor"}),
    ));
    server.push(Script::text("echoed"));
    let env = fresh_env(&server);
    let script = servers.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let everything = json!([{"name": "everything", "command": "node", "args": [script.display().to_string(), "stdio"], "env": []}]);
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "echo"}]);
    let lines = run_with_servers(&env, steps, json!([]), everything);
    let declared: Vec<String> = server.requests()[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
        .collect();
    assert!(
        declared.contains(&"mcp__everything__echo".to_owned()),
        "{declared:?}"
    );
    let ended = updates(&lines, 3)
        .into_iter()
        .find(|u| u["status"] == "completed")
        .cloned()
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert!(
        ended["content"].to_string().contains("from the editor"),
        "{ended}"
    );
    assert_eq!(result(&lines, 3)["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_and_writes_go_through_the_editor_when_it_offers_its_files() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("read", json!({"path": "a.txt"})));
    server.push(Script::tool_call(
        "edit",
        json!({"path": "a.txt", "edits": [{"oldText": "two", "newText": "TWO"}]}),
    ));
    server.push(Script::tool_call(
        "write",
        json!({"path": "new.txt", "content": "fresh\n"}),
    ));
    server.push(Script::text("done"));
    let env = fresh_env(&server);
    let path = env.work.join("a.txt").display().to_string();
    let new_path = env.work.join("new.txt").display().to_string();
    // The editor holds an unsaved change the disk does not have.
    let unsaved = "one\ntwo (unsaved)\nthree\n";
    let steps = json!([{"op": "initialize"}, {"op": "new"}, {"op": "prompt", "text": "go"}]);
    let lines = run_scenario(&env, steps, json!({"buffers": {path.clone(): unsaved}}));
    let read = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .to_string();
    assert!(read.contains("two (unsaved)"), "{read}");
    let writes: Vec<&Value> = lines.iter().filter_map(|l| l.get("fsWrite")).collect();
    assert_eq!(
        writes,
        [
            &json!({"path": path, "content": "one\nTWO (unsaved)\nthree\n"}),
            &json!({"path": new_path, "content": "fresh\n"})
        ],
        "{lines:#?}"
    );
    // The disk is the editor's to save.
    assert_eq!(
        std::fs::read_to_string(env.work.join("a.txt")).unwrap(),
        FILE
    );
    assert!(!env.work.join("new.txt").exists());
    // The calls' diffs are the editor's texts, before and after.
    let diffs: Vec<&Value> = updates(&lines, 3)
        .into_iter()
        .filter(|u| u["status"] == "completed" && u["content"][0]["type"] == "diff")
        .map(|u| &u["content"])
        .collect();
    assert_eq!(
        diffs,
        [
            &json!([{"type": "diff", "path": path, "oldText": unsaved, "newText": "one\nTWO (unsaved)\nthree\n"}]),
            &json!([{"type": "diff", "path": new_path, "newText": "fresh\n"}])
        ],
        "{lines:#?}"
    );
    assert_eq!(result(&lines, 3)["result"]["stopReason"], "end_turn");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_run_in_the_editor_s_terminal_when_it_offers_one() {
    if sdk_dir().is_none() {
        return;
    }
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo in the editor; exit 3"}),
    ));
    server.push(Script::text("it failed"));
    server.push(Script::tool_call(
        "bash",
        json!({"command": "echo long; sleep 30"}),
    ));
    server.push(Script::text("done"));
    let env = fresh_env(&server);
    let steps = json!([
        {"op": "initialize"}, {"op": "new"},
        {"op": "prompt", "text": "run it"},
        {"op": "prompt", "text": "and wait", "cancelOn": "tool_call_update", "cancelOnText": "\"terminal\""},
    ]);
    let lines = run_scenario(
        &env,
        steps,
        json!({"terminal": true, "permissions": ["Yes", "Yes"]}),
    );
    let started: Vec<&Value> = lines.iter().filter_map(|l| l.get("terminal")).collect();
    assert_eq!(started.len(), 2, "{lines:#?}");
    assert_eq!(started[0]["command"], "bash");
    assert_eq!(
        started[0]["args"],
        json!(["-c", "echo in the editor; exit 3"])
    );
    // The terminal is the call's content, and the model gets its output and exit code.
    let shown = updates(&lines, 3)
        .into_iter()
        .find(|u| u["content"][0]["type"] == "terminal")
        .cloned()
        .unwrap_or_else(|| panic!("{lines:#?}"));
    assert_eq!(shown["content"][0]["terminalId"], "term-1");
    let answer = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()["content"]
        .to_string();
    assert!(
        answer.contains("in the editor") && answer.contains("Command exited with code 3"),
        "{answer}"
    );
    // A cancel kills the command in the terminal.
    assert_eq!(
        result(&lines, 4)["result"]["stopReason"],
        "cancelled",
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(|l| l.get("terminalKilled").is_some()),
        "{lines:#?}"
    );
}
