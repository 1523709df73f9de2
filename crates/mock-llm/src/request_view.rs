//! What the server reads of a request to answer it: the whole body, except that the
//! conversation arrays (`messages`, `input`, `contents`) keep only their last entries, so a
//! request carrying a huge transcript is answered after one scan instead of a full parse.

use std::collections::VecDeque;
use std::fmt;

use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// The conversation entries kept from the end of each array.
const KEPT_TAIL: usize = 256;

const CONVERSATION_KEYS: [&str; 3] = ["messages", "input", "contents"];

/// The request body as a JSON value with its conversation arrays cut to their tails;
/// `Null` when the body is not JSON.
pub(crate) fn slim_request(raw: &[u8]) -> Value {
    fast::slim(raw).unwrap_or_else(|| slim_parsed(raw))
}

/// [`slim_request`] through serde's parser.
fn slim_parsed(raw: &[u8]) -> Value {
    let mut reader = serde_json::Deserializer::from_slice(raw);
    match (&mut reader).deserialize_map(SlimObject) {
        Ok(object) if reader.end().is_ok() => Value::Object(object),
        _ => serde_json::from_slice(raw).unwrap_or(Value::Null),
    }
}

/// An object whose conversation arrays keep their tails (and so does a nested `request`,
/// which wraps Gemini CLI requests).
struct SlimObject;

impl<'de> Visitor<'de> for SlimObject {
    type Value = Map<String, Value>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let value = if CONVERSATION_KEYS.contains(&key.as_str()) {
                map.next_value_seed(Tail)?
            } else if key == "request" {
                map.next_value_seed(SlimValue)?
            } else {
                map.next_value::<Value>()?
            };
            out.insert(key, value);
        }
        Ok(out)
    }
}

/// A value read as [`SlimObject`] when it is an object.
struct SlimValue;

impl<'de> DeserializeSeed<'de> for SlimValue {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        let raw = <&RawValue>::deserialize(deserializer)?;
        let mut reader = serde_json::Deserializer::from_str(raw.get());
        Ok(match (&mut reader).deserialize_map(SlimObject) {
            Ok(object) => Value::Object(object),
            Err(_) => serde_json::from_str(raw.get()).unwrap_or(Value::Null),
        })
    }
}

/// An array of which only the last [`KEPT_TAIL`] elements are parsed.
struct Tail;

impl<'de> DeserializeSeed<'de> for Tail {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Tail {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut kept: VecDeque<&'de RawValue> = VecDeque::with_capacity(KEPT_TAIL);
        while let Some(item) = seq.next_element::<&'de RawValue>()? {
            if kept.len() == KEPT_TAIL {
                kept.pop_front();
            }
            kept.push_back(item);
        }
        Ok(Value::Array(
            kept.into_iter()
                .map(|item| serde_json::from_str(item.get()).unwrap_or(Value::Null))
                .collect(),
        ))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Value, A::Error> {
        Value::deserialize(serde::de::value::MapAccessDeserializer::new(map))
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Value, E> {
        Ok(Value::String(text.to_owned()))
    }

    fn visit_bool<E: serde::de::Error>(self, value: bool) -> Result<Value, E> {
        Ok(Value::Bool(value))
    }

    fn visit_i64<E: serde::de::Error>(self, value: i64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_u64<E: serde::de::Error>(self, value: u64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_f64<E: serde::de::Error>(self, value: f64) -> Result<Value, E> {
        Ok(Value::from(value))
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
}

/// The same view found by skipping over the body's bytes (strings jumped with `memchr`)
/// and parsing only what is kept: a transcript of tens of megabytes is answered in a few
/// milliseconds. `None` for anything unexpected, which the full parser then reads.
mod fast {
    use super::{CONVERSATION_KEYS, KEPT_TAIL};
    use serde_json::{Map, Value};

    pub(super) fn slim(raw: &[u8]) -> Option<Value> {
        let (value, end) = object(raw, whitespace(raw, 0))?;
        (whitespace(raw, end) == raw.len()).then_some(value)
    }

    /// The object starting at `at`, its conversation arrays cut to their tails.
    fn object(raw: &[u8], mut at: usize) -> Option<(Value, usize)> {
        if raw.get(at) != Some(&b'{') {
            return None;
        }
        let mut out = Map::new();
        at = whitespace(raw, at + 1);
        if raw.get(at) == Some(&b'}') {
            return Some((Value::Object(out), at + 1));
        }
        loop {
            let key_end = skip(raw, at)?;
            let key: String = serde_json::from_slice(&raw[at..key_end]).ok()?;
            at = whitespace(raw, key_end);
            if raw.get(at) != Some(&b':') {
                return None;
            }
            at = whitespace(raw, at + 1);
            let (value, end) = match raw.get(at) {
                Some(b'[') if CONVERSATION_KEYS.contains(&key.as_str()) => tail(raw, at)?,
                Some(b'{') if key == "request" => object(raw, at)?,
                _ => {
                    let end = skip(raw, at)?;
                    (serde_json::from_slice(&raw[at..end]).ok()?, end)
                }
            };
            out.insert(key, value);
            at = whitespace(raw, end);
            match raw.get(at) {
                Some(b',') => at = whitespace(raw, at + 1),
                Some(b'}') => return Some((Value::Object(out), at + 1)),
                _ => return None,
            }
        }
    }

    /// The array starting at `at` with only its last [`KEPT_TAIL`] elements parsed.
    fn tail(raw: &[u8], mut at: usize) -> Option<(Value, usize)> {
        let mut spans = std::collections::VecDeque::with_capacity(KEPT_TAIL);
        at = whitespace(raw, at + 1);
        if raw.get(at) == Some(&b']') {
            return Some((Value::Array(Vec::new()), at + 1));
        }
        let end = loop {
            let end = skip(raw, at)?;
            if spans.len() == KEPT_TAIL {
                spans.pop_front();
            }
            spans.push_back((at, end));
            at = whitespace(raw, end);
            match raw.get(at) {
                Some(b',') => at = whitespace(raw, at + 1),
                Some(b']') => break at + 1,
                _ => return None,
            }
        };
        let kept = spans
            .into_iter()
            .map(|(from, to)| serde_json::from_slice(&raw[from..to]).ok())
            .collect::<Option<Vec<Value>>>()?;
        Some((Value::Array(kept), end))
    }

    /// The end of the value starting at `at` (not checked beyond its brackets and quotes).
    fn skip(raw: &[u8], mut at: usize) -> Option<usize> {
        let mut depth = 0usize;
        loop {
            match *raw.get(at)? {
                b'"' => at = string_end(raw, at)?,
                b'{' | b'[' => {
                    depth += 1;
                    at += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1)?;
                    at += 1;
                }
                _ if depth > 0 => at += 1,
                _ => {
                    // A number or literal at the top: up to the next delimiter.
                    let rest = &raw[at..];
                    let len = rest
                        .iter()
                        .position(|b| matches!(b, b',' | b'}' | b']') || b.is_ascii_whitespace())
                        .unwrap_or(rest.len());
                    return (len > 0).then_some(at + len);
                }
            }
            if depth == 0 {
                return Some(at);
            }
        }
    }

    /// The end of the string whose opening quote is at `at`.
    fn string_end(raw: &[u8], mut at: usize) -> Option<usize> {
        at += 1;
        loop {
            let found = at + memchr::memchr2(b'"', b'\\', raw.get(at..)?)?;
            if raw[found] == b'"' {
                return Some(found + 1);
            }
            at = found + 2;
        }
    }

    fn whitespace(raw: &[u8], mut at: usize) -> usize {
        while raw.get(at).is_some_and(u8::is_ascii_whitespace) {
            at += 1;
        }
        at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversation_arrays_keep_their_tail_and_the_rest_is_whole() {
        let messages: Vec<Value> = (0..300).map(|i| serde_json::json!({"n": i})).collect();
        let body = serde_json::json!({
            "model": "m", "stream": true, "messages": messages, "input": "text",
            "request": {"contents": [{"a": 1}], "x": 2}, "tools": [{"t": 1}]
        });
        let slim = slim_request(&serde_json::to_vec(&body).unwrap());
        let kept = slim["messages"].as_array().unwrap();
        assert_eq!(kept.len(), KEPT_TAIL);
        assert_eq!(kept.last(), Some(&serde_json::json!({"n": 299})));
        assert_eq!(slim["request"], body["request"]);
        assert_eq!(slim["tools"], body["tools"]);
        assert_eq!(slim["input"], "text");
        assert_eq!(slim["model"], "m");
        assert_eq!(
            fast::slim(&serde_json::to_vec(&body).unwrap()),
            Some(slim.clone())
        );
        assert_eq!(slim_request(b"not json"), Value::Null);
        assert_eq!(fast::slim(b"{\"messages\": [1, \"open"), None);
        assert_eq!(slim_request(b"[1]"), serde_json::json!([1]));
    }

    #[test]
    fn the_fast_view_equals_the_parsed_one_on_tricky_text() {
        let tricky = [
            "a \"quoted\" ] } [ { text",
            "back\\slash\\",
            "\\\"",
            "ünï\u{1F600}",
            "",
        ];
        let messages: Vec<Value> = (0..600)
            .map(|i| {
                serde_json::json!({"role": "user", "n": i, "x": -1.5e3, "ok": true, "none": null,
                    "content": [{"type": "text", "text": tricky[i % tricky.len()]}]})
            })
            .collect();
        let body = serde_json::json!({"messages": messages, "stream": false, "max": 10,
            "tools": [], "request": {"contents": messages[..3]}, "e": {}});
        for raw in [
            serde_json::to_vec(&body).unwrap(),
            serde_json::to_vec_pretty(&body).unwrap(),
        ] {
            let fast = fast::slim(&raw).unwrap();
            assert_eq!(fast, slim_parsed(&raw));
            assert_eq!(fast["messages"].as_array().unwrap().len(), KEPT_TAIL);
        }
    }
}
