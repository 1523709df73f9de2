//! Claude's strict-tool limits as pi 1.6.0 meets them: when Anthropic refuses a request
//! because its strict tool set is too large (`Too many strict tools (…)`, the compiled
//! grammar's size, union types), the request is sent once more with the tools that only
//! prefer strictness sent plain, the reply carries an `anthropic_strict_tools_fallback`
//! diagnostic, and the session's later requests go plain from the start (pi 1.2, 1.5.1).
//! Other refusals are not retried. Bedrock's Claude models do the same after a
//! `ValidationException` (pi 1.5). Our `pi` and pi 1.6.0 (`PI_TS16`) run the same session
//! against one mock each, and what the mock received must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{Fault, MockServer, Script};
use serde_json::{Value, json};
use support::errors::BEDROCK;
use support::rpc::{Env, Rpc, read_jsonl};
use support::shapes::{NOTES_FILE, Session, compare, model};
use support::ts16::{pis, program};

/// A custom Claude model that takes strict tools.
fn models(server: &MockServer) -> Value {
    json!({"providers": {"anth": {
        "baseUrl": server.anthropic_base_url(), "api": "anthropic-messages", "apiKey": "k",
        "compat": {"supportsStrictTools": true},
        "models": [{"id": "claude-test", "name": "Claude Test", "contextWindow": 200000,
                    "maxTokens": 8192}]}}})
}

/// A 400 Anthropic answers with, of error `kind` saying `message`.
fn refusal(kind: &str, message: &str) -> Script {
    let body = json!({"type": "error", "error": {"type": kind, "message": message}});
    Script::text("").with_fault(Fault::HttpError {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        body: Some(body.to_string()),
    })
}

/// Which tools a request sent strict, by name.
fn strict_tools(request: &mock_llm::RecordedRequest) -> Value {
    let tools = request.body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let strict: Vec<Value> = tools
        .iter()
        .filter(|tool| tool["strict"] == true)
        .map(|tool| tool["name"].clone())
        .collect();
    json!(strict)
}

/// The diagnostics of the session's assistant messages, without their timestamps.
fn diagnostics(env: &Env) -> Value {
    let mut seen = Vec::new();
    for file in env.session_files() {
        for line in read_jsonl(&file) {
            let message = &line["message"];
            if message["role"] != "assistant" {
                continue;
            }
            let mut list = message["diagnostics"].clone();
            if let Some(items) = list.as_array_mut() {
                for item in items {
                    let stamped = item["timestamp"].as_u64().is_some_and(|t| t > 0);
                    item["timestamp"] = json!(stamped);
                }
            }
            seen.push(json!({"stopReason": message["stopReason"], "diagnostics": list}));
        }
    }
    json!(seen)
}

/// Two prompts in one RPC session; the first request is answered by `first`, then a tool
/// round trip (a read) and a reply to the second prompt.
async fn session(wrapper: &Option<std::path::PathBuf>, first: Script) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(first);
    server.push(Script::tool_call("read", json!({"path": "notes.txt"})));
    server.push(Script::text("It says hello."));
    server.push(Script::text("Bye."));
    let env = Env::new(
        &server,
        200_000,
        json!({"retry": {"enabled": false}, "defaultProvider": "anth",
               "defaultModel": "claude-test", "defaultThinkingLevel": "off"}),
    );
    std::fs::write(env.agent.join("models.json"), models(&server).to_string()).unwrap();
    std::fs::write(env.work.join("notes.txt"), "hello\n").unwrap();
    let command = program(wrapper);
    tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &[]);
        for (id, text) in [("p1", "Read notes.txt."), ("p2", "Thanks.")] {
            rpc.call(id, json!({"type": "prompt", "message": text}));
            rpc.until("the run settled", |l| l["type"] == "agent_settled");
        }
        rpc.finish();
    });
    let requests: Vec<Value> = server.requests().iter().map(strict_tools).collect();
    json!({"strict": requests, "replies": diagnostics(&env)})
}

/// Runs the session through every pi and checks they agree; returns ours.
async fn agree(first: impl Fn() -> Script) -> Value {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        seen.push((who, session(&wrapper, first()).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
    seen.remove(0).1
}

/// pi's tools that prefer strictness, as sent strict.
fn preferred() -> Value {
    json!(["read", "bash", "edit", "write"])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_strict_tool_limit_refusal_is_retried_plain_and_remembered_as_pi_16() {
    let message = "Too many strict tools (24). The maximum number of strict tools is 20.";
    let ours = agree(|| refusal("invalid_request_error", message)).await;
    let strict = ours["strict"].as_array().unwrap();
    // The refused request, its plain retry (a tool call), the answer after the tool, and
    // the second prompt's: all plain after the refusal.
    assert_eq!(strict.len(), 4, "{ours}");
    let mut expected_first = preferred();
    expected_first
        .as_array_mut()
        .unwrap()
        .sort_by_key(|v| v.to_string());
    let mut first = strict[0].clone();
    first.as_array_mut().unwrap().sort_by_key(|v| v.to_string());
    assert_eq!(first, expected_first, "{ours}");
    for later in &strict[1..] {
        assert_eq!(later, &json!([]), "{ours}");
    }
    let replies = ours["replies"].as_array().unwrap();
    let diagnostic = &replies[0]["diagnostics"][0];
    assert_eq!(
        diagnostic["type"], "anthropic_strict_tools_fallback",
        "{ours}"
    );
    assert_eq!(
        diagnostic["details"],
        json!({"reason": "strict_tool_limits_exceeded"})
    );
    assert!(
        diagnostic["error"]["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("400 ") && m.contains(message)),
        "{ours}"
    );
    // Only the reply of the retried request says so.
    for reply in &replies[1..] {
        assert_eq!(reply["diagnostics"], Value::Null, "{ours}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn other_refusals_are_not_retried_plain_as_pi_16() {
    // The limit's words under another error type, and another invalid request.
    for first in [
        || refusal("overloaded_error", "Too many strict tools (24)."),
        || refusal("invalid_request_error", "prompt is too long"),
    ] {
        let ours = agree(first).await;
        let strict = ours["strict"].as_array().unwrap();
        // The first prompt fails; the second runs the scripted tool round trip, strict.
        assert_eq!(strict.len(), 3, "{ours}");
        assert!(
            strict
                .iter()
                .all(|tools| tools.as_array().unwrap().len() == 4),
            "{ours}"
        );
        assert_eq!(ours["replies"][0]["stopReason"], "error", "{ours}");
        assert_eq!(ours["replies"][0]["diagnostics"], Value::Null, "{ours}");
    }
}

/// Which tools each Bedrock request sent strict, by name.
fn bedrock_strict_tools(requests: &[(Value, Value)]) -> Value {
    let per_request: Vec<Value> = requests
        .iter()
        .map(|(_, body)| {
            let tools = body["toolConfig"]["tools"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            let strict: Vec<Value> = tools
                .iter()
                .filter(|tool| tool["toolSpec"]["strict"] == true)
                .map(|tool| tool["toolSpec"]["name"].clone())
                .collect();
            json!(strict)
        })
        .collect();
    json!(per_request)
}

/// A Bedrock Claude model with strict mode whose first request is answered by `first`,
/// then a tool round trip.
fn bedrock_session(first: Script) -> Session<'static> {
    Session {
        wire: &BEDROCK,
        model: model(
            "anthropic.claude-parity",
            json!({"name": "Parity Claude", "compat": {"supportsStrictMode": true}}),
        ),
        scripts: vec![
            first,
            Script::tool_call("read", json!({"path": NOTES_FILE})),
            Script::text("It says the parity notes."),
        ],
        runs: vec![vec!["-p", "Read notes.txt."]],
        files: vec![],
    }
}

/// Bedrock's refusal: a `ValidationException` (named in the body, as the AWS SDK reads it
/// without `x-amzn-errortype`) saying `message`.
fn bedrock_refusal(kind: &str, message: &str) -> Script {
    let body = json!({"__type": kind, "message": message});
    Script::text("").with_fault(Fault::HttpError {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        body: Some(body.to_string()),
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bedrock_retries_a_strict_tool_limit_refusal_plain_as_pi_16() {
    let message = "The compiled grammar is too large for this request.";
    let ours = compare(
        &bedrock_session(bedrock_refusal("ValidationException", message)),
        bedrock_strict_tools,
    )
    .await;
    let strict = ours.as_array().unwrap();
    // The refused request (every preferring tool strict), its plain retry, and the
    // request after the tool, plain as well.
    assert_eq!(strict.len(), 3, "{ours}");
    assert_eq!(strict[0].as_array().unwrap().len(), 4, "{ours}");
    assert_eq!(strict[1], json!([]), "{ours}");
    assert_eq!(strict[2], json!([]), "{ours}");
}
