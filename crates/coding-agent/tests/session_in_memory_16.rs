//! Restorable in-memory sessions (pi 0.85's `SessionManager.inMemory(cwd, options,
//! entries)`): entries a host kept outside the filesystem come back as an in-memory session
//! with the same id and conversation as the file they were written to, and it goes on
//! without ever writing a file. The sessions restored here were written by the real `pi`
//! binaries, ours and pi 1.6.0 (`PI_TS16`), against mock-llm.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;

use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use pi_agent_core::AgentMessage;
use pi_ai::UserMessage;
use pi_coding_agent::session::SessionManager;
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// The messages of a session's context as JSON, to compare two sessions by.
fn context_of(session: &SessionManager) -> Value {
    let context = session.build_context();
    json!({
        "messages": serde_json::to_value(&context.messages).unwrap(),
        "model": context.model,
        "thinking": context.thinking_level,
    })
}

fn lines_of(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Every file under `dir`, recursively.
fn files_under(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            found.extend(files_under(&path));
        } else {
            found.push(path);
        }
    }
    found
}

#[test]
fn entries_written_by_either_pi_restore_as_an_in_memory_session() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        server.push_all([Script::text("Hello there."), Script::text("Again.")]);
        let env = Env::new(&server, 128_000, json!({}));
        for prompt in ["hello", "and again"] {
            let out = run(&env, program(&wrapper), &["-c", "-p", prompt]);
            assert!(out.status.success(), "{name}: {out:?}");
        }
        let files = env.session_files();
        assert_eq!(files.len(), 1, "{name}: {files:?}");
        let file = &files[0];
        let on_disk = SessionManager::open(file, &env.work).unwrap();
        let lines = lines_of(file);
        let sessions_before = files_under(&env.agent);

        // With its header: the same session, in memory.
        let mut restored = SessionManager::in_memory_from(&env.work, lines.clone());
        assert!(
            restored.warnings().is_empty(),
            "{name}: {:?}",
            restored.warnings()
        );
        assert!(!restored.is_persisted(), "{name}");
        assert_eq!(restored.session_id(), on_disk.session_id(), "{name}");
        assert_eq!(restored.entries().len(), lines.len() - 1, "{name}");
        assert_eq!(restored.leaf_id(), on_disk.leaf_id(), "{name}");
        assert_eq!(context_of(&restored), context_of(&on_disk), "{name}");
        let user_messages = |s: &SessionManager| {
            s.build_context()
                .messages
                .iter()
                .filter(|m| m.role() == "user")
                .count()
        };
        assert_eq!(user_messages(&restored), 2, "{name}");
        // It goes on in memory: the new entry hangs off the restored leaf, no file is made.
        let leaf = restored.leaf_id().map(str::to_owned);
        let id = restored
            .append_message(AgentMessage::from(UserMessage::text("third")))
            .unwrap();
        assert_eq!(
            restored.entry(&id).and_then(|e| e.parent_id.clone()),
            leaf,
            "{name}"
        );
        assert_eq!(user_messages(&restored), 3, "{name}");
        assert_eq!(
            files_under(&env.agent),
            sessions_before,
            "{name}: no file written"
        );
        assert_eq!(
            lines_of(file),
            lines,
            "{name}: the original file is untouched"
        );

        // Without a header: the entries under a new session.
        let headless = SessionManager::in_memory_from(&env.work, lines[1..].to_vec());
        assert_ne!(headless.session_id(), on_disk.session_id(), "{name}");
        assert_eq!(context_of(&headless), context_of(&on_disk), "{name}");
    }
}

#[test]
fn an_old_session_version_is_migrated_and_bad_lines_are_reported() {
    let dir = tempfile::tempdir().unwrap();
    // A version 1 session (no ids or parents yet), as the oldest pi wrote it, and a stray line.
    let lines = vec![
        json!({"type": "session", "id": "v1-session", "timestamp": "2025-01-01T00:00:00.000Z",
               "cwd": "/tmp/old"}),
        json!({"type": "message", "timestamp": "2025-01-01T00:00:01.000Z",
               "message": {"role": "user", "content": "from version one", "timestamp": 1}}),
        json!("not an entry"),
    ];
    let restored = SessionManager::in_memory_from(dir.path(), lines);
    assert_eq!(restored.session_id(), "v1-session");
    assert_eq!(
        restored.header().version,
        Some(3),
        "migrated to the current version"
    );
    assert_eq!(restored.entries().len(), 1);
    assert!(
        !restored.entries()[0].id.is_empty(),
        "the migration gave it an id"
    );
    assert_eq!(restored.warnings().len(), 1, "{:?}", restored.warnings());
    assert_eq!(restored.warnings()[0].line, 3);
    let messages = restored.build_context().messages;
    assert_eq!(messages.len(), 1);
    assert_eq!(messages[0].role(), "user");
    assert!(
        std::fs::read_dir(dir.path()).unwrap().next().is_none(),
        "nothing written"
    );
}
