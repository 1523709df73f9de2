//! Unit tests of the session picker: threading, search, scopes, keys and widths.

use super::super::test_support::*;
use super::*;
use pi_tui::{Component, KeyCode};
use std::time::{Duration, SystemTime};

fn session(path: &str, first: &str, age_secs: u64) -> SessionInfo {
    SessionInfo {
        path: PathBuf::from(path),
        id: format!("id-{}", path.trim_start_matches('/')),
        cwd: "/home/user/project".into(),
        name: None,
        parent_session: None,
        created: "2025-01-01T00:00:00.000Z".into(),
        modified: SystemTime::now() - Duration::from_secs(age_secs),
        message_count: 4,
        first_message: first.into(),
        all_messages_text: format!("{first} and the answer"),
    }
}

fn current() -> Vec<SessionInfo> {
    let mut named = session("/s/b.jsonl", "refactor the parser", 3_600);
    named.name = Some("Parser work".into());
    let mut fork = session("/s/c.jsonl", "fork of a", 60);
    fork.parent_session = Some("/s/a.jsonl".into());
    let mut fork2 = session("/s/d.jsonl", "second fork of a", 120);
    fork2.parent_session = Some("/s/a.jsonl".into());
    vec![
        session("/s/a.jsonl", "fix the login bug", 7_200),
        named,
        fork,
        fork2,
    ]
}

fn all() -> Vec<SessionInfo> {
    let mut other = session("/o/x.jsonl", "deploy kubernetes cluster", 10);
    other.cwd = "/srv/ops".into();
    let mut list = current();
    list.push(other);
    list
}

fn paths(s: &SessionSelector) -> Vec<String> {
    s.visible()
        .iter()
        .map(|i| i.path.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn threaded_tree_without_search() {
    let mut s = SessionSelector::new(current(), all(), &theme());
    assert_eq!(
        paths(&s),
        ["/s/b.jsonl", "/s/a.jsonl", "/s/c.jsonl", "/s/d.jsonl"]
    );
    let plain = plain(&s.render(100));
    assert!(
        plain.iter().any(|l| l.starts_with("     ├─ fork of a")),
        "{plain:?}"
    );
    assert!(
        plain
            .iter()
            .any(|l| l.starts_with("     └─ second fork of a"))
    );
    assert!(
        plain
            .iter()
            .any(|l| l.starts_with("› Parser work") && l.ends_with(" 4 1h"))
    );
}

#[test]
fn search_filters_and_sorts() {
    let keys = keys();
    let mut s = SessionSelector::new(current(), all(), &theme());
    for c in "login".chars() {
        s.handle(&typed(c), &keys);
    }
    assert_eq!(paths(&s).first().map(String::as_str), Some("/s/a.jsonl"));
    s.search = LineInput::new();
    s.handle(&Input::Paste("\"parser\"".into()), &keys);
    assert_eq!(paths(&s), ["/s/b.jsonl"]);
    s.search = LineInput::new();
    s.handle(&Input::Paste("re:^id-s/c".into()), &keys);
    assert_eq!(paths(&s), ["/s/c.jsonl"]);
    s.search = LineInput::new();
    s.handle(&Input::Paste("re:(".into()), &keys);
    assert!(paths(&s).is_empty());
    assert_eq!(
        s.handle(&key(KeyCode::Enter), &keys),
        SelectorOutcome::Pending
    );
    for _ in 0..4 {
        s.handle(&key(KeyCode::Backspace), &keys);
    }
    assert_eq!(paths(&s).len(), 4);
}

#[test]
fn tab_switches_scope_and_named_filter() {
    let keys = keys();
    let mut s = SessionSelector::new(current(), all(), &theme());
    assert_eq!(s.scope(), SessionScope::Current);
    s.handle(&key(KeyCode::Tab), &keys);
    assert_eq!(s.scope(), SessionScope::All);
    assert_eq!(paths(&s).first().map(String::as_str), Some("/o/x.jsonl"));
    let all_rows = plain(&s.render(120));
    assert!(all_rows.iter().any(|l| l.contains("Resume Session (All)")));
    assert!(all_rows.iter().any(|l| l.contains("/srv/ops")));
    s.handle(&ctrl('n'), &keys);
    assert_eq!(paths(&s), ["/s/b.jsonl"]);
    s.handle(&ctrl('s'), &keys);
    assert_eq!(s.sort_mode(), SortMode::Recent);
    let mut empty = SessionSelector::new(Vec::new(), all(), &theme());
    assert_eq!(empty.scope(), SessionScope::Current);
    let shown = plain(&empty.render(120));
    assert!(
        shown
            .iter()
            .any(|l| l.contains("No sessions in current folder. Press Tab to view all.")),
        "{shown:?}"
    );
}

#[test]
fn navigation_stops_at_the_ends_and_outcomes() {
    let keys = keys();
    let mut s = SessionSelector::new(current(), all(), &theme());
    s.handle(&key(KeyCode::Up), &keys);
    assert_eq!(
        s.selected().map(|x| x.path.clone()),
        Some("/s/b.jsonl".into())
    );
    s.handle(&key(KeyCode::Down), &keys);
    assert_eq!(
        s.handle(&key(KeyCode::Enter), &keys),
        SelectorOutcome::Done(PathBuf::from("/s/a.jsonl"))
    );
    for _ in 0..6 {
        s.handle(&key(KeyCode::Down), &keys);
    }
    assert_eq!(
        s.selected().map(|x| x.path.clone()),
        Some("/s/d.jsonl".into())
    );
    assert_eq!(
        s.handle(&key(KeyCode::Esc), &keys),
        SelectorOutcome::Cancelled
    );
}

#[test]
fn delete_asks_first_and_never_takes_the_running_session() {
    let keys = keys();
    let dir = tempfile::tempdir().unwrap();
    let mut sessions = current();
    for s in &mut sessions {
        let file = dir.path().join(s.path.file_name().unwrap());
        std::fs::write(&file, "{}\n").unwrap();
        s.path = file;
    }
    let first = sessions[0].path.clone();
    let mut s = SessionSelector::new(sessions.clone(), sessions, &theme());
    s.set_current_session(&first);
    let running = s.selected().unwrap().path.clone();
    s.handle(&ctrl('d'), &keys);
    let shown = plain(&s.render(100)).join("\n");
    if running == first {
        assert!(
            shown.contains("Cannot delete the currently active session"),
            "{shown}"
        );
        s.handle(&key(KeyCode::Down), &keys);
        s.handle(&ctrl('d'), &keys);
    }
    let target = s.selected().unwrap().path.clone();
    let shown = plain(&s.render(100)).join("\n");
    assert!(
        shown.contains("Delete session? enter confirm · escape cancel"),
        "{shown}"
    );
    s.handle(&key(KeyCode::Esc), &keys);
    assert!(target.exists());
    s.handle(&ctrl('d'), &keys);
    s.handle(&key(KeyCode::Enter), &keys);
    assert!(!target.exists());
    assert!(!paths(&s).contains(&target.display().to_string()));
}

#[test]
fn renders_within_width() {
    let mut many = all();
    for i in 0..20 {
        let mut extra = session(
            &format!("/very/long/path/to/a/session/file/number-{i}.jsonl"),
            "an extremely long first message that goes on and on past any terminal width you might have",
            86_400 * (i + 1),
        );
        extra.cwd = "/a/very/long/working/directory/path/that/is/long".into();
        many.push(extra);
    }
    let mut s = SessionSelector::new(many.clone(), many, &theme());
    s.handle(&ctrl('p'), &keys());
    for width in [40, 100] {
        for _ in 0..2 {
            let lines = s.render(width);
            assert_fits(&lines, width);
            s.handle(&key(KeyCode::Tab), &keys());
        }
    }
    let plain = plain(&s.render(40));
    assert!(plain.iter().any(|l| l.contains("(1/25)")));
}

#[test]
fn ages_are_compact() {
    let now = SystemTime::now();
    let ago = |s: u64| format_age(now - Duration::from_secs(s), now);
    assert_eq!(ago(10), "now");
    assert_eq!(ago(300), "5m");
    assert_eq!(ago(7_200), "2h");
    assert_eq!(ago(86_400 * 3), "3d");
    assert_eq!(ago(86_400 * 14), "2w");
    assert_eq!(ago(86_400 * 60), "2mo");
    assert_eq!(ago(86_400 * 800), "2y");
}
