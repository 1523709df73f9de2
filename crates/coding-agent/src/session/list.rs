//! Listing session files with their metadata, for the resume picker.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::Deserialize;
use serde_json::{Map, Value};

/// What the resume picker shows of one session file.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionInfo {
    pub path: PathBuf,
    pub id: String,
    /// Working directory the session was started in (empty for old sessions).
    pub cwd: String,
    /// The name given by the last `session_info` entry.
    pub name: Option<String>,
    pub parent_session: Option<String>,
    /// The header's timestamp.
    pub created: String,
    /// The file's modification time.
    pub modified: SystemTime,
    pub message_count: usize,
    /// The first user message's text, or `(no messages)`.
    pub first_message: String,
    /// The text of the user and assistant messages, for search (the first 64 KiB).
    pub all_messages_text: String,
}

/// The sessions of one session directory, newest modified first; unreadable files and
/// files without a session header are skipped.
pub fn list_sessions(dir: &Path) -> Vec<SessionInfo> {
    let mut sessions: Vec<SessionInfo> = jsonl_files(dir)
        .iter()
        .filter_map(|p| read_session_info(p))
        .collect();
    sort_newest_first(&mut sessions);
    sessions
}

/// The sessions of every project directory under `sessions_root`, newest modified first.
pub fn list_all_sessions(sessions_root: &Path) -> Vec<SessionInfo> {
    let Ok(entries) = std::fs::read_dir(sessions_root) else {
        return Vec::new();
    };
    let mut sessions: Vec<SessionInfo> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .flat_map(|e| jsonl_files(&e.path()))
        .filter_map(|p| read_session_info(&p))
        .collect();
    sort_newest_first(&mut sessions);
    sessions
}

fn sort_newest_first(sessions: &mut [SessionInfo]) {
    sessions.sort_by(|a, b| {
        b.modified
            .cmp(&a.modified)
            .then_with(|| a.path.cmp(&b.path))
    });
}

fn jsonl_files(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl") && p.is_file())
        .collect()
}

/// The metadata of one session file, `None` when it cannot be read or has no header.
pub fn read_session_info(path: &Path) -> Option<SessionInfo> {
    let file = File::open(path).ok()?;
    let modified = file.metadata().and_then(|m| m.modified()).ok()?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut buf = Vec::new();
    let mut header: Option<Map<String, Value>> = None;
    let mut info = SessionInfo {
        path: path.to_path_buf(),
        id: String::new(),
        cwd: String::new(),
        name: None,
        parent_session: None,
        created: String::new(),
        modified,
        message_count: 0,
        first_message: String::new(),
        all_messages_text: String::new(),
    };
    loop {
        buf.clear();
        match reader.read_until(b'\n', &mut buf) {
            Ok(0) => break,
            Ok(_) => {}
            Err(_) => return None,
        }
        let line = String::from_utf8_lossy(&buf);
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if header.is_none() {
            let Ok(object) = serde_json::from_str::<Map<String, Value>>(line) else {
                continue;
            };
            // The first readable line must be the header.
            if object.get("type").and_then(Value::as_str) != Some("session") {
                return None;
            }
            header = Some(object);
            continue;
        }
        add_line(&mut info, line);
    }
    let header = header?;
    let text = |key: &str| header.get(key).and_then(Value::as_str).map(str::to_owned);
    info.id = text("id")?;
    info.cwd = text("cwd").unwrap_or_default();
    info.created = text("timestamp").unwrap_or_default();
    info.parent_session = text("parentSession");
    if info.first_message.is_empty() {
        info.first_message = "(no messages)".into();
    }
    Some(info)
}

/// How much message text a listing keeps per session for the picker's search: enough for
/// any query, bounded however big the file is.
const SEARCH_TEXT_CAP: usize = 64 * 1024;

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

/// The entry type of a line written as pi writes it (`{"type":"…"` first), without
/// parsing the rest.
fn leading_type(line: &str) -> Option<&str> {
    let rest = line.strip_prefix("{\"type\":\"")?;
    rest.split_once('"').map(|(kind, _)| kind)
}

/// Adds one entry line. Lines of other entry types are passed over unparsed, and once the
/// first message and the search text are in hand, message lines are only counted.
fn add_line(info: &mut SessionInfo, line: &str) {
    let kind = leading_type(line);
    match kind {
        Some("message") => {
            // A line cut short by a crash is no message.
            if !line.ends_with('}') {
                return;
            }
            if !info.first_message.is_empty() && info.all_messages_text.len() >= SEARCH_TEXT_CAP {
                info.message_count += 1;
                return;
            }
        }
        Some("session_info") => {}
        Some(_) => return,
        None => {}
    }
    let Ok(entry) = serde_json::from_str::<ListedEntry>(line) else {
        return;
    };
    match entry.kind.as_str() {
        "session_info" => {
            info.name = entry
                .name
                .as_deref()
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned);
        }
        "message" => {
            info.message_count += 1;
            let Some(message) = entry.message else {
                return;
            };
            let role = message.role.as_deref();
            if !matches!(role, Some("user" | "assistant")) {
                return;
            }
            let text = message.content.map(|c| c.0).unwrap_or_default();
            if text.is_empty() {
                return;
            }
            if info.all_messages_text.len() < SEARCH_TEXT_CAP {
                if !info.all_messages_text.is_empty() {
                    info.all_messages_text.push(' ');
                }
                let room = SEARCH_TEXT_CAP - info.all_messages_text.len();
                info.all_messages_text
                    .push_str(truncate_at_char(&text, room));
            }
            if info.first_message.is_empty() && role == Some("user") {
                info.first_message = text;
            }
        }
        _ => {}
    }
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::session::SessionManager;
    use pi_ai::{AssistantMessage, UserMessage};
    use std::time::Duration;

    const FIXTURE: &str = include_str!("../../tests/fixtures/pi-ts-session.jsonl");

    fn set_mtime(path: &Path, secs_ago: u64) {
        let file = File::options().write(true).open(path).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(secs_ago))
            .unwrap();
    }

    #[test]
    fn reads_the_typescript_fixture() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("a.jsonl");
        std::fs::write(&path, FIXTURE).unwrap();
        let list = list_sessions(dir.path());
        assert_eq!(list.len(), 1);
        let info = &list[0];
        assert_eq!(info.id, "01a2006b-03f3-7539-a1a8-cf8a5b8d4324");
        assert_eq!(info.cwd, "<ROOT>/work");
        assert_eq!(info.created, "2026-11-21T23:22:23.092Z");
        assert_eq!(info.first_message, "read hello.txt");
        assert!(info.message_count >= 2);
        assert!(info.all_messages_text.starts_with("read hello.txt"));
        assert_eq!(info.path, path);
    }

    #[test]
    fn names_counts_and_order() {
        let dir = tempfile::tempdir().unwrap();
        let header = r#"{"type":"session","version":3,"id":"s1","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/p","parentSession":"/x.jsonl"}"#;
        let lines = [
            header,
            r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"hello there","timestamp":1}}"#,
            "not json at all",
            r#"{"type":"session_info","id":"b","parentId":"a","timestamp":"t","name":"first"}"#,
            r#"{"type":"message","id":"c","parentId":"b","timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"hi"},{"type":"toolCall","id":"x","name":"ls","arguments":{}}],"api":"a","provider":"p","model":"m"}}"#,
            r#"{"type":"message","id":"d","parentId":"c","timestamp":"t","message":{"role":"toolResult","toolCallId":"x","toolName":"ls","content":[{"type":"text","text":"secret"}]}}"#,
            r#"{"type":"session_info","id":"e","parentId":"d","timestamp":"t","name":"  renamed  "}"#,
        ];
        let named = dir.path().join("named.jsonl");
        std::fs::write(&named, lines.join("\n")).unwrap();
        set_mtime(&named, 100);

        let empty = dir.path().join("empty.jsonl");
        std::fs::write(
            &empty,
            r#"{"type":"session","id":"s2","timestamp":"x","cwd":"/q"}"#,
        )
        .unwrap();
        set_mtime(&empty, 10);

        std::fs::write(dir.path().join("headerless.jsonl"), lines[1]).unwrap();
        std::fs::write(dir.path().join("blank.jsonl"), "").unwrap();
        std::fs::write(dir.path().join("bytes.jsonl"), [0xff, 0xfe, b'\n', 0x00]).unwrap();
        std::fs::write(dir.path().join("other.txt"), header).unwrap();
        std::fs::create_dir(dir.path().join("sub.jsonl")).unwrap();

        let list = list_sessions(dir.path());
        let ids: Vec<&str> = list.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, vec!["s2", "s1"]);
        let s1 = &list[1];
        assert_eq!(s1.name.as_deref(), Some("renamed"));
        assert_eq!(s1.message_count, 3);
        assert_eq!(s1.first_message, "hello there");
        assert_eq!(s1.all_messages_text, "hello there hi");
        assert_eq!(s1.parent_session.as_deref(), Some("/x.jsonl"));
        assert_eq!(list[0].first_message, "(no messages)");
        assert_eq!(list[0].message_count, 0);
        assert!(list[0].name.is_none());
    }

    #[test]
    fn big_sessions_are_counted_without_keeping_their_text() {
        let dir = tempfile::tempdir().unwrap();
        let mut lines = vec![
            r#"{"type":"session","version":3,"id":"big","timestamp":"t","cwd":"/p"}"#.to_owned(),
        ];
        let image = "A".repeat(200_000);
        lines.push(format!(
            r#"{{"type":"message","id":"i","parentId":null,"timestamp":"t","message":{{"role":"user","content":[{{"type":"image","data":"{image}","mimeType":"image/png"}},{{"type":"text","text":"look at this"}}],"timestamp":1}}}}"#
        ));
        let chunk = "word ".repeat(2_000);
        for n in 0..100 {
            lines.push(format!(
                r#"{{"type":"message","id":"m{n}","parentId":"i","timestamp":"t","message":{{"role":"assistant","content":[{{"type":"text","text":"{chunk}"}}],"api":"a","provider":"p","model":"m"}}}}"#
            ));
        }
        // Written by another tool, `type` not first: still read.
        lines.push(
            r#"{"name":"late name","id":"n","parentId":"m99","timestamp":"t","type":"session_info"}"#
                .to_owned(),
        );
        // A line cut short by a crash.
        lines.push(r#"{"type":"message","id":"x","parentId":"n","timestamp":"t","mess"#.to_owned());
        std::fs::write(dir.path().join("big.jsonl"), lines.join("\n")).unwrap();
        let info = &list_sessions(dir.path())[0];
        assert_eq!(info.message_count, 101);
        assert_eq!(info.first_message, "look at this");
        assert_eq!(info.name.as_deref(), Some("late name"));
        assert!(info.all_messages_text.starts_with("look at this word word"));
        assert!(info.all_messages_text.len() <= SEARCH_TEXT_CAP);
        assert!(!info.all_messages_text.contains("AAAA"));
    }

    #[test]
    fn missing_dirs_are_empty() {
        let dir = tempfile::tempdir().unwrap();
        assert!(list_sessions(&dir.path().join("nope")).is_empty());
        assert!(list_all_sessions(&dir.path().join("nope")).is_empty());
    }

    #[test]
    fn lists_every_project_written_by_the_manager() {
        let root = tempfile::tempdir().unwrap();
        let mut paths = Vec::new();
        for (i, project) in ["--a--", "--b--"].iter().enumerate() {
            let dir = root.path().join(project);
            std::fs::create_dir_all(&dir).unwrap();
            let mut session = SessionManager::create(Path::new("/work"), &dir);
            session
                .append_message(UserMessage::text(format!("question {i}")).into())
                .unwrap();
            session
                .append_message(AssistantMessage::empty("api", "p", "m").into())
                .unwrap();
            session.append_session_info(&format!("name {i}")).unwrap();
            let path = session.session_file().unwrap().to_path_buf();
            set_mtime(&path, 100 - i as u64 * 50);
            paths.push(path);
        }
        std::fs::write(root.path().join("stray.jsonl"), "{}").unwrap();
        let all = list_all_sessions(root.path());
        assert_eq!(all.len(), 2);
        assert_eq!(all[0].path, paths[1]);
        assert_eq!(all[0].name.as_deref(), Some("name 1"));
        assert_eq!(all[1].first_message, "question 0");
        assert_eq!(all[1].message_count, 2);
        assert_eq!(all[1].cwd, "/work");
    }
}
