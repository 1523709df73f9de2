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
        assert_eq!(slim_request(b"not json"), Value::Null);
        assert_eq!(slim_request(b"[1]"), serde_json::json!([1]));
    }
}
