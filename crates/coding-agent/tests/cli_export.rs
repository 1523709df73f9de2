//! `pi --export FILE [OUT]`: a session file to a self-contained HTML page.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::process::Command;

const TRACE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/pi-ts-session.jsonl"
);

#[test]
fn exports_a_session_file_and_reports_where() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("session.jsonl");
    std::fs::copy(TRACE, &input).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--export", "session.jsonl", "page.html"])
        .current_dir(dir.path())
        .env("PI_CODING_AGENT_DIR", dir.path().join("agent"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let page = dir.path().join("page.html");
    // pi 1.5 prints the path on stdout, as given.
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "Exported to: page.html\n"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("read hello.txt"));

    let missing = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--export", "nope.jsonl"])
        .current_dir(dir.path())
        .env("PI_CODING_AGENT_DIR", dir.path().join("agent"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).starts_with("Error: "));
}

#[test]
fn exported_answers_are_rendered_markdown() {
    let dir = tempfile::tempdir().unwrap();
    let rich = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/html-export-rich-session.jsonl"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(["--export", rich, "rich.html"])
        .current_dir(dir.path())
        .env("PI_CODING_AGENT_DIR", dir.path().join("agent"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let html = std::fs::read_to_string(dir.path().join("rich.html")).unwrap();
    assert!(html.contains("<h2>Summary</h2>"));
    assert!(html.contains("<li>Fixed <strong>both</strong> typos in <code>src/main.rs</code>"));
    assert!(html.contains("<pre class=\"code\" data-lang=\"rust\"><code>fn main() {"));
    // Rendered in the conversation (the sidebar lists the raw text, as pi's tree does).
    let messages = &html[html.find("id=\"messages\"").expect("messages section")..];
    assert!(!messages.contains("## Summary"));
    // Totals: three tool results, one user message.
    assert!(html.contains("1 user · 4 assistant · 3 tool results"));
}
