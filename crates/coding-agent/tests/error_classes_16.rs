//! Provider stops, stream failures and error texts classed as pi 1.6.0 classes them: the
//! same scripted failure from the mock model through our `pi --mode rpc` and through 1.6.0
//! (`PI_TS16`) gives the same assistant messages (stop reason, error text, content), the
//! same auto-retries and compactions and the same number of requests. Each case queues a
//! success after the failure, so a retry that should not happen (or one that is missing)
//! shows. Without `PI_TS16` only our side runs, against the expectations written here,
//! read from pi-ai 1.6's providers and retry patterns.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::{Fault, Item, Script, StopReason};
use support::errors::{
    ANTHROPIC, BEDROCK, CHAT, GEMINI, MISTRAL, Outcome, VERTEX, Wire, compare, compare_part,
    replay, sse,
};

/// The answer queued after every failure.
const RECOVERED: &str = "recovered answer";

/// An Anthropic stream: `message_start` with fixed usage, `blocks` (each its start event,
/// deltas and stop), then `tail` (the message delta and stop, or whatever a case ends with).
fn anthropic(blocks: &[(Value, Vec<Value>)], tail: &[(&str, Value)]) -> String {
    let mut events = vec![(
        "message_start",
        json!({"type": "message_start", "message": {"id": "msg_errors", "type": "message",
            "role": "assistant", "model": "parity-model", "content": [], "stop_reason": null,
            "usage": {"input_tokens": 12, "output_tokens": 1}}}),
    )];
    for (index, (start, deltas)) in blocks.iter().enumerate() {
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start}),
        ));
        for delta in deltas {
            events.push((
                "content_block_delta",
                json!({"type": "content_block_delta", "index": index, "delta": delta}),
            ));
        }
        events.push((
            "content_block_stop",
            json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let mut body = sse(&events);
    body.push_str(&sse(tail));
    body
}

/// A text block streamed as `text`.
fn text_block(text: &str) -> (Value, Vec<Value>) {
    (
        json!({"type": "text", "text": ""}),
        vec![json!({"type": "text_delta", "text": text})],
    )
}

/// `message_delta` with `delta` (and output usage 7), then `message_stop`.
fn ending(delta: Value) -> Vec<(&'static str, Value)> {
    vec![
        (
            "message_delta",
            json!({"type": "message_delta", "delta": delta, "usage": {"output_tokens": 7}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]
}

/// One prompt against `failure`, then the recovered answer.
async fn one(wire: &Wire, failure: impl Fn() -> Script) -> Outcome {
    compare(
        wire,
        || vec![failure(), Script::text(RECOVERED)],
        &["hello"],
        false,
    )
    .await
}

/// Asserts the run failed once with `error` and was not retried.
fn failed_without_retry(outcome: &Outcome, error: &str) {
    assert_eq!(outcome.requests, 1, "{outcome:#?}");
    assert_eq!(outcome.count("auto_retry_start"), 0, "{outcome:#?}");
    assert_eq!(outcome.last()["stopReason"], "error", "{outcome:#?}");
    assert_eq!(outcome.last()["errorMessage"], error, "{outcome:#?}");
}

/// Asserts the run failed once with `error`, was retried once and then answered.
fn retried_after(outcome: &Outcome, error: &str) {
    assert_eq!(outcome.requests, 2, "{outcome:#?}");
    assert_eq!(outcome.count("auto_retry_start"), 1, "{outcome:#?}");
    let messages = outcome.messages();
    assert_eq!(messages[0]["errorMessage"], error, "{outcome:#?}");
    assert_eq!(outcome.last()["stopReason"], "stop", "{outcome:#?}");
    assert_eq!(outcome.last()["content"][0]["text"], RECOVERED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_refusals_and_sensitive_stops_as_in_16() {
    let explanation = "This request was declined under the usage policy.";
    let refusal = |details: Value| {
        let mut delta = json!({"stop_reason": "refusal", "stop_sequence": null});
        if !details.is_null() {
            delta["stop_details"] = details;
        }
        replay(anthropic(&[text_block("I can")], &ending(delta)))
    };
    let outcome = one(&ANTHROPIC, || {
        refusal(json!({"type": "refusal", "category": "cyber", "explanation": explanation}))
    })
    .await;
    failed_without_retry(&outcome, explanation);
    assert_eq!(outcome.last()["content"], json!([{"text": "I can"}]));

    let outcome = one(&ANTHROPIC, || refusal(Value::Null)).await;
    failed_without_retry(&outcome, "The model refused to complete the request");

    let outcome = one(&ANTHROPIC, || {
        Script::text("partial").with_raw_stop_reason("sensitive")
    })
    .await;
    failed_without_retry(&outcome, "Provider stopped with: sensitive");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_anthropic_stream_ending_before_message_stop_is_retried_as_in_16() {
    let outcome = one(&ANTHROPIC, || {
        let delta = json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                           "usage": {"output_tokens": 3}});
        replay(anthropic(&[text_block("cut")], &[("message_delta", delta)]))
    })
    .await;
    retried_after(&outcome, "Anthropic stream ended before message_stop");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_start_events_carrying_content_and_deltas_without_usage_as_in_16() {
    // Text and thinking already in `content_block_start`, then more in deltas.
    let blocks = [
        (
            json!({"type": "thinking", "thinking": "Let me ", "signature": "sig-start"}),
            vec![json!({"type": "thinking_delta", "thinking": "think"})],
        ),
        (
            json!({"type": "text", "text": "Hello "}),
            vec![json!({"type": "text_delta", "text": "world"})],
        ),
    ];
    let outcome = compare(
        &ANTHROPIC,
        || {
            vec![replay(anthropic(
                &blocks,
                &ending(json!({"stop_reason": "end_turn"})),
            ))]
        },
        &["hello"],
        true,
    )
    .await;
    assert_eq!(
        outcome.last()["content"],
        json!([{"thinking": "Let me think", "signature": "sig-start"}, {"text": "Hello world"}])
    );

    // A proxy's `message_delta` without `usage`: the start's counts stay.
    let no_usage = || {
        let tail = [
            (
                "message_delta",
                json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}}),
            ),
            ("message_stop", json!({"type": "message_stop"})),
        ];
        vec![replay(anthropic(&[text_block("fine")], &tail))]
    };
    let outcome = compare(&ANTHROPIC, no_usage, &["hello"], true).await;
    assert_eq!(outcome.requests, 1);
    assert_eq!(outcome.last()["stopReason"], "stop");
    assert_eq!(outcome.last()["content"], json!([{"text": "fine"}]));
    assert_eq!(outcome.last()["usage"]["input"], 12);
    assert_eq!(outcome.last()["usage"]["output"], 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bedrock_unhandled_stops_and_canceled_streams_as_in_16() {
    let outcome = one(&BEDROCK, || {
        Script::text("blocked").with_raw_stop_reason("guardrail_intervened")
    })
    .await;
    failed_without_retry(&outcome, "Provider stopped with: guardrail_intervened");

    // A stalled HTTP/2 connection's error, relayed in the stream after the reply began
    // (before it, the AWS client of pi 1.6.0 retries the request itself).
    let outcome = one(&BEDROCK, || {
        Script::text("partial").with_fault(Fault::StreamError {
            after_events: 2,
            message: Some("The pending stream has been canceled".into()),
        })
    })
    .await;
    assert_eq!(outcome.requests, 2, "{outcome:#?}");
    assert_eq!(outcome.count("auto_retry_start"), 1, "{outcome:#?}");
    let first = outcome.messages()[0]["errorMessage"].as_str().unwrap();
    assert!(
        first.contains("The pending stream has been canceled"),
        "{first}"
    );
    assert_eq!(outcome.last()["content"][0]["text"], RECOVERED);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transient_google_errors_are_retried_as_in_16() {
    for wire in [&GEMINI, &VERTEX] {
        let outcome = one(wire, || Script::http_error(503)).await;
        assert_eq!(outcome.requests, 2, "{}: {outcome:#?}", wire.api);
        assert_eq!(outcome.count("auto_retry_start"), 1, "{}", wire.api);
        assert_eq!(outcome.last()["content"][0]["text"], RECOVERED);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn google_tool_calls_keep_output_limit_and_error_stops_as_in_16() {
    let call = || Item::tool_call("read", json!({"path": "a.txt"}));
    let outcome = one(&GEMINI, || {
        Script::new(vec![call()]).with_stop_reason(StopReason::Length)
    })
    .await;
    assert_eq!(
        outcome.messages()[0]["stopReason"],
        "length",
        "{outcome:#?}"
    );
    assert_eq!(
        outcome.messages()[0]["content"],
        json!([{"toolCall": "read"}])
    );

    let outcome = one(&GEMINI, || {
        Script::new(vec![Item::text("about to"), call()]).with_raw_stop_reason("SAFETY")
    })
    .await;
    failed_without_retry(&outcome, "Provider stopped with: SAFETY");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stream_errors_asking_for_a_retry_are_retried_as_in_16() {
    for text in [
        "An error occurred while processing your request. You can retry your request.",
        "exceeded request buffer limit while retrying upstream",
        "Unable to forward upstream stream",
        "The service is temporarily unavailable",
    ] {
        let outcome = one(&CHAT, || {
            Script::default().with_fault(Fault::StreamError {
                after_events: 0,
                message: Some(text.into()),
            })
        })
        .await;
        assert_eq!(outcome.requests, 2, "{text}: {outcome:#?}");
        assert_eq!(outcome.count("auto_retry_start"), 1, "{text}");
        let first = outcome.messages()[0]["errorMessage"].as_str().unwrap();
        assert!(first.contains(text), "{first}");
        assert_eq!(outcome.last()["content"][0]["text"], RECOVERED);
    }
    // The same kind of failure without such a phrase ends the run.
    let outcome = one(&CHAT, || {
        Script::default().with_fault(Fault::StreamError {
            after_events: 0,
            message: Some("The request was rejected".into()),
        })
    })
    .await;
    assert_eq!(outcome.requests, 1, "{outcome:#?}");
    assert_eq!(outcome.count("auto_retry_start"), 0);
}

/// An HTTP error with `status` and `body` verbatim.
fn http_failure(status: u16, body: Option<String>) -> Script {
    Script::default().with_fault(Fault::HttpError {
        status,
        retry_after: None,
        retry_after_ms: None,
        body,
    })
}

/// A 400 whose OpenAI-style error object says `message`: the status alone is never retried,
/// so only the text decides.
fn bad_request(message: &str) -> Script {
    let body = json!({"error": {"message": message, "type": "invalid_request_error"}});
    http_failure(400, Some(body.to_string()))
}

/// An in-stream error event saying `message` after `after_events` events.
fn stream_error(after_events: usize, message: &str) -> Script {
    Script::text("partial").with_fault(Fault::StreamError {
        after_events,
        message: Some(message.into()),
    })
}

/// Asserts the run failed once with an error containing `text`, was retried once and then
/// answered.
fn retried_with(outcome: &Outcome, text: &str) {
    assert_eq!(outcome.requests, 2, "{text}: {outcome:#?}");
    assert_eq!(outcome.count("auto_retry_start"), 1, "{text}: {outcome:#?}");
    let first = outcome.messages()[0]["errorMessage"].as_str().unwrap_or("");
    assert!(first.contains(text), "{text}: {first}");
    assert_eq!(outcome.last()["content"][0]["text"], RECOVERED, "{text}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn capacity_and_exhaustion_texts_in_a_400_are_retried_as_in_16() {
    for text in [
        // gRPC status names relayed by NVIDIA NIM.
        "Inference failed: ResourceExhausted: the request queue of this function is full",
        "Selected model is at capacity. Please try a different model.",
        // Azure OpenAI under peak load.
        "The system is currently experiencing high demand and cannot process your request. Your request exceeds the maximum usage size allowed during peak load.",
        "The servers are currently busy, please wait",
        "The upstream provider returned an error",
    ] {
        let outcome = one(&CHAT, || bad_request(text)).await;
        retried_with(&outcome, text);
    }
    // `server_busy` as the error's code only (pi 1.6.0 reads the whole error object).
    let body = json!({"error": {"message": "Please wait", "type": "invalid_request_error",
                                "code": "server_busy"}});
    let outcome = one(&CHAT, || http_failure(400, Some(body.to_string()))).await;
    retried_with(&outcome, "server_busy");
    // The same 400 with an ordinary text is final.
    let outcome = one(&CHAT, || {
        bad_request("The model does not support this input")
    })
    .await;
    assert_eq!(outcome.requests, 1, "{outcome:#?}");
    assert_eq!(outcome.count("auto_retry_start"), 0, "{outcome:#?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cloudflare_524_is_retried_as_in_16() {
    let outcome = one(&CHAT, || http_failure(524, Some("error code: 524".into()))).await;
    retried_with(&outcome, "524");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dns_gateway_and_cut_short_stream_errors_are_retried_as_in_16() {
    for (after_events, text) in [
        (0, "getaddrinfo ENOTFOUND api.example.com"),
        (0, "connect ENOTFOUND api.example.com"),
        (0, "lookup failed: EAI_AGAIN api.example.com"),
        (
            0,
            "upstream connect error or disconnect/reset before headers. reset reason: connection termination",
        ),
        (0, "upstream request failed"),
        // Codex CLI proxies relay the backend's own words.
        (2, "stream disconnected before completion: response.failed"),
        // A Google token refresh that failed on the way (the form of gaxios' errors).
        (
            0,
            "request to https://oauth2.googleapis.com/token failed, reason: socket disconnected",
        ),
        (2, "The response was cut short after the reply had begun"),
    ] {
        let outcome = one(&CHAT, || stream_error(after_events, text)).await;
        retried_with(&outcome, text);
    }
    // Digits inside a request id or a byte count are no status code.
    for text in [
        "Invalid tool schema (request id 4f5029a, 15240 bytes)",
        "Request body of 502400 bytes rejected",
    ] {
        let outcome = one(&CHAT, || stream_error(0, text)).await;
        assert_eq!(outcome.requests, 1, "{text}: {outcome:#?}");
        assert_eq!(outcome.count("auto_retry_start"), 0, "{text}");
    }
}

/// Two answered prompts, then a third whose request fails with `failure`; returns the run
/// up to the compaction's start (what it summarizes is not the error class's concern).
async fn third_prompt_failing(failure: impl Fn() -> Script) -> Outcome {
    let until_compaction = |mut outcome: Outcome| {
        if let Some(at) = outcome
            .events
            .iter()
            .position(|e| e["type"] == "compaction_start")
        {
            outcome.events.truncate(at + 1);
        }
        outcome.requests = outcome.requests.min(3);
        outcome
    };
    compare_part(
        &CHAT,
        || {
            vec![
                Script::text("first answer"),
                Script::text("second answer"),
                failure(),
                Script::text("SUMMARY OF THE EARLY WORK"),
                Script::text(RECOVERED),
            ]
        },
        &["first question", "second question", "third question"],
        false,
        until_compaction,
    )
    .await
}

/// The reasons of the run's compactions.
fn compaction_reasons(outcome: &Outcome) -> Vec<Value> {
    outcome
        .events
        .iter()
        .filter(|e| e["type"] == "compaction_start")
        .map(|e| e["reason"].clone())
        .collect()
}

/// Asserts the failure started an overflow compaction and no retry.
fn compacted_for_overflow(outcome: &Outcome, case: &str) {
    assert_eq!(
        compaction_reasons(outcome),
        [json!("overflow")],
        "{case}: {outcome:#?}"
    );
    assert_eq!(outcome.requests, 3, "{case}");
    assert_eq!(outcome.count("auto_retry_start"), 0, "{case}");
    assert_eq!(outcome.last()["stopReason"], "error", "{case}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ds4_context_size_error_is_an_overflow_as_in_16() {
    let text = "Prompt has 140000 tokens, but the configured context size is 131072 tokens";
    let outcome = third_prompt_failing(|| bad_request(text)).await;
    compacted_for_overflow(&outcome, text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gateway_overflow_texts_compact_as_in_16() {
    for text in [
        // OpenRouter relaying Poolside.
        "This request exceeds the maximum allowed input length of 131,072 tokens",
        // vLLM-style servers with the limit in parentheses.
        "This request exceeds the model's maximum context length (32768). Please reduce the length of the prompt",
        // LiteLLM's wrapper around any provider's overflow.
        "litellm.ContextWindowExceededError: litellm.BadRequestError: Context Window exceeded for given call. No models have context window large enough for this call.",
    ] {
        let outcome = third_prompt_failing(|| bad_request(text)).await;
        compacted_for_overflow(&outcome, text);
    }
    // GitHub Copilot refusing a body too large to parse.
    let outcome =
        third_prompt_failing(|| http_failure(413, Some("failed to parse request".into()))).await;
    compacted_for_overflow(&outcome, "413 failed to parse request");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bodyless_400_is_no_overflow_but_a_bodyless_413_is_as_in_16() {
    let outcome = third_prompt_failing(|| http_failure(400, Some(String::new()))).await;
    assert!(compaction_reasons(&outcome).is_empty(), "{outcome:#?}");
    assert_eq!(outcome.requests, 3, "{outcome:#?}");
    assert_eq!(outcome.last()["stopReason"], "error");

    let outcome = third_prompt_failing(|| http_failure(413, Some(String::new()))).await;
    compacted_for_overflow(&outcome, "bodyless 413");
}

/// A Chat Completions stream (OpenAI's and Mistral's shape) whose last chunk carries
/// `finish_reason`.
fn chat_finishing(finish_reason: &str) -> Script {
    let chunk = |delta: Value, finish: Value| {
        json!({"id": "chunk-errors", "object": "chat.completion.chunk", "created": 1,
               "model": "parity-model",
               "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})
    };
    let body = format!(
        "data: {}\n\ndata: {}\n\ndata: [DONE]\n\n",
        chunk(
            json!({"role": "assistant", "content": "partial"}),
            Value::Null
        ),
        chunk(json!({}), json!(finish_reason)),
    );
    replay(body)
}

/// pi 1.x: a terminal reason the decoder does not know ends the reply as a provider error
/// (kept as the raw stop reason), on every API that streams one, and is not retried.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unmapped_stop_reasons_end_as_errors_on_every_api_as_in_16() {
    for wire in [&ANTHROPIC, &BEDROCK, &GEMINI, &VERTEX] {
        let outcome = one(wire, || {
            Script::text("partial").with_raw_stop_reason("brand_new_reason")
        })
        .await;
        assert_eq!(outcome.requests, 1, "{}: {outcome:#?}", wire.api);
        assert_eq!(
            outcome.last()["stopReason"],
            "error",
            "{}: {outcome:#?}",
            wire.api
        );
    }
    for wire in [&CHAT, &MISTRAL] {
        let outcome = one(wire, || chat_finishing("brand_new_reason")).await;
        assert_eq!(outcome.requests, 1, "{}: {outcome:#?}", wire.api);
        assert_eq!(
            outcome.last()["stopReason"],
            "error",
            "{}: {outcome:#?}",
            wire.api
        );
    }
}
