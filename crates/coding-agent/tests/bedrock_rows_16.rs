//! Amazon Bedrock behaviour of pi 1.6.0 beyond signing: the reasoning fields OpenAI models
//! get (and the redacted reasoning they return, replayed), Claude's thinking-block binding,
//! the diagnostics a failed request leaves on the message, the response headers extensions
//! see, and the price of one-hour cache writes. The same print-mode prompt runs through
//! ours and pi 1.6.0 (`PI_TS16`) against the mock with SigV4 keys in the environment, and
//! the part each case is about is compared. Without `PI_TS16` only ours runs, against the
//! values written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Output;

use serde_json::{Map, Value, json};

use mock_llm::{Fault, Item, RecordedRequest, Script, ScriptUsage};
use support::errors::BEDROCK_SIGV4;
use support::pi_case::{Case, assistant_messages, bedrock_case, compare, compare_runs};
use support::shapes::{self, Session};

/// `id` on Bedrock with ambient SigV4 keys, prompted with `args` after `--model`.
fn signed(id: &str, fields: Value, args: Vec<&'static str>) -> Case {
    let mut case = bedrock_case(id, fields);
    case.env.extend([
        ("AWS_ACCESS_KEY_ID", "AKIDPARITYEXAMPLE"),
        ("AWS_SECRET_ACCESS_KEY", "parity-secret-key"),
        ("AWS_REGION", "us-east-1"),
    ]);
    case.args = args;
    case
}

/// Each request's `additionalModelRequestFields`.
fn model_fields(output: &Output, requests: &[RecordedRequest]) -> Value {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    requests
        .iter()
        .map(|r| r.body["additionalModelRequestFields"].clone())
        .collect()
}

/// The fields `id` is sent with at each thinking level of `levels`.
async fn fields_by_level(id: &str, fields: &Value, levels: &[&'static str]) -> Value {
    let mut all = Map::new();
    for level in levels {
        let case = signed(
            id,
            fields.clone(),
            vec!["-p", "Hello.", "--thinking", level],
        );
        all.insert((*level).to_owned(), compare(&case, model_fields).await);
    }
    Value::Object(all)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_models_on_bedrock_get_their_reasoning_effort_as_in_16() {
    let levels = ["off", "minimal", "medium", "high"];
    let oss = fields_by_level("openai.gpt-oss-120b-parity", &json!({}), &levels).await;
    assert_eq!(
        oss,
        json!({"off": [null], "minimal": [{"reasoning_effort": "low"}],
               "medium": [{"reasoning_effort": "medium"}], "high": [{"reasoning_effort": "high"}]})
    );
    // GPT models take `reasoning.effort`, renamed by their thinking-level map.
    let gpt = fields_by_level(
        "openai.gpt-5-parity",
        &json!({"thinkingLevelMap": {"medium": "mid"}}),
        &levels,
    )
    .await;
    assert_eq!(
        gpt,
        json!({"off": [null], "minimal": [{"reasoning": {"effort": "low"}}],
               "medium": [{"reasoning": {"effort": "mid"}}],
               "high": [{"reasoning": {"effort": "high"}}]})
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn newer_claude_models_drop_thinking_a_changed_prompt_invalidated_as_in_16() {
    // Opus 4.7 binds its thinking blocks to the prompt prefix they were signed with, so a
    // replay after the system prompt or tools changed drops them instead of failing.
    let bound = fields_by_level("anthropic.claude-opus-4-7-parity", &json!({}), &["high"]).await;
    assert_eq!(
        bound,
        json!({"high": [{"thinking": {"type": "adaptive", "display": "summarized",
            "block_binding": {"prefix_mismatch_behavior": "drop_block"}},
            "output_config": {"effort": "high"},
            "anthropic_beta": ["thinking-binding-controls-2026-08-01"]}]})
    );
    // Sonnet 4.6 thinks adaptively without the binding.
    let unbound =
        fields_by_level("anthropic.claude-sonnet-4-6-parity", &json!({}), &["high"]).await;
    assert_eq!(
        unbound,
        json!({"high": [{"thinking": {"type": "adaptive", "display": "summarized"},
            "output_config": {"effort": "high"}}]})
    );
}

/// Each assistant message's error text and diagnostics (their timestamps left out).
fn failures(output: &Output, _requests: &[RecordedRequest]) -> Value {
    assistant_messages(output)
        .iter()
        .map(|m| {
            let diagnostics: Vec<Value> = m["diagnostics"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|d| json!({"type": d["type"], "details": d["details"]}))
                .collect();
            json!({"stopReason": m["stopReason"], "errorMessage": m["errorMessage"],
                   "diagnostics": diagnostics})
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_bedrock_request_leaves_its_status_error_code_and_request_id_as_in_16() {
    let mut case = signed(
        "anthropic.claude-parity",
        json!({"reasoning": false}),
        vec!["--mode", "json", "-p", "Hello."],
    );
    case.scripts = vec![Script::http_error(400)];
    assert_eq!(
        compare(&case, failures).await,
        json!([{"stopReason": "error",
            "errorMessage": "Validation error: Malformed input request, please reformat your input and try again.",
            "diagnostics": [{"type": "bedrock_response_failure", "details":
                {"status": 400, "errorCode": "ValidationException", "requestId": "mock-request-id"}}]}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_refused_data_retention_mode_links_the_aws_documentation_as_in_16() {
    // The refusal as an HTTP error, and (in other words and case) as an in-stream exception.
    let refused = Script::new(vec![]).with_fault(Fault::HttpError {
        status: 400,
        retry_after: None,
        retry_after_ms: None,
        body: Some(
            json!({"__type": "ValidationException",
                   "message": "The requested data retention mode is not supported for this model."})
            .to_string(),
        ),
    });
    let in_stream = Script::text("partial").with_fault(Fault::StreamError {
        after_events: 2,
        message: Some("Data Retention Mode 'none' is unavailable in this Region.".into()),
    });
    let mut seen = Vec::new();
    for script in [refused, in_stream] {
        let mut case = signed(
            "anthropic.claude-parity",
            json!({"reasoning": false}),
            vec!["--mode", "json", "-p", "Hello."],
        );
        case.scripts = vec![script];
        let messages = compare(&case, |output, _| {
            assistant_messages(output)
                .iter()
                .map(|m| json!({"stopReason": m["stopReason"], "errorMessage": m["errorMessage"]}))
                .collect()
        })
        .await;
        seen.push(messages);
    }
    let docs = "See https://docs.aws.amazon.com/bedrock/latest/userguide/data-retention.html \
for supported data retention modes.";
    assert_eq!(
        seen,
        [
            json!([{"stopReason": "error", "errorMessage": format!(
                "Validation error: The requested data retention mode is not supported for this model. {docs}")}]),
            json!([{"stopReason": "error", "errorMessage": format!(
                "Throttling error: Data Retention Mode 'none' is unavailable in this Region. {docs}")}]),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hour_cache_writes_are_priced_at_twice_the_input_rate_as_in_16() {
    let mut case = signed(
        "anthropic.claude-parity",
        json!({"reasoning": false,
               "cost": {"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75}}),
        vec!["--mode", "json", "-p", "Hello."],
    );
    let usage = ScriptUsage {
        input: 100,
        output: 10,
        cache_read: 0,
        cache_write: 1000,
        reasoning: 0,
    };
    let details = json!([{"ttl": "1h", "inputTokens": 600}, {"ttl": "5m", "inputTokens": 400}]);
    let extra = Map::from_iter([("cacheDetails".to_owned(), details)]);
    case.scripts = vec![
        Script::text("Cached.")
            .with_full_usage(usage)
            .with_usage_extra(extra),
    ];
    let priced = compare(&case, |output, _| {
        assistant_messages(output)
            .iter()
            .map(|m| {
                let u = &m["usage"];
                json!({"cacheWrite": u["cacheWrite"], "cacheWrite1h": u["cacheWrite1h"],
                       "cost": u["cost"]["cacheWrite"]})
            })
            .collect()
    })
    .await;
    // (400 × 3.75 + 600 × 2 × 3) per million tokens.
    assert_eq!(
        priced,
        json!([{"cacheWrite": 1000, "cacheWrite1h": 600, "cost": 0.0051}])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redacted_reasoning_of_a_non_anthropic_model_is_replayed_as_in_16() {
    // gpt-oss returns opaque redacted reasoning; the next turn sends it back as it came.
    let answer = Script::new(vec![
        Item::RedactedThinking {
            data: "b3BhcXVlLXJlYXNvbmluZw==".into(),
        },
        Item::text("First."),
    ]);
    let session = Session {
        wire: &BEDROCK_SIGV4,
        model: shapes::model("openai.gpt-oss-120b-parity", json!({})),
        scripts: vec![answer, Script::text("Second.")],
        runs: vec![
            vec!["-p", "Hello.", "--thinking", "high"],
            vec!["-c", "-p", "Again.", "--thinking", "high"],
        ],
        files: vec![],
    };
    let replayed = shapes::compare(&session, |r| r[1].1["messages"][1].clone()).await;
    assert_eq!(
        replayed,
        json!({"role": "assistant", "content": [
            {"reasoningContent": {"redactedContent": "b3BhcXVlLXJlYXNvbmluZw=="}},
            {"text": "First."}]})
    );
}

/// Records each `after_provider_response` (status and headers) to `response-hooks.jsonl`.
const RESPONSE_HOOK: &str = r#"
import { appendFileSync } from "node:fs";
import { join } from "node:path";
export default function (pi) {
  pi.on("after_provider_response", (event) => {
    appendFileSync(join(process.env.PI_CASE_WORK, "response-hooks.jsonl"),
      JSON.stringify({ status: event.status, headers: event.headers }) + "\n");
  });
}
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_hooks_see_the_raw_bedrock_response_headers_as_in_16() {
    let mut case = signed(
        "anthropic.claude-parity",
        json!({"reasoning": false}),
        vec!["-e", "./response-hook.ts", "-p", "Hello."],
    );
    case.files = vec![("response-hook.ts", RESPONSE_HOOK)];
    case.read_back = vec!["response-hooks.jsonl"];
    let seen = compare_runs(&case, |run| {
        assert!(
            run.output.status.success(),
            "{}",
            String::from_utf8_lossy(&run.output.stderr)
        );
        let log = run.files[0].1.clone().unwrap_or_default();
        log.lines()
            .map(|line| {
                let hook: Value = serde_json::from_str(line).unwrap();
                let headers = &hook["headers"];
                // The date and length vary; what the server sent is all there.
                json!({"status": hook["status"], "content-type": headers["content-type"],
                       "x-amzn-requestid": headers["x-amzn-requestid"],
                       "has-date": headers.get("date").is_some()})
            })
            .collect()
    })
    .await;
    assert_eq!(
        seen,
        json!([{"status": 200, "content-type": "application/vnd.amazon.eventstream",
                "x-amzn-requestid": "mock-request-id", "has-date": true}])
    );
}
