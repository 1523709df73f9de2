//! The final parse of a tool call's streamed argument text, as pi-ai 1.6.0 does it once the
//! call is complete: JSON, retried after escaping raw control characters and invalid escapes
//! inside strings; anything else (cut-off text, trailing garbage, a non-object) is an error
//! that names the raw text, so validation can show the model what it sent.

use serde_json::{Map, Value};

/// The arguments object `text` holds, or the error text a tool call carries as
/// `argumentsError`. Blank text is an empty object.
pub fn parse_tool_call_arguments(text: &str) -> Result<Map<String, Value>, String> {
    if text.trim().is_empty() {
        return Ok(Map::new());
    }
    let parsed = serde_json::from_str::<Value>(text).or_else(|error| {
        let repaired = repair_json(text);
        if repaired == text {
            Err(error)
        } else {
            serde_json::from_str::<Value>(&repaired)
        }
    });
    let reason = match parsed {
        Ok(Value::Object(map)) => return Ok(map),
        Ok(_) => "Tool arguments must be a JSON object".to_owned(),
        Err(error) => error.to_string(),
    };
    Err(format!("{reason}\n\nReceived arguments:\n{text}"))
}

/// Escapes what models put raw inside JSON strings: control characters, and backslashes
/// that start no valid escape (pi-ai's `repairJson`).
fn repair_json(json: &str) -> String {
    let mut out = String::with_capacity(json.len());
    let mut in_string = false;
    let mut chars = json.chars().peekable();
    while let Some(c) = chars.next() {
        if !in_string {
            out.push(c);
            in_string = c == '"';
            continue;
        }
        match c {
            '"' => {
                out.push(c);
                in_string = false;
            }
            '\\' => match chars.peek().copied() {
                Some('u') => {
                    let digits: String = chars.clone().skip(1).take(4).collect();
                    if digits.len() == 4 && digits.chars().all(|d| d.is_ascii_hexdigit()) {
                        out.push_str("\\u");
                        out.push_str(&digits);
                        for _ in 0..5 {
                            chars.next();
                        }
                    } else {
                        out.push_str("\\\\");
                    }
                }
                Some(next @ ('"' | '\\' | '/' | 'b' | 'f' | 'n' | 'r' | 't')) => {
                    out.push('\\');
                    out.push(next);
                    chars.next();
                }
                _ => out.push_str("\\\\"),
            },
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn whole_objects_parse_and_raw_control_characters_are_repaired() {
        assert_eq!(
            parse_tool_call_arguments(r#"{"path": "a.txt"}"#).unwrap(),
            json!({"path": "a.txt"}).as_object().unwrap().clone()
        );
        assert_eq!(
            parse_tool_call_arguments("{\"text\": \"a\tb\nc \\q\"}").unwrap(),
            json!({"text": "a\tb\nc \\q"}).as_object().unwrap().clone()
        );
        assert!(parse_tool_call_arguments("  ").unwrap().is_empty());
    }

    #[test]
    fn cut_off_or_non_object_text_is_an_error_naming_the_text() {
        let error = parse_tool_call_arguments(r#"{"path": "a.txt", "con"#).unwrap_err();
        assert!(
            error.ends_with("\n\nReceived arguments:\n{\"path\": \"a.txt\", \"con"),
            "{error}"
        );
        assert_eq!(
            parse_tool_call_arguments("[1]").unwrap_err(),
            "Tool arguments must be a JSON object\n\nReceived arguments:\n[1]"
        );
        assert!(parse_tool_call_arguments(r#"{"a": 1} trailing"#).is_err());
    }
}
