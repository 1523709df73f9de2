//! Cases worked through pi 1.6.0's `getUsageCostBreakdown`.

use serde_json::{Value, json};

use super::*;
use crate::session::entry::{FileLine, parse_line};

fn entry(fields: Value) -> SessionEntry {
    let mut fields = fields;
    fields["id"] = json!("x");
    fields["parentId"] = Value::Null;
    fields["timestamp"] = json!("2026-01-01T00:00:00.000Z");
    match parse_line(&fields.to_string(), 1).unwrap().0 {
        Some(FileLine::Entry(entry)) => entry,
        other => panic!("not an entry: {other:?}"),
    }
}

fn usage(input: u64, output: u64, read: u64, write: u64, cost: f64) -> Value {
    json!({"input": input, "output": output, "cacheRead": read, "cacheWrite": write,
           "totalTokens": input + output + read + write,
           "cost": {"input": 0.0, "output": 0.0, "cacheRead": 0.0, "cacheWrite": 0.0, "total": cost}})
}

fn reply(provider: &str, model: &str, response_model: Option<&str>, usage: Value) -> SessionEntry {
    let mut message = json!({
        "role": "assistant", "content": [], "api": "openai-completions",
        "provider": provider, "model": model, "usage": usage,
        "stopReason": "stop", "timestamp": 1});
    if let Some(response_model) = response_model {
        message["responseModel"] = json!(response_model);
    }
    entry(json!({"type": "message", "message": message}))
}

fn rows(breakdown: &[UsageCost]) -> Vec<(&str, String, u64)> {
    breakdown
        .iter()
        .map(|r| (r.key.as_str(), format!("{:.4}", r.cost), r.tokens))
        .collect()
}

#[test]
fn models_usage_entries_and_summaries_most_expensive_first() {
    let entries = [
        entry(
            json!({"type": "message", "message": {"role": "user", "content": "hi", "timestamp": 1}}),
        ),
        reply("mock", "cheap", None, usage(100, 10, 0, 0, 0.001)),
        // A virtual model's reply is counted under the model that answered.
        reply(
            "router",
            "auto",
            Some("big"),
            usage(1_000, 100, 500, 200, 0.05),
        ),
        reply("mock", "cheap", None, usage(200, 20, 0, 0, 0.002)),
        entry(
            json!({"type": "usage", "kind": "cache_warm", "provider": "mock", "model": "cheap",
                     "usage": usage(0, 1, 300, 0, 0.0005)}),
        ),
        entry(
            json!({"type": "compaction", "summary": "s", "firstKeptEntryId": "a",
                     "tokensBefore": 1, "usage": usage(50, 5, 0, 0, 0.01)}),
        ),
        entry(
            json!({"type": "branch_summary", "fromId": "a", "summary": "s",
                     "usage": usage(10, 1, 0, 0, 0.001)}),
        ),
        // Spent nothing: left out.
        reply("mock", "free", None, usage(0, 0, 0, 0, 0.0)),
    ];
    assert_eq!(
        rows(&usage_cost_breakdown(&entries)),
        [
            ("router/big", "0.0500".to_owned(), 1_800),
            ("Tools/summaries", "0.0110".to_owned(), 66),
            ("mock/cheap", "0.0035".to_owned(), 631),
        ]
    );
}

#[test]
fn free_rows_with_tokens_stay_and_ties_keep_their_order() {
    let entries = [
        reply("b", "two", None, usage(5, 0, 0, 0, 0.0)),
        reply("a", "one", None, usage(7, 0, 0, 0, 0.0)),
        reply("c", "paid", None, usage(1, 0, 0, 0, 0.01)),
    ];
    assert_eq!(
        rows(&usage_cost_breakdown(&entries)),
        [
            ("c/paid", "0.0100".to_owned(), 1),
            ("b/two", "0.0000".to_owned(), 5),
            ("a/one", "0.0000".to_owned(), 7),
        ]
    );
}

#[test]
fn usage_entries_without_a_model_are_keyed_as_javascript_prints_them() {
    let entries = [entry(
        json!({"type": "usage", "kind": "other", "usage": usage(1, 1, 0, 0, 0.0)}),
    )];
    assert_eq!(usage_cost_breakdown(&entries)[0].key, "undefined/undefined");
}
