//! Session files: the TypeScript pi's files load and continue, ours have the same shapes,
//! lazy flush, branches, compaction context, migrations, and damaged lines that are
//! reported without losing anything.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pi_agent_core::AgentMessage;
use pi_ai::{AssistantMessage, UserMessage};
use pi_coding_agent::session::{EntryKind, SessionManager, default_session_dir, find_most_recent};

const REFERENCE: &str = include_str!("../../ai/tests/fixtures/pi-ts-session.jsonl");
const RPC_REFERENCE: &str = include_str!("../../ai/tests/fixtures/pi-ts-rpc-session.jsonl");

fn write(dir: &Path, name: &str, text: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn user(text: &str) -> AgentMessage {
    UserMessage::text(text).into()
}

fn assistant(text: &str) -> AgentMessage {
    let mut a = AssistantMessage::empty("openai-completions", "mock", "mock-model");
    a.content = vec![pi_ai::AssistantBlock::Text(pi_ai::TextContent::new(text))].into();
    a.into()
}

fn role_texts(session: &SessionManager) -> Vec<String> {
    session
        .build_context()
        .messages
        .iter()
        .map(|m| m.role().to_owned())
        .collect()
}

#[test]
fn reference_sessions_load_with_their_context() {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [("a.jsonl", REFERENCE), ("b.jsonl", RPC_REFERENCE)] {
        let path = write(dir.path(), name, text);
        let session = SessionManager::open(&path, dir.path()).unwrap();
        assert!(
            session.warnings().is_empty(),
            "{name}: {:?}",
            session.warnings()
        );
        assert_eq!(session.header().version, Some(3));
        let context = session.build_context();
        assert_eq!(
            context.model,
            Some(("mock".to_owned(), "mock-model".to_owned())),
            "{name}"
        );
        assert_eq!(context.thinking_level, "off");
        assert!(context.messages.len() >= 4, "{name}");
    }
    let session =
        SessionManager::open(&write(dir.path(), "c.jsonl", REFERENCE), dir.path()).unwrap();
    assert_eq!(
        role_texts(&session),
        ["user", "assistant", "toolResult", "assistant"]
    );
    assert_eq!(session.entries().len(), 6);
}

#[test]
fn every_reference_entry_serializes_back_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let session =
        SessionManager::open(&write(dir.path(), "s.jsonl", REFERENCE), dir.path()).unwrap();
    let lines: Vec<&str> = REFERENCE.lines().collect();
    assert_eq!(serde_json::to_string(session.header()).unwrap(), lines[0]);
    for (entry, line) in session.entries().iter().zip(&lines[1..]) {
        assert_eq!(&entry.to_line().unwrap(), line);
    }
}

#[test]
fn nothing_is_written_before_the_first_user_message_then_lines_are_appended() {
    let dir = tempfile::tempdir().unwrap();
    let sessions = default_session_dir(dir.path(), Path::new("/home/me/project"));
    assert!(sessions.ends_with("sessions/--home-me-project--"));
    let mut session = SessionManager::create(Path::new("/home/me/project"), &sessions);
    let file = session.session_file().unwrap().to_path_buf();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.ends_with(&format!("_{}.jsonl", session.session_id())),
        "{name}"
    );
    assert!(!name.contains(':'));
    session.append_model_change("mock", "mock-model").unwrap();
    session.append_thinking_level_change("off").unwrap();
    assert!(!file.exists(), "lazy: no file before a user message");
    // pi 1.6 writes the file with the first prompt, before any reply.
    session.append_message(user("hi")).unwrap();
    assert_eq!(std::fs::read_to_string(&file).unwrap().lines().count(), 4);
    session.append_message(assistant("hello")).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 5);
    session.append_message(user("again")).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert_eq!(text.lines().count(), 6);
    // Shapes as the TypeScript pi writes them.
    let entry: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
    let keys: Vec<&str> = entry
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        ["type", "id", "parentId", "timestamp", "provider", "modelId"]
    );
    assert_eq!(entry["id"].as_str().unwrap().len(), 8);
    assert!(entry["parentId"].is_null());
    let reopened = SessionManager::open(&file, Path::new("/home/me/project")).unwrap();
    assert_eq!(role_texts(&reopened), ["user", "assistant", "user"]);
    assert_eq!(reopened.session_id(), session.session_id());
}

#[test]
fn in_memory_sessions_write_nothing() {
    let mut session = SessionManager::in_memory(Path::new("/tmp"));
    session.append_message(user("hi")).unwrap();
    session.append_message(assistant("hello")).unwrap();
    assert!(session.session_file().is_none());
    assert_eq!(role_texts(&session), ["user", "assistant"]);
}

#[test]
fn damaged_lines_are_reported_skipped_and_kept_in_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut lines: Vec<String> = REFERENCE.lines().map(str::to_owned).collect();
    lines.insert(3, "{this is not json".to_owned());
    // An entry type from the future sits in the chain: children still link through it.
    let future = r#"{"type":"hologram","id":"f00dcafe","parentId":"9ce72569","timestamp":"2026-11-21T23:22:23.120Z","beams":3}"#;
    lines.insert(4, future.to_owned());
    lines[5] = lines[5].replace("\"parentId\":\"9ce72569\"", "\"parentId\":\"f00dcafe\"");
    let mut text = lines.join("\n");
    text.push_str("\n{\"type\":\"message\",\"id\":\"deadbeef\",\"parentId\":\"337690e4\""); // torn last line
    let path = write(dir.path(), "damaged.jsonl", &text);
    let mut session = SessionManager::open(&path, dir.path()).unwrap();
    // The broken line, the torn last line, and the entry type this build does not know.
    assert_eq!(session.warnings().len(), 3, "{:?}", session.warnings());
    assert_eq!(
        role_texts(&session),
        ["user", "assistant", "toolResult", "assistant"]
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        text,
        "opening rewrites nothing"
    );
    session.append_message(user("more")).unwrap();
    let after = std::fs::read_to_string(&path).unwrap();
    assert!(after.starts_with(&text), "earlier bytes untouched");
}

#[test]
fn branching_continues_from_an_earlier_entry() {
    let mut session = SessionManager::in_memory(Path::new("/tmp"));
    let first = session.append_message(user("one")).unwrap();
    let reply = session.append_message(assistant("1")).unwrap();
    session.append_message(user("two")).unwrap();
    session.append_message(assistant("2")).unwrap();
    session.branch(&reply).unwrap();
    session.append_message(user("other")).unwrap();
    let texts: Vec<String> = session
        .build_context()
        .messages
        .iter()
        .map(|m| serde_json::to_value(m).unwrap()["content"].to_string())
        .collect();
    assert_eq!(texts.len(), 3);
    assert!(texts[2].contains("other"));
    assert_eq!(session.children(&reply).len(), 2);
    assert!(session.branch("nope").is_err());
    session.append_label(&first, Some("start")).unwrap();
    assert_eq!(session.label(&first), Some("start"));
    session.append_session_info("my session").unwrap();
    assert_eq!(session.name(), Some("my session"));
}

#[test]
fn a_compaction_with_no_kept_entry_keeps_nothing_before_it() {
    let mut session = SessionManager::in_memory(Path::new("/tmp"));
    session.append_message(user("old question")).unwrap();
    session.append_message(assistant("old answer")).unwrap();
    let id = session
        .append_compaction(pi_coding_agent::session::NewCompaction {
            summary: "They talked.",
            first_kept_entry_id: "",
            tokens_before: 10,
            details: None,
            usage: None,
            from_hook: None,
            system_message: None,
        })
        .unwrap();
    let Some(EntryKind::Compaction {
        first_kept_entry_id,
        ..
    }) = session.entry(&id).map(|e| &e.kind)
    else {
        panic!("no compaction entry");
    };
    assert_eq!(first_kept_entry_id, &id);
    session.append_message(user("new question")).unwrap();
    assert_eq!(role_texts(&session), ["compactionSummary", "user"]);
}

#[test]
fn compaction_keeps_the_summary_and_the_kept_tail() {
    let mut session = SessionManager::in_memory(Path::new("/tmp"));
    session.append_message(user("old question")).unwrap();
    session.append_message(assistant("old answer")).unwrap();
    let kept = session.append_message(user("recent question")).unwrap();
    session.append_message(assistant("recent answer")).unwrap();
    session
        .append(EntryKind::Compaction {
            summary: "They talked about old things.".into(),
            first_kept_entry_id: kept,
            tokens_before: 1234,
            details: None,
            usage: None,
            from_hook: None,
            system_message: None,
        })
        .unwrap();
    session.append_message(user("new question")).unwrap();
    let context = session.build_context();
    let roles: Vec<&str> = context.messages.iter().map(|m| m.role()).collect();
    assert_eq!(roles, ["compactionSummary", "user", "assistant", "user"]);
    let summary = serde_json::to_value(&context.messages[0]).unwrap();
    assert_eq!(summary["summary"], "They talked about old things.");
    assert_eq!(summary["tokensBefore"], 1234);
    assert!(summary["timestamp"].as_i64().unwrap() > 0);
}

#[test]
fn version_1_files_are_migrated_once() {
    let dir = tempfile::tempdir().unwrap();
    let v1 = [
        r#"{"type":"session","id":"old-session","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":"hi","timestamp":1}}"#,
        r#"{"type":"message","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"hookMessage","customType":"x","content":"note","display":true,"timestamp":2}}"#,
        r#"{"type":"compaction","timestamp":"2025-01-01T00:00:03.000Z","summary":"s","firstKeptEntryIndex":2,"tokensBefore":5}"#,
    ]
    .join("\n");
    let path = write(dir.path(), "v1.jsonl", &v1);
    let session = SessionManager::open(&path, dir.path()).unwrap();
    assert_eq!(session.header().version, Some(3));
    let entries = session.entries();
    assert!(entries[0].parent_id.is_none());
    assert_eq!(
        entries[1].parent_id.as_deref(),
        Some(entries[0].id.as_str())
    );
    let EntryKind::Compaction {
        first_kept_entry_id,
        ..
    } = &entries[2].kind
    else {
        panic!()
    };
    assert_eq!(first_kept_entry_id, &entries[1].id);
    assert_eq!(entries[1].message().unwrap().role(), "custom");
    let rewritten = std::fs::read_to_string(&path).unwrap();
    assert!(rewritten.lines().next().unwrap().contains("\"version\":3"));
    assert!(!rewritten.contains("hookMessage"));
}

/// A lone surrogate escape (JavaScript writes one for half an emoji) lost its whole line in
/// an older file, which the general reader reads; it reads as U+FFFD, as in a current one,
/// and the rewrite after migrating keeps the line once.
#[test]
fn lone_surrogates_in_an_older_file_keep_their_line() {
    let dir = tempfile::tempdir().unwrap();
    let v2 = [
        r#"{"type":"session","version":2,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}"#,
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"half \ud83d","timestamp":1}}"#,
    ]
    .join("\n");
    let path = write(dir.path(), "v2.jsonl", &v2);
    let session = SessionManager::open(&path, dir.path()).unwrap();
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
    let message = serde_json::to_value(session.entries()[0].message().unwrap()).unwrap();
    assert_eq!(message["content"], "half \u{fffd}");
    let rewritten = std::fs::read_to_string(&path).unwrap();
    assert_eq!(rewritten.matches("\"a1\"").count(), 1, "{rewritten}");
}

/// Found by the session_file fuzz target: the fast loader kept a text with a lone
/// surrogate escape as its literal, which could not be turned back into JSON, so the entry
/// could not be written out again (a fork, an export). Short and long (left in the file)
/// texts read as U+FFFD and write back.
#[test]
fn lone_surrogates_in_a_current_file_write_back() {
    let dir = tempfile::tempdir().unwrap();
    let long = "x".repeat(2000);
    let v3 = [
        r#"{"type":"session","version":3,"id":"s","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/tmp"}"#.to_owned(),
        r#"{"type":"message","id":"a1","parentId":null,"timestamp":"t","message":{"role":"user","content":"\ude00","timestamp":1}}"#.to_owned(),
        format!(r#"{{"type":"message","id":"a2","parentId":"a1","timestamp":"t","message":{{"role":"user","content":"{long}\ud83d\n","timestamp":2}}}}"#),
    ]
    .join("\n");
    let path = write(dir.path(), "v3.jsonl", &v3);
    let session = SessionManager::open(&path, dir.path()).unwrap();
    assert!(session.warnings().is_empty(), "{:?}", session.warnings());
    let texts: Vec<String> = session
        .entries()
        .iter()
        .map(|entry| {
            let line = entry.to_line().unwrap();
            let value: serde_json::Value = serde_json::from_str(&line).unwrap();
            value["message"]["content"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(texts, ["\u{fffd}".to_owned(), format!("{long}\u{fffd}\n")]);
}

#[test]
fn continue_recent_opens_the_newest_session() {
    let dir = tempfile::tempdir().unwrap();
    let older = write(dir.path(), "a.jsonl", REFERENCE);
    std::thread::sleep(std::time::Duration::from_millis(20));
    let newer = write(dir.path(), "b.jsonl", RPC_REFERENCE);
    write(dir.path(), "junk.jsonl", "not a session\n");
    assert_eq!(
        find_most_recent(dir.path()).as_deref(),
        Some(newer.as_path())
    );
    let session = SessionManager::continue_recent(dir.path(), dir.path()).unwrap();
    assert_eq!(session.session_file(), Some(newer.as_path()));
    let _ = older;
    let empty = tempfile::tempdir().unwrap();
    let fresh = SessionManager::continue_recent(empty.path(), empty.path()).unwrap();
    assert!(fresh.entries().is_empty());
}
