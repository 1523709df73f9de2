//! Built-in tools on inputs pi 1.6.0 fixed: `edit` given `edits` as one object (pi
//! 0.84.3), `edit` on a file mixing CRLF, LF and lone CR line ends (pi 1.5.1: untouched
//! lines keep theirs), and `grep` with a `glob` under `path` (pi 1.5.1: the glob is relative
//! to `path`). Each tool call comes from the mock model; our `pi` and pi 1.6.0 (`PI_TS16`)
//! run it on the same files and must leave the same bytes and report the same result
//! (`grep` is compared only with a ripgrep 14+ on PATH, which pi 1.6.0's grep runs).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// Writes `files` (path, bytes) under a fresh work dir, runs one prompt whose reply calls
/// `tool` with `args`, and returns the tool's result text and the files' bytes after.
async fn call(
    wrapper: &Option<std::path::PathBuf>,
    files: &[(&str, &[u8])],
    tool: &str,
    args: Value,
) -> Value {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call(tool, args));
    server.push(Script::text("Done."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    for (path, bytes) in files {
        let path = env.work.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, bytes).unwrap();
    }
    let out = run(
        &env,
        program(wrapper),
        &["--tools", "read,edit,grep", "-p", "Do it."],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let requests = server.requests();
    let result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| match &m["content"] {
            Value::String(text) => text.clone(),
            other => other.to_string(),
        })
        .unwrap();
    let after: Vec<Value> = files
        .iter()
        .map(|(path, _)| {
            let bytes = std::fs::read(env.work.join(path)).unwrap();
            json!(String::from_utf8_lossy(&bytes))
        })
        .collect();
    json!({"result": result, "files": after})
}

/// Whether a ripgrep 14 or later is on PATH: pi 1.6.0's `grep` runs it (and would download
/// it when online).
fn ripgrep_is_current() -> bool {
    std::process::Command::new("rg")
        .arg("--version")
        .output()
        .ok()
        .and_then(|out| {
            let text = String::from_utf8_lossy(&out.stdout).into_owned();
            let version = text.split_whitespace().nth(1)?.to_owned();
            version.split('.').next()?.parse::<u32>().ok()
        })
        .is_some_and(|major| major >= 14)
}

/// Runs one call through every pi; they must agree. Returns ours.
async fn agree(files: &[(&str, &[u8])], tool: &str, args: Value) -> Value {
    let mut seen = Vec::new();
    for (who, wrapper) in pis() {
        if wrapper.is_some() && tool == "grep" && !ripgrep_is_current() {
            eprintln!("no ripgrep 14+ on PATH: grep is not compared with {who}");
            continue;
        }
        seen.push((who, call(&wrapper, files, tool, args.clone()).await));
    }
    for (who, theirs) in &seen[1..] {
        assert_eq!(&seen[0].1, theirs, "ours and {who}");
    }
    seen.remove(0).1
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_takes_one_edit_object_as_pi_16() {
    let ours = agree(
        &[("notes.txt", b"one\ntwo\n")],
        "edit",
        json!({"path": "notes.txt", "edits": {"oldText": "two", "newText": "deux"}}),
    )
    .await;
    assert_eq!(ours["files"], json!(["one\ndeux\n"]), "{ours}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn edit_keeps_each_untouched_lines_ending_as_pi_16() {
    let mixed: &[u8] = b"alpha\r\nbeta\ngamma\rdelta\r\nomega\n";
    let ours = agree(
        &[("mixed.txt", mixed)],
        "edit",
        json!({"path": "mixed.txt", "edits": [{"oldText": "gamma", "newText": "GAMMA"}]}),
    )
    .await;
    assert_eq!(
        ours["files"],
        json!(["alpha\r\nbeta\nGAMMA\rdelta\r\nomega\n"]),
        "{ours}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grep_reads_its_glob_from_path_as_pi_16() {
    let ours = agree(
        &[
            ("repo/migrations/main/001.js", b"const needle = 1;\n"),
            ("repo/migrations/other/002.js", b"const needle = 2;\n"),
            ("migrations/main/003.js", b"const needle = 3;\n"),
        ],
        "grep",
        json!({"pattern": "needle", "path": "repo", "glob": "migrations/main/*.js"}),
    )
    .await;
    let result = ours["result"].as_str().unwrap();
    assert!(result.contains("001.js"), "{result}");
    assert!(
        !result.contains("002.js") && !result.contains("003.js"),
        "{result}"
    );
}
