//! OpenRouter-style `reasoning_details` as pi-ai 1.6 keeps them: every valid entry of a
//! stream, consecutive text and summary pieces merged, stored as the thinking block's
//! signature (JSON) and sent back verbatim as the assistant's `reasoning_details`.

use serde_json::{Map, Value};

use crate::types::{AssistantBlock, AssistantMessage};

/// The reasoning fields a server may stream thinking in (pi-ai's
/// `OPENAI_COMPLETIONS_REASONING_FIELDS`); a thinking block's signature naming one is
/// where its text is replayed.
pub const REASONING_FIELDS: [&str; 3] = ["reasoning", "reasoning_content", "reasoning_text"];

/// Whether `id`, `format` and `index`, when present, have their types.
fn common_fields_valid(detail: &Map<String, Value>) -> bool {
    let id_ok = matches!(
        detail.get("id"),
        None | Some(Value::Null | Value::String(_))
    );
    let format_ok = matches!(detail.get("format"), None | Some(Value::String(_)));
    let index_ok = matches!(detail.get("index"), None | Some(Value::Number(_)));
    id_ok && format_ok && index_ok
}

/// Whether `detail` is a reasoning detail pi keeps (`reasoning.summary`, `.encrypted` or
/// `.text` with its field's type).
pub fn is_valid(detail: &Value) -> bool {
    let Some(map) = detail.as_object().filter(|m| common_fields_valid(m)) else {
        return false;
    };
    match map.get("type").and_then(Value::as_str) {
        Some("reasoning.summary") => map.get("summary").is_some_and(Value::is_string),
        Some("reasoning.encrypted") => map.get("data").is_some_and(Value::is_string),
        Some("reasoning.text") => {
            map.get("text").is_some_and(Value::is_string)
                && matches!(
                    map.get("signature"),
                    None | Some(Value::Null | Value::String(_))
                )
        }
        _ => false,
    }
}

/// Fills `target`'s missing `id`, `format` and `index` from `source`.
fn fill_common(target: &mut Map<String, Value>, source: &Map<String, Value>) {
    if target.get("id").is_none_or(Value::is_null)
        && let Some(id) = source.get("id")
    {
        target.insert("id".into(), id.clone());
    }
    let empty_format = target
        .get("format")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if empty_format && let Some(format) = source.get("format") {
        target.insert("format".into(), format.clone());
    }
    if target.get("index").is_none_or(Value::is_null)
        && let Some(index) = source.get("index")
    {
        target.insert("index".into(), index.clone());
    }
}

/// Appends a valid `detail`, merging a text or summary piece into the previous one of
/// its kind.
pub fn append(details: &mut Vec<Value>, detail: &Value) {
    let kind = detail.get("type").and_then(Value::as_str);
    let piece = match kind {
        Some("reasoning.text") => Some("text"),
        Some("reasoning.summary") => Some("summary"),
        _ => None,
    };
    if let (Some(field), Some(Value::Object(last)), Some(source)) =
        (piece, details.last_mut(), detail.as_object())
        && last.get("type").and_then(Value::as_str) == kind
    {
        let more = source.get(field).and_then(Value::as_str).unwrap_or("");
        let merged = format!(
            "{}{more}",
            last.get(field).and_then(Value::as_str).unwrap_or("")
        );
        last.insert(field.into(), Value::String(merged));
        if field == "text" {
            let unsigned = last
                .get("signature")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if unsigned && let Some(signature) = source.get("signature") {
                last.insert("signature".into(), signature.clone());
            }
        }
        fill_common(last, source);
        return;
    }
    details.push(detail.clone());
}

/// The details a thinking signature holds: a non-empty JSON array of valid entries.
fn parse_signed(signature: Option<&str>) -> Option<Vec<Value>> {
    let parsed: Vec<Value> = serde_json::from_str(signature.filter(|s| !s.is_empty())?).ok()?;
    (!parsed.is_empty() && parsed.iter().all(is_valid)).then_some(parsed)
}

/// A tool call's signature of older sessions: one encrypted detail with an id and data.
fn parse_legacy(signature: Option<&str>) -> Option<Value> {
    let parsed: Value = serde_json::from_str(signature.filter(|s| !s.is_empty())?).ok()?;
    let non_empty = |field: &str| {
        parsed
            .get(field)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    (is_valid(&parsed)
        && parsed.get("type").and_then(Value::as_str) == Some("reasoning.encrypted")
        && non_empty("id")
        && non_empty("data"))
    .then_some(parsed)
}

/// The `reasoning_details` an assistant message is replayed with: the first thinking
/// block's, else its tool calls' older encrypted ones.
pub fn preserved(assistant: &AssistantMessage) -> Option<Vec<Value>> {
    let signed = assistant.content.iter().find_map(|block| match block {
        AssistantBlock::Thinking(t) => parse_signed(t.thinking_signature.as_deref()),
        _ => None,
    });
    signed.or_else(|| {
        let legacy: Vec<Value> = assistant
            .tool_calls()
            .filter_map(|c| parse_legacy(c.thought_signature.as_deref()))
            .collect();
        (!legacy.is_empty()).then_some(legacy)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pieces_merge_by_kind_and_invalid_entries_are_not_kept() {
        let mut details = Vec::new();
        for d in [
            json!({"type": "reasoning.text", "text": "a", "index": 0}),
            json!({"type": "reasoning.text", "text": "b", "signature": "s", "format": "f"}),
            json!({"type": "reasoning.summary", "summary": "x"}),
            json!({"type": "reasoning.summary", "summary": "y", "id": "r1"}),
            json!({"type": "reasoning.encrypted", "data": "e"}),
        ] {
            assert!(is_valid(&d));
            append(&mut details, &d);
        }
        assert_eq!(
            details,
            vec![
                json!({"type": "reasoning.text", "text": "ab", "index": 0, "signature": "s",
                       "format": "f"}),
                json!({"type": "reasoning.summary", "summary": "xy", "id": "r1"}),
                json!({"type": "reasoning.encrypted", "data": "e"}),
            ]
        );
        assert!(!is_valid(&json!({"type": "reasoning.text", "text": 1})));
        assert!(!is_valid(&json!({"type": "reasoning.other"})));
        assert!(!is_valid(
            &json!({"type": "reasoning.encrypted", "data": "e", "index": "0"})
        ));
    }
}
