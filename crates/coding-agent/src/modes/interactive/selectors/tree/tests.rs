use super::super::test_support::*;
use super::tool_call::format_tool_call;
use super::*;
use pi_ai::{
    AssistantBlock, AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage,
};
use pi_tui::{Component, Input, KeyCode, KeyModifiers};

fn entry(id: &str, parent: Option<&str>, kind: EntryKind) -> SessionEntry {
    SessionEntry {
        id: id.into(),
        parent_id: parent.map(str::to_owned),
        timestamp: "2025-01-01T00:00:00.000Z".into(),
        kind,
    }
}

fn user(id: &str, parent: Option<&str>, text: &str) -> SessionEntry {
    entry(
        id,
        parent,
        EntryKind::Message {
            message: UserMessage::text(text).into(),
        },
    )
}

fn assistant(id: &str, parent: &str, blocks: Vec<AssistantBlock>) -> SessionEntry {
    let mut message = AssistantMessage::empty("api", "p", "m");
    message.content = blocks.into();
    entry(
        id,
        Some(parent),
        EntryKind::Message {
            message: message.into(),
        },
    )
}

fn said(id: &str, parent: &str, text: &str) -> SessionEntry {
    assistant(
        id,
        parent,
        vec![AssistantBlock::Text(TextContent::new(text))],
    )
}

/// m0 → u1 → a1, which branches into u2 → a2 and u3 → a3 (the leaf).
fn branched() -> Vec<SessionEntry> {
    vec![
        entry(
            "m0",
            None,
            EntryKind::ModelChange {
                provider: "p".into(),
                model_id: "m".into(),
            },
        ),
        user("u1", Some("m0"), "first question"),
        said("a1", "u1", "first answer"),
        user("u2", Some("a1"), "branch a"),
        said("a2", "u2", "a reply"),
        user("u3", Some("a1"), "branch b"),
        said("a3", "u3", "b reply"),
        entry(
            "l1",
            Some("a3"),
            EntryKind::Label {
                target_id: "u2".into(),
                label: Some("checkpoint".into()),
            },
        ),
    ]
}

fn rendered(s: &mut TreeSelector, width: usize) -> Vec<String> {
    let lines = s.render(width);
    assert_fits(&lines, width);
    plain(&lines)
}

#[test]
fn draws_branch_connectors_with_the_active_branch_first() {
    let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
    assert_eq!(s.visible_ids(), ["u1", "a1", "u3", "a3", "u2", "a2"]);
    assert_eq!(s.selected_id(), Some("a3"));
    let lines = rendered(&mut s, 100);
    let rows: Vec<&str> = lines
        .iter()
        .map(|l| l.trim_end())
        .filter(|l| l.contains(": "))
        .filter(|l| !l.contains("Type to search"))
        .collect();
    assert_eq!(
        rows,
        [
            "  • user: first question",
            "  • assistant: first answer",
            "  ├⊟ • user: branch b",
            "› │     • assistant: b reply",
            "  └⊟ [checkpoint] user: branch a",
            "        assistant: a reply",
        ]
    );
    assert!(lines.iter().any(|l| l.contains("(4/6)")));
}

#[test]
fn filters_hide_and_show_entries() {
    let keys = keys();
    let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
    s.handle(&ctrl('u'), &keys);
    assert_eq!(s.filter(), FilterMode::UserOnly);
    assert_eq!(s.visible_ids(), ["u1", "u3", "u2"]);
    // The leaf is hidden: its nearest shown ancestor is selected.
    assert_eq!(s.selected_id(), Some("u3"));
    let lines = rendered(&mut s, 60);
    assert!(
        lines.iter().any(|l| l.starts_with("› ├─ • user: branch b")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("[user]")));
    s.handle(&ctrl('u'), &keys);
    assert_eq!(s.filter(), FilterMode::Default);
    s.handle(&ctrl('a'), &keys);
    assert_eq!(
        s.visible_ids(),
        ["m0", "u1", "a1", "u3", "a3", "l1", "u2", "a2"]
    );
    let lines = rendered(&mut s, 60);
    assert!(lines.iter().any(|l| l.contains("[model: m]")));
    assert!(lines.iter().any(|l| l.contains("[label: checkpoint]")));
    s.handle(&ctrl('l'), &keys);
    assert_eq!(s.visible_ids(), ["u2"]);
    s.handle(&ctrl('o'), &keys);
    assert_eq!(s.filter(), FilterMode::All);
    s.handle(
        &Input::key_with(
            KeyCode::Char('o'),
            KeyModifiers::CONTROL | KeyModifiers::SHIFT,
        ),
        &keys,
    );
    assert_eq!(s.filter(), FilterMode::LabeledOnly);
    s.handle(&ctrl('d'), &keys);
    assert_eq!(s.filter(), FilterMode::Default);
}

#[test]
fn search_navigation_and_outcomes() {
    let keys = keys();
    let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
    for c in "reply".chars() {
        s.handle(&typed(c), &keys);
    }
    assert_eq!(s.visible_ids(), ["a3", "a2"]);
    let lines = rendered(&mut s, 40);
    assert!(lines.iter().any(|l| l.contains("Type to search: reply")));
    s.handle(&key(KeyCode::Down), &keys);
    assert_eq!(s.selected_id(), Some("a2"));
    s.handle(&key(KeyCode::Down), &keys);
    assert_eq!(s.selected_id(), Some("a3"));
    s.handle(&key(KeyCode::Up), &keys);
    assert_eq!(s.selected_id(), Some("a2"));
    // Esc clears the search first, then cancels.
    assert_eq!(
        s.handle(&key(KeyCode::Esc), &keys),
        SelectorOutcome::Pending
    );
    assert_eq!(s.visible_ids().len(), 6);
    assert_eq!(
        s.handle(&key(KeyCode::Enter), &keys),
        SelectorOutcome::Done("a2".into())
    );
    assert_eq!(
        s.handle(&key(KeyCode::Esc), &keys),
        SelectorOutcome::Cancelled
    );
}

#[test]
fn folds_branches() {
    let keys = keys();
    let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
    let ctrl_left = Input::key_with(KeyCode::Left, KeyModifiers::CONTROL);
    let ctrl_right = Input::key_with(KeyCode::Right, KeyModifiers::CONTROL);
    // From a3, fold-or-up jumps to the start of its branch segment.
    s.handle(&ctrl_left, &keys);
    assert_eq!(s.selected_id(), Some("u3"));
    s.handle(&ctrl_left, &keys);
    assert_eq!(s.visible_ids(), ["u1", "a1", "u3", "u2", "a2"]);
    let lines = rendered(&mut s, 60);
    assert!(
        lines.iter().any(|l| l.starts_with("› ├⊞ • user: branch b")),
        "{lines:?}"
    );
    s.handle(&ctrl_right, &keys);
    assert_eq!(s.visible_ids().len(), 6);
    s.handle(&ctrl_right, &keys);
    assert_eq!(s.selected_id(), Some("a3"));
}

#[test]
fn tool_calls_are_condensed_and_scrolling_keeps_the_selection_visible() {
    let mut entries = vec![user("u0", None, "start")];
    let mut parent = "u0".to_owned();
    for i in 0..30 {
        let call = ToolCall::new(
            format!("call{i}"),
            "bash",
            serde_json::json!({"command": format!("echo {i}\nls")})
                .as_object()
                .cloned()
                .unwrap(),
        );
        let a = format!("a{i}");
        entries.push(assistant(&a, &parent, vec![AssistantBlock::ToolCall(call)]));
        let r = format!("r{i}");
        entries.push(entry(
            &r,
            Some(&a),
            EntryKind::Message {
                message: ToolResultMessage {
                    tool_call_id: format!("call{i}"),
                    tool_name: "bash".into(),
                    content: Vec::new().into(),
                    ..Default::default()
                }
                .into(),
            },
        ));
        parent = r;
    }
    let mut s = TreeSelector::new(&entries, Some(&parent), &theme(), 8);
    // Tool-call-only assistant messages are hidden, except the current leaf.
    assert_eq!(s.visible_ids().len(), 31);
    let lines = rendered(&mut s, 40);
    assert!(
        lines.iter().any(|l| l.contains("› • [bash: echo 29 ls]")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.contains("(31/31)")));
    s.handle(&key(KeyCode::Down), &keys());
    let lines = rendered(&mut s, 100);
    assert!(lines.iter().any(|l| l.starts_with("› • user: start")));
    s.handle(&key(KeyCode::PageDown), &keys());
    assert_eq!(s.selected_id(), Some("r7"));
    s.set_filter(FilterMode::NoTools);
    assert_eq!(s.visible_ids(), ["u0"]);
}

#[test]
fn formats_tool_calls_like_pi() {
    let args = |v: serde_json::Value| v.as_object().cloned().unwrap();
    assert_eq!(
        format_tool_call(
            "read",
            &args(serde_json::json!({"path": "a.rs", "offset": 10, "limit": 10}))
        ),
        "[read: a.rs:10-19]"
    );
    assert_eq!(
        format_tool_call("grep", &args(serde_json::json!({"pattern": "fn"}))),
        "[grep: /fn/ in .]"
    );
    assert_eq!(
        format_tool_call("custom", &args(serde_json::json!({"k": 1}))),
        "[custom: {\"k\":1}]"
    );
    let long = "x".repeat(60);
    assert_eq!(
        format_tool_call("bash", &args(serde_json::json!({"command": long}))),
        format!("[bash: {}...]", "x".repeat(50))
    );
}

#[test]
fn empty_and_multiple_roots() {
    let mut s = TreeSelector::new(&[], None, &theme(), 10);
    let lines = rendered(&mut s, 40);
    assert!(lines.iter().any(|l| l.contains("No entries found")));
    assert_eq!(
        s.handle(&key(KeyCode::Enter), &keys()),
        SelectorOutcome::Pending
    );
    let entries = vec![user("r1", None, "root one"), user("r2", None, "root two")];
    let mut s = TreeSelector::new(&entries, Some("r2"), &theme(), 10);
    assert_eq!(s.visible_ids(), ["r2", "r1"]);
    let lines = rendered(&mut s, 40);
    assert!(
        lines.iter().any(|l| l.starts_with("› • user: root two")),
        "{lines:?}"
    );
    assert!(lines.iter().any(|l| l.starts_with("  user: root one")));
}

#[test]
fn labels_are_edited_and_entries_copied_through_requests() {
    let keys = keys();
    let mut s = TreeSelector::new(&branched(), Some("a3"), &theme(), 20);
    let help = plain(&s.render(100)).join("\n");
    assert!(
        help.contains(
            "  ↑/↓ move · ←/→ page · ctrl+←/→ branch · ctrl+x copy · shift+l label · shift+t label time"
        ),
        "{help}"
    );
    s.handle(&ctrl('x'), &keys);
    assert_eq!(
        s.take_requests(),
        [TreeRequest::Copy(Some("b reply".into()))]
    );
    s.handle(
        &Input::key_with(KeyCode::Char('L'), KeyModifiers::SHIFT),
        &keys,
    );
    let editing = plain(&s.render(100)).join("\n");
    assert!(editing.contains("Label (empty to remove):"), "{editing}");
    s.handle(&Input::Paste("done".into()), &keys);
    s.handle(&key(KeyCode::Enter), &keys);
    assert_eq!(
        s.take_requests(),
        [TreeRequest::Label("a3".into(), Some("done".into()))]
    );
    s.handle(
        &Input::key_with(KeyCode::Char('T'), KeyModifiers::SHIFT),
        &keys,
    );
    let shown = plain(&s.render(100)).join("\n");
    assert!(shown.contains("[done] "), "{shown}");
    assert!(shown.contains("[+label time]"), "{shown}");
}
