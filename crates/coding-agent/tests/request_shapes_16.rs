//! Anthropic and Gemini request shapes that custom models' compat settings and replayed
//! history decide, as pi 1.6.0 sends them: the same print-mode session through ours and
//! through 1.6.0 (`PI_TS16`) against the mock, and the part of the requests each case is
//! about compared. Without `PI_TS16` only ours runs, against the shapes written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{Item, Script};
use support::errors::{ANTHROPIC, GEMINI};
use support::shapes::{NOTES_FILE, Session, compare, model};

/// The assistant turns of an Anthropic request's `messages`.
fn assistant_messages(requests: &[(Value, Value)], index: usize) -> Value {
    let messages = requests[index].1["messages"].as_array().unwrap();
    Value::from(
        messages
            .iter()
            .filter(|m| m["role"] == "assistant")
            .map(|m| m["content"].clone())
            .collect::<Vec<_>>(),
    )
}

/// A thinking reply (`thinking`), then a second run continuing the session.
fn replayed_thinking(compat: Value, thinking: Item) -> Session<'static> {
    Session {
        wire: &ANTHROPIC,
        model: model("claude-parity", json!({"compat": compat})),
        scripts: vec![
            Script::new(vec![thinking, Item::text("Answer.")]),
            Script::text("Again."),
        ],
        runs: vec![
            vec!["--thinking", "high", "-p", "Think."],
            vec!["-c", "--thinking", "high", "-p", "Again?"],
        ],
        files: vec![],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_signed_thinking_with_blank_text_is_replayed_as_in_16() {
    let signed_blank = Item::Thinking {
        text: String::new(),
        signature: Some("c2lnbmVkLWJsYW5r".into()),
    };
    let replayed = compare(&replayed_thinking(json!({}), signed_blank), |r| {
        assistant_messages(r, 1)
    })
    .await;
    assert_eq!(
        replayed,
        json!([[{"type": "thinking", "thinking": "", "signature": "c2lnbmVkLWJsYW5r"},
                {"type": "text", "text": "Answer."}]])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_allow_empty_signature_replays_unsigned_thinking_as_in_16() {
    let unsigned = || Item::thinking("Pondering.");
    let replayed = compare(
        &replayed_thinking(json!({"allowEmptySignature": true}), unsigned()),
        |r| assistant_messages(r, 1),
    )
    .await;
    assert_eq!(
        replayed,
        json!([[{"type": "thinking", "thinking": "Pondering.", "signature": ""},
                {"type": "text", "text": "Answer."}]])
    );
    // Without the flag unsigned thinking goes back as text.
    let replayed = compare(&replayed_thinking(json!({}), unsigned()), |r| {
        assistant_messages(r, 1)
    })
    .await;
    assert_eq!(
        replayed,
        json!([[{"type": "text", "text": "Pondering."}, {"type": "text", "text": "Answer."}]])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_force_adaptive_thinking_on_a_custom_model_as_in_16() {
    let session = Session {
        wire: &ANTHROPIC,
        model: model(
            "parity-claude",
            json!({"compat": {"forceAdaptiveThinking": true}}),
        ),
        scripts: vec![Script::text("Adaptive.")],
        runs: vec![vec!["--thinking", "high", "-p", "Think adaptively."]],
        files: vec![],
    };
    let shape = compare(&session, |r| {
        let (headers, body) = &r[0];
        json!({"thinking": body["thinking"], "output_config": body["output_config"],
               "max_tokens": body["max_tokens"], "beta": headers["anthropic-beta"]})
    })
    .await;
    // Adaptive thinking with the level as effort, the model's whole output cap (no budget
    // taken from it) and no interleaved-thinking beta.
    assert_eq!(
        shape,
        json!({"thinking": {"type": "adaptive", "display": "summarized"},
               "output_config": {"effort": "high"}, "max_tokens": 16384, "beta": null})
    );
}

/// The `contents` of a Gemini request.
fn gemini_contents(requests: &[(Value, Value)], index: usize) -> Value {
    requests[index].1["contents"].clone()
}

/// A Gemini reply of `parts` in one chunk, then a second run continuing the session;
/// returns the model turn the second request replays.
async fn gemini_replayed(parts: Value) -> Value {
    let chunk = json!({"candidates": [{"content": {"role": "model", "parts": parts},
            "finishReason": "STOP"}],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
        "modelVersion": "gemini-3-parity", "responseId": "resp-1"});
    let session = Session {
        wire: &GEMINI,
        model: model("gemini-3-parity", json!({})),
        scripts: vec![
            Script {
                raw_body: Some(format!("data: {chunk}\n\n")),
                ..Script::default()
            },
            Script::text("Again."),
        ],
        runs: vec![vec!["-p", "Think."], vec!["-c", "-p", "Again?"]],
        files: vec![],
    };
    let contents = compare(&session, |r| gemini_contents(r, 1)).await;
    contents[1].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_signed_blank_thinking_and_text_are_replayed_as_in_16() {
    let thinking = json!([{"thought": true, "text": "", "thoughtSignature": "c2lnbmVkLWJsYW5r"},
                          {"text": "Answer."}]);
    assert_eq!(
        gemini_replayed(thinking.clone()).await,
        json!({"role": "model", "parts": thinking})
    );
    let text = json!([{"thought": true, "text": "Hmm."},
                      {"text": "", "thoughtSignature": "c2lnbmVkLXRleHQ="}]);
    assert_eq!(
        gemini_replayed(text.clone()).await,
        json!({"role": "model", "parts": text})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_3_tool_call_ids_are_replayed_as_in_16() {
    let session = Session {
        wire: &GEMINI,
        model: model("gemini-3-parity", json!({})),
        scripts: vec![
            Script::new(vec![Item::ToolCall {
                id: Some("call_notes_1".into()),
                name: "read".into(),
                arguments: json!({"path": NOTES_FILE}),
            }]),
            Script::text("It says: the parity notes."),
        ],
        runs: vec![vec!["-p", "Read notes.txt."]],
        files: vec![],
    };
    let contents = compare(&session, |r| gemini_contents(r, 1)).await;
    assert_eq!(
        contents[1]["parts"][0]["functionCall"]["id"],
        "call_notes_1"
    );
    assert_eq!(
        contents[2]["parts"][0]["functionResponse"]["id"],
        "call_notes_1"
    );
}

/// An extension tool whose schema has `const`s: a literal, a union of literals, and a
/// default holding `const`-shaped data.
const CONST_TOOL: &str = r#"
import { Type } from "@sinclair/typebox";
export default function (pi) {
  pi.registerTool({
    name: "pick",
    label: "pick",
    description: "Pick a mode",
    parameters: Type.Object({
      mode: Type.Literal("fast"),
      level: Type.Union([Type.Literal(1), Type.Literal(2)]),
      extra: Type.Optional(Type.Object({ kind: Type.String() }, { default: { const: "kept" } })),
    }),
    async execute() { return { content: [{ type: "text", text: "ok" }] }; },
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_tool_schemas_send_const_as_enum_as_in_16() {
    let session = Session {
        wire: &GEMINI,
        model: model("gemini-3-parity", json!({"reasoning": false})),
        scripts: vec![Script::text("Picked.")],
        runs: vec![vec!["-e", "pick.ts", "--no-session", "-p", "Pick."]],
        files: vec![("pick.ts", CONST_TOOL)],
    };
    let schema = compare(&session, |r| {
        let declarations = r[0].1["tools"][0]["functionDeclarations"]
            .as_array()
            .unwrap();
        declarations
            .iter()
            .find(|d| d["name"] == "pick")
            .map(|d| d["parametersJsonSchema"].clone())
            .unwrap_or_default()
    })
    .await;
    let properties = &schema["properties"];
    assert_eq!(properties["mode"]["enum"], json!(["fast"]), "{schema:#}");
    assert!(properties["mode"].get("const").is_none(), "{schema:#}");
    assert_eq!(
        properties["level"]["anyOf"][1]["enum"],
        json!([2]),
        "{schema:#}"
    );
    assert_eq!(
        properties["extra"]["default"],
        json!({"const": "kept"}),
        "{schema:#}"
    );
}
