//! Reading what a listing shows of a session file, in one streaming pass that can stop
//! at any line end and go on later from there (when the file has grown).
//!
//! Lines are found with `memchr` in 1 MiB reads. A line whose entry type says the listing
//! does not need it (a tool result once the first message and the search text are in
//! hand, a compaction, a model change) is passed over as it streams by, never held; only
//! lines the listing reads (the header, names, the first messages) are parsed.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::LazyLock;

use memchr::memmem;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// How much message text a listing keeps per session for the picker's search: the start
/// of the conversation, bounded however big the file is (3,000 sessions stay near 24 MiB).
pub(super) const SEARCH_TEXT_CAP: usize = 8 * 1024;

/// How much is read at a time.
const CHUNK: usize = 1024 * 1024;

/// What has been gathered from a file's lines so far; kept in the listing index so a
/// grown file is read on from where the last listing stopped.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct Scan {
    /// The header, once its line has been read.
    #[serde(default)]
    pub header: Option<Header>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub message_count: usize,
    #[serde(default)]
    pub first_message: String,
    #[serde(default)]
    pub search_text: String,
    /// Set when the first readable line was not a session header: not a session file.
    #[serde(default)]
    pub not_a_session: bool,
}

/// The header fields a listing shows.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub(super) struct Header {
    pub id: String,
    #[serde(default)]
    pub cwd: String,
    #[serde(default)]
    pub created: String,
    #[serde(default)]
    pub parent_session: Option<String>,
}

/// Where a pass over a file ended.
pub(super) struct Scanned {
    /// Everything up to the last complete line (the part the index may keep).
    pub complete: Scan,
    /// The offset just past the last complete line's newline.
    pub complete_end: u64,
    /// `complete` with an unterminated last line added (a file not ending in a newline).
    pub with_tail: Scan,
}

impl Scan {
    /// Reads `file` (`len` bytes long when listed) from `offset`, a line start, to its
    /// end, adding every line. `buf` is scratch space kept from file to file (its old
    /// contents do not matter), so that a listing does not allocate and zero a buffer
    /// per file.
    pub fn read_on(
        mut self,
        file: &mut File,
        offset: u64,
        len: u64,
        buf: &mut Vec<u8>,
    ) -> std::io::Result<Scanned> {
        file.seek(SeekFrom::Start(offset))?;
        // A short read needs a short buffer; one byte more sees the end at once.
        let size = usize::try_from(len.saturating_sub(offset))
            .map_or(CHUNK, |n| n + 1)
            .clamp(4096, CHUNK);
        if buf.len() < size {
            buf.resize(size, 0);
        }
        // buf[..filled] holds bytes from the file; buf[start..filled] is not yet handled.
        let mut filled = 0;
        let mut start = 0;
        // The file offset of buf[0].
        let mut base = offset;
        let mut complete_end = offset;
        let mut skipping: Option<Skip> = None;
        loop {
            if self.not_a_session {
                break;
            }
            if start == filled || (skipping.is_none() && filled == buf.len()) {
                // Keep the unhandled part of a line being gathered; grow for a long one.
                let keep = filled - start;
                if keep > 0 && start == 0 {
                    buf.resize(buf.len() * 2, 0);
                } else {
                    buf.copy_within(start..filled, 0);
                    base += start as u64;
                    filled = keep;
                    start = 0;
                }
            }
            let read = file.read(&mut buf[filled..])?;
            if read == 0 {
                break;
            }
            filled += read;
            loop {
                let pending = &buf[start..filled];
                let newline = memchr::memchr(b'\n', pending);
                if let Some(skip) = skipping.as_mut() {
                    let part = newline.map_or(pending, |n| &pending[..n]);
                    skip.note(part);
                    let Some(n) = newline else {
                        start = filled;
                        break;
                    };
                    if skip.counts && skip.last == Some(b'}') {
                        self.message_count += 1;
                    }
                    skipping = None;
                    start += n + 1;
                    complete_end = base + start as u64;
                    continue;
                }
                match newline {
                    Some(n) => {
                        self.add_line(&buf[start..start + n]);
                        start += n + 1;
                        complete_end = base + start as u64;
                    }
                    None => {
                        skipping = self.skip_for(pending).map(|counts| {
                            let mut skip = Skip { counts, last: None };
                            skip.note(pending);
                            skip
                        });
                        if skipping.is_some() {
                            start = filled;
                        }
                        break;
                    }
                }
            }
        }
        let complete = self.clone();
        match skipping {
            Some(skip) => {
                if skip.counts && skip.last == Some(b'}') {
                    self.message_count += 1;
                }
            }
            None => {
                if start < filled {
                    self.add_line(&buf[start..filled]);
                }
            }
        }
        Ok(Scanned {
            complete,
            complete_end,
            with_tail: self,
        })
    }

    /// Whether the line starting with `prefix` can be passed over unread, and if so
    /// whether it counts as a message; `None` when the line must be read whole.
    fn skip_for(&self, prefix: &[u8]) -> Option<bool> {
        self.header.as_ref()?;
        match leading_type(prefix)? {
            b"message" => (self.has_enough() || !has_listed_text(prefix)).then_some(true),
            b"session_info" => None,
            _ => Some(false),
        }
    }

    /// The first message and the search text are in hand: later messages are counted only.
    fn has_enough(&self) -> bool {
        !self.first_message.is_empty() && self.search_text.len() >= SEARCH_TEXT_CAP
    }

    /// Adds one whole line.
    fn add_line(&mut self, line: &[u8]) {
        let line = line.trim_ascii();
        if line.is_empty() || self.not_a_session {
            return;
        }
        if self.header.is_none() {
            self.read_header(line);
            return;
        }
        match leading_type(line) {
            Some(b"message") => {
                // A line cut short by a crash is no message.
                if !line.ends_with(b"}") {
                    return;
                }
                if self.has_enough() || !has_listed_text(line) {
                    self.message_count += 1;
                    return;
                }
            }
            Some(b"session_info") | None => {}
            Some(_) => return,
        }
        // Straight from the bytes; only a line with invalid UTF-8 is copied, repaired.
        let parsed = serde_json::from_slice::<ListedEntry>(line)
            .or_else(|_| serde_json::from_str::<ListedEntry>(&String::from_utf8_lossy(line)));
        let Ok(entry) = parsed else {
            return;
        };
        match entry.kind.as_str() {
            "session_info" => {
                self.name = entry
                    .name
                    .as_deref()
                    .map(str::trim)
                    .filter(|n| !n.is_empty())
                    .map(str::to_owned);
            }
            "message" => {
                self.message_count += 1;
                if let Some(message) = entry.message {
                    self.add_message_text(message);
                }
            }
            _ => {}
        }
    }

    /// The first readable line must be the header; unreadable lines before it are passed.
    fn read_header(&mut self, line: &[u8]) {
        let text = String::from_utf8_lossy(line);
        let Ok(object) = serde_json::from_str::<Map<String, Value>>(&text) else {
            return;
        };
        let field = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
        if field("type").as_deref() != Some("session") {
            self.not_a_session = true;
            return;
        }
        let Some(id) = field("id") else {
            self.not_a_session = true;
            return;
        };
        self.header = Some(Header {
            id,
            cwd: field("cwd").unwrap_or_default(),
            created: field("timestamp").unwrap_or_default(),
            parent_session: field("parentSession"),
        });
    }

    fn add_message_text(&mut self, message: ListedMessage) {
        let role = message.role.as_deref();
        if !matches!(role, Some("user" | "assistant")) {
            return;
        }
        let text = message.content.map(|c| c.0).unwrap_or_default();
        if text.is_empty() {
            return;
        }
        if self.search_text.len() < SEARCH_TEXT_CAP {
            if !self.search_text.is_empty() {
                self.search_text.push(' ');
            }
            let room = SEARCH_TEXT_CAP.saturating_sub(self.search_text.len());
            self.search_text.push_str(truncate_at_char(&text, room));
        }
        if self.first_message.is_empty() && role == Some("user") {
            self.first_message = text;
        }
    }
}

/// A line being passed over: whether it counts as a message, and its last byte so far
/// that is not white space (a message line cut short by a crash does not end in `}`).
struct Skip {
    counts: bool,
    last: Option<u8>,
}

impl Skip {
    fn note(&mut self, part: &[u8]) {
        if let Some(&byte) = part.trim_ascii_end().last() {
            self.last = Some(byte);
        }
    }
}

/// The entry type of a line written as pi writes it (`{"type":"…"` first), without
/// parsing the rest; `None` for another layout or a prefix too short to tell.
fn leading_type(line: &[u8]) -> Option<&[u8]> {
    let rest = line.strip_prefix(b"{\"type\":\"")?;
    let end = memchr::memchr(b'"', rest)?;
    Some(&rest[..end])
}

/// Whether a message line may hold text the listing shows: false only when its role,
/// read where pi writes it (`"message":{"role":"…"` before any other object), is neither
/// `user` nor `assistant` (tool results are the bulk of a session and never listed).
fn has_listed_text(line: &[u8]) -> bool {
    const KEY: &[u8] = b"\"message\":{\"role\":\"";
    // Built once: a searcher costs more to build than most lines take to search.
    static FINDER: LazyLock<memmem::Finder<'static>> = LazyLock::new(|| memmem::Finder::new(KEY));
    let head = &line[..line.len().min(1024)];
    let Some(at) = FINDER.find(head) else {
        return true;
    };
    // Only the top-level message: no other object opens before it.
    if head
        .get(1..at)
        .is_none_or(|before| memchr::memchr(b'{', before).is_some())
    {
        return true;
    }
    let role = &head[at + KEY.len()..];
    let Some(end) = memchr::memchr(b'"', role) else {
        return true;
    };
    matches!(&role[..end], b"user" | b"assistant")
}

/// The longest prefix of `text` of at most `max` bytes that ends on a character boundary.
fn truncate_at_char(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// What a listing needs of an entry line; everything else (tool arguments, images, usage)
/// is skipped by the parser without being built.
#[derive(Deserialize)]
struct ListedEntry {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    message: Option<ListedMessage>,
}

#[derive(Deserialize)]
struct ListedMessage {
    #[serde(default)]
    role: Option<String>,
    #[serde(default)]
    content: Option<ListedContent>,
}

/// A message's text: the string, or its text blocks joined by spaces.
struct ListedContent(String);

#[derive(Deserialize)]
struct ListedBlock {
    #[serde(rename = "type", default)]
    kind: Option<String>,
    #[serde(default)]
    text: Option<String>,
}

impl<'de> Deserialize<'de> for ListedContent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = ListedContent;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a string or content blocks")
            }
            fn visit_str<E>(self, text: &str) -> Result<ListedContent, E> {
                Ok(ListedContent(text.to_owned()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ListedContent, A::Error> {
                let mut texts: Vec<String> = Vec::new();
                while let Some(block) = seq.next_element::<ListedBlock>()? {
                    if block.kind.as_deref() == Some("text")
                        && let Some(text) = block.text
                    {
                        texts.push(text);
                    }
                }
                Ok(ListedContent(texts.join(" ")))
            }
            fn visit_unit<E>(self) -> Result<ListedContent, E> {
                Ok(ListedContent(String::new()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<ListedContent, A::Error> {
                while map
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(ListedContent(String::new()))
            }
        }
        deserializer.deserialize_any(Visit)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::io::Write;

    fn scan(bytes: &[u8]) -> Scanned {
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(bytes).unwrap();
        let len = file.metadata().unwrap().len();
        Scan::default()
            .read_on(&mut file, 0, len, &mut Vec::new())
            .unwrap()
    }

    #[test]
    fn a_long_counted_line_across_reads_is_passed_over() {
        let filler = "x".repeat(SEARCH_TEXT_CAP + 10);
        let mut text = String::from(
            r#"{"type":"session","id":"s","timestamp":"t","cwd":"/p"}
"#,
        );
        text.push_str(&format!(
            r#"{{"type":"message","message":{{"role":"user","content":"{filler}"}}}}
"#
        ));
        let long = "y".repeat(3 * CHUNK);
        text.push_str(&format!(
            r#"{{"type":"message","message":{{"role":"user","content":"{long}"}}}}
"#
        ));
        // Cut short by a crash, then a complete line after it.
        text.push_str(&format!(
            r#"{{"type":"message","message":{{"role":"user","content":"{long}
{{"type":"compaction","summary":"s"}}
"#
        ));
        text.push_str(r#"{"type":"message","message":{"role":"user","content":"end"}}"#);
        let scanned = scan(text.as_bytes());
        assert_eq!(scanned.complete.message_count, 2);
        assert_eq!(scanned.with_tail.message_count, 3);
        assert_eq!(scanned.complete_end as usize, text.rfind('\n').unwrap() + 1);
        assert_eq!(scanned.with_tail.first_message.len(), filler.len());
    }

    #[test]
    fn a_long_header_or_name_is_read_whole() {
        let cwd = "c".repeat(2 * CHUNK);
        let name = "n".repeat(CHUNK + 5);
        let text = format!(
            "{{\"type\":\"session\",\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"{cwd}\"}}\n{{\"type\":\"session_info\",\"name\":\"{name}\"}}\n"
        );
        let scanned = scan(text.as_bytes());
        let header = scanned.complete.header.unwrap();
        assert_eq!(header.cwd.len(), cwd.len());
        assert_eq!(scanned.complete.name.unwrap().len(), name.len());
        assert_eq!(scanned.complete_end as usize, text.len());
    }

    #[test]
    fn tool_results_are_counted_unread_and_texts_elsewhere_still_found() {
        let big = "r".repeat(3 * CHUNK);
        let text = format!(
            r#"{{"type":"session","id":"s","timestamp":"t","cwd":"/p"}}
{{"type":"message","id":"a","message":{{"role":"toolResult","content":[{{"type":"text","text":"{big}"}}]}}}}
{{"type":"message","id":"b","details":{{"message":{{"role":"toolResult"}}}},"message":{{"role":"user","content":"nested first"}}}}
{{"type":"message","id":"c","message":{{"role":"assistant","content":[{{"type":"text","text":"said \"message\":{{\"role\":\"toolResult\"}}"}}]}}}}
{{"type":"message","id":"d","message":{{"role":"bashExecution","command":"ls","output":"x"}}}}
"#
        );
        let scanned = scan(text.as_bytes()).with_tail;
        assert_eq!(scanned.message_count, 4);
        assert_eq!(scanned.first_message, "nested first");
        assert_eq!(
            scanned.search_text,
            r#"nested first said "message":{"role":"toolResult"}"#
        );
        assert!(!has_listed_text(
            br#"{"type":"message","id":"a","message":{"role":"toolResult","content":[]}}"#
        ));
        assert!(has_listed_text(
            br#"{"type":"message","message":{"role":"user"}}"#
        ));
        assert!(has_listed_text(
            br#"{"type":"message","message":{"content":"x","role":"toolResult"}}"#
        ));
    }

    #[test]
    fn a_line_with_invalid_utf8_is_still_read() {
        let mut bytes = br#"{"type":"session","id":"s","timestamp":"t","cwd":"/p"}
{"type":"message","message":{"role":"user","content":"caf"#
            .to_vec();
        bytes.extend_from_slice(&[0xff]);
        bytes.extend_from_slice(b"\"}}\n");
        let scanned = scan(&bytes).with_tail;
        assert_eq!(scanned.message_count, 1);
        assert_eq!(scanned.first_message, "caf\u{fffd}");
    }

    #[test]
    fn a_file_whose_first_line_is_no_header_is_no_session() {
        let scanned = scan(b"{\"type\":\"message\"}\n{\"type\":\"session\",\"id\":\"s\"}\n");
        assert!(scanned.with_tail.not_a_session);
        assert!(scanned.with_tail.header.is_none());
    }
}
