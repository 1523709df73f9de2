//! The fast reader of an entry line: when `type` is the line's first key (as pi writes
//! entries), the entry's fields are read in one pass straight into [`EntryKind`], its
//! message texts kept as their JSON literals. Anything else is left to the general reader.

use std::fmt;

use serde::Deserializer;
use serde::de::{self, DeserializeSeed, IntoDeserializer, MapAccess, Visitor};

use super::entry::{EntryKind, SessionEntry};

/// The entry on `line`, or `None` when the line needs the general reader (another key
/// first, a header, an unknown type, fields that do not parse).
pub fn parse_entry_line(line: &str) -> Option<SessionEntry> {
    let mut reader = serde_json::Deserializer::from_str(line);
    let mut entry = (&mut reader).deserialize_map(EntryVisitor).ok()??;
    reader.end().ok()?;
    fill_missing_system_content(&mut entry);
    Some(entry)
}

/// A system message without `content` (or with `null`) reads as `""`, as the general
/// reader makes it (pi 0.80.4); other roles without content go to the general reader.
fn fill_missing_system_content(entry: &mut SessionEntry) {
    if let EntryKind::Message {
        message: pi_agent_core::AgentMessage::Custom(custom),
    } = &mut entry.kind
        && custom.role == "system"
        && matches!(custom.get("content"), None | Some(serde_json::Value::Null))
    {
        custom
            .data
            .insert("content".into(), serde_json::Value::String(String::new()));
    }
}

struct EntryVisitor;

impl<'de> Visitor<'de> for EntryVisitor {
    type Value = Option<SessionEntry>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a session entry")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        if map.next_key::<String>()?.as_deref() != Some("type") {
            return Ok(None);
        }
        let kind: String = map.next_value()?;
        if kind == "session" {
            return Ok(None);
        }
        let mut slots = Slots::default();
        let kind: EntryKind = pi_ai::tag_first::deserialize_variant(
            kind,
            EntryFields {
                map,
                slots: &mut slots,
            },
        )?;
        let Some(id) = slots.id else {
            return Ok(None);
        };
        Ok(Some(SessionEntry {
            id,
            parent_id: slots.parent_id.flatten(),
            timestamp: slots.timestamp.unwrap_or_default(),
            kind,
        }))
    }
}

/// The fields every entry has, taken out as the entry's own fields are read.
#[derive(Default)]
struct Slots {
    id: Option<String>,
    parent_id: Option<Option<String>>,
    timestamp: Option<String>,
}

/// The fields after `type`, without `id`, `parentId` and `timestamp` (which go to the slots).
struct EntryFields<'s, A> {
    map: A,
    slots: &'s mut Slots,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for EntryFields<'_, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        loop {
            let Some(key) = self.map.next_key::<String>()? else {
                return Ok(None);
            };
            match key.as_str() {
                "id" => self.slots.id = Some(self.map.next_value()?),
                "parentId" => self.slots.parent_id = Some(self.map.next_value()?),
                "timestamp" => self.slots.timestamp = Some(self.map.next_value()?),
                // A second `type` wins in JSON.parse and in the general reader; this reader
                // has already read the first: the line is theirs.
                "type" => return Err(de::Error::custom("`type` given twice")),
                _ => {
                    let key: de::value::StringDeserializer<A::Error> = key.into_deserializer();
                    return seed.deserialize(key).map(Some);
                }
            }
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value, A::Error> {
        self.map.next_value_seed(seed)
    }
}

#[cfg(test)]
mod tests {
    use super::super::entry::{FileLine, parse_line};
    use super::*;

    fn general(line: &str) -> SessionEntry {
        match parse_line(line, 1) {
            Ok((Some(FileLine::Entry(entry)), None)) => entry,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_fast_reader_agrees_with_the_general_one() {
        for line in [
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"hi\nthere","timestamp":1}}"#,
            r#"{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{"role":"assistant","content":[{"type":"thinking","thinking":"hm"},{"type":"text","text":"ok"},{"type":"toolCall","id":"c","name":"read","arguments":{"path":"x"}}],"api":"openai-completions","provider":"p","model":"m","usage":{"input":1,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":3,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":2}}"#,
            r#"{"type":"message","id":"a3","parentId":"a2","timestamp":"t","message":{"role":"toolResult","toolCallId":"c","toolName":"read","content":[{"type":"text","text":"x"},{"type":"image","data":"AAAA","mimeType":"image/png"}],"isError":false,"timestamp":3}}"#,
            r#"{"type":"message","id":"a4","parentId":"a3","timestamp":"t","message":{"role":"bashExecution","command":"ls","output":"","timestamp":4}}"#,
            r#"{"type":"message","id":"a5","parentId":"a4","timestamp":"t","message":{"content":"role later","role":"user","timestamp":5}}"#,
            r#"{"type":"custom","customType":"probe","data":{"n":1},"id":"a6","parentId":"a5","timestamp":"t"}"#,
            r#"{"type":"compaction","id":"a7","parentId":"a6","timestamp":"t","summary":"s","firstKeptEntryId":"a3","tokensBefore":10}"#,
            r#"{"type":"label","id":"a8","parentId":"a7","timestamp":"t","targetId":"a1","label":"x"}"#,
        ] {
            let fast = parse_entry_line(line).unwrap_or_else(|| panic!("not read fast: {line}"));
            assert_eq!(fast, general(line), "{line}");
            if !line.contains("role later") {
                assert_eq!(fast.to_line().unwrap(), line);
            }
        }
    }

    /// Found by the session_line fuzz target: the fast reader reads a lone surrogate escape
    /// (which JavaScript writes) as U+FFFD, while the general reader rejected the line, so
    /// the entry was lost whenever the general reader read it (another key first, an older
    /// file). Both read it now, the same.
    #[test]
    fn both_readers_take_lone_surrogates() {
        for line in [
            r#"{"type":"message","id":"a","message":{"role":"user","content":"\ude00"}}"#,
            r#"{"type":"message","id":"b","parentId":"a","timestamp":"t","message":{"role":"user","content":"x\ud83d \\ud800 \ud83d\ude00 \udc00\ud800","timestamp":1}}"#,
        ] {
            let fast = parse_entry_line(line).unwrap_or_else(|| panic!("not read fast: {line}"));
            assert_eq!(fast, general(line), "{line}");
        }
        let entry = general(
            r#"{"id":"c","type":"message","message":{"role":"user","content":"a\udbff\u0041"}}"#,
        );
        let message = serde_json::to_value(entry.message().unwrap()).unwrap();
        assert_eq!(message["content"], "a\u{fffd}A");
    }

    /// Found by the session_line fuzz target: with `type` given twice the fast reader read
    /// the first, while the general reader (like JSON.parse) reads the last.
    #[test]
    fn a_second_type_goes_to_the_general_reader() {
        let line = r#"{"type":"custom","customType":"probe","type":{"n":1},"id":"a8","parentId":"a7","timestamp":"t"}"#;
        assert!(parse_entry_line(line).is_none());
        let Ok((Some(FileLine::Entry(entry)), Some(_))) = parse_line(line, 1) else {
            panic!("{line}")
        };
        assert!(matches!(entry.kind, EntryKind::Unknown(_)), "{entry:?}");
        let label = r#"{"type":"custom","id":"a1","timestamp":"t","type":"label","targetId":"b"}"#;
        assert!(parse_entry_line(label).is_none());
        assert_eq!(
            general(label).kind,
            general(&label.replace(r#""type":"custom","#, "")).kind
        );
    }

    /// Found by the session_line fuzz target: the fast reader skips a field it does not
    /// know without reading its number, while the general reader rejected the line for a
    /// number too large for an f64. It reads such a number as `null` now (JavaScript reads
    /// Infinity and writes it back so).
    #[test]
    fn both_readers_take_numbers_too_large_for_f64() {
        let line = r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":[{"type":"text","text":"1e400"}],"t;mestamp":17953033e7647}}"#;
        let fast = parse_entry_line(line).unwrap_or_else(|| panic!("not read fast: {line}"));
        assert_eq!(fast, general(line));
        let custom = general(
            r#"{"type":"custom","customType":"x","data":{"n":-1e400,"s":"-1e400"},"id":"b","timestamp":"t"}"#,
        );
        assert_eq!(
            custom.to_line().unwrap(),
            r#"{"type":"custom","customType":"x","data":{"n":null,"s":"-1e400"},"id":"b","parentId":null,"timestamp":"t"}"#
        );
    }

    #[test]
    fn other_lines_go_to_the_general_reader() {
        for line in [
            r#"{"id":"a1","type":"label","parentId":null,"timestamp":"t","targetId":"b"}"#,
            r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
            r#"{"type":"future_kind","id":"a1","parentId":null,"timestamp":"t"}"#,
            r#"{"type":"label","parentId":null,"timestamp":"t","targetId":"b"}"#,
            r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user"}}"#,
            r#"{"type":"label","id":"a1","parentId":null,"timestamp":"t","targetId":"b"} x"#,
            r#"{"type":"label","id":"a1","parentId":null,"timestamp":"t","targ"#,
        ] {
            assert!(parse_entry_line(line).is_none(), "{line}");
        }
    }
}
