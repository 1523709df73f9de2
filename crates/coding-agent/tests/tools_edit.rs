//! The `edit` tool: what it writes to disk, and what it tells the model.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::sync::Arc;

use pi_agent_core::{AgentToolResult, ToolError};
use pi_coding_agent::tools::edit::edit_tool;
use pi_coding_agent::tools::edit_diff::generate_diff_string;
use pi_coding_agent::tools::edit_match::{FuzzyText, LfText, normalize_for_fuzzy_match};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use unicode_normalization::UnicodeNormalization;

async fn run(dir: &Path, args: Value) -> Result<AgentToolResult, ToolError> {
    run_with(dir, args, CancellationToken::new()).await
}

async fn run_with(
    dir: &Path,
    args: Value,
    cancel: CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let tool = edit_tool(dir.to_path_buf());
    tool.execute("call-1", args, cancel, Arc::new(|_| {})).await
}

fn text(result: &AgentToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

fn one(path: &str, old: &str, new: &str) -> Value {
    json!({ "path": path, "edits": [{ "oldText": old, "newText": new }] })
}

fn write(dir: &Path, name: &str, bytes: impl AsRef<[u8]>) {
    std::fs::write(dir.join(name), bytes).unwrap();
}

fn read(dir: &Path, name: &str) -> Vec<u8> {
    std::fs::read(dir.join(name)).unwrap()
}

#[tokio::test]
async fn single_exact_edit() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "alpha\nbeta\ngamma\n");
    let result = run(dir.path(), one("a.txt", "beta", "BETA")).await.unwrap();
    assert_eq!(text(&result), "Successfully replaced 1 block(s) in a.txt.");
    assert_eq!(read(dir.path(), "a.txt"), b"alpha\nBETA\ngamma\n");
    let details = result.details.unwrap();
    assert_eq!(details["diff"], " 1 alpha\n-2 beta\n+2 BETA\n 3 gamma");
    assert_eq!(details["firstChangedLine"], 2);
}

#[tokio::test]
async fn multiple_disjoint_edits_match_the_original() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "m.rs", "fn a() {}\nfn b() {}\nfn c() {}\n");
    // The second oldText only exists in the original, before the first edit applies.
    let args = json!({ "path": "m.rs", "edits": [
        { "oldText": "fn a() {}", "newText": "fn b2() {}" },
        { "oldText": "fn c() {}", "newText": "fn c(x: u8) {}" },
    ]});
    let result = run(dir.path(), args).await.unwrap();
    assert_eq!(text(&result), "Successfully replaced 2 block(s) in m.rs.");
    assert_eq!(
        read(dir.path(), "m.rs"),
        b"fn b2() {}\nfn b() {}\nfn c(x: u8) {}\n"
    );
}

#[tokio::test]
async fn no_match_errors() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "hello\n");
    let err = run(dir.path(), one("a.txt", "absent", "x"))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        "Could not find the exact text in a.txt. The old text must match exactly including all whitespace and newlines."
    );
    let args = json!({ "path": "a.txt", "edits": [
        { "oldText": "hello", "newText": "bye" },
        { "oldText": "absent", "newText": "x" },
    ]});
    let err = run(dir.path(), args).await.unwrap_err();
    assert_eq!(
        err.0,
        "Could not find edits[1] in a.txt. The oldText must match exactly including all whitespace and newlines."
    );
    assert_eq!(read(dir.path(), "a.txt"), b"hello\n");
}

#[tokio::test]
async fn several_matches_error_with_count() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "d.txt", "x = 1\nx = 1\nx = 1\n");
    let err = run(dir.path(), one("d.txt", "x = 1", "x = 2"))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        "Found 3 occurrences of the text in d.txt. The text must be unique. Please provide more context to make it unique."
    );
    let args = json!({ "path": "d.txt", "edits": [
        { "oldText": "x = 1\nx = 1\nx = 1", "newText": "y" },
        { "oldText": "x = 1", "newText": "z" },
    ]});
    let err = run(dir.path(), args).await.unwrap_err();
    assert_eq!(
        err.0,
        "Found 3 occurrences of edits[1] in d.txt. Each oldText must be unique. Please provide more context to make it unique."
    );
    assert_eq!(read(dir.path(), "d.txt"), b"x = 1\nx = 1\nx = 1\n");
}

#[tokio::test]
async fn overlapping_edits_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "o.txt", "one two three four\n");
    let args = json!({ "path": "o.txt", "edits": [
        { "oldText": "two three", "newText": "2 3" },
        { "oldText": "one two", "newText": "1 2" },
    ]});
    let err = run(dir.path(), args).await.unwrap_err();
    assert_eq!(
        err.0,
        "edits[1] and edits[0] overlap in o.txt. Merge them into one edit or target disjoint regions."
    );
    assert_eq!(read(dir.path(), "o.txt"), b"one two three four\n");
}

#[tokio::test]
async fn empty_and_unchanged_edits_error() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "e.txt", "same\n");
    let err = run(dir.path(), json!({ "path": "e.txt", "edits": [] }))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        "Edit tool input is invalid. edits must contain at least one replacement."
    );
    let err = run(dir.path(), one("e.txt", "", "x")).await.unwrap_err();
    assert_eq!(err.0, "oldText must not be empty in e.txt.");
    let err = run(dir.path(), one("e.txt", "same", "same"))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        "No changes made to e.txt. The replacement produced identical content. This might indicate an issue with special characters or the text not existing as expected."
    );
}

#[tokio::test]
async fn smart_quote_and_dash_match_leaves_the_rest_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let original = "intro \u{201C}keep\u{201D} \u{2014} here\n\
                    let s = \u{201C}hello\u{201D} \u{2013} world;\n\
                    tail \u{2018}also kept\u{2019}\u{00A0}\n";
    write(dir.path(), "q.txt", original);
    let result = run(
        dir.path(),
        one("q.txt", "let s = \"hello\" - world;", "let s = \"bye\";"),
    )
    .await
    .unwrap();
    assert_eq!(text(&result), "Successfully replaced 1 block(s) in q.txt.");
    let expected = "intro \u{201C}keep\u{201D} \u{2014} here\n\
                    let s = \"bye\";\n\
                    tail \u{2018}also kept\u{2019}\u{00A0}\n";
    assert_eq!(
        String::from_utf8(read(dir.path(), "q.txt")).unwrap(),
        expected
    );
}

#[tokio::test]
async fn trailing_whitespace_tolerant_match() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "w.py",
        "def f():   \n    return 1\t\nkeep = 2   \n",
    );
    run(
        dir.path(),
        one("w.py", "def f():\n    return 1", "def f():\n    return 2"),
    )
    .await
    .unwrap();
    // The matched span (through `return 1`) is replaced; the trailing tab after it and the
    // trailing spaces of other lines stay.
    assert_eq!(
        read(dir.path(), "w.py"),
        b"def f():\n    return 2\t\nkeep = 2   \n"
    );
}

#[tokio::test]
async fn nfc_nfd_tolerant_match() {
    let dir = tempfile::tempdir().unwrap();
    // File in NFD (e + combining acute), oldText in NFC; another NFD word elsewhere.
    let original = "caf\u{65}\u{301} ouvert\nre\u{301}sume\u{301} kept\n";
    write(dir.path(), "n.txt", original);
    run(
        dir.path(),
        one("n.txt", "caf\u{e9} ouvert", "caf\u{e9} ferm\u{e9}"),
    )
    .await
    .unwrap();
    assert_eq!(
        String::from_utf8(read(dir.path(), "n.txt")).unwrap(),
        "caf\u{e9} ferm\u{e9}\nre\u{301}sume\u{301} kept\n"
    );
}

#[tokio::test]
async fn crlf_file_keeps_crlf_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "c.txt", "one\r\ntwo\r\nthree\r\nfour\r\n");
    let result = run(
        dir.path(),
        one("c.txt", "two\nthree", "TWO\ninserted\nTHREE"),
    )
    .await
    .unwrap();
    assert_eq!(
        read(dir.path(), "c.txt"),
        b"one\r\nTWO\r\ninserted\r\nTHREE\r\nfour\r\n"
    );
    let diff = result.details.unwrap()["diff"].as_str().unwrap().to_owned();
    assert!(!diff.contains('\r'));
}

#[tokio::test]
async fn bom_is_kept() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "b.txt", "\u{FEFF}first\r\nsecond\r\n");
    run(dir.path(), one("b.txt", "first", "1st")).await.unwrap();
    assert_eq!(
        read(dir.path(), "b.txt"),
        "\u{FEFF}1st\r\nsecond\r\n".as_bytes()
    );
}

#[tokio::test]
async fn missing_file_error() {
    let dir = tempfile::tempdir().unwrap();
    let err = run(dir.path(), one("nope.txt", "a", "b"))
        .await
        .unwrap_err();
    assert_eq!(err.0, "Could not edit file: nope.txt. Error code: ENOENT.");
    assert!(!dir.path().join("nope.txt").exists());
}

#[tokio::test]
async fn diff_details_have_numbered_lines_and_gaps() {
    let dir = tempfile::tempdir().unwrap();
    let original: String = (1..=20).map(|i| format!("line {i}\n")).collect();
    write(dir.path(), "l.txt", &original);
    let result = run(dir.path(), one("l.txt", "line 10\n", "line ten\n"))
        .await
        .unwrap();
    let details = result.details.unwrap();
    let expected = [
        "    ...",
        "  6 line 6",
        "  7 line 7",
        "  8 line 8",
        "  9 line 9",
        "-10 line 10",
        "+10 line ten",
        " 11 line 11",
        " 12 line 12",
        " 13 line 13",
        " 14 line 14",
        "    ...",
    ]
    .join("\n");
    assert_eq!(details["diff"], expected);
    assert_eq!(details["firstChangedLine"], 10);
    assert!(expected.contains("-10 line 10") && expected.contains("+10 line ten"));
}

#[tokio::test]
async fn legacy_top_level_arguments_are_reshaped() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "g.txt", "old value\n");
    let tool = edit_tool(dir.path().to_path_buf());
    let raw = json!({ "path": "g.txt", "oldText": "old", "newText": "new" });
    let prepared = tool.prepare_arguments(raw.as_object().unwrap()).unwrap();
    assert_eq!(
        Value::Object(prepared.clone()),
        json!({ "path": "g.txt", "edits": [{ "oldText": "old", "newText": "new" }] })
    );
    run(dir.path(), Value::Object(prepared)).await.unwrap();
    assert_eq!(read(dir.path(), "g.txt"), b"new value\n");

    // `edits` sent as a JSON string is parsed; well-formed arguments are left alone.
    let stringly = json!({ "path": "g.txt", "edits": "[{\"oldText\":\"a\",\"newText\":\"b\"}]" });
    let prepared = tool
        .prepare_arguments(stringly.as_object().unwrap())
        .unwrap();
    assert_eq!(
        prepared["edits"],
        json!([{ "oldText": "a", "newText": "b" }])
    );
    let fine = one("g.txt", "a", "b");
    assert!(tool.prepare_arguments(fine.as_object().unwrap()).is_none());
}

#[tokio::test]
async fn unicode_content_is_edited_in_place() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "u.md", "# 日本語 🎉\nprix: 10€ — «ok»\nfin ✓\n");
    run(dir.path(), one("u.md", "10€", "12€")).await.unwrap();
    assert_eq!(
        String::from_utf8(read(dir.path(), "u.md")).unwrap(),
        "# 日本語 🎉\nprix: 12€ — «ok»\nfin ✓\n"
    );
}

#[tokio::test]
async fn cancelled_before_writing_leaves_the_file() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "k.txt", "keep\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = run_with(dir.path(), one("k.txt", "keep", "gone"), cancel)
        .await
        .unwrap_err();
    assert_eq!(err.0, "Operation aborted");
    assert_eq!(read(dir.path(), "k.txt"), b"keep\n");
}

#[tokio::test]
async fn mixed_exact_and_tolerant_edits_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "x.txt", "a \u{2018}b\u{2019}\r\nc\r\nd  \r\n");
    let args = json!({ "path": "x.txt", "edits": [
        { "oldText": "c", "newText": "C" },
        { "oldText": "a 'b'", "newText": "A" },
    ]});
    run(dir.path(), args).await.unwrap();
    assert_eq!(read(dir.path(), "x.txt"), b"A\r\nC\r\nd  \r\n");
}

#[test]
fn fuzzy_normalization_and_diff_helpers() {
    assert_eq!(
        normalize_for_fuzzy_match("\u{FB01}x \u{201C}q\u{201D}\u{2212}1\u{3000}\t\nnext  "),
        "fix \"q\"-1\nnext"
    );
    let diff = generate_diff_string("a\nb\n", "a\nb\nc\n", 4);
    assert_eq!(diff.diff, " 1 a\n 2 b\n+3 c");
    assert_eq!(diff.first_changed_line, Some(3));
}

#[test]
fn nfkc_with_offsets_agrees_with_the_crate() {
    let samples = [
        "plain ascii",
        "cafe\u{301} na\u{303}o \u{212B}ngstro\u{308}m",
        "\u{FB01}le \u{2460} \u{FF21}\u{FF22} x\u{B2}",
        "a\u{323}\u{302} a\u{302}\u{323} q\u{307}\u{323}",
        "\u{1100}\u{1161}\u{11A8} \u{D55C}\u{AE00}",
        "\u{301}leading mark",
        "\u{0B47}\u{0B3E} \u{1E9B}\u{323}",
    ];
    for s in samples {
        let theirs: String = s.nfkc().collect();
        assert_eq!(normalize_for_fuzzy_match(s), theirs, "{s:?}");
    }
}

#[test]
fn tolerant_matches_map_back_to_source_bytes() {
    let source = "say \u{201C}hi\u{201D}   \nnext";
    let fuzzy = FuzzyText::new(source);
    assert_eq!(fuzzy.text, "say \"hi\"\nnext");
    let start = fuzzy.text.find("\"hi\"\nne").unwrap();
    let (core, _) = fuzzy.source_range(start..start + 7, false, false);
    assert_eq!(&source[core], "\u{201C}hi\u{201D}   \nne");
    let start = fuzzy.text.find("\"hi\"").unwrap();
    let (core, span) = fuzzy.source_range(start..start + 4, false, true);
    assert_eq!(&source[core], "\u{201C}hi\u{201D}");
    assert_eq!(&source[span], "\u{201C}hi\u{201D}   ");
}

#[test]
fn lf_offsets_map_to_raw_offsets() {
    let lf = LfText::new("a\r\nb\rc\r\nd");
    assert_eq!(lf.text, "a\nb\nc\nd");
    assert_eq!(lf.to_raw(1), 1);
    assert_eq!(lf.to_raw(2), 3);
    assert_eq!(lf.to_raw(5), 6);
    assert_eq!(lf.to_raw(6), 8);
}

#[tokio::test]
async fn whitespace_before_a_line_break_goes_with_a_tolerant_match() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "t.txt",
        "keep  \nx = \u{201C}a\u{201D}\t\nend  \n",
    );
    // oldText starts with blank space before its line break and ends in blank space.
    run(dir.path(), one("t.txt", "  \nx = \"a\" ", "\nx = 'b'"))
        .await
        .unwrap();
    assert_eq!(read(dir.path(), "t.txt"), b"keep\nx = 'b'\nend  \n");
}
