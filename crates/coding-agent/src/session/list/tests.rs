//! The listing: what it reads of session files, and its index.
#![allow(clippy::unwrap_used)]

use super::*;
use crate::session::SessionManager;
use pi_ai::{AssistantMessage, UserMessage};
use std::time::Duration;

const FIXTURE: &str = include_str!("../../../tests/fixtures/pi-ts-session.jsonl");

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
    let mut lines =
        vec![r#"{"type":"session","version":3,"id":"big","timestamp":"t","cwd":"/p"}"#.to_owned()];
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
    assert!(info.all_messages_text.len() <= scan::SEARCH_TEXT_CAP);
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
    let elsewhere = tempfile::tempdir().unwrap();
    let mut paths = Vec::new();
    for (i, project) in ["--a--", "--b--"].iter().enumerate() {
        let dir = root.path().join(project);
        if i == 1 {
            // A project folder that is a symlink to sessions kept elsewhere (pi 0.84).
            std::os::unix::fs::symlink(elsewhere.path(), &dir).unwrap();
        } else {
            std::fs::create_dir_all(&dir).unwrap();
        }
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

fn message_line(id: &str, text: &str) -> String {
    format!(
        r#"{{"type":"message","id":"{id}","parentId":null,"timestamp":"t","message":{{"role":"user","content":"{text}","timestamp":1}}}}"#
    )
}

fn append(path: &Path, text: &str) {
    use std::io::Write;
    let mut file = File::options().append(true).open(path).unwrap();
    file.write_all(text.as_bytes()).unwrap();
}

#[test]
fn a_grown_file_is_read_from_where_the_last_listing_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let mut text = String::from(r#"{"type":"session","id":"s1","timestamp":"t","cwd":"/p"}"#);
    text.push('\n');
    for n in 0..10 {
        text.push_str(&message_line(&format!("m{n}"), &format!("message {n}")));
        text.push('\n');
    }
    std::fs::write(&path, &text).unwrap();
    assert_eq!(list_sessions(dir.path())[0].message_count, 10);
    assert!(dir.path().join(INDEX_FILE).is_file());

    // Lines in the middle that no longer parse: a listing that read the file again would
    // count fewer messages; one that reads on from the index counts the appended one.
    let mut bytes = std::fs::read(&path).unwrap();
    let middle = text.find("message 5").unwrap();
    bytes[middle - 40..middle + 40].fill(b'#');
    std::fs::write(&path, &bytes).unwrap();
    append(&path, &(message_line("m10", "appended") + "\n"));
    let info = &list_sessions(dir.path())[0];
    assert_eq!(info.message_count, 11);
    assert_eq!(info.first_message, "message 0");
    assert!(info.all_messages_text.ends_with("message 9 appended"));
}

#[test]
fn a_rewritten_file_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let header =
        |id: &str| format!(r#"{{"type":"session","id":"{id}","timestamp":"t","cwd":"/p"}}"#);
    std::fs::write(
        &path,
        format!("{}\n{}\n", header("aaaa"), message_line("m", "one")),
    )
    .unwrap();
    assert_eq!(list_sessions(dir.path())[0].id, "aaaa");
    // Longer than before, with another start: not the same file grown.
    let lines = [
        header("bbbb"),
        message_line("m", "two"),
        message_line("n", "three"),
    ];
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    let info = &list_sessions(dir.path())[0];
    assert_eq!((info.id.as_str(), info.message_count), ("bbbb", 2));
    assert_eq!(info.first_message, "two");
    // Shorter than what was read.
    std::fs::write(&path, header("cccc") + "\n").unwrap();
    let info = &list_sessions(dir.path())[0];
    assert_eq!((info.id.as_str(), info.message_count), ("cccc", 0));
}

#[test]
fn an_unfinished_last_line_is_counted_once_when_it_is_finished() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.jsonl");
    let header = r#"{"type":"session","id":"s","timestamp":"t","cwd":"/p"}"#;
    std::fs::write(&path, format!("{header}\n{}", message_line("a", "first"))).unwrap();
    assert_eq!(list_sessions(dir.path())[0].message_count, 1);
    append(&path, &format!("\n{}\n", message_line("b", "second")));
    let info = &list_sessions(dir.path())[0];
    assert_eq!(info.message_count, 2);
    assert_eq!(info.all_messages_text, "first second");
}

#[test]
fn a_damaged_index_is_rebuilt_and_gone_files_leave_it() {
    let dir = tempfile::tempdir().unwrap();
    let header = |id: &str| {
        format!("{{\"type\":\"session\",\"id\":\"{id}\",\"timestamp\":\"t\",\"cwd\":\"/p\"}}\n")
    };
    std::fs::write(dir.path().join("a.jsonl"), header("a")).unwrap();
    std::fs::write(dir.path().join("b.jsonl"), header("b")).unwrap();
    std::fs::write(dir.path().join(INDEX_FILE), "{not json").unwrap();
    assert_eq!(list_sessions(dir.path()).len(), 2);
    std::fs::remove_file(dir.path().join("b.jsonl")).unwrap();
    let list = list_sessions(dir.path());
    assert_eq!(list.len(), 1);
    let index = std::fs::read_to_string(dir.path().join(INDEX_FILE)).unwrap();
    assert!(index.contains("a.jsonl") && !index.contains("b.jsonl"));
}
