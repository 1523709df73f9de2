//! MCP through the real `pi` binary against real servers from npm
//! (`@modelcontextprotocol/server-everything` and `server-filesystem`, installed by
//! `scripts/install-mcp-servers.sh` into `target/mcp-servers`), and against servers written
//! here that crash, hang or send garbage; the model is mock-llm.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::{Duration, Instant};

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::mcp::*;
use support::rpc::{Env, Rpc};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn add_list_and_remove_write_mcp_json_as_pi_does() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let out = pi(
        &env,
        &[
            "mcp",
            "add",
            "demo",
            "--env",
            "GREETING=hi",
            "--description",
            "Echo",
            "--",
            "python3",
            "x.py",
            "--flag",
        ],
    );
    assert!(out.status.success(), "{}", text(&out.stderr));
    let path = env.agent.join("mcp.json");
    assert_eq!(
        text(&out.stdout),
        format!(
            "Added global MCP server \"demo\" in {}.\nCheck it with: pi mcp list\n",
            path.display()
        )
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        written,
        json!({"mcpServers": {"demo": {"command": "python3", "args": ["x.py", "--flag"], "env": {"GREETING": "hi"}, "description": "Echo"}}})
    );
    let out = pi(
        &env,
        &["mcp", "add", "oa", "--url", "https://example.invalid/mcp"],
    );
    assert!(
        text(&out.stdout)
            .ends_with("Check it with: pi mcp list. If it requires sign-in: pi mcp login oa\n")
    );
    let out = pi(&env, &["mcp", "add", "Bad.Name", "--", "x"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        "invalid server name \"Bad.Name\" (use letters, digits, \"_\" and \"-\")\n"
    );
    let out = pi(
        &env,
        &["mcp", "add", "w", "--url", "http://x", "--env", "A=1"],
    );
    assert_eq!(text(&out.stderr), "--env only applies to stdio servers.\n");
    let out = pi(&env, &["mcp", "remove", "demo"]);
    assert_eq!(
        text(&out.stdout),
        format!(
            "Removed global MCP server \"demo\" from {}.\n",
            path.display()
        )
    );
    let out = pi(&env, &["mcp", "remove", "nosuch"]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        text(&out.stderr),
        format!(
            "No global MCP server named \"nosuch\" in {}.\n",
            path.display()
        )
    );
    let out = pi(&env, &["mcp", "login", "oa"]);
    assert_eq!(out.status.code(), Some(1));
    let out = pi(&env, &["mcp", "logout", "oa"]);
    assert_eq!(
        text(&out.stdout),
        "No stored credentials for MCP server \"oa\".\n"
    );
    std::fs::write(
        env.agent.join("mcp-auth.json"),
        r#"{"mcp__oa|https://example.invalid/mcp": {"tokens": {"access_token": "x"}}}"#,
    )
    .unwrap();
    let out = pi(&env, &["mcp", "logout", "oa"]);
    assert_eq!(text(&out.stdout), "Signed out of MCP server \"oa\".\n");
    assert_eq!(
        std::fs::read_to_string(env.agent.join("mcp-auth.json")).unwrap(),
        "{}\n"
    );
    assert!(
        pi(&env, &["mcp", "add", "demo", "--", "python3", "x.py"])
            .status
            .success()
    );
    let out = pi(&env, &["mcp", "logout", "demo"]);
    assert_eq!(
        text(&out.stderr),
        "MCP server \"demo\" does not use OAuth. Only HTTP servers without an Authorization header do.\n"
    );
    let out = pi(&env, &["mcp", "remove", "oa"]);
    assert!(out.status.success());
    assert!(pi(&env, &["mcp", "remove", "demo"]).status.success());
    let out = pi(&env, &["mcp", "list"]);
    assert_eq!(
        text(&out.stdout),
        format!(
            "No MCP servers configured. Add them to {} or .pi/mcp.json.\n",
            path.display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_connects_and_reports_tools_and_failures() {
    let Some(dir) = servers_dir() else { return };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let bad_schema = fixture("bad_schema_server.py");
    write_config(
        &env,
        json!({
            "everything": everything(&dir),
            "badschema": {"command": "python3", "args": [bad_schema.display().to_string()]},
            "crash": {"command": "sh", "args": ["-c", "echo boom >&2; exit 3"]},
            "missing": {"command": "no-such-mcp-server-xyz"},
            "off": {"command": "x", "enabled": false},
            "Bad.Name": {"command": "x"}
        }),
    );
    let out = pi(&env, &["mcp", "list", "--json"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    let list: Value = serde_json::from_str(&text(&out.stdout)).unwrap();
    let servers = list["servers"].as_array().unwrap();
    let by_name = |name: &str| servers.iter().find(|s| s["name"] == name).unwrap().clone();
    let all = by_name("everything");
    assert_eq!(all["state"], "connected");
    assert_eq!(all["resources"], true);
    let tools: Vec<&str> = all["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        tools.contains(&"echo") && tools.contains(&"get-sum"),
        "{tools:?}"
    );
    let crash = by_name("crash");
    assert_eq!(crash["state"], "failed");
    let error = crash["error"].as_str().unwrap();
    assert!(
        error.contains("exited with code 3") && error.ends_with("boom"),
        "{error}"
    );
    assert_eq!(
        by_name("missing")["error"],
        "spawn no-such-mcp-server-xyz ENOENT"
    );
    assert_eq!(by_name("off")["state"], "disabled");
    assert_eq!(
        by_name("badschema")["error"],
        "Invalid entry in MCP tools/list result"
    );
    assert_eq!(
        list["errors"][0].as_str().unwrap(),
        format!(
            "{}: invalid server name \"Bad.Name\" (use letters, digits, \"_\" and \"-\")",
            env.agent.join("mcp.json").display()
        )
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_calls_mcp_tools_by_their_pi_names() {
    let Some(dir) = servers_dir() else { return };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    write_config(&env, json!({ "everything": everything(&dir) }));
    server.push(Script::tool_call(
        "mcp__everything__echo",
        json!({"message": "hello mcp"}),
    ));
    server.push(Script::tool_call(
        "mcp__everything__get_sum",
        json!({"a": 2, "b": 40}),
    ));
    server.push(Script::text("done"));
    let out = pi(&env, &["-p", "use the tools"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout), "done\n");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let tools = declared(&requests[0].body);
    for name in [
        "read",
        "bash",
        "mcp__everything__echo",
        "mcp__everything__get_sum",
    ] {
        assert!(tools.iter().any(|t| t == name), "{name} not in {tools:?}");
    }
    let echo = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__everything__echo")
        .unwrap();
    assert_eq!(echo["function"]["parameters"]["type"], "object");
    let results = tool_results(&requests[2].body);
    assert!(results[0].contains("Echo: hello mcp"), "{results:?}");
    assert!(results[1].contains("42"), "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_filesystem_server_writes_and_reads_in_the_project() {
    let Some(dir) = servers_dir() else { return };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let script = dir.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let root = env.work.canonicalize().unwrap();
    write_config(
        &env,
        json!({"fs": {"command": "node", "args": [script.display().to_string(), root.display().to_string()]}}),
    );
    let note = root.join("note.txt");
    server.push(Script::tool_call(
        "mcp__fs__write_file",
        json!({"path": note.display().to_string(), "content": "written through MCP\n"}),
    ));
    server.push(Script::tool_call(
        "mcp__fs__read_text_file",
        json!({"path": note.display().to_string()}),
    ));
    server.push(Script::tool_call(
        "mcp__fs__read_text_file",
        json!({"path": "/etc/hostname"}),
    ));
    server.push(Script::text("done"));
    let out = pi(&env, &["-p", "write and read"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        std::fs::read_to_string(&note).unwrap(),
        "written through MCP\n"
    );
    let results = tool_results(&server.requests()[3].body);
    assert!(results[1].contains("written through MCP"), "{results:?}");
    // Outside the allowed directory: the server's error reaches the model as an error result.
    assert!(
        results[2].to_lowercase().contains("denied") || results[2].contains("outside"),
        "{results:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_project_mcp_json_runs_only_in_a_trusted_project() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (test, notes_path) = test_server(&env, json!({}));
    std::fs::create_dir_all(env.work.join(".pi")).unwrap();
    std::fs::write(
        env.work.join(".pi/mcp.json"),
        json!({"mcpServers": {"proj": test}}).to_string(),
    )
    .unwrap();
    // Not trusted (and not asked, outside interactive mode): the server never starts.
    server.push(Script::text("one"));
    let out = pi(&env, &["-p", "a"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        !declared(&server.requests()[0].body)
            .iter()
            .any(|t| t.starts_with("mcp__"))
    );
    assert_eq!(notes(&notes_path), "", "the untrusted project's server ran");
    let listed = text(&pi(&env, &["mcp", "list"]).stdout);
    assert!(
        listed.contains("is ignored because the project is not trusted"),
        "{listed}"
    );
    // --approve trusts it for the run.
    server.push(Script::text("two"));
    let out = pi(&env, &["--approve", "-p", "b"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(
        declared(&server.requests()[1].body)
            .iter()
            .any(|t| t == "mcp__proj__echo")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_search_loads_deferred_tools_for_the_next_call() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (test, _) = test_server(
        &env,
        json!({"exposure": "deferred", "toolExposure": {"grow": "direct"}}),
    );
    write_config(&env, json!({ "t": test }));
    server.push(Script::tool_call("tool_search", json!({"query": "echo"})));
    server.push(Script::tool_call(
        "mcp__t__echo",
        json!({"text": "found it"}),
    ));
    server.push(Script::text("done"));
    server.push(Script::text("later"));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("1", json!({"type": "prompt", "message": "find a tool"}));
    rpc.event("agent_end");
    rpc.call("2", json!({"type": "prompt", "message": "and now"}));
    rpc.event("agent_end");
    rpc.finish();
    let requests = server.requests();
    let first = declared(&requests[0].body);
    assert!(first.iter().any(|t| t == "tool_search"), "{first:?}");
    let system = requests[0].body["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.ends_with("<mcp_servers>\nThese MCP servers have tools that are not declared to you yet: find and load them with `tool_search`.\n- mcp__t\n</mcp_servers>"),
        "{system}"
    );
    assert!(first.iter().any(|t| t == "mcp__t__grow"), "{first:?}");
    assert!(!first.iter().any(|t| t == "mcp__t__echo"), "{first:?}");
    let results = tool_results(&requests[1].body);
    assert!(results[0].contains("mcp__t__echo"), "{results:?}");
    for later in [&requests[1], &requests[2], &requests[3]] {
        assert!(declared(&later.body).iter().any(|t| t == "mcp__t__echo"));
    }
    assert_eq!(tool_results(&requests[2].body)[1], "found it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_mcp_and_tool_patterns_decide_which_mcp_tools_are_declared() {
    let Some(dir) = servers_dir() else { return };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    write_config(
        &env,
        json!({ "everything": {
            "command": everything(&dir)["command"], "args": everything(&dir)["args"],
            "toolExposure": {"get-env": "hidden", "toggle-*": "deferred"}
        }}),
    );
    for args in [
        vec!["--no-mcp", "-p", "a"],
        vec!["--tools", "read,mcp__everything__e*", "-p", "b"],
        vec![
            "--tools",
            "read",
            "-xt",
            "mcp__everything__get_*",
            "-p",
            "c",
        ],
    ] {
        server.push(Script::text("ok"));
        let out = pi(&env, &args);
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
    let requests = server.requests();
    let no_mcp = declared(&requests[0].body);
    assert!(!no_mcp.iter().any(|t| t.starts_with("mcp__")), "{no_mcp:?}");
    assert_eq!(
        declared(&requests[1].body),
        ["read", "mcp__everything__echo"]
    );
    let kept = declared(&requests[2].body);
    assert!(
        kept.iter().any(|t| t == "mcp__everything__echo"),
        "{kept:?}"
    );
    assert!(
        !kept.iter().any(|t| t.starts_with("mcp__everything__get_")),
        "{kept:?}"
    );
    assert!(
        !kept
            .iter()
            .any(|t| t.starts_with("mcp__everything__toggle")),
        "{kept:?}"
    );
}

/// Progress the server writes together with the result (one write, no time between) still
/// reaches the client as updates, all of them and in order, before the call ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_sent_with_the_result_comes_before_it() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (test, _) = test_server(&env, json!({}));
    write_config(&env, json!({ "t": test }));
    for _ in 0..3 {
        server.push(Script::tool_call("mcp__t__burst", json!({})));
    }
    server.push(Script::text("done"));
    let out = pi(&env, &["--mode", "json", "-p", "go"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let ends: Vec<usize> = (0..events.len())
        .filter(|&i| events[i]["type"] == "tool_execution_end")
        .collect();
    assert_eq!(ends.len(), 3);
    let mut start = 0;
    for end in ends {
        let steps: Vec<&str> = events[start..end]
            .iter()
            .filter(|e| e["type"] == "tool_execution_update")
            .filter_map(|e| e["partialResult"]["content"][0]["text"].as_str())
            .collect();
        assert_eq!(
            steps,
            ["step 1", "step 2", "step 3", "step 4", "step 5"],
            "call ending at event {end}"
        );
        assert_eq!(
            events[end]["result"]["content"][0]["text"], "burst done",
            "{}",
            events[end]
        );
        start = end + 1;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn progress_becomes_tool_updates_and_abort_cancels_the_call() {
    let Some(dir) = servers_dir() else { return };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    write_config(&env, json!({ "everything": everything(&dir) }));
    server.push(Script::tool_call(
        "mcp__everything__trigger_long_running_operation",
        json!({"duration": 3, "steps": 3}),
    ));
    server.push(Script::text("after progress"));
    server.push(Script::tool_call(
        "mcp__everything__trigger_long_running_operation",
        json!({"duration": 60, "steps": 60}),
    ));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("1", json!({"type": "prompt", "message": "run it"}));
    let events = rpc.until("agent_end", |e| e["type"] == "agent_end");
    let updates: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_update")
        .collect();
    assert!(updates.len() >= 2, "{updates:?}");
    let first = updates[0]["partialResult"]["content"][0]["text"]
        .as_str()
        .unwrap();
    assert!(
        first.starts_with("Progress 1/3") || first.contains("1"),
        "{first}"
    );
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], false, "{end}");
    assert_eq!(
        end["result"]["details"],
        json!({"server": "everything", "tool": "trigger-long-running-operation"})
    );

    rpc.call("2", json!({"type": "prompt", "message": "again"}));
    rpc.until("the long call's first update", |e| {
        e["type"] == "tool_execution_update"
    });
    let started = Instant::now();
    rpc.send(json!({"id": "3", "type": "abort"}));
    let events = rpc.until("agent_end", |e| e["type"] == "agent_end");
    assert!(started.elapsed() < Duration::from_secs(20));
    let end = events
        .iter()
        .find(|e| e["type"] == "tool_execution_end")
        .unwrap();
    assert_eq!(end["isError"], true, "{end}");
    rpc.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crashes_hangs_and_garbage_fail_one_call_and_the_session_goes_on() {
    let Some(dir) = servers_dir() else { return };
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (test, notes_path) = test_server(&env, json!({"timeout": 2}));
    write_config(&env, json!({ "everything": everything(&dir), "t": test }));
    server.push(Script::tool_call("mcp__t__hang", json!({})));
    server.push(Script::tool_call("mcp__t__garbage", json!({})));
    server.push(Script::tool_call("mcp__t__boom", json!({})));
    server.push(Script::tool_call(
        "mcp__t__echo",
        json!({"text": "back again"}),
    ));
    server.push(Script::tool_call(
        "mcp__everything__echo",
        json!({"message": "still here"}),
    ));
    server.push(Script::text("fine"));
    let out = pi(&env, &["-p", "go"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let requests = server.requests();
    let results = tool_results(&requests[5].body);
    assert_eq!(results.len(), 5, "{results:?}");
    assert_eq!(
        results[0],
        "MCP server \"t\": the call timed out after 2 seconds"
    );
    assert!(
        results[1].starts_with(
            "MCP server \"t\": the server sent a line that is not JSON: this is not json"
        ),
        "garbage: {}",
        results[1]
    );
    assert!(
        results[2].starts_with("MCP server \"t\": the server exited with code 7")
            && results[2].ends_with("dying now"),
        "boom: {}",
        results[2]
    );
    // The next call started the server again.
    assert_eq!(results[3], "back again");
    assert!(results[4].contains("Echo: still here"), "{results:?}");
    // Every server process pi started is gone once pi has exited.
    let pids: Vec<i32> = notes(&notes_path)
        .lines()
        .filter_map(|l| l.strip_prefix("pid "))
        .filter_map(|p| p.trim().parse().ok())
        .collect();
    assert!(pids.len() >= 2, "{}", notes(&notes_path));
    for pid in pids {
        wait_until(&format!("server {pid} to be gone"), || process_gone(pid));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abort_sends_the_server_a_cancellation() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (test, notes_path) = test_server(&env, json!({}));
    write_config(&env, json!({ "t": test }));
    server.push(Script::tool_call("mcp__t__slow", json!({})));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("1", json!({"type": "prompt", "message": "slow"}));
    rpc.until("the slow call", |e| e["type"] == "tool_execution_start");
    wait_until("the call to reach the server", || {
        notes(&notes_path).contains("call slow")
    });
    rpc.send(json!({"id": "2", "type": "abort"}));
    rpc.until("agent_end", |e| e["type"] == "agent_end");
    wait_until("the cancellation", || {
        notes(&notes_path).contains("cancelled")
    });
    let seen = notes(&notes_path);
    let call_id = seen
        .lines()
        .find_map(|l| l.strip_prefix("call slow "))
        .unwrap()
        .to_owned();
    assert!(seen.contains(&format!("cancelled {call_id}")), "{seen}");
    rpc.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streamable_http_servers_work_like_stdio_ones() {
    let Some(dir) = servers_dir() else { return };
    let (_http, url) = start_http_everything(&dir);
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    write_config(
        &env,
        json!({ "web": {"url": url, "headers": {"X-Team": "core"}} }),
    );
    let out = pi(&env, &["mcp", "list"]);
    let listed = text(&out.stdout);
    assert!(out.status.success(), "{listed}{}", text(&out.stderr));
    assert!(listed.starts_with("web: connected, "), "{listed}");
    server.push(Script::tool_call(
        "mcp__web__echo",
        json!({"message": "over http"}),
    ));
    server.push(Script::tool_call(
        "mcp__web__trigger_long_running_operation",
        json!({"duration": 1, "steps": 2}),
    ));
    server.push(Script::tool_call(
        "read_mcp_resource",
        json!({"server": "web", "uri": "demo://resource/static/document/features.md"}),
    ));
    server.push(Script::text("done"));
    let out = pi(&env, &["--mode", "json", "-p", "go"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let events: Vec<Value> = text(&out.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let updates = events
        .iter()
        .filter(|e| e["type"] == "tool_execution_update")
        .count();
    assert!(updates >= 2, "progress over HTTP");
    let results = tool_results(&server.requests()[3].body);
    assert!(results[0].contains("Echo: over http"), "{results:?}");
    assert!(
        results[1].contains("Long running operation completed"),
        "{results:?}"
    );
    assert!(results[2].len() > 100, "{results:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_follows_list_changed() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (test, _) = test_server(&env, json!({}));
    write_config(&env, json!({ "t": test }));
    server.push(Script::tool_call("mcp__t__grow", json!({})));
    server.push(Script::text("grown"));
    server.push(Script::text("second"));
    let mut rpc = Rpc::start(&env, &[]);
    rpc.call("1", json!({"type": "prompt", "message": "grow"}));
    rpc.event("agent_end");
    rpc.call("2", json!({"type": "prompt", "message": "again"}));
    rpc.event("agent_end");
    let requests = server.requests();
    assert!(
        !declared(&requests[0].body)
            .iter()
            .any(|t| t == "mcp__t__extra")
    );
    assert!(
        declared(&requests[2].body)
            .iter()
            .any(|t| t == "mcp__t__extra"),
        "{:?}",
        declared(&requests[2].body)
    );
    rpc.finish();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_mcp_shows_servers_state_and_tools_in_the_terminal() {
    if !support::tmux::available() {
        eprintln!("tmux is not installed; skipping");
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let (test, _) = test_server(&env, json!({"toolExposure": {"boom": "hidden"}}));
    write_config(
        &env,
        json!({ "t": test, "gone": {"command": "no-such-mcp-server-xyz"} }),
    );
    let tmux = support::tmux::Tmux::start(&env, &[], 120, 40);
    tmux.wait_for("mock-model");
    tmux.type_text("/mcp");
    tmux.keys(&["Enter"]);
    let screen = tmux.wait("the MCP list", Duration::from_secs(20), |s| {
        s.contains("MCP Servers")
            && s.contains("gone: failed")
            && s.contains("t: connected, 7 tools")
    });
    assert!(screen.contains("mcp__t__boom [hidden]"), "{screen}");
    assert!(
        screen.contains("spawn no-such-mcp-server-xyz ENOENT"),
        "{screen}"
    );
}
