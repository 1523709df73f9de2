//! HTML export of a session file the TypeScript pi wrote: the page holds the conversation
//! and loads nothing from the network.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use pi_coding_agent::export::{ExportError, export_file_html};

/// A copy of `../shared/reference/traces/pi-ts-session.jsonl`.
const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/pi-ts-session.jsonl"
);

#[test]
fn exports_the_reference_session() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("pi-ts-session.jsonl");
    std::fs::copy(TRACE, &input).expect("reference trace present");
    let original = std::fs::read_to_string(&input).unwrap();

    // The session's cwd (`<ROOT>/work`) does not exist; the export does not need it.
    let written = export_file_html(Path::new("pi-ts-session.jsonl"), None, dir.path()).unwrap();
    assert_eq!(written, dir.path().join("pi-session-pi-ts-session.html"));
    let html = std::fs::read_to_string(&written).unwrap();

    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("01a2006b-03f3-7539-a1a8-cf8a5b8d4324"));
    assert!(html.contains("&lt;ROOT&gt;/work"));
    assert!(html.contains("mock/mock-model"));
    // The user prompt, the tool call with its arguments, its result and the final answer,
    // in that order in the conversation (after the sidebar listing them).
    let html_all = html.clone();
    let html = &html[html.find("id=\"messages\"").expect("messages section")..];
    let prompt = html.find("read hello.txt").expect("user prompt");
    let call = html
        .find("<span class=\"tool-name\">read</span>")
        .expect("tool call name");
    let args = html
        .find("&quot;path&quot;: &quot;hello.txt&quot;")
        .expect("tool call arguments");
    let result = html
        .find("Hello from the anchor test file!\nSecond line.")
        .expect("tool result text");
    let answer = html
        .find("done: Hello from the ancho")
        .expect("final answer");
    assert!(prompt < call && call < args && args < result && result < answer);
    let html = html_all;
    // Totals over both assistant messages.
    assert!(html.contains("1 user · 2 assistant · 1 tool result<"));
    assert!(!html.contains("1 tool results"));
    assert!(html.contains("total 2,860"));

    // Self-contained: no remote resources of any kind.
    for pattern in [
        "src=\"http",
        "src='http",
        "href=\"http",
        "href='http",
        "url(http",
        "@import",
        "http://",
        "https://",
    ] {
        assert!(!html.contains(pattern), "found {pattern}");
    }
    // The source file is left as it was.
    assert_eq!(std::fs::read_to_string(&input).unwrap(), original);

    // An explicit output path, in directories that do not exist yet.
    let out = dir.path().join("exports/nested/session.html");
    let written = export_file_html(&input, Some(&out), Path::new("/")).unwrap();
    assert_eq!(written, out);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), html);
}

#[test]
fn export_of_missing_or_invalid_files_fails_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("missing.jsonl");
    let err = export_file_html(&missing, None, dir.path()).unwrap_err();
    assert!(matches!(err, ExportError::NotFound(_)));
    assert_eq!(
        err.to_string(),
        format!("File not found: {}", missing.display())
    );

    let bad = dir.path().join("bad.jsonl");
    std::fs::write(&bad, "{\"type\":\"message\",\"id\":\"x\"}\n").unwrap();
    let err = export_file_html(&bad, None, dir.path()).unwrap_err();
    assert!(matches!(err, ExportError::Invalid { .. }), "{err}");
    assert!(std::fs::read_dir(dir.path()).unwrap().count() == 1);
}

/// A session file with one user message and one assistant reply, both markdown.
fn markdown_session(user: &str, assistant: &str) -> String {
    let lines = [
        serde_json::json!({"type": "session", "version": 3, "id": "md-session",
            "timestamp": "2026-11-22T09:00:00.000Z", "cwd": "/nowhere"}),
        serde_json::json!({"type": "message", "id": "m1", "parentId": null,
            "timestamp": "2026-11-22T09:00:01.000Z",
            "message": {"role": "user", "content": user, "timestamp": 1}}),
        serde_json::json!({"type": "message", "id": "m2", "parentId": "m1",
            "timestamp": "2026-11-22T09:00:02.000Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": assistant}],
                "api": "openai-completions", "provider": "mock", "model": "mock-model",
                "usage": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 2,
                    "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                "stopReason": "stop", "timestamp": 2}}),
    ];
    lines.iter().map(|l| format!("{l}\n")).collect()
}

fn export(jsonl: &str) -> String {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("s.jsonl");
    std::fs::write(&input, jsonl).unwrap();
    let written = export_file_html(&input, None, dir.path()).unwrap();
    std::fs::read_to_string(written).unwrap()
}

#[test]
fn messages_render_as_markdown() {
    let html = export(&markdown_session(
        "## Plan\n\n1. read\n2. *fix*",
        "# Done\n\n- **bold** item\n- [x] checked\n\n> note\n\n| file | status |\n|------|--------|\n| a.rs | ok |\n\n\
         See [the docs](https://docs.example/x) or [local](notes.md).\n\n```rust\nlet a = 1 < 2;\n```",
    ));
    for part in [
        "<h2>Plan</h2>",
        "<ol>\n<li>read</li>\n<li><em>fix</em></li>\n</ol>",
        "<h1>Done</h1>",
        "<li><strong>bold</strong> item</li>",
        "type=\"checkbox\" checked=\"\"",
        "<blockquote>\n<p>note</p>\n</blockquote>",
        "<table><thead><tr><th>file</th><th>status</th></tr></thead><tbody>\n<tr><td>a.rs</td><td>ok</td></tr>",
        "<a href=\"https://docs.example/x\">the docs</a>",
        "<a href=\"notes.md\">local</a>",
        "<pre class=\"code\" data-lang=\"rust\"><code>let a = 1 &lt; 2;</code></pre>",
    ] {
        assert!(html.contains(part), "missing {part}");
    }
}

#[test]
fn markdown_never_passes_html_or_script_links_through() {
    let html = export(&markdown_session(
        "<script>alert('user')</script>",
        "Hi <script>alert(1)</script> <img src=x onerror=alert(2)>\n\n<iframe src=\"https://evil.example\"></iframe>\n\n\
         [click](javascript:alert(3)) [also](JAVASCRIPT:alert(4)) <javascript:alert(5)> ![img](javascript:alert(6))",
    ));
    // Only the page's own two scripts, no injected element or handler.
    assert_eq!(html.matches("<script").count(), 2);
    // The sidebar's own links aside, no link at all.
    let messages = &html[html.find("id=\"messages\"").expect("messages section")..];
    for bad in ["<img src=x", "<iframe", "<a ", "href="] {
        assert!(!messages.contains(bad), "found {bad}");
    }
    assert!(!html.contains("<img src=x") && !html.contains("<iframe"));
    assert!(!html.contains("href=\"javascript") && !html.contains("href=\"JAVASCRIPT"));
    assert!(
        html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &lt;img src=x onerror=alert(2)&gt;")
    );
    assert!(html.contains("&lt;iframe src=&quot;https://evil.example&quot;&gt;&lt;/iframe&gt;"));
    // Dropped links keep their text; an autolink shows its URL as plain text.
    assert!(
        html.contains("<p>click also javascript:alert(5) <span class=\"md-image\">img</span></p>")
    );
}
