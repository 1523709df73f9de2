//! The `pending` stop reason (pi 0.83.0): an assistant message still streaming says
//! `"stopReason": "pending"` (its `message_start` in JSON mode), and the end replaces it with
//! the real reason. One short answer streams through every wire API of ours and pi 1.6.0
//! (`PI_TS16`; Cloud Code Assist, which 1.6.0 dropped, through ours only).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod request_parity;
mod support;

use serde_json::{Value, json};

use request_parity::apis::{APIS, MODEL};
use support::pi_case::{Case, compare, prompt};
use support::ts16::program_with_host;

/// Each assistant `message_start` and `message_end` of a JSON-mode run, with its stop reason.
fn assistant_stops(stdout: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| {
            matches!(
                event["type"].as_str(),
                Some("message_start" | "message_end")
            ) && event["message"]["role"] == "assistant"
        })
        .map(|event| json!([event["type"], event["message"]["stopReason"]]))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streaming_messages_are_pending_until_they_end_as_in_16() {
    for api in APIS {
        let providers = api.models_json("{url}")["providers"].clone();
        let mut case = Case::new(providers, format!("parity/{MODEL}"));
        for (name, value) in api.env() {
            case.env.push((name, Box::leak(value.into_boxed_str())));
        }
        case.args = vec!["--mode", "json", "-p", "Say something."];
        let part = |output: &std::process::Output, _: &[mock_llm::RecordedRequest]| {
            assert!(
                output.status.success(),
                "{}: {}",
                api.api,
                String::from_utf8_lossy(&output.stderr)
            );
            json!(assistant_stops(&output.stdout))
        };
        let stops = if api.api == "google-gemini-cli" {
            let (output, requests) = prompt(program_with_host(&None), &case).await;
            part(&output, &requests)
        } else {
            compare(&case, part).await
        };
        assert_eq!(
            stops,
            json!([["message_start", "pending"], ["message_end", "stop"]]),
            "{}",
            api.api
        );
    }
}

/// A provider following pi 1.6.0's Custom Provider Stream Pattern: the message starts
/// `pending` and `done` sets its reason.
const PATTERN_PROVIDER: &str = r#"
import { createAssistantMessageEventStream } from "@earendil-works/pi-ai";

export default function (pi) {
  pi.registerProvider("pattern", {
    baseUrl: "http://127.0.0.1:9", apiKey: "pattern-key", api: "pattern-api",
    models: [{ id: "pattern-1", name: "pattern", reasoning: false, input: ["text"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 10000, maxTokens: 100 }],
    streamSimple(model, context, options) {
      const stream = createAssistantMessageEventStream();
      const message = { role: "assistant", content: [], api: model.api, provider: model.provider,
        model: model.id, stopReason: "pending", timestamp: Date.now(),
        usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2,
          cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } };
      // The rest comes later, so that the start is seen while the message is pending.
      setTimeout(() => stream.push({ type: "start", partial: message }), 5);
      setTimeout(() => {
        message.content.push({ type: "text", text: "" });
        stream.push({ type: "text_start", contentIndex: 0, partial: message });
        message.content[0].text = "patterned";
        stream.push({ type: "text_delta", contentIndex: 0, delta: "patterned", partial: message });
        stream.push({ type: "text_end", contentIndex: 0, content: "patterned", partial: message });
        message.stopReason = "stop";
        stream.push({ type: "done", reason: "stop", message });
        stream.end();
      }, 100);
      return stream;
    },
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_provider_streams_pending_messages_as_in_16() {
    let mut case = Case::new(json!({}), "pattern/pattern-1");
    case.files = vec![("pattern.ts", PATTERN_PROVIDER)];
    case.args = vec!["-e", "./pattern.ts", "--mode", "json", "-p", "Go."];
    let stops = compare(&case, |output, _| {
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        json!(assistant_stops(&output.stdout))
    })
    .await;
    assert_eq!(
        stops,
        json!([["message_start", "pending"], ["message_end", "stop"]])
    );
}
