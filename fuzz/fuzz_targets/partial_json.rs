//! The partial-JSON parser of streamed tool-call arguments: arbitrary text, pushed in
//! fragments. Properties: after every push the incremental value equals a one-shot parse of
//! the text so far, and for a complete JSON object it is exactly serde_json's value (key
//! order included) when it nests at most `MAX_DEPTH` deep, and broken when deeper.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pi_ai::partial_json::{MAX_DEPTH, PartialJsonParser, parse_partial_object};
use serde_json::{Map, Value};

/// `text` in at most eight pieces, cut at char boundaries.
fn fragments(text: &str) -> Vec<&str> {
    let size = (text.len() / (1 + text.len() % 8)).max(1);
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < text.len() {
        let mut end = (start + size).min(text.len());
        while !text.is_char_boundary(end) {
            end += 1;
        }
        pieces.push(&text[start..end]);
        start = end;
    }
    pieces
}

/// How deep containers nest in `value`, itself included (0 for a scalar).
fn depth(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
        Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
        _ => 0,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut parser = PartialJsonParser::new();
    let mut target = Map::new();
    for fragment in fragments(text) {
        parser.push(fragment, &mut target);
        assert_eq!(
            target,
            parse_partial_object(parser.text()),
            "incremental and one-shot differ after {:?}",
            parser.text()
        );
    }
    assert_eq!(parser.text(), text);
    if let Ok(Value::Object(expected)) = serde_json::from_str::<Value>(text) {
        if 1 + expected.values().map(depth).max().unwrap_or(0) > MAX_DEPTH {
            assert!(parser.is_broken(), "an object past MAX_DEPTH is not broken");
            return;
        }
        assert_eq!(target, expected, "a complete object parsed differently");
        let keys: Vec<&String> = target.keys().collect();
        let expected_keys: Vec<&String> = expected.keys().collect();
        assert_eq!(keys, expected_keys, "key order differs");
        assert!(parser.is_complete(), "a complete object is not complete");
        assert!(!parser.is_broken(), "a complete object is broken");
    }
});
