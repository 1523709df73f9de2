//! The OpenAI Codex WebSocket transport, ours against pi 1.6.0 on the mock's Codex
//! WebSocket (each connection recorded as a `GET`, each `response.create` frame as a `WS`
//! request): the frames of a tool round trip on one kept socket (the second sending only
//! the new items after `previous_response_id`), one reconnect after
//! `websocket_connection_limit_reached`, one whole-body retry after
//! `previous_response_not_found`, the connect timeout falling back to SSE, and the idle
//! timeout ending a started reply (the session then uses SSE). pi 1.6.0 is found through
//! `PI_TS16`; without it only ours runs, against expectations read from pi-ai 1.6's
//! `openai-codex-responses` provider.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use serde_json::{Value, json};

use mock_llm::{CodexWebSocket, Fault, MockServer, RecordedRequest, Script};
use support::codex::{self, SESSION_ID};
use support::ts16::{ours, ts16, ts16_pi};

const NOTES: &str = "notes.txt";

/// What a run showed: replies and retries, connections (`GET`s), frames and SSE posts.
fn run(program: Command, scripts: Vec<Script>, settings: Value, ws: CodexWebSocket) -> Value {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    server.set_codex_websocket(ws);
    server.push_all(scripts);
    let env = codex::env(&server, "openai-codex-responses", settings);
    std::fs::write(env.work.join(NOTES), "one line\n").unwrap();
    let lines = codex::rpc_prompt(&env, program, "Read the notes.");
    let requests = server.requests();
    let of = |method: &str| -> Vec<&RecordedRequest> {
        requests.iter().filter(|r| r.method == method).collect()
    };
    let diagnostics: Vec<Value> = lines
        .iter()
        .filter(|l| l["type"] == "message_end" && l["message"]["role"] == "assistant")
        .map(|l| {
            let list = l["message"]["diagnostics"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            json!(
                list.iter()
                    .map(
                        |d| json!({"type": d["type"], "message": d["error"]["message"],
                        "details": d["details"].as_object().map(|o| {
                            let mut o = o.clone();
                            o.remove("requestBytes");
                            o
                        })})
                    )
                    .collect::<Vec<_>>()
            )
        })
        .collect();
    json!({
        "replies": codex::replies_and_retries(&lines),
        "diagnostics": diagnostics,
        "connections": of("GET").iter().map(|r| upgrade_view(r)).collect::<Vec<_>>(),
        "frames": of("WS").iter().map(|r| frame_view(&r.body)).collect::<Vec<_>>(),
        "posts": of("POST").len(),
    })
}

/// The upgrade's path and the headers the backend reads.
fn upgrade_view(request: &RecordedRequest) -> Value {
    let header = |name: &str| request.headers.get(name).cloned();
    json!({
        "path": request.path,
        "openai-beta": header("openai-beta"),
        "session-id": header("session-id"),
        "x-client-request-id": header("x-client-request-id"),
        "chatgpt-account-id": header("chatgpt-account-id"),
        "originator": header("originator"),
        "authorization": header("authorization").is_some(),
        "accept": header("accept"),
        "content-type": header("content-type"),
    })
}

/// A frame's keys, type, continuation and input items (by kind; the system prompt and
/// tool descriptions are each pi's own wording).
fn frame_view(frame: &Value) -> Value {
    let kinds: Vec<Value> = frame["input"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|i| {
                    i.get("type")
                        .or(i.get("role"))
                        .cloned()
                        .unwrap_or(Value::Null)
                })
                .collect()
        })
        .unwrap_or_default();
    let keys: Vec<&String> = frame
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    json!({"keys": keys, "type": frame["type"], "input": kinds,
           "previous_response_id": frame.get("previous_response_id")})
}

/// Both pis' runs (1.6.0's only when installed); asserts they are equal.
fn compare(scripts: impl Fn() -> Vec<Script>, settings: Value, ws: CodexWebSocket) -> Value {
    let our = run(ours(), scripts(), settings.clone(), ws);
    if let Some(wrapper) = ts16() {
        let their = run(ts16_pi(&wrapper), scripts(), settings, ws);
        assert!(
            our == their,
            "ours and pi 1.6.0 differ:\nours: {our:#}\npi 1.6.0: {their:#}"
        );
    }
    our
}

fn on() -> CodexWebSocket {
    CodexWebSocket {
        enabled: true,
        upgrade_delay_ms: 0,
    }
}

fn read_then_answer() -> Vec<Script> {
    vec![
        Script::tool_call("read", json!({"path": NOTES})),
        Script::text("The notes say one line."),
    ]
}

/// A Codex `error` event with `code`, as the only event of a reply.
fn codex_error(code: &str) -> Script {
    let event = json!({"type": "error", "error": {"code": code, "message": format!("{code} said the backend")}});
    Script::raw(format!("data: {event}\n\n"))
}

#[test]
fn a_tool_round_trip_goes_over_one_kept_websocket_as_in_16() {
    let outcome = compare(read_then_answer, json!({}), on());
    assert_eq!(outcome["posts"], 0, "{outcome:#}");
    let connections = outcome["connections"].as_array().unwrap();
    assert_eq!(connections.len(), 1, "{outcome:#}");
    assert_eq!(connections[0]["path"], "/codex/responses");
    assert_eq!(
        connections[0]["openai-beta"],
        "responses_websockets=2026-02-06"
    );
    assert_eq!(connections[0]["session-id"], SESSION_ID);
    assert_eq!(connections[0]["x-client-request-id"], SESSION_ID);
    let frames = outcome["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 2, "{outcome:#}");
    assert_eq!(frames[0]["type"], "response.create");
    assert_eq!(frames[0]["previous_response_id"], Value::Null);
    // The second frame continues the first reply: only the tool result is new.
    assert!(frames[1]["previous_response_id"].is_string(), "{outcome:#}");
    assert_eq!(
        frames[1]["input"],
        json!(["function_call_output"]),
        "{outcome:#}"
    );
    assert_eq!(
        outcome["replies"].as_array().unwrap().last().unwrap()["text"],
        "The notes say one line."
    );
}

#[test]
fn the_websocket_transport_sends_whole_bodies_as_in_16() {
    let outcome = compare(read_then_answer, json!({"transport": "websocket"}), on());
    let frames = outcome["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 2, "{outcome:#}");
    assert_eq!(
        frames[1]["previous_response_id"],
        Value::Null,
        "{outcome:#}"
    );
    assert_eq!(outcome["connections"].as_array().unwrap().len(), 1);
    // `sse` never opens one.
    let sse = compare(read_then_answer, json!({"transport": "sse"}), on());
    assert_eq!(sse["connections"], json!([]), "{sse:#}");
    assert_eq!(sse["posts"], 2, "{sse:#}");
}

#[test]
fn a_connection_limit_before_the_reply_reconnects_once_as_in_16() {
    let scripts = || {
        vec![
            codex_error("websocket_connection_limit_reached"),
            Script::text("second socket"),
        ]
    };
    let outcome = compare(scripts, json!({}), on());
    assert_eq!(
        outcome["connections"].as_array().unwrap().len(),
        2,
        "{outcome:#}"
    );
    assert_eq!(
        outcome["frames"].as_array().unwrap().len(),
        2,
        "{outcome:#}"
    );
    assert_eq!(outcome["posts"], 0, "{outcome:#}");
    assert_eq!(
        outcome["replies"][0]["text"], "second socket",
        "{outcome:#}"
    );
}

#[test]
fn a_lost_previous_response_is_retried_once_with_the_whole_body_as_in_16() {
    let scripts = || {
        vec![
            Script::tool_call("read", json!({"path": NOTES})),
            codex_error("previous_response_not_found"),
            Script::text("answered from the whole history"),
        ]
    };
    let outcome = compare(scripts, json!({}), on());
    let frames = outcome["frames"].as_array().unwrap();
    assert_eq!(frames.len(), 3, "{outcome:#}");
    assert!(frames[1]["previous_response_id"].is_string(), "{outcome:#}");
    assert_eq!(
        frames[2]["previous_response_id"],
        Value::Null,
        "{outcome:#}"
    );
    assert_eq!(
        frames[2]["input"],
        json!(["system", "user", "function_call", "function_call_output"]),
        "{outcome:#}"
    );
    assert_eq!(
        outcome["connections"].as_array().unwrap().len(),
        2,
        "{outcome:#}"
    );
    assert_eq!(outcome["posts"], 0, "{outcome:#}");
}

#[test]
fn a_websocket_slow_to_open_falls_back_to_sse_after_the_connect_timeout_as_in_16() {
    let slow = CodexWebSocket {
        enabled: true,
        upgrade_delay_ms: 4_000,
    };
    let settings = json!({"websocketConnectTimeoutMs": 600});
    let outcome = compare(|| vec![Script::text("over sse")], settings, slow);
    assert_eq!(outcome["frames"], json!([]), "{outcome:#}");
    assert_eq!(outcome["posts"], 1, "{outcome:#}");
    assert_eq!(outcome["replies"][0]["text"], "over sse", "{outcome:#}");
    assert_eq!(
        outcome["diagnostics"][0][0]["message"], "WebSocket connect timeout after 600ms",
        "{outcome:#}"
    );
}

#[test]
fn a_silent_websocket_ends_the_reply_at_the_idle_timeout_as_in_16() {
    // Two events, then 4 s of silence; the retry goes over SSE (the session fell back).
    let scripts = || {
        vec![
            Script::text("stalls").with_fault(Fault::stall(2, 4_000)),
            Script::text("over sse"),
        ]
    };
    let settings = json!({"httpIdleTimeoutMs": 700,
                          "retry": {"enabled": true, "maxRetries": 1, "baseDelayMs": 100}});
    let outcome = compare(scripts, settings, on());
    let replies = outcome["replies"].as_array().unwrap();
    assert_eq!(
        replies[0]["errorMessage"], "WebSocket idle timeout after 700ms",
        "{outcome:#}"
    );
    assert_eq!(replies[1]["type"], "auto_retry_start", "{outcome:#}");
    assert_eq!(replies[2]["text"], "over sse", "{outcome:#}");
    assert_eq!(outcome["posts"], 1, "{outcome:#}");
    assert_eq!(
        outcome["diagnostics"][0][0]["details"]["phase"],
        "after_message_stream_start"
    );
}
