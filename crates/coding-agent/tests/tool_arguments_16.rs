//! A tool call whose streamed arguments end as malformed JSON, as pi 1.6.0 handles it: the
//! tool does not run with the fields read before the error; the call fails validation and
//! the model is shown the raw text it sent (`Invalid arguments for tool "write": <reason>
//! \n\nReceived arguments:\n<text>`), and the session keeps the call with empty arguments
//! and its `argumentsError`. The parser's own reason differs (V8's `JSON.parse` words,
//! serde_json's here); everything around it is compared with pi 1.6.0 (`PI_TS16`).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::{Env, read_jsonl};
use support::ts16::{pis, program, run};

/// The cut-off arguments: a complete `path` and an unterminated `content`.
const CUT: &str = r#"{"path": "made.txt", "content": "half"#;

/// Runs one prompt whose reply calls `write` with [`CUT`]; returns what the model was told
/// (the reason replaced by `<reason>`), whether the file was written, and the recorded call.
async fn malformed_call(wrapper: &Option<std::path::PathBuf>) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call_raw("write", CUT));
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    let out = run(&env, program(wrapper), &["-p", "Write it."]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    let told = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].clone())
        .unwrap();
    let told = match told {
        Value::String(text) => text,
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join(""),
        other => panic!("tool content {other}"),
    };
    let prefix = "Invalid arguments for tool \"write\": ";
    let suffix = format!("\n\nReceived arguments:\n{CUT}");
    let normalized = match (told.strip_prefix(prefix), told.ends_with(&suffix)) {
        (Some(rest), true) if rest.len() > suffix.len() => format!("{prefix}<reason>{suffix}"),
        _ => told.clone(),
    };
    let session = env.session_files();
    let call = read_jsonl(&session[0])
        .into_iter()
        .filter(|l| l["message"]["role"] == "assistant")
        .flat_map(|l| {
            l["message"]["content"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .find(|b| b["type"] == "toolCall")
        .unwrap();
    let error = call["argumentsError"].as_str().unwrap_or_default();
    json!({
        "told": normalized,
        "written": env.work.join("made.txt").exists(),
        "arguments": call["arguments"],
        "argumentsErrorEnds": error.ends_with(&suffix),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_final_arguments_fail_validation_with_the_raw_text_as_pi_16() {
    let mut seen = Vec::new();
    for (name, wrapper) in pis() {
        seen.push((name, malformed_call(&wrapper).await));
    }
    assert_eq!(
        seen[0].1,
        json!({
            "told": format!(
                "Invalid arguments for tool \"write\": <reason>\n\nReceived arguments:\n{CUT}"
            ),
            "written": false,
            "arguments": {},
            "argumentsErrorEnds": true,
        })
    );
    for (name, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {name}");
    }
}
