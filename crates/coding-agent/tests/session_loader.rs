//! The one-pass session loader against the general line reader, on every session fixture
//! (the TypeScript pi's included) and on made-up files with every entry type, branches,
//! labels, names, compactions, key orders pi does not write, and damaged lines: the same
//! entries, tree, contexts, labels, names and compaction cuts, and the file untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use pi_coding_agent::compaction::prepare::prepare_compaction;
use pi_coding_agent::compaction::settings::CompactionSettings;
use pi_coding_agent::session::entry::{FileLine, parse_line};
use pi_coding_agent::session::{EntryKind, SessionEntry, SessionManager, build_session_context};

/// The entries as the general reader reads them, line by line.
fn general_entries(text: &str) -> Vec<SessionEntry> {
    text.split('\n')
        .enumerate()
        .filter_map(|(i, line)| match parse_line(line, i + 1) {
            Ok((Some(FileLine::Entry(entry)), _)) => Some(entry),
            _ => None,
        })
        .collect()
}

fn label_of(entries: &[SessionEntry], id: &str) -> Option<String> {
    entries.iter().rev().find_map(|e| match &e.kind {
        EntryKind::Label { target_id, label } if target_id == id => Some(label.clone()),
        _ => None,
    })?
}

fn name_of(entries: &[SessionEntry]) -> Option<String> {
    entries.iter().rev().find_map(|e| match &e.kind {
        EntryKind::SessionInfo { name } => name.clone(),
        _ => None,
    })
}

/// Loads `path` and checks it against the general reader; returns how many entries.
fn check(path: &Path) -> usize {
    let before = std::fs::read(path).unwrap();
    let text = String::from_utf8_lossy(&before).into_owned();
    let expected = general_entries(&text);
    let mut session = SessionManager::open(path, Path::new("/")).unwrap();
    assert_eq!(session.entries(), expected.as_slice(), "{}", path.display());
    for (loaded, general) in session.entries().iter().zip(&expected) {
        let reread: serde_json::Value = serde_json::from_str(&loaded.to_line().unwrap()).unwrap();
        let original: serde_json::Value =
            serde_json::from_str(&general.to_line().unwrap()).unwrap();
        assert_eq!(reread, original, "{}: entry {}", path.display(), loaded.id);
    }
    assert_eq!(session.name(), name_of(&expected).as_deref());
    let ids: Vec<String> = expected.iter().map(|e| e.id.clone()).collect();
    for id in &ids {
        assert_eq!(
            session.label(id).map(str::to_owned),
            label_of(&expected, id)
        );
        let children: Vec<&str> = session.children(id).iter().map(|e| e.id.as_str()).collect();
        let expected_children: Vec<&str> = expected
            .iter()
            .filter(|e| e.parent_id.as_deref() == Some(id.as_str()))
            .map(|e| e.id.as_str())
            .collect();
        assert_eq!(children, expected_children);
        session.branch(id).unwrap();
        assert_eq!(
            session.build_context(),
            build_session_context(&expected, Some(id)),
            "{}: context at {id}",
            path.display()
        );
        let path_entries: Vec<SessionEntry> =
            session.branch_entries().into_iter().cloned().collect();
        let settings = CompactionSettings {
            enabled: true,
            reserve_tokens: 100,
            keep_recent_tokens: 50,
        };
        let general_path: Vec<SessionEntry> = {
            let mut out = Vec::new();
            let mut current = Some(id.as_str());
            while let Some(at) = current {
                let Some(entry) = expected.iter().find(|e| e.id == at) else {
                    break;
                };
                out.push(entry.clone());
                current = entry.parent_id.as_deref();
            }
            out.reverse();
            out
        };
        assert_eq!(
            prepare_compaction(&path_entries, &settings),
            prepare_compaction(&general_path, &settings)
        );
    }
    assert_eq!(
        std::fs::read(path).unwrap(),
        before,
        "{} was rewritten",
        path.display()
    );
    expected.len()
}

fn fixtures() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    for dir in [
        "crates/coding-agent/tests/fixtures",
        "crates/ai/tests/fixtures",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            let is_session = path.extension().is_some_and(|x| x == "jsonl")
                && std::fs::read_to_string(&path)
                    .ok()
                    .and_then(|t| t.lines().next().map(|l| l.contains("\"type\":\"session\"")))
                    .unwrap_or(false);
            if is_session {
                files.push(path);
            }
        }
    }
    files
}

#[test]
fn every_session_fixture_loads_as_the_general_reader_reads_it() {
    let files = fixtures();
    assert!(files.len() >= 5, "fixtures: {files:?}");
    let mut total = 0;
    for file in &files {
        let dir = tempfile::tempdir().unwrap();
        let copy = dir.path().join("s.jsonl");
        std::fs::copy(file, &copy).unwrap();
        total += check(&copy);
    }
    assert!(total > 20, "{total} entries");
}

const MADE_UP: &str = r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/"}
{"type":"model_change","id":"e1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","provider":"mock","modelId":"m"}
{"type":"thinking_level_change","id":"e2","parentId":"e1","timestamp":"2026-01-01T00:00:02.000Z","thinkingLevel":"high"}
{"type":"message","id":"e3","parentId":"e2","timestamp":"2026-01-01T00:00:03.000Z","message":{"role":"user","content":"first \"question\"\nwith é and \u00e9 and a pair \ud83d\ude00","timestamp":3}}
{"type":"message","id":"e4","parentId":"e3","timestamp":"2026-01-01T00:00:04.000Z","message":{"role":"assistant","content":[{"type":"thinking","thinking":"  ","thinkingSignature":"sig"},{"type":"text","text":"answer\twith tab"},{"type":"toolCall","id":"c1","name":"read","arguments":{"path":"a.txt"}}],"api":"openai-completions","provider":"mock","model":"m","usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"toolUse","timestamp":4}}
{"type":"message","id":"e5","parentId":"e4","timestamp":"2026-01-01T00:00:05.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"read","content":[{"type":"text","text":"file\ntext"},{"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}],"details":{"diff":"x"},"isError":false,"timestamp":5}}
{"id":"e6","type":"message","parentId":"e5","timestamp":"2026-01-01T00:00:06.000Z","message":{"content":[{"text":"keys in another order","type":"text"}],"role":"assistant","api":"openai-completions","provider":"mock","model":"m2","usage":{"input":20,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":25,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"stop","timestamp":6}}
{"type":"label","id":"e7","parentId":"e6","timestamp":"2026-01-01T00:00:07.000Z","targetId":"e3","label":"start"}
{"type":"session_info","id":"e8","parentId":"e7","timestamp":"2026-01-01T00:00:08.000Z","name":"made up"}
{"type":"custom","customType":"probe","data":{"n":1},"id":"e9","parentId":"e8","timestamp":"2026-01-01T00:00:09.000Z"}
{"type":"custom_message","id":"e10","parentId":"e9","timestamp":"2026-01-01T00:00:10.000Z","customType":"note","content":"remember","display":true,"details":{"k":1}}
{"type":"message","id":"e11","parentId":"e10","timestamp":"2026-01-01T00:00:11.000Z","message":{"role":"bashExecution","command":"ls","output":"a\nb","exitCode":0,"cancelled":false,"truncated":false,"timestamp":11}}
{"type":"compaction","id":"e12","parentId":"e11","timestamp":"2026-01-01T00:00:12.000Z","summary":"so far","firstKeptEntryId":"e5","tokensBefore":25,"details":{"readFiles":["a.txt"]}}
{"type":"message","id":"e13","parentId":"e12","timestamp":"2026-01-01T00:00:13.000Z","message":{"role":"user","content":[{"type":"text","text":"after compaction"}],"timestamp":13}}
{"type":"context_edit","id":"e14","parentId":"e13","timestamp":"2026-01-01T00:00:14.000Z","targetId":"e5","replacement":{"content":"shortened"}}
{"type":"branch_summary","id":"e15","parentId":"e4","timestamp":"2026-01-01T00:00:15.000Z","fromId":"e14","summary":"the other branch"}
{"type":"message","id":"e16","parentId":"e15","timestamp":"2026-01-01T00:00:16.000Z","message":{"role":"user","content":"on a branch","timestamp":16}}
{"type":"label","id":"e17","parentId":"e16","timestamp":"2026-01-01T00:00:17.000Z","targetId":"e3","label":null}
{"type":"usage","id":"e18","parentId":"e17","timestamp":"2026-01-01T00:00:18.000Z","kind":"cache_warm","usage":{"input":1}}
{"type":"future_kind","id":"e19","parentId":"e18","timestamp":"2026-01-01T00:00:19.000Z","anything":[1,2]}
{"type":"message","id":"e20","parentId":"e19","timestamp":"2026-01-01T00:00:20.000Z","message":{"role":"user"}}
not json at all
{"type":"message","id":"e21","parentId":"e20","timestamp":"2026-01-01T00:00:21.000Z","message":{"role":"system","sections":[{"id":"preamble","text":"You are pi."}],"timestamp":21}}
{"type":"message","id":"e22","parentId":"e21","timestamp":"2026-01-01T00:00:22.000Z","message":{"role":"user","content":"cut short by a cra"#;

#[test]
fn made_up_sessions_with_every_entry_kind_load_alike() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("made-up.jsonl");
    std::fs::write(&path, MADE_UP).unwrap();
    assert_eq!(check(&path), 21);
    let session = SessionManager::open(&path, Path::new("/")).unwrap();
    let lines: Vec<usize> = session.warnings().iter().map(|w| w.line).collect();
    // e19 (an unknown type) is kept unused, line 22 is not JSON, line 24 is cut short; e20
    // (a message without content) reads with empty content, as pi 0.80.4 reads it.
    assert_eq!(lines, vec![20, 22, 24]);
    assert_eq!(session.name(), Some("made up"));
    assert_eq!(session.label("e3"), None);
}

#[test]
fn a_large_session_loads_in_batches_as_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("large.jsonl");
    let mut text = String::from(
        "{\"type\":\"session\",\"version\":3,\"id\":\"s\",\"timestamp\":\"t\",\"cwd\":\"/\"}\n",
    );
    let mut parent = "null".to_owned();
    for i in 0..4000 {
        let body = format!("line {i}\\n").repeat(200);
        text.push_str(&format!(
            "{{\"type\":\"message\",\"id\":\"m{i}\",\"parentId\":{parent},\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"message\":{{\"role\":\"user\",\"content\":\"{body}\",\"timestamp\":{i}}}}}\n"
        ));
        parent = format!("\"m{i}\"");
    }
    std::fs::write(&path, &text).unwrap();
    let session = SessionManager::open(&path, Path::new("/")).unwrap();
    assert_eq!(session.entries(), general_entries(&text).as_slice());
    assert_eq!(session.build_context().messages.len(), 4000);
    assert_eq!(session.leaf_id(), Some("m3999"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}

#[test]
fn a_lone_surrogate_keeps_its_entry() {
    // JavaScript writes a string cut inside a surrogate pair as a lone `\ud83d`; the loader
    // keeps the entry with U+FFFD, and so does the general reader.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lone.jsonl");
    let text = concat!(
        r#"{"type":"session","version":3,"id":"s","timestamp":"t","cwd":"/"}"#,
        "\n",
        r#"{"type":"message","id":"a","parentId":null,"timestamp":"t","message":{"role":"user","content":"cut \ud83d","timestamp":1}}"#,
        "\n"
    );
    std::fs::write(&path, text).unwrap();
    let session = SessionManager::open(&path, Path::new("/")).unwrap();
    assert!(session.warnings().is_empty());
    assert_eq!(session.entries(), general_entries(text).as_slice());
    let context = session.build_context();
    let user = context.messages[0].as_llm().unwrap();
    let pi_ai::Message::User(user) = user else {
        panic!("{user:?}")
    };
    assert_eq!(user.text_content(), "cut \u{FFFD}");
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
}
