//! What the server reads of a request to answer it: the whole body, except that the
//! conversation arrays (`messages`, `input`, `contents`) keep only their last entries, so a
//! request carrying a huge transcript is answered after a scan instead of a full parse.

use std::collections::HashMap;

use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The conversation entries kept from the end of each array.
const KEPT_TAIL: usize = 256;

const CONVERSATION_KEYS: [&str; 3] = ["messages", "input", "contents"];

/// The request body as a JSON value with its conversation arrays cut to their tails;
/// `Null` when the body is not a JSON object.
pub(crate) fn slim_request(raw: &[u8]) -> Value {
    let Ok(fields) = serde_json::from_slice::<HashMap<String, &RawValue>>(raw) else {
        return serde_json::from_slice(raw).unwrap_or(Value::Null);
    };
    Value::Object(slim_object(fields))
}

fn slim_object(fields: HashMap<String, &RawValue>) -> Map<String, Value> {
    let mut out = Map::with_capacity(fields.len());
    for (key, raw) in fields {
        let value = if CONVERSATION_KEYS.contains(&key.as_str()) {
            tail(raw)
        } else if key == "request" {
            // Gemini CLI wraps the request: `{"request": {"contents": […]}}`.
            serde_json::from_str::<HashMap<String, &RawValue>>(raw.get())
                .map(|inner| Value::Object(slim_object(inner)))
                .unwrap_or_else(|_| parse(raw))
        } else {
            parse(raw)
        };
        out.insert(key, value);
    }
    out
}

fn tail(raw: &RawValue) -> Value {
    match serde_json::from_str::<Vec<&RawValue>>(raw.get()) {
        Ok(items) => {
            let start = items.len().saturating_sub(KEPT_TAIL);
            Value::Array(items[start..].iter().map(|item| parse(item)).collect())
        }
        Err(_) => parse(raw),
    }
}

fn parse(raw: &RawValue) -> Value {
    serde_json::from_str(raw.get()).unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_arrays_keep_their_tail_and_the_rest_is_whole() {
        let messages: Vec<Value> = (0..300).map(|i| serde_json::json!({"n": i})).collect();
        let body = serde_json::json!({
            "model": "m", "stream": true, "messages": messages,
            "request": {"contents": [{"a": 1}], "x": 2}, "tools": [{"t": 1}]
        });
        let slim = slim_request(&serde_json::to_vec(&body).unwrap());
        let kept = slim["messages"].as_array().unwrap();
        assert_eq!(kept.len(), KEPT_TAIL);
        assert_eq!(kept.last(), Some(&serde_json::json!({"n": 299})));
        assert_eq!(slim["request"], body["request"]);
        assert_eq!(slim["tools"], body["tools"]);
        assert_eq!(slim["model"], "m");
        assert_eq!(slim_request(b"not json"), Value::Null);
    }
}
