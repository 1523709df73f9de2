//! Message cost as pi 1.6.0 prices it: the same replayed Anthropic stream through our
//! `pi --mode rpc` and through 1.6.0 (`PI_TS16`), with a custom model's prices in
//! `models.json`, gives the same usage and cost. Covers one-hour prompt-cache writes
//! (twice the input rate), prompt-length price tiers and Mistral's cached prompt tokens. Without `PI_TS16` only ours runs,
//! against the costs written here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::{Value, json};

use mock_llm::Script;
use support::errors::{ANTHROPIC, MISTRAL, compare_model, replay, sse};

/// Prices per million tokens: $3 input, $15 output, $0.30 cache read, $3.75 cache write.
fn prices() -> Value {
    json!({"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75})
}

/// A one-text-block Anthropic stream whose `message_start` reports `usage`, ending with
/// 20 output tokens.
fn stream_with_usage(usage: Value) -> Script {
    replay(sse(&[
        (
            "message_start",
            json!({"type": "message_start", "message": {"id": "msg_cost", "type": "message",
                "role": "assistant", "model": "parity-model", "content": [], "stop_reason": null,
                "usage": usage}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Priced."}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 20}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ]))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_hour_cache_writes_are_priced_at_twice_the_input_rate_as_in_16() {
    let usage = json!({"input_tokens": 1000, "output_tokens": 1, "cache_read_input_tokens": 500,
        "cache_creation_input_tokens": 3000,
        "cache_creation": {"ephemeral_5m_input_tokens": 1000, "ephemeral_1h_input_tokens": 2000}});
    let outcome = compare_model(&ANTHROPIC, json!({"cost": prices()}), || {
        vec![stream_with_usage(usage.clone())]
    })
    .await;
    let cost = &outcome.last()["usage"]["cost"];
    // 1000 five-minute writes at $3.75, 2000 one-hour writes at 2 × $3.
    assert_eq!(cost["cacheWrite"], json!(0.01575), "{outcome:#?}");
    assert_eq!(outcome.last()["usage"]["cacheWrite"], 3000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_prompt_is_priced_by_its_tier_as_in_16() {
    let mut cost = prices();
    cost["tiers"] = json!([{"inputTokensAbove": 200000, "input": 6, "output": 22.5,
                            "cacheRead": 0.6, "cacheWrite": 7.5}]);
    // A window the long prompt fits in (no compaction after it).
    let fields = json!({"cost": cost, "contextWindow": 1_000_000});
    // 150k input and 60k cache reads: above the tier's 200k, so all of it at its prices.
    let long =
        json!({"input_tokens": 150_000, "output_tokens": 1, "cache_read_input_tokens": 60_000});
    let outcome = compare_model(&ANTHROPIC, fields.clone(), || {
        vec![stream_with_usage(long.clone())]
    })
    .await;
    let priced = &outcome.last()["usage"]["cost"];
    assert_eq!(priced["input"], json!(0.9), "{outcome:#?}");
    assert_eq!(
        priced["output"],
        json!(22.5 / 1_000_000.0 * 20.0),
        "{outcome:#?}"
    );
    // 150k input alone stays at the base prices.
    let short = json!({"input_tokens": 150_000, "output_tokens": 1});
    let outcome = compare_model(&ANTHROPIC, fields, || {
        vec![stream_with_usage(short.clone())]
    })
    .await;
    assert_eq!(outcome.last()["usage"]["cost"]["input"], json!(0.45));
}

/// A Mistral stream answering one text whose last chunk reports `usage`.
fn mistral_stream_with_usage(usage: Value) -> Script {
    let chunk = |delta: Value, finish: Value, usage: Option<&Value>| {
        let mut chunk = json!({"id": "cmpl-cost", "object": "chat.completion.chunk",
            "created": 1, "model": "parity-model",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        if let Some(usage) = usage {
            chunk["usage"] = usage.clone();
        }
        format!("data: {chunk}\n\n")
    };
    let mut body = chunk(
        json!({"role": "assistant", "content": "Cached."}),
        Value::Null,
        None,
    );
    body.push_str(&chunk(json!({"content": ""}), json!("stop"), Some(&usage)));
    body.push_str("data: [DONE]\n\n");
    replay(body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mistral_cached_prompt_tokens_are_cache_reads_as_in_16() {
    for details in [
        json!({"prompt_tokens_details": {"cached_tokens": 600}}),
        json!({"num_cached_tokens": 600}),
    ] {
        let mut usage = json!({"prompt_tokens": 1000, "completion_tokens": 20,
                               "total_tokens": 1020});
        if let (Some(usage), Some(details)) = (usage.as_object_mut(), details.as_object()) {
            usage.extend(details.clone());
        }
        let outcome = compare_model(&MISTRAL, json!({"cost": prices()}), || {
            vec![mistral_stream_with_usage(usage.clone())]
        })
        .await;
        let priced = &outcome.last()["usage"];
        assert_eq!(priced["input"], 400, "{details}: {outcome:#?}");
        assert_eq!(priced["cacheRead"], 600, "{details}");
        assert_eq!(priced["cacheWrite"], 0, "{details}");
        // 400 input at $3 and 600 cache reads at $0.30 per million.
        let read = priced["cost"]["cacheRead"].as_f64().unwrap();
        assert!((read - 0.00018).abs() < 1e-12, "{details}: {read}");
    }
}
