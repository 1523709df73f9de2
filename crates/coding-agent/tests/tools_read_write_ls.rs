//! The `read`, `write` and `ls` tools against real files in temporary directories.

use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use pi_agent_core::{AgentTool, AgentToolResult, ToolError};
use pi_ai::InputBlock;
use pi_coding_agent::tools::ls::ls_tool;
use pi_coding_agent::tools::read::read_tool;
use pi_coding_agent::tools::write::write_tool;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

async fn run(tool: &Arc<dyn AgentTool>, args: Value) -> Result<AgentToolResult, ToolError> {
    tool.execute("call-1", args, CancellationToken::new(), Arc::new(|_| {}))
        .await
}

/// The single text block of a successful call.
async fn text_of(tool: &Arc<dyn AgentTool>, args: Value) -> String {
    match run(tool, args).await {
        Ok(result) => match result.content.as_slice() {
            [InputBlock::Text(block)] => block.text.to_string(),
            other => panic!("expected one text block, got {other:?}"),
        },
        Err(e) => panic!("unexpected error: {e}"),
    }
}

/// The error text of a failed call.
async fn error_of(tool: &Arc<dyn AgentTool>, args: Value) -> String {
    match run(tool, args).await {
        Ok(result) => panic!("expected an error, got {result:?}"),
        Err(e) => e.0,
    }
}

#[tokio::test]
async fn small_file_is_returned_raw_without_details() {
    let dir = tempfile::tempdir().unwrap();
    let text = "Hello from the anchor test file!\nSecond line.\n";
    std::fs::write(dir.path().join("hello.txt"), text).unwrap();
    let read = read_tool(dir.path().to_path_buf());
    let result = run(&read, json!({"path": "hello.txt"})).await.unwrap();
    assert_eq!(result.content, vec![InputBlock::text(text)]);
    assert_eq!(result.details, None);
    let wire = serde_json::to_value(&result).unwrap();
    // No details; the structured value a codemode script gets is the text (pi 1.6.0).
    assert_eq!(
        wire,
        json!({"content": [{"type": "text", "text": text}], "structuredContent": text}),
        "details must be absent"
    );
}

#[tokio::test]
async fn offset_and_limit_select_lines_and_say_how_to_continue() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (1..=10).map(|i| format!("l{i}")).collect();
    std::fs::write(dir.path().join("ten.txt"), lines.join("\n")).unwrap();
    let read = read_tool(dir.path().to_path_buf());
    let args = json!({"path": "ten.txt", "offset": 3, "limit": 2});
    let result = run(&read, args).await.unwrap();
    assert_eq!(
        result.content[0].as_text().unwrap(),
        "l3\nl4\n\n[6 more lines in file. Use offset=5 to continue.]"
    );
    assert_eq!(result.details, None);
    let tail = text_of(&read, json!({"path": "ten.txt", "offset": 9})).await;
    assert_eq!(tail, "l9\nl10");
    let first = text_of(&read, json!({"path": "ten.txt", "limit": 1})).await;
    assert_eq!(
        first,
        "l1\n\n[9 more lines in file. Use offset=2 to continue.]"
    );
}

#[tokio::test]
async fn long_file_is_cut_at_2000_lines_with_a_continuation_notice() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (1..=3000).map(|i| format!("line {i}")).collect();
    std::fs::write(dir.path().join("long.txt"), lines.join("\n") + "\n").unwrap();
    let read = read_tool(dir.path().to_path_buf());
    let result = run(&read, json!({"path": "long.txt"})).await.unwrap();
    let expected = format!(
        "{}\n\n[Showing lines 1-2000 of 3001. Use offset=2001 to continue.]",
        lines[..2000].join("\n")
    );
    assert_eq!(result.content[0].as_text().unwrap(), expected);
    let shown = lines[..2000].join("\n");
    let details = json!({"truncation": {
        "content": shown, "truncated": true, "truncatedBy": "lines",
        // pi 1.6.0 counts lines without the empty one after the final newline.
        "totalLines": 3000, "totalBytes": lines.join("\n").len() + 1,
        "outputLines": 2000, "outputBytes": shown.len(), "lastLinePartial": false,
        "firstLineExceedsLimit": false, "maxLines": 2000, "maxBytes": 51200,
    }});
    assert_eq!(result.details, Some(details));

    let rest = run(&read, json!({"path": "long.txt", "offset": 2001}))
        .await
        .unwrap();
    let expected_rest = lines[2000..].join("\n") + "\n";
    assert_eq!(rest.content[0].as_text().unwrap(), expected_rest);
    assert_eq!(rest.details, None);
}

#[tokio::test]
async fn wide_lines_are_cut_at_50_kb_without_splitting_a_line() {
    let dir = tempfile::tempdir().unwrap();
    let lines: Vec<String> = (1..=1000).map(|i| format!("{i:0100}")).collect();
    std::fs::write(dir.path().join("wide.txt"), lines.join("\n")).unwrap();
    let read = read_tool(dir.path().to_path_buf());
    let result = run(&read, json!({"path": "wide.txt"})).await.unwrap();
    // 506 lines of 100 bytes plus 505 newlines is 51,105 bytes; one more would pass 51,200.
    let expected = format!(
        "{}\n\n[Showing lines 1-506 of 1000 (50.0KB limit). Use offset=507 to continue.]",
        lines[..506].join("\n")
    );
    assert_eq!(result.content[0].as_text().unwrap(), expected);
    let truncation = &result.details.as_ref().unwrap()["truncation"];
    assert_eq!(truncation["truncatedBy"], json!("bytes"));
    assert_eq!(truncation["outputLines"], json!(506));
    assert_eq!(truncation["totalBytes"], json!(100 * 1000 + 999));
}

#[tokio::test]
async fn a_single_line_over_50_kb_points_to_bash() {
    let dir = tempfile::tempdir().unwrap();
    let content = format!("short\n{}\nend", "y".repeat(60_000));
    std::fs::write(dir.path().join("big.txt"), content).unwrap();
    let read = read_tool(dir.path().to_path_buf());
    let result = run(&read, json!({"path": "big.txt", "offset": 2}))
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text().unwrap(),
        "[Line 2 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '2p' big.txt | head -c 51200]"
    );
    let truncation = &result.details.as_ref().unwrap()["truncation"];
    assert_eq!(truncation["firstLineExceedsLimit"], json!(true));
    assert_eq!(truncation["outputLines"], json!(0));
    assert_eq!(truncation["content"], json!(""));
}

#[tokio::test]
async fn read_errors_use_the_typescript_texts() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("three.txt"), "a\nb\nc").unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    std::fs::write(dir.path().join("blob.bin"), [1u8, 0, 2, 3, 0, 255]).unwrap();
    let read = read_tool(dir.path().to_path_buf());
    assert_eq!(
        error_of(&read, json!({"path": "three.txt", "offset": 10})).await,
        "Offset 10 is beyond end of file (3 lines total)"
    );
    let missing = dir.path().join("missing.txt");
    assert_eq!(
        error_of(&read, json!({"path": "missing.txt"})).await,
        format!(
            "ENOENT: no such file or directory, access '{}'",
            missing.display()
        )
    );
    assert_eq!(
        error_of(&read, json!({"path": "folder"})).await,
        "EISDIR: illegal operation on a directory, read"
    );
    // pi 1.6.0 reads any other file as UTF-8 text (invalid bytes become U+FFFD).
    assert_eq!(
        text_of(&read, json!({"path": "blob.bin"})).await,
        "\u{1}\0\u{2}\u{3}\0\u{FFFD}"
    );
}

#[tokio::test]
async fn images_are_detected_by_content_and_returned_as_image_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let encode = |format| {
        let mut out = std::io::Cursor::new(Vec::new());
        image::DynamicImage::ImageRgb8(image::RgbImage::new(2, 1))
            .write_to(&mut out, format)
            .unwrap();
        out.into_inner()
    };
    let png = encode(image::ImageFormat::Png);
    std::fs::write(dir.path().join("pixel.png"), &png).unwrap();
    std::fs::write(
        dir.path().join("photo.dat"),
        encode(image::ImageFormat::Jpeg),
    )
    .unwrap();
    // A PNG header without pixels is an image that cannot be decoded (pi 1.6.0's words).
    std::fs::write(dir.path().join("broken.png"), &png[..33]).unwrap();
    std::fs::write(dir.path().join("fake.png"), "not really an image\n").unwrap();
    let read = read_tool(dir.path().to_path_buf());

    let result = run(&read, json!({"path": "pixel.png"})).await.unwrap();
    assert_eq!(result.details, None);
    assert_eq!(result.content.len(), 2);
    assert_eq!(
        result.content[0].as_text().unwrap(),
        "Read image file [image/png]"
    );
    let InputBlock::Image(image) = &result.content[1] else {
        panic!("expected an image block: {result:?}");
    };
    assert_eq!(image.mime_type, "image/png");
    assert_eq!(
        image.data,
        base64::engine::general_purpose::STANDARD.encode(&png)
    );
    let wire = serde_json::to_value(&result.content[1]).unwrap();
    assert_eq!(wire["type"], json!("image"));
    assert_eq!(wire["mimeType"], json!("image/png"));

    let jpeg = run(&read, json!({"path": "photo.dat"})).await.unwrap();
    assert_eq!(
        jpeg.content[0].as_text().unwrap(),
        "Read image file [image/jpeg]"
    );
    assert_eq!(
        text_of(&read, json!({"path": "broken.png"})).await,
        "Read image file [image/png]\n[Image omitted: could not be resized below the inline image size limit.]"
    );
    assert_eq!(
        text_of(&read, json!({"path": "fake.png"})).await,
        "not really an image\n"
    );
}

#[tokio::test]
async fn relative_absolute_and_at_prefixed_paths_name_the_same_file() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    std::fs::write(sub.join("a.txt"), "alpha").unwrap();
    let read = read_tool(dir.path().to_path_buf());
    let absolute = sub.join("a.txt").display().to_string();
    for path in [
        "sub/a.txt",
        "@sub/a.txt",
        "./sub/../sub/a.txt",
        absolute.as_str(),
    ] {
        assert_eq!(
            text_of(&read, json!({"path": path})).await,
            "alpha",
            "{path}"
        );
    }
    let nested = read_tool(sub.clone());
    assert_eq!(text_of(&nested, json!({"path": "a.txt"})).await, "alpha");
    assert_eq!(
        text_of(&nested, json!({"path": "../sub/a.txt"})).await,
        "alpha"
    );
}

#[tokio::test]
async fn write_creates_parents_and_reports_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let write = write_tool(dir.path().to_path_buf());
    let text = text_of(
        &write,
        json!({"path": "deep/nested/dir/f.txt", "content": "hello"}),
    )
    .await;
    assert_eq!(text, "Successfully wrote to deep/nested/dir/f.txt");
    let written = std::fs::read_to_string(dir.path().join("deep/nested/dir/f.txt")).unwrap();
    assert_eq!(written, "hello");

    let again = text_of(
        &write,
        json!({"path": "deep/nested/dir/f.txt", "content": "hi"}),
    )
    .await;
    assert_eq!(again, "Successfully wrote to deep/nested/dir/f.txt");
    let overwritten = std::fs::read_to_string(dir.path().join("deep/nested/dir/f.txt")).unwrap();
    assert_eq!(overwritten, "hi");

    let absolute = dir.path().join("abs.txt").display().to_string();
    let result = run(&write, json!({"path": absolute, "content": ""})).await;
    assert_eq!(
        result.unwrap().content[0].as_text().unwrap(),
        format!("Successfully wrote to {absolute}")
    );
}

#[tokio::test]
async fn write_failures_are_error_results() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file"), "x").unwrap();
    std::fs::create_dir(dir.path().join("folder")).unwrap();
    let write = write_tool(dir.path().to_path_buf());
    // Node's recursive `mkdir` words these two cases differently; so do we.
    assert_eq!(
        error_of(&write, json!({"path": "file/child.txt", "content": "x"})).await,
        format!(
            "EEXIST: file already exists, mkdir '{}'",
            dir.path().join("file").display()
        )
    );
    assert_eq!(
        error_of(&write, json!({"path": "file/a/b.txt", "content": "x"})).await,
        format!(
            "ENOTDIR: not a directory, mkdir '{}'",
            dir.path().join("file/a").display()
        )
    );
    assert_eq!(
        error_of(&write, json!({"path": "folder", "content": "x"})).await,
        format!(
            "EISDIR: illegal operation on a directory, open '{}'",
            dir.path().join("folder").display()
        )
    );
}

#[tokio::test]
async fn write_then_read_round_trips_utf8() {
    let dir = tempfile::tempdir().unwrap();
    let write = write_tool(dir.path().to_path_buf());
    let read = read_tool(dir.path().to_path_buf());
    let content = "héllo wörld 🌍\n日本語\n";
    let reply = text_of(&write, json!({"path": "u/t.txt", "content": content})).await;
    assert_eq!(reply, "Successfully wrote to u/t.txt");
    assert_eq!(text_of(&read, json!({"path": "u/t.txt"})).await, content);
    assert_eq!(
        std::fs::read(dir.path().join("u/t.txt")).unwrap(),
        content.as_bytes()
    );
}

fn make_tree(root: &Path, files: &[&str], dirs: &[&str]) {
    for f in files {
        if let Err(e) = std::fs::write(root.join(f), "x") {
            panic!("cannot write {f}: {e}");
        }
    }
    for d in dirs {
        if let Err(e) = std::fs::create_dir(root.join(d)) {
            panic!("cannot create {d}: {e}");
        }
    }
}

#[tokio::test]
async fn ls_sorts_case_insensitively_and_marks_directories() {
    let dir = tempfile::tempdir().unwrap();
    let files = [
        "b.txt", "A.md", "a.txt", ".env", "Zeta", "_x", "10", "2", "émile", "e.txt", "~tilde",
        "README",
    ];
    make_tree(dir.path(), &files, &["src", "node_modules"]);
    let ls = ls_tool(dir.path().to_path_buf());
    // The order Node's `localeCompare` gives for these names.
    let expected = "_x\n.env\n~tilde\n10\n2\nA.md\na.txt\nb.txt\ne.txt\némile\nnode_modules/\nREADME\nsrc/\nZeta";
    let result = run(&ls, json!({})).await.unwrap();
    assert_eq!(result.content[0].as_text().unwrap(), expected);
    assert_eq!(result.details, None);
    assert_eq!(text_of(&ls, json!({"path": "."})).await, expected);
    let absolute = dir.path().display().to_string();
    assert_eq!(text_of(&ls, json!({"path": absolute})).await, expected);
}

#[tokio::test]
async fn ls_limits_and_empty_directories() {
    let dir = tempfile::tempdir().unwrap();
    make_tree(dir.path(), &["a", "b", "c", "d"], &["e", "empty"]);
    let ls = ls_tool(dir.path().to_path_buf());
    let result = run(&ls, json!({"limit": 2})).await.unwrap();
    assert_eq!(
        result.content[0].as_text().unwrap(),
        "a\nb\n\n[2 entries limit reached. Use limit=4 for more]"
    );
    assert_eq!(result.details, Some(json!({"entryLimitReached": 2})));
    assert_eq!(
        text_of(&ls, json!({"limit": 6})).await,
        "a\nb\nc\nd\ne/\nempty/"
    );
    let empty = run(&ls, json!({"path": "empty"})).await.unwrap();
    assert_eq!(empty.content[0].as_text().unwrap(), "(empty directory)");
    assert_eq!(empty.details, None);
}

#[tokio::test]
async fn ls_cuts_a_listing_over_50_kb() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..250 {
        let name = format!("{i:03}{}", "n".repeat(247));
        std::fs::write(dir.path().join(name), "").unwrap();
    }
    let ls = ls_tool(dir.path().to_path_buf());
    let result = run(&ls, json!({})).await.unwrap();
    let text = result.content[0].as_text().unwrap();
    // 250-byte names: 203 of them plus 202 newlines fit in 51,200 bytes; 204 would not.
    assert!(text.ends_with("\n\n[50.0KB limit reached]"), "{text}");
    let listing = text.trim_end_matches("\n\n[50.0KB limit reached]");
    assert_eq!(listing.lines().count(), 203);
    let details = result.details.unwrap();
    assert_eq!(details["truncation"]["truncatedBy"], json!("bytes"));
    assert_eq!(
        details["truncation"]["maxLines"],
        json!(9_007_199_254_740_991u64)
    );
    assert!(details.get("entryLimitReached").is_none());
}

#[tokio::test]
async fn ls_errors_for_missing_paths_and_files() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("file.txt"), "x").unwrap();
    let ls = ls_tool(dir.path().to_path_buf());
    assert_eq!(
        error_of(&ls, json!({"path": "nope"})).await,
        format!("Path not found: {}", dir.path().join("nope").display())
    );
    assert_eq!(
        error_of(&ls, json!({"path": "./file.txt"})).await,
        format!("Not a directory: {}", dir.path().join("file.txt").display())
    );
}

#[tokio::test]
async fn cancelled_calls_are_aborted_and_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("f.txt"), "x").unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let tools = [
        (
            read_tool(dir.path().to_path_buf()),
            json!({"path": "f.txt"}),
        ),
        (
            write_tool(dir.path().to_path_buf()),
            json!({"path": "new.txt", "content": "y"}),
        ),
        (ls_tool(dir.path().to_path_buf()), json!({})),
    ];
    for (tool, args) in tools {
        let result = tool
            .execute("call-1", args, cancel.clone(), Arc::new(|_| {}))
            .await;
        assert_eq!(
            result.unwrap_err().0,
            "Operation aborted",
            "{}",
            tool.name()
        );
    }
    assert!(!dir.path().join("new.txt").exists());
}

#[tokio::test]
async fn schemas_name_the_typescript_parameters() {
    let dir = tempfile::tempdir().unwrap();
    let read = read_tool(dir.path().to_path_buf());
    let write = write_tool(dir.path().to_path_buf());
    let ls = ls_tool(dir.path().to_path_buf());
    assert_eq!(read.parameters()["required"], json!(["path"]));
    assert_eq!(
        read.parameters()["properties"]["offset"]["type"],
        json!("number")
    );
    assert_eq!(
        read.parameters()["properties"]["limit"]["type"],
        json!("number")
    );
    assert_eq!(write.parameters()["required"], json!(["path", "content"]));
    assert!(ls.parameters().get("required").is_none());
    assert_eq!(
        ls.parameters()["properties"]["limit"]["type"],
        json!("number")
    );
    assert_eq!(
        [read.name(), write.name(), ls.name()],
        ["read", "write", "ls"]
    );
}
