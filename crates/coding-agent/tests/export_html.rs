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
    // in that order.
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
    // Totals over both assistant messages.
    assert!(html.contains("1 user · 2 assistant · 1 tool results"));
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
