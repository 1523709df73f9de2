//! Golden round trips: every LLM message and stream event in the TypeScript pi's traces
//! parses into our types and serializes back to the same JSON.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use pi_ai::{AssistantMessageEvent, Message};
use serde_json::Value;

const TRACES: &[(&str, &str)] = &[
    ("session", include_str!("fixtures/pi-ts-session.jsonl")),
    ("json-mode", include_str!("fixtures/pi-ts-json-mode.jsonl")),
    (
        "json-mode-error",
        include_str!("fixtures/pi-ts-json-mode-connection-error.jsonl"),
    ),
    ("rpc", include_str!("fixtures/pi-ts-rpc.jsonl")),
    (
        "rpc-session",
        include_str!("fixtures/pi-ts-rpc-session.jsonl"),
    ),
];

/// Visits every object in a JSON tree.
fn walk<'a>(value: &'a Value, visit: &mut dyn FnMut(&'a Value)) {
    visit(value);
    match value {
        Value::Array(items) => items.iter().for_each(|v| walk(v, visit)),
        Value::Object(map) => map.values().for_each(|v| walk(v, visit)),
        _ => {}
    }
}

/// The TypeScript pi leaks its streaming scratch fields into serialized partials.
fn without_scratch(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.iter()
                .filter(|(k, _)| *k != "partialArgs" && *k != "streamIndex")
                .map(|(k, v)| (k.clone(), without_scratch(v)))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.iter().map(without_scratch).collect()),
        other => other.clone(),
    }
}

#[test]
fn every_llm_message_round_trips() {
    let mut count = 0;
    for (name, text) in TRACES {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let value: Value = serde_json::from_str(line).unwrap();
            walk(&value, &mut |v| {
                let role = v.get("role").and_then(Value::as_str);
                if matches!(role, Some("user" | "assistant" | "toolResult")) {
                    let original = without_scratch(v);
                    let message: Message = serde_json::from_value(original.clone())
                        .unwrap_or_else(|e| panic!("{name}: {e}: {original}"));
                    let back = serde_json::to_value(&message).unwrap();
                    assert_eq!(back, original, "{name}");
                    // Key order too: our output is byte-identical to the TypeScript pi's.
                    assert_eq!(
                        serde_json::to_string(&message).unwrap(),
                        original.to_string(),
                        "{name}"
                    );
                    count += 1;
                }
            });
        }
    }
    assert!(count > 50, "only {count} messages found");
}

#[test]
fn every_stream_event_round_trips() {
    let mut count = 0;
    for (name, text) in TRACES {
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let value: Value = serde_json::from_str(line).unwrap();
            if let Some(event) = value.get("assistantMessageEvent") {
                let original = without_scratch(event);
                let parsed: AssistantMessageEvent = serde_json::from_value(original.clone())
                    .unwrap_or_else(|e| panic!("{name}: {e}: {original}"));
                assert_eq!(serde_json::to_value(&parsed).unwrap(), original, "{name}");
                count += 1;
            }
        }
    }
    assert!(count > 10, "only {count} events found");
}

#[test]
fn session_assistant_message_has_the_reference_fields() {
    let line = TRACES[0].1.lines().nth(4).unwrap();
    let entry: Value = serde_json::from_str(line).unwrap();
    let message: Message = serde_json::from_value(entry["message"].clone()).unwrap();
    let Message::Assistant(a) = message else {
        panic!("assistant expected")
    };
    assert_eq!(a.stop_reason, pi_ai::StopReason::ToolUse);
    assert_eq!(a.usage.input, 1385);
    assert_eq!(a.usage.total_tokens, 1395);
    assert_eq!(
        a.response_id.as_deref(),
        Some("chatcmpl-653f634d372e43feaab6b8d0")
    );
    let call = a.tool_calls().next().unwrap();
    assert_eq!(
        (call.name.as_str(), &call.arguments["path"]),
        ("read", &Value::from("hello.txt"))
    );
}

#[test]
fn unknown_roles_and_blocks_are_rejected_not_panicking() {
    assert!(serde_json::from_str::<Message>(r#"{"role":"bashExecution","command":"ls"}"#).is_err());
    assert!(
        serde_json::from_str::<Message>(r#"{"role":"assistant","content":[{"type":"video"}]}"#)
            .is_err()
    );
    assert!(serde_json::from_str::<Message>("{}").is_err());
}
