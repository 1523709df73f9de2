//! Listing session files with their metadata, for the resume picker.

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

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
    /// The text of all user and assistant messages, for search.
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
    let mut reader = BufReader::new(file);
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
        let Ok(object) = serde_json::from_str::<Map<String, Value>>(line) else {
            continue;
        };
        if header.is_none() {
            // The first readable line must be the header.
            if object.get("type").and_then(Value::as_str) != Some("session") {
                return None;
            }
            header = Some(object);
            continue;
        }
        add_entry(&mut info, &object);
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

fn add_entry(info: &mut SessionInfo, entry: &Map<String, Value>) {
    match entry.get("type").and_then(Value::as_str) {
        Some("session_info") => {
            info.name = entry
                .get("name")
                .and_then(Value::as_str)
                .map(str::trim)
                .filter(|n| !n.is_empty())
                .map(str::to_owned);
        }
        Some("message") => {
            info.message_count += 1;
            let Some(message) = entry.get("message").and_then(Value::as_object) else {
                return;
            };
            let role = message.get("role").and_then(Value::as_str);
            if !matches!(role, Some("user" | "assistant")) {
                return;
            }
            let text = message.get("content").map(content_text).unwrap_or_default();
            if text.is_empty() {
                return;
            }
            if !info.all_messages_text.is_empty() {
                info.all_messages_text.push(' ');
            }
            info.all_messages_text.push_str(&text);
            if info.first_message.is_empty() && role == Some("user") {
                info.first_message = text;
            }
        }
        _ => {}
    }
}

/// A message's text: the string, or its text blocks joined by spaces.
fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
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
