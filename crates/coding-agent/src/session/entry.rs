//! Session file lines: the header and the entries of Appendix B, in JSONL v3.
//!
//! Entries of unknown types are kept verbatim so nothing in a file is lost.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use pi_agent_core::AgentMessage;

/// The version this build writes.
pub const CURRENT_SESSION_VERSION: u64 = 3;

/// Line 1 of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionHeader {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u64>,
    pub id: String,
    pub timestamp: String,
    pub cwd: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// What an entry records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
// Messages are most entries; boxing them would cost an allocation per entry.
#[allow(clippy::large_enum_variant)]
// Externally tagged for serde (`{"message": {…}}`): lines put the tag in `type`, which
// [`SessionEntry::to_json`] and the readers below translate.
#[serde(rename_all = "snake_case", rename_all_fields = "camelCase")]
pub enum EntryKind {
    Message {
        message: AgentMessage,
    },
    ThinkingLevelChange {
        thinking_level: String,
    },
    ModelChange {
        provider: String,
        model_id: String,
    },
    Compaction {
        summary: String,
        first_kept_entry_id: String,
        tokens_before: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// pi 1.6: what the summary calls cost (a `Usage`), counted in the session's stats.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
        /// pi 1.5: the whole system state at the compaction, the first message of the
        /// context after it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        system_message: Option<Value>,
    },
    BranchSummary {
        from_id: String,
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        /// pi 1.6: what the summary call cost (a `Usage`), counted in the session's stats.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<Value>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    Custom {
        custom_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    CustomMessage {
        custom_type: String,
        content: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        #[serde(default)]
        display: bool,
    },
    Label {
        target_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    SessionInfo {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// Tokens spent outside the conversation (pi 1.5, e.g. `kind: "cache_warm"`): counted in
    /// the session's totals, never part of the model's context.
    Usage {
        kind: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        model: Option<String>,
        usage: Value,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// pi 1.5: what the model sees of the entry `target_id` from here on: `null` leaves it
    /// out, `{"content": …}` replaces its content. The latest edit on the branch wins.
    ContextEdit {
        target_id: String,
        #[serde(default)]
        replacement: Option<Value>,
    },
    /// An entry this build cannot use (unknown type, or fields it cannot parse): kept
    /// verbatim, still linked into the tree, never sent to the model.
    #[serde(skip)]
    Unknown(Map<String, Value>),
}

/// One entry of the tree.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    pub id: String,
    pub parent_id: Option<String>,
    pub timestamp: String,
    pub kind: EntryKind,
}

/// A line of a session file after parsing.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)]
pub enum FileLine {
    Header(SessionHeader),
    Entry(SessionEntry),
}

impl SessionEntry {
    /// The entry as its JSON object, keys in the TypeScript pi's order (`type`, `id`,
    /// `parentId`, `timestamp`, then the entry's own fields; pi 1.5 writes a `custom`
    /// entry's own fields first).
    pub fn to_json(&self) -> Result<Map<String, Value>, serde_json::Error> {
        if let EntryKind::Unknown(raw) = &self.kind {
            return Ok(raw.clone());
        }
        // Texts kept as the literals they were read from are written verbatim, but a lone
        // surrogate escape in one (JavaScript writes half an emoji so) is no valid `Value`:
        // such an entry goes through its JSON text, where the escape reads as U+FFFD.
        let tagged = match serde_json::to_value(&self.kind) {
            Ok(value) => value,
            Err(_) => Value::Object(parse_json_object(&serde_json::to_string(&self.kind)?)?),
        };
        let Value::Object(tagged) = tagged else {
            return Ok(Map::new());
        };
        let Some((kind, Value::Object(mut fields))) = tagged.into_iter().next() else {
            return Ok(Map::new());
        };
        let mut out = Map::with_capacity(fields.len() + 4);
        out.insert("type".into(), Value::String(kind));
        if matches!(self.kind, EntryKind::Custom { .. }) {
            out.extend(std::mem::take(&mut fields));
        }
        out.insert("id".into(), Value::String(self.id.clone()));
        out.insert(
            "parentId".into(),
            self.parent_id.clone().map_or(Value::Null, Value::String),
        );
        out.insert("timestamp".into(), Value::String(self.timestamp.clone()));
        out.extend(fields);
        Ok(out)
    }

    /// The JSONL line (without newline).
    pub fn to_line(&self) -> Result<String, serde_json::Error> {
        serde_json::to_string(&self.to_json()?)
    }

    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message { message } => Some(message),
            _ => None,
        }
    }
}

/// Why a line could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {reason}")]
pub struct LineError {
    pub line: usize,
    pub reason: String,
}

/// A parsed line, and a warning when part of it could not be used.
pub type ParsedLine = (Option<FileLine>, Option<LineError>);

/// Parses one line. A line that is not a JSON object is an error; an entry whose fields
/// cannot be read becomes [`EntryKind::Unknown`] with a warning, so the tree stays intact.
pub fn parse_line(text: &str, line: usize) -> Result<ParsedLine, LineError> {
    if text.trim().is_empty() {
        return Ok((None, None));
    }
    let object = parse_json_object(text).map_err(|e| LineError {
        line,
        reason: format!("not a JSON object: {e}"),
    })?;
    parse_object(object, line)
}

/// A line's JSON object, read as JavaScript reads what serde_json rejects, instead of the
/// whole line being lost: a lone UTF-16 surrogate escape (`\udXXX`, half an emoji) reads as
/// U+FFFD, as the fast reader ([`super::entry_line`]) reads it; a number too large for an
/// f64 (`1e400`, Infinity to JavaScript, which writes that back as `null`) reads as `null`.
pub fn parse_json_object(text: &str) -> Result<Map<String, Value>, serde_json::Error> {
    serde_json::from_str(text).or_else(|error| {
        let surrogates = without_lone_surrogates(text);
        let repaired = without_huge_numbers(surrogates.as_deref().unwrap_or(text)).or(surrogates);
        match repaired {
            Some(repaired) => serde_json::from_str(&repaired).map_err(|_| error),
            None => Err(error),
        }
    })
}

/// `text` with every number outside strings that is too large for an f64 made `null`;
/// `None` when there is none.
fn without_huge_numbers(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = String::new();
    let (mut at, mut copied, mut in_string) = (0, 0, false);
    while at < bytes.len() {
        match (in_string, bytes[at]) {
            (true, b'\\') => at += 2,
            (_, b'"') => {
                in_string = !in_string;
                at += 1;
            }
            (false, b'-' | b'0'..=b'9') => {
                let length = bytes[at..]
                    .iter()
                    .position(|b| !matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
                    .unwrap_or(bytes.len() - at);
                let end = at + length;
                if text[at..end].parse::<f64>().is_ok_and(f64::is_infinite) {
                    out.push_str(&text[copied..at]);
                    out.push_str("null");
                    copied = end;
                }
                at = end;
            }
            _ => at += 1,
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// `text` with every `\uXXXX` escape of a lone surrogate made `\ufffd`; `None` when there is
/// none.
fn without_lone_surrogates(text: &str) -> Option<String> {
    let unit = |at: usize| -> Option<u16> {
        let hex = text.get(at..)?.strip_prefix("\\u")?.get(..4)?;
        u16::from_str_radix(hex, 16).ok()
    };
    let bytes = text.as_bytes();
    let mut out = String::new();
    let (mut at, mut copied) = (0, 0);
    while at < bytes.len() {
        if bytes[at] != b'\\' {
            at += 1;
            continue;
        }
        match unit(at) {
            Some(0xD800..=0xDBFF) if matches!(unit(at + 6), Some(0xDC00..=0xDFFF)) => at += 12,
            Some(0xD800..=0xDFFF) => {
                out.push_str(&text[copied..at]);
                out.push_str("\\ufffd");
                at += 6;
                copied = at;
            }
            // Any other escape, `\\` included: the escaped character is not a backslash.
            _ => at += 2,
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&text[copied..]);
    Some(out)
}

/// Parses a line already read as a JSON object (after migrations).
pub fn parse_object(object: Map<String, Value>, line: usize) -> Result<ParsedLine, LineError> {
    let error = |reason: String| LineError { line, reason };
    let kind = object
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    if kind == "session" {
        let header: SessionHeader =
            serde_json::from_value(Value::Object(object)).map_err(|e| error(e.to_string()))?;
        return Ok((Some(FileLine::Header(header)), None));
    }
    let Some(id) = object.get("id").and_then(Value::as_str).map(str::to_owned) else {
        return Err(error(format!("entry of type \"{kind}\" has no id")));
    };
    let parent_id = object
        .get("parentId")
        .and_then(Value::as_str)
        .map(str::to_owned);
    let timestamp = object
        .get("timestamp")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let mut fields = object.clone();
    fields.shift_remove("type");
    fields.shift_remove("id");
    fields.shift_remove("parentId");
    fields.shift_remove("timestamp");
    if kind == "message" {
        fill_missing_content(&mut fields);
    }
    let mut tagged = Map::with_capacity(1);
    tagged.insert(kind.clone(), Value::Object(fields));
    let (kind, warning) = match serde_json::from_value::<EntryKind>(Value::Object(tagged)) {
        Ok(parsed) => (parsed, None),
        Err(e) => (
            EntryKind::Unknown(object),
            Some(error(format!(
                "entry {id} of type \"{kind}\" kept but not used: {e}"
            ))),
        ),
    };
    Ok((
        Some(FileLine::Entry(SessionEntry {
            id,
            parent_id,
            timestamp,
            kind,
        })),
        warning,
    ))
}

/// A message whose `content` is null or missing (an older version's, a hand-edited or an
/// imported file) gets an empty one when read, as pi 0.80.4 does: `""` for a system
/// message, `[]` for a user, assistant or tool-result message.
fn fill_missing_content(fields: &mut Map<String, Value>) {
    let Some(Value::Object(message)) = fields.get_mut("message") else {
        return;
    };
    if !matches!(message.get("content"), None | Some(Value::Null)) {
        return;
    }
    let empty = match message.get("role").and_then(Value::as_str) {
        Some("system") => Value::String(String::new()),
        Some("user" | "assistant" | "toolResult") => Value::Array(Vec::new()),
        _ => return,
    };
    message.insert("content".into(), empty);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(kind: EntryKind) -> SessionEntry {
        SessionEntry {
            id: "a1".into(),
            parent_id: None,
            timestamp: "t".into(),
            kind,
        }
    }

    #[test]
    fn custom_entries_put_their_fields_first_as_pi_15_does() {
        let custom = entry(EntryKind::Custom {
            custom_type: "probe".into(),
            data: Some(serde_json::json!({"n": 1})),
        });
        assert_eq!(
            custom.to_line().unwrap(),
            r#"{"type":"custom","customType":"probe","data":{"n":1},"id":"a1","parentId":null,"timestamp":"t"}"#
        );
        let label = entry(EntryKind::Label {
            target_id: "b2".into(),
            label: None,
        });
        assert_eq!(
            label.to_line().unwrap(),
            r#"{"type":"label","id":"a1","parentId":null,"timestamp":"t","targetId":"b2"}"#
        );
    }
}
