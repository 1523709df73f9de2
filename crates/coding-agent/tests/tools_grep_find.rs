//! The `grep` and `find` tools against temporary directory trees: output lines, caps,
//! notices and details as the TypeScript pi tools produce them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::path::Path;
use std::sync::Arc;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError};
use pi_ai::InputBlock;
use pi_coding_agent::tools::find::find_tool;
use pi_coding_agent::tools::grep::grep_tool;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Writes `content` at `dir/relative`, creating parent directories.
fn write(dir: &Path, relative: &str, content: impl AsRef<[u8]>) {
    let path = dir.join(relative);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, content).unwrap();
}

/// Marks `dir` as a git repository the way ripgrep detects one.
fn make_repo(dir: &Path) {
    fs::create_dir_all(dir.join(".git")).unwrap();
}

async fn call(tool: &Arc<dyn AgentTool>, args: Value) -> Result<AgentToolResult, ToolError> {
    tool.execute("call-1", args, CancellationToken::new(), Arc::new(|_| {}))
        .await
}

/// The single text block of a successful call, and its details.
async fn ok(tool: &Arc<dyn AgentTool>, args: Value) -> (String, Option<Value>) {
    let result = call(tool, args).await.unwrap();
    assert_eq!(result.content.len(), 1);
    match &result.content[0] {
        InputBlock::Text(block) => (block.text.to_string(), result.details),
        other => panic!("expected text, got {other:?}"),
    }
}

#[tokio::test]
async fn grep_lists_matching_lines_with_relative_paths_and_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "alpha\nbeta\ngamma beta\n");
    write(dir.path(), "sub/b.txt", "beta\r\n");
    write(dir.path(), "c.txt", "nothing here\n");
    let grep = grep_tool(dir.path().to_path_buf());
    assert_eq!(grep.name(), "grep");
    let (text, details) = ok(&grep, json!({"pattern": "beta"})).await;
    assert_eq!(
        text,
        "a.txt:2: beta\na.txt:3: gamma beta\nsub/b.txt:1: beta"
    );
    assert_eq!(details, None);

    // A `path` naming a directory makes paths relative to it.
    let (text, _) = ok(&grep, json!({"pattern": "beta", "path": "sub"})).await;
    assert_eq!(text, "b.txt:1: beta");
}

#[tokio::test]
async fn grep_on_a_single_file_shows_its_base_name() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "deep/dir/notes.md", "one\ntwo\none again\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(
        &grep,
        json!({"pattern": "^one", "path": "deep/dir/notes.md"}),
    )
    .await;
    assert_eq!(text, "notes.md:1: one\nnotes.md:3: one again");
}

#[tokio::test]
async fn grep_ignore_case() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        "f.txt",
        "Hello World\nhello world\nHELLO\nbye\n",
    );
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(&grep, json!({"pattern": "hello"})).await;
    assert_eq!(text, "f.txt:2: hello world");
    let (text, _) = ok(&grep, json!({"pattern": "hello", "ignoreCase": true})).await;
    assert_eq!(
        text,
        "f.txt:1: Hello World\nf.txt:2: hello world\nf.txt:3: HELLO"
    );
}

#[tokio::test]
async fn grep_literal_treats_regex_metacharacters_as_text() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "call a.b(c) now\naxbc\nabc\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(&grep, json!({"pattern": "a.b(c)", "literal": true})).await;
    assert_eq!(text, "f.txt:1: call a.b(c) now");
    // As a regex the same pattern matches differently.
    let (text, _) = ok(&grep, json!({"pattern": "a.b(c)"})).await;
    assert_eq!(text, "f.txt:2: axbc");
    // An invalid regex is an error.
    assert!(call(&grep, json!({"pattern": "a.b(c"})).await.is_err());
}

#[tokio::test]
async fn grep_context_lines_use_dashes() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "l1\nl2\nl3\nl4\nl5\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(&grep, json!({"pattern": "l3", "context": 1})).await;
    assert_eq!(text, "f.txt-2- l2\nf.txt:3: l3\nf.txt-4- l4");
    // Clamped at the start and at the last line (a final newline starts no line), each
    // line once, as ripgrep prints them for pi 1.6.0.
    let (text, _) = ok(&grep, json!({"pattern": "l1|l5", "context": 1})).await;
    assert_eq!(text, "f.txt:1: l1\nf.txt-2- l2\nf.txt-4- l4\nf.txt:5: l5");
    let (text, _) = ok(&grep, json!({"pattern": "l[23]", "context": 1})).await;
    assert_eq!(text, "f.txt-1- l1\nf.txt:2: l2\nf.txt:3: l3\nf.txt-4- l4");
}

#[tokio::test]
async fn grep_glob_filters_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.rs", "needle\n");
    write(dir.path(), "b.txt", "needle\n");
    write(dir.path(), "src/deep/c.rs", "needle\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(&grep, json!({"pattern": "needle", "glob": "*.rs"})).await;
    assert_eq!(text, "a.rs:1: needle\nsrc/deep/c.rs:1: needle");
    let (text, _) = ok(&grep, json!({"pattern": "needle", "glob": "src/**/*.rs"})).await;
    assert_eq!(text, "src/deep/c.rs:1: needle");
    let (text, _) = ok(&grep, json!({"pattern": "needle", "glob": "!*.rs"})).await;
    assert_eq!(text, "b.txt:1: needle");
}

#[tokio::test]
async fn grep_honours_gitignore_in_a_repository_and_includes_hidden_files() {
    let dir = tempfile::tempdir().unwrap();
    make_repo(dir.path());
    write(dir.path(), ".gitignore", "ignored.txt\nbuild/\n");
    write(dir.path(), "ignored.txt", "token_xyz\n");
    write(dir.path(), "build/out.txt", "token_xyz\n");
    write(dir.path(), "kept.txt", "token_xyz\n");
    write(dir.path(), ".hidden.txt", "token_xyz\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(&grep, json!({"pattern": "token_xyz"})).await;
    assert_eq!(text, ".hidden.txt:1: token_xyz\nkept.txt:1: token_xyz");
}

#[tokio::test]
async fn grep_outside_a_repository_reads_dot_ignore_but_not_gitignore() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "a.txt\n");
    write(dir.path(), ".ignore", "b.txt\n");
    write(dir.path(), "a.txt", "token_xyz\n");
    write(dir.path(), "b.txt", "token_xyz\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(&grep, json!({"pattern": "token_xyz"})).await;
    assert_eq!(text, "a.txt:1: token_xyz");
}

#[tokio::test]
async fn grep_match_limit_adds_notice_and_details() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "hit 1\nhit 2\n");
    write(dir.path(), "b.txt", "hit 3\nhit 4\nhit 5\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, details) = ok(&grep, json!({"pattern": "hit", "limit": 3})).await;
    assert_eq!(
        text,
        "a.txt:1: hit 1\na.txt:2: hit 2\nb.txt:1: hit 3\n\n\
         [3 matches limit reached. Use limit=6 for more, or refine pattern]"
    );
    assert_eq!(details, Some(json!({"matchLimitReached": 3})));
}

#[tokio::test]
async fn grep_cuts_long_lines_at_500_chars() {
    let dir = tempfile::tempdir().unwrap();
    let long = format!("needle{}", "x".repeat(600));
    write(dir.path(), "f.txt", format!("{long}\nneedle short\n"));
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, details) = ok(&grep, json!({"pattern": "needle"})).await;
    let expected_line = format!("f.txt:1: {}... [truncated]", &long[..500]);
    assert_eq!(
        text,
        format!(
            "{expected_line}\nf.txt:2: needle short\n\n\
             [Some lines truncated to 500 chars. Use read tool to see full lines]"
        )
    );
    assert_eq!(details, Some(json!({"linesTruncated": true})));
}

#[tokio::test]
async fn grep_byte_limit_truncates_output_with_notice() {
    let dir = tempfile::tempdir().unwrap();
    let line = format!("match {}", "y".repeat(400));
    let content: String = (0..200).map(|_| format!("{line}\n")).collect();
    write(dir.path(), "big.txt", content);
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, details) = ok(&grep, json!({"pattern": "match", "limit": 1000})).await;
    assert!(
        text.ends_with("\n\n[50.0KB limit reached]"),
        "{}",
        &text[text.len() - 80..]
    );
    let body = text.strip_suffix("\n\n[50.0KB limit reached]").unwrap();
    assert!(body.len() <= 50 * 1024);
    let truncation = &details.unwrap()["truncation"];
    assert_eq!(truncation["truncated"], json!(true));
    assert_eq!(truncation["truncatedBy"], json!("bytes"));
    assert_eq!(truncation["totalLines"], json!(200));
    assert_eq!(truncation["maxBytes"], json!(51200));
    assert_eq!(truncation["outputLines"], json!(body.lines().count()));
}

#[tokio::test]
async fn grep_skips_binary_files() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "blob.bin", b"needle\x00\x01\x02needle\n");
    write(dir.path(), "text.txt", "needle\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, _) = ok(&grep, json!({"pattern": "needle"})).await;
    assert_eq!(text, "text.txt:1: needle");
}

#[tokio::test]
async fn grep_reports_no_matches_and_missing_paths() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "content\n");
    let grep = grep_tool(dir.path().to_path_buf());
    let (text, details) = ok(&grep, json!({"pattern": "absent"})).await;
    assert_eq!((text.as_str(), details), ("No matches found", None));

    let err = call(&grep, json!({"pattern": "x", "path": "nope/../missing"}))
        .await
        .unwrap_err();
    assert_eq!(
        err.0,
        format!("Path not found: {}", dir.path().join("missing").display())
    );
}

#[tokio::test]
async fn cancelled_calls_are_aborted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "f.txt", "content\n");
    let cancel = CancellationToken::new();
    cancel.cancel();
    for tool in [
        grep_tool(dir.path().to_path_buf()),
        find_tool(dir.path().to_path_buf()),
    ] {
        let err = tool
            .execute(
                "c",
                json!({"pattern": "*"}),
                cancel.clone(),
                Arc::new(|_| {}),
            )
            .await
            .unwrap_err();
        assert_eq!(err.0, "Operation aborted");
    }
}

#[tokio::test]
async fn find_matches_names_and_full_paths_sorted() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "main.rs", "");
    write(dir.path(), "src/lib.rs", "");
    write(dir.path(), "src/nested/deep.rs", "");
    write(dir.path(), "src/nested/notes.txt", "");
    write(dir.path(), "docs/readme.txt", "");
    write(dir.path(), "top.txt", "");
    let find = find_tool(dir.path().to_path_buf());
    assert_eq!(find.name(), "find");
    let (text, details) = ok(&find, json!({"pattern": "*.rs"})).await;
    assert_eq!(text, "main.rs\nsrc/lib.rs\nsrc/nested/deep.rs");
    assert_eq!(details, None);
    let (text, _) = ok(&find, json!({"pattern": "**/*.txt"})).await;
    assert_eq!(text, "docs/readme.txt\nsrc/nested/notes.txt\ntop.txt");
    let (text, _) = ok(&find, json!({"pattern": "src/*.rs"})).await;
    assert_eq!(text, "src/lib.rs");
    let (text, _) = ok(&find, json!({"pattern": "*.rs", "path": "src"})).await;
    assert_eq!(text, "lib.rs\nnested/deep.rs");
}

#[tokio::test]
async fn find_lists_directories_with_a_slash_and_uses_smart_case() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "nested/inner/file.txt", "");
    write(dir.path(), "UPPER.RS", "");
    write(dir.path(), ".hidden.rs", "");
    let find = find_tool(dir.path().to_path_buf());
    let (text, _) = ok(&find, json!({"pattern": "*e*"})).await;
    assert_eq!(
        text,
        ".hidden.rs\nUPPER.RS\nnested/\nnested/inner/\nnested/inner/file.txt"
    );
    let (text, _) = ok(&find, json!({"pattern": "*.rs"})).await;
    assert_eq!(text, ".hidden.rs\nUPPER.RS");
    let (text, _) = ok(&find, json!({"pattern": "*.RS"})).await;
    assert_eq!(text, "UPPER.RS");
}

#[tokio::test]
async fn find_limit_adds_notice_and_details() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["a.txt", "b.txt", "c.txt", "d.txt"] {
        write(dir.path(), name, "");
    }
    let find = find_tool(dir.path().to_path_buf());
    let (text, details) = ok(&find, json!({"pattern": "*.txt", "limit": 2})).await;
    assert_eq!(
        text,
        "a.txt\nb.txt\n\n[2 results limit reached. Use limit=4 for more, or refine pattern]"
    );
    assert_eq!(details, Some(json!({"resultLimitReached": 2})));
}

#[tokio::test]
async fn find_honours_gitignore_even_outside_a_repository() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), ".gitignore", "ignored.txt\ntarget/\n");
    write(dir.path(), "ignored.txt", "");
    write(dir.path(), "target/out.txt", "");
    write(dir.path(), "kept.txt", "");
    let find = find_tool(dir.path().to_path_buf());
    let (text, _) = ok(&find, json!({"pattern": "*.txt"})).await;
    assert_eq!(text, "kept.txt");
    make_repo(dir.path());
    let (text, _) = ok(&find, json!({"pattern": "**/*.txt"})).await;
    assert_eq!(text, "kept.txt");
}

#[tokio::test]
async fn find_inside_a_nested_repository_the_parent_ignores_finds_its_files() {
    // pi 0.79.10: the nested repository is a boundary; the parent's `.gitignore` rule that
    // ignores it does not apply to a search inside it.
    let dir = tempfile::tempdir().unwrap();
    make_repo(dir.path());
    write(dir.path(), ".gitignore", "nested/\n");
    make_repo(&dir.path().join("nested"));
    write(dir.path(), "nested/src/lib.rs", "");
    write(dir.path(), "nested/notes.txt", "");
    let find = find_tool(dir.path().to_path_buf());
    let (text, _) = ok(&find, json!({"pattern": "*.rs", "path": "nested"})).await;
    assert_eq!(text, "src/lib.rs");
    // From the parent, the ignored repository stays out of the results.
    let (text, _) = ok(&find, json!({"pattern": "*.rs"})).await;
    assert_eq!(text, "No files found matching pattern");
}

#[tokio::test]
async fn find_from_the_filesystem_root_keeps_each_path_whole() {
    // pi 0.84.0: results under `/` lost their first segment or gained a doubled separator.
    let find = find_tool(std::env::temp_dir());
    let (text, _) = ok(&find, json!({"pattern": "passwd", "path": "/", "limit": 1})).await;
    let first = text.lines().next().unwrap();
    assert!(!first.starts_with('/') && !first.contains("//"), "{text}");
    assert!(Path::new("/").join(first).exists(), "{text}");
}

#[tokio::test]
async fn find_reports_no_files_and_missing_paths() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "a.txt", "");
    let find = find_tool(dir.path().to_path_buf());
    let (text, details) = ok(&find, json!({"pattern": "*.zig"})).await;
    assert_eq!(
        (text.as_str(), details),
        ("No files found matching pattern", None)
    );

    let err = call(&find, json!({"pattern": "*", "path": "missing"}))
        .await
        .unwrap_err();
    let missing = dir.path().join("missing");
    assert_eq!(
        err.0,
        format!(
            "[fd error]: Search path '{}' is not a directory.\n\
             [fd error]: No valid search paths given.",
            missing.display()
        )
    );
}
