//! Snapshots of the interactive chat components (ANSI stripped, plus one raw footer).
#![allow(clippy::unwrap_used)]

use pi_agent_core::AgentToolResult;
use pi_ai::{
    AssistantBlock, AssistantMessage as AiAssistantMessage, ImageContent, InputBlock, StopReason,
    TextContent, ThinkingContent, ToolCall,
};
use pi_coding_agent::modes::interactive::components::{
    AssistantMessage, BashExecution, Footer, FooterData, Notice, SummaryMessage, ToolExecution,
    UserMessage,
};
use pi_coding_agent::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};
use pi_coding_agent::tools::edit_diff::generate_diff_string;
use pi_tui::{ColorMode, Component, visible_width};
use serde_json::{Value, json};

const WIDTHS: [usize; 2] = [60, 100];

fn theme() -> Theme {
    Theme::dark(ColorMode::TrueColor)
}

/// Removes CSI (`ESC [ … final`), OSC/APC/DCS (`… BEL` or `… ESC \`) and two-byte escapes.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if ('\x40'..='\x7e').contains(&c) {
                        break;
                    }
                }
            }
            Some(']' | '_' | 'P' | '^') => {
                while let Some(c) = chars.next() {
                    if c == '\x07' {
                        break;
                    }
                    if c == '\x1b' && chars.peek() == Some(&'\\') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// Renders at `width`, checks no line overflows, and returns the plain text (trailing
/// spaces of each line trimmed; full-width fills are checked separately).
fn plain(component: &mut dyn Component, width: usize) -> String {
    let lines = component.render(width);
    for line in &lines {
        assert!(
            visible_width(line) <= width,
            "line wider than {width}: {line:?}"
        );
    }
    lines
        .iter()
        .map(|l| strip_ansi(l).trim_end().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn snapshot_widths(name: &str, component: &mut dyn Component) {
    for width in WIDTHS {
        insta::assert_snapshot!(format!("{name}_w{width}"), plain(component, width));
    }
}

fn text_result(text: &str) -> AgentToolResult {
    AgentToolResult::text(text)
}

fn args(value: Value) -> Value {
    value
}

// ---- tools -------------------------------------------------------------------------

const OLD_SOURCE: &str = "use std::io;\n\nfn main() {\n    let name = \"world\";\n    println!(\"hello {}\", name);\n    let count = 3;\n    for i in 0..count {\n        println!(\"{i}\");\n    }\n}\n";
const NEW_SOURCE: &str = "use std::io;\n\nfn main() {\n    let name = \"pi\";\n    println!(\"hello {}\", name);\n    let count = 3;\n    for i in 0..count {\n        eprintln!(\"{i}\");\n        println!(\"done {i}\");\n    }\n}\n";

#[test]
fn edit_diff_from_result_details() {
    let theme = theme();
    let diff = generate_diff_string(OLD_SOURCE, NEW_SOURCE, 4);
    let mut tool = ToolExecution::new(
        "edit",
        "call-1",
        args(json!({"path": "src/main.rs", "edits": [
            {"oldText": "\"world\"", "newText": "\"pi\""},
        ]})),
        &theme,
    );
    // While running only the title shows.
    assert_eq!(
        plain(&mut tool, 60)
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count(),
        1
    );
    let mut result = text_result("Successfully replaced 2 block(s) in src/main.rs.");
    result.details = Some(json!({"diff": diff.diff, "firstChangedLine": 4}));
    tool.finish(&result, false);
    snapshot_widths("edit_diff", &mut tool);
}

#[test]
fn edit_diff_computed_from_arguments() {
    let theme = theme();
    let mut tool = ToolExecution::new(
        "edit",
        "call-2",
        args(
            json!({"path": "notes.txt", "oldText": "alpha\nbeta\ngamma", "newText": "alpha\nBETA\ngamma"}),
        ),
        &theme,
    );
    tool.finish(&text_result("Successfully replaced 1 block(s)."), false);
    insta::assert_snapshot!("edit_diff_from_args_w60", plain(&mut tool, 60));
}

fn bash_tool(theme: &Theme) -> ToolExecution {
    let output: Vec<String> = (1..=12).map(|i| format!("line {i}")).collect();
    let mut tool = ToolExecution::new(
        "bash",
        "call-3",
        args(json!({"command": "seq -f 'line %g' 1 12", "timeout": 30})),
        theme,
    );
    tool.finish(&text_result(&output.join("\n")), false);
    tool
}

#[test]
fn bash_output_collapsed() {
    let theme = theme();
    let mut tool = bash_tool(&theme);
    snapshot_widths("bash_collapsed", &mut tool);
}

#[test]
fn bash_output_expanded() {
    let theme = theme();
    let mut tool = bash_tool(&theme);
    tool.set_expanded(true);
    snapshot_widths("bash_expanded", &mut tool);
}

#[test]
fn bash_streaming_shows_the_tail() {
    let theme = theme();
    let mut tool = ToolExecution::new("bash", "call-4", json!({"command": "make"}), &theme);
    tool.update_partial(&text_result("compiling a\ncompiling b\ncompiling c"));
    insta::assert_snapshot!("bash_partial_w60", plain(&mut tool, 60));
    let mut result = text_result("error: build failed\n\nCommand exited with code 2");
    result.details = Some(json!({
        "truncation": {"truncated": true, "truncatedBy": "lines", "outputLines": 2000, "totalLines": 5000},
        "fullOutputPath": "/tmp/pi-bash-1.log"
    }));
    tool.finish(&result, true);
    insta::assert_snapshot!("bash_failed_truncated_w60", plain(&mut tool, 60));
}

#[test]
fn read_preview() {
    let theme = theme();
    let source: Vec<String> = (1..=25)
        .map(|i| format!("fn f{i}() -> u32 {{ {i} }} // line {i}"))
        .collect();
    let mut tool = ToolExecution::new(
        "read",
        "call-5",
        args(json!({"path": "src/lib.rs", "offset": 1, "limit": 25})),
        &theme,
    );
    tool.finish(&text_result(&source.join("\n")), false);
    snapshot_widths("read_preview", &mut tool);
    tool.set_expanded(true);
    let expanded = plain(&mut tool, 60);
    assert!(expanded.contains("line 25"));
    assert!(!expanded.contains("more lines"));
}

#[test]
fn errored_tool() {
    let theme = theme();
    let mut tool = ToolExecution::new(
        "read",
        "call-6",
        args(json!({"path": "missing/file.txt"})),
        &theme,
    );
    tool.finish(
        &AgentToolResult::error("ENOENT: no such file or directory, open 'missing/file.txt'"),
        true,
    );
    snapshot_widths("errored_read", &mut tool);
    let raw = tool.render(60).join("\n");
    // The error background fills every line; the message is in the error color.
    let error_bg = theme.bg(ThemeBg::ToolErrorBg).prefix();
    let error_fg = theme.fg(ThemeColor::Error).prefix();
    for line in tool.render(60).iter().skip(1) {
        assert!(line.starts_with(&error_bg), "{line:?}");
        assert_eq!(visible_width(line), 60);
    }
    assert!(raw.contains(&format!("{error_fg}ENOENT")), "{raw:?}");
}

#[test]
fn other_tools() {
    let theme = theme();
    let mut grep = ToolExecution::new(
        "grep",
        "c7",
        json!({"pattern": "TODO", "path": "src", "glob": "*.rs", "limit": 50}),
        &theme,
    );
    grep.finish(
        &AgentToolResult {
            content: vec![InputBlock::text(
                "src/a.rs:1: // TODO one\nsrc/b.rs:9: // TODO two",
            )],
            details: Some(json!({"matchLimitReached": 50})),
            terminate: None,
            is_error: false,
            structured_content: None,
        },
        false,
    );
    insta::assert_snapshot!("grep_w60", plain(&mut grep, 60));

    let mut write = ToolExecution::new(
        "write",
        "c8",
        json!({"path": "README", "content": (1..=14).map(|i| format!("row {i}")).collect::<Vec<_>>().join("\n")}),
        &theme,
    );
    write.finish(&text_result("Wrote 100 bytes"), false);
    insta::assert_snapshot!("write_w60", plain(&mut write, 60));

    let mut custom = ToolExecution::new("screenshot", "c9", json!({"display": 1}), &theme);
    custom.finish(
        &AgentToolResult {
            content: vec![
                InputBlock::Text(TextContent::new("captured")),
                InputBlock::Image(ImageContent::new("AAAA", "image/png")),
            ],
            details: None,
            terminate: None,
            is_error: false,
            structured_content: None,
        },
        false,
    );
    insta::assert_snapshot!("custom_tool_w60", plain(&mut custom, 60));
}

// ---- user bash, summaries, notices ---------------------------------------------------

#[test]
fn user_bash_execution() {
    let theme = theme();
    let mut bash = BashExecution::new("ls -1", false, &theme);
    bash.append_output("a.txt\nb.t");
    bash.append_output("xt\n");
    insta::assert_snapshot!("user_bash_running_w60", plain(&mut bash, 60));
    let mut long: Vec<String> = (1..=25).map(|i| format!("file{i}")).collect();
    long.insert(0, String::new());
    bash.append_output(&long.join("\n"));
    bash.set_complete(Some(1), false, false, None);
    insta::assert_snapshot!("user_bash_failed_w60", plain(&mut bash, 60));
    bash.set_expanded(true);
    let expanded = plain(&mut bash, 60);
    assert!(expanded.contains("a.txt") && expanded.contains("to collapse"));
}

#[test]
fn summaries_and_notices() {
    let theme = theme();
    let mut compaction =
        SummaryMessage::compaction("## Goal\nShip the **thing**.", 123_456, &theme);
    insta::assert_snapshot!("compaction_collapsed_w60", plain(&mut compaction, 60));
    compaction.set_expanded(true);
    insta::assert_snapshot!("compaction_expanded_w60", plain(&mut compaction, 60));
    let mut branch = SummaryMessage::branch("Tried approach A.", &theme);
    insta::assert_snapshot!("branch_collapsed_w60", plain(&mut branch, 60));

    let mut notices = [
        Notice::info("Model: claude-sonnet-4", &theme),
        Notice::warning("Context is almost full", &theme),
        Notice::error(
            "Request failed: 529 overloaded, the provider asks to retry later with backoff",
            &theme,
        ),
    ];
    let text: Vec<String> = notices.iter_mut().map(|n| plain(n, 40)).collect();
    insta::assert_snapshot!("notices_w40", text.join("\n"));
}

// ---- messages ----------------------------------------------------------------------

fn assistant(blocks: Vec<AssistantBlock>, stop: StopReason) -> AiAssistantMessage {
    AiAssistantMessage {
        content: blocks.into(),
        stop_reason: stop,
        ..AiAssistantMessage::default()
    }
}

#[test]
fn assistant_message_thinking_shown_and_hidden() {
    let theme = theme();
    let message = assistant(
        vec![
            AssistantBlock::Thinking(ThinkingContent::new(
                "The user wants a list. I should check the `src` folder first.",
            )),
            AssistantBlock::Text(TextContent::new(
                "Here is the plan:\n\n1. Read **main.rs**\n2. Fix the `bug`\n\n```rust\nfn main() {}\n```",
            )),
        ],
        StopReason::Stop,
    );
    let mut view = AssistantMessage::from_message(&message, &theme, false);
    snapshot_widths("assistant_thinking_shown", &mut view);
    view.toggle_hide_thinking();
    snapshot_widths("assistant_thinking_hidden", &mut view);
}

#[test]
fn assistant_message_errors() {
    let theme = theme();
    let mut aborted = AssistantMessage::from_message(
        &assistant(
            vec![AssistantBlock::Text(TextContent::new("Partial answer"))],
            StopReason::Aborted,
        ),
        &theme,
        false,
    );
    insta::assert_snapshot!("assistant_aborted_w60", plain(&mut aborted, 60));
    let mut failed = AssistantMessage::from_message(
        &AiAssistantMessage {
            error_message: Some("429 rate limited".into()),
            ..assistant(vec![], StopReason::Error)
        },
        &theme,
        false,
    );
    insta::assert_snapshot!("assistant_error_w60", plain(&mut failed, 60));
    // Tool calls: errors are left to the tool views, nothing to draw.
    let mut calls = AssistantMessage::from_message(
        &assistant(
            vec![AssistantBlock::ToolCall(ToolCall::new(
                "c",
                "ls",
                serde_json::Map::new(),
            ))],
            StopReason::Aborted,
        ),
        &theme,
        false,
    );
    assert!(calls.render(60).is_empty());
}

#[test]
fn assistant_message_streams() {
    let theme = theme();
    let mut view = AssistantMessage::new(&theme, false);
    assert!(view.render(60).is_empty());
    let mut message = assistant(
        vec![AssistantBlock::Text(TextContent::new("Hel"))],
        StopReason::Stop,
    );
    view.update(&message);
    assert!(plain(&mut view, 60).contains("Hel"));
    message.content = vec![AssistantBlock::Text(TextContent::new("Hello world"))].into();
    view.update(&message);
    assert!(plain(&mut view, 60).contains("Hello world"));
}

#[test]
fn user_message() {
    let theme = theme();
    let mut view = UserMessage::new(
        "Please fix the failing test in `tests/api.rs` and explain **why** it failed.",
        &theme,
    );
    snapshot_widths("user_message", &mut view);
    for line in view.render(60).iter().skip(1) {
        assert_eq!(visible_width(line), 60);
    }
}

// ---- footer ------------------------------------------------------------------------

fn footer_data() -> FooterData {
    FooterData {
        cwd: "~/code/pi-rs".into(),
        git_branch: Some("main".into()),
        session_name: Some("refactor footer".into()),
        input: 12_345,
        output: 1_250,
        cache_read: 1_500_000,
        cache_write: 45_000,
        cost: 0.4567,
        context_percent: Some(75.25),
        context_window: 200_000,
        auto_compact: true,
        model_id: "claude-sonnet-4-5".into(),
        provider: "anthropic".into(),
        reasoning: true,
        thinking_level: "medium".into(),
        show_provider: true,
        sandbox: None,
        experimental: false,
        routed: None,
    }
}

#[test]
fn footer_states() {
    let theme = theme();
    let mut footer = Footer::with_data(footer_data(), &theme);
    snapshot_widths("footer_full", &mut footer);
    insta::assert_snapshot!("footer_narrow_w40", plain(&mut footer, 40));
    insta::assert_snapshot!("footer_tiny_w20", plain(&mut footer, 20));

    footer.set_data(FooterData {
        cwd: "/srv/project".into(),
        context_window: 128_000,
        context_percent: Some(0.0),
        auto_compact: false,
        model_id: "gpt-4o".into(),
        provider: "openai".into(),
        ..FooterData::default()
    });
    insta::assert_snapshot!("footer_fresh_w60", plain(&mut footer, 60));

    footer.set_data(FooterData {
        context_percent: None,
        thinking_level: "off".into(),
        show_provider: false,
        ..footer_data()
    });
    insta::assert_snapshot!("footer_unknown_context_w60", plain(&mut footer, 60));

    footer.set_data(FooterData {
        sandbox: Some("sandbox".into()),
        ..footer_data()
    });
    insta::assert_snapshot!("footer_sandbox_w60", plain(&mut footer, 60));

    footer.set_data(FooterData {
        sandbox: Some("sandbox, no network".into()),
        ..footer_data()
    });
    insta::assert_snapshot!("footer_sandbox_w100", plain(&mut footer, 100));

    footer.set_data(FooterData {
        context_percent: Some(93.4),
        ..footer_data()
    });
    // Raw, with ESC spelled out so the colors are readable in the snapshot.
    insta::assert_snapshot!(
        "footer_raw_w80",
        footer.render(80).join("\n").replace('\x1b', "\\x1b")
    );
}
