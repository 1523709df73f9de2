//! Streams recorded from llama.cpp's server (build 11434, Gemma 3 270M; see
//! scripts/local-llm.sh) replayed by mock-llm: the `pi` binary handles its quirks — tool-call
//! ids without `call_`, arguments in one-token fragments, the `timings` object, usage in a
//! separate chunk with no choices, the model path as the model name.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::{MockServer, Script};
use support::rpc::{Env, read_jsonl};

const TOOL_CALL: &str = include_str!("fixtures/llamacpp-tool-call.sse");
const TEXT: &str = include_str!("fixtures/llamacpp-text.sse");

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_recorded_llamacpp_tool_turn_runs_through_pi() {
    let server = MockServer::start().await.unwrap();
    server.push_all([
        Script::raw(TOOL_CALL).with_write_chunk_bytes(97),
        Script::raw(TEXT).with_write_chunk_bytes(97),
    ]);
    let env = Env::new(&server, 32_768, json!({}));
    std::fs::write(
        env.work.join("hello.txt"),
        "Hello from the local model test!\n",
    )
    .unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["-p", "read hello.txt"])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let answer = String::from_utf8_lossy(&out.stdout);
    assert!(
        answer.contains("Hello from the local model test!"),
        "{answer}"
    );

    let file = env.session_files().pop().unwrap();
    let messages: Vec<_> = read_jsonl(&file)
        .into_iter()
        .filter(|l| l["type"] == "message" && l["message"]["role"] != "system")
        .map(|l| l["message"].clone())
        .collect();
    let call = &messages[1]["content"][0];
    assert_eq!(call["type"], "toolCall");
    assert_eq!(call["name"], "read");
    assert_eq!(call["arguments"], json!({"path": "hello.txt"}));
    let id = call["id"].as_str().unwrap();
    assert_eq!(id.len(), 32, "llama.cpp's own id, kept: {id}");
    assert_eq!(messages[1]["stopReason"], "toolUse");
    assert_eq!(messages[2]["toolCallId"], id);
    assert_eq!(messages[2]["isError"], false);
    assert_eq!(messages[3]["stopReason"], "stop");
    // Usage from the choice-less last chunk, cached prompt tokens as cache reads.
    assert_eq!(messages[3]["usage"]["output"], 8);
    assert_eq!(messages[3]["usage"]["cacheRead"], 202);
    assert_eq!(messages[3]["usage"]["input"], 50);
    // The second request carried the call with its id and the tool result.
    let second = &server.requests()[1].body;
    let tool = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert_eq!(tool["tool_call_id"], id);
}
