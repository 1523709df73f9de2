//! Cases worked through pi 1.6.0's `computeCacheWaste` scan.

use serde_json::{Value, json};

use super::*;
use crate::session::entry::{FileLine, parse_line};

fn entry(id: &str, mut fields: Value) -> SessionEntry {
    fields["id"] = json!(id);
    fields["parentId"] = Value::Null;
    if fields.get("timestamp").is_none() {
        fields["timestamp"] = json!("2026-01-01T00:00:00.000Z");
    }
    match parse_line(&fields.to_string(), 1).unwrap().0 {
        Some(FileLine::Entry(entry)) => entry,
        other => panic!("not an entry: {other:?}"),
    }
}

/// A usage of these tokens priced $3/M input, $0.30/M cache read, $3.75/M cache write.
fn usage(input: u64, read: u64, write: u64) -> Value {
    let (ci, cr, cw) = (
        input as f64 * 3e-6,
        read as f64 * 0.3e-6,
        write as f64 * 3.75e-6,
    );
    json!({"input": input, "output": 10, "cacheRead": read, "cacheWrite": write,
           "totalTokens": input + read + write + 10,
           "cost": {"input": ci, "output": 0.0, "cacheRead": cr, "cacheWrite": cw, "total": ci + cr + cw}})
}

fn reply(id: &str, model: &str, at: i64, usage: Value) -> SessionEntry {
    entry(
        id,
        json!({"type": "message", "message": {
            "role": "assistant", "content": [{"type": "text", "text": "ok"}],
            "api": "anthropic-messages", "provider": "p", "model": model,
            "usage": usage, "stopReason": "stop", "timestamp": at}}),
    )
}

fn user(id: &str) -> SessionEntry {
    entry(
        id,
        json!({"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}}),
    )
}

fn no_price(_: &str, _: &str) -> Option<f64> {
    None
}

#[test]
fn a_reply_reading_less_than_the_last_prompt_is_a_miss() {
    let entries = [
        user("u1"),
        reply("a1", "m", 1_000, usage(3_000, 2_000, 0)),
        user("u2"),
        reply("a2", "n", 61_000, usage(5_000, 100, 0)),
    ];
    let found = scan(&entries, &no_price);
    // min(5000, 5100) - 100 tokens, at $3/M paid over $0.30/M read.
    assert_eq!(found.totals.missed_tokens, 4_900);
    assert_eq!(found.totals.miss_count, 1);
    assert!((found.totals.missed_cost - 4_900.0 * 2.7e-6).abs() < 1e-12);
    let (id, miss) = &found.misses[0];
    assert_eq!(id, "a2");
    assert_eq!(miss.idle_ms, 60_000);
    assert!(miss.model_changed);
    assert_eq!(found.prev.unwrap().prompt_tokens, 5_100);
}

#[test]
fn no_miss_without_any_reported_caching() {
    let entries = [
        reply("a1", "m", 1, usage(5_000, 0, 0)),
        reply("a2", "m", 2, usage(6_000, 0, 0)),
    ];
    assert_eq!(
        compute_cache_waste(&entries, &no_price),
        CacheWaste::default()
    );
}

#[test]
fn caching_once_reported_makes_later_uncached_replies_misses() {
    // The second reply wrote the cache (a miss itself: it read none of the first's 5,000
    // tokens); the third read nothing and paid for it all. Replies that read nothing take
    // the read price from the model (per million tokens).
    let entries = [
        reply("a1", "m", 1, usage(5_000, 0, 0)),
        reply("a2", "m", 2, usage(100, 0, 5_000)),
        reply("a3", "m", 3, usage(6_000, 0, 0)),
    ];
    let price = |provider: &str, model: &str| {
        assert_eq!((provider, model), ("p", "m"));
        Some(0.3)
    };
    let written = (100.0 * 3e-6 + 5_000.0 * 3.75e-6) / 5_100.0;
    let waste = compute_cache_waste(&entries, &price);
    assert_eq!((waste.missed_tokens, waste.miss_count), (10_100, 2));
    let expected = 5_000.0 * (written - 0.3e-6) + 5_100.0 * 2.7e-6;
    assert!((waste.missed_cost - expected).abs() < 1e-12);
    // Without a price for the model, reading is taken as free.
    let waste = compute_cache_waste(&entries, &no_price);
    let expected = 5_000.0 * written + 5_100.0 * 3e-6;
    assert!((waste.missed_cost - expected).abs() < 1e-12);
}

#[test]
fn small_misses_do_not_count() {
    let entries = [
        reply("a1", "m", 1, usage(100, 2_000, 0)),
        reply("a2", "m", 2, usage(1_100, 1_000, 0)),
        reply("a3", "m", 3, usage(1_100, 1_076, 0)),
    ];
    // 2100 - 1000 = 1100 counts; then 2100 - 1076 = 1024 does not.
    let waste = compute_cache_waste(&entries, &no_price);
    assert_eq!((waste.missed_tokens, waste.miss_count), (1_100, 1));
}

#[test]
fn compactions_and_branch_summaries_forget_the_last_request() {
    for summary in [
        json!({"type": "compaction", "summary": "s", "firstKeptEntryId": "a1", "tokensBefore": 1}),
        json!({"type": "branch_summary", "fromId": "a1", "summary": "s"}),
    ] {
        let entries = [
            reply("a1", "m", 1, usage(100, 5_000, 0)),
            entry("c", summary),
            reply("a2", "m", 2, usage(5_000, 0, 0)),
            reply("a3", "m", 3, usage(100, 4_000, 0)),
        ];
        // a2 has nothing before it; a3 follows a2, which reported no caching, but a3 did.
        let waste = compute_cache_waste(&entries, &no_price);
        assert_eq!((waste.missed_tokens, waste.miss_count), (0, 0));
    }
}

#[test]
fn a_cache_warming_request_is_the_last_request() {
    let entries = [
        reply("a1", "m", 1_000, usage(5_000, 0, 0)),
        entry(
            "w",
            json!({"type": "usage", "kind": "cache_warm", "provider": "p", "model": "m",
                   "usage": usage(0, 8_000, 0), "timestamp": "1970-01-01T00:00:10.000Z"}),
        ),
        reply("a2", "m", 12_000, usage(8_500, 0, 0)),
    ];
    let found = scan(&entries, &no_price);
    assert_eq!(found.totals.missed_tokens, 8_000);
    let miss = &found.misses[0].1;
    assert_eq!(miss.idle_ms, 2_000);
    assert!(!miss.model_changed);
}

#[test]
fn a_reply_without_a_prompt_keeps_the_last_request() {
    let entries = [
        reply("a1", "m", 1, usage(100, 5_000, 0)),
        reply("aborted", "m", 2, usage(0, 0, 0)),
        reply("a2", "m", 3, usage(5_100, 0, 0)),
    ];
    let found = scan(&entries, &no_price);
    assert_eq!(found.totals.missed_tokens, 5_100);
    assert_eq!(found.misses[0].0, "a2");
}
