//! The `read` tool on a file far larger than its output, as pi 1.6.0 reads it (1.5.1 "read
//! tool loading whole files into memory"): the file is streamed, so our `pi` stays small
//! while it reads 400 MB, and the result (the over-long first line's notice, the lines a
//! range selects) is pi 1.6.0's. Alone in its test binary: the peak memory measured is the
//! largest of this binary's child processes, and only ours runs before it is read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use nix::sys::resource::{UsageWho, getrusage};
use serde_json::{Value, json};

use mock_llm::{MockServer, Script};
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// The file's size: far past what a reader that loads it whole could hide.
const BIG: u64 = 400 * 1024 * 1024;

/// Writes `big.txt` in the work dir: `head`, then zero bytes (a sparse file: nothing is
/// written to disk) up to [`BIG`].
fn write_big(env: &Env, head: &str) {
    let path = env.work.join("big.txt");
    std::fs::write(&path, head).unwrap();
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
    file.set_len(BIG).unwrap();
}

/// Runs one `read` call with `args` through `program` and returns the tool result the
/// model got back.
async fn read_result(program: Command, head: &str, args: Value) -> String {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("read", args));
    server.push(Script::text("Read."));
    let env = Env::new(&server, 128_000, json!({"retry": {"enabled": false}}));
    write_big(&env, head);
    let output = tokio::task::spawn_blocking(move || run(&env, program, &["-p", "Read big.txt."]))
        .await
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = server.requests();
    let tool = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .cloned()
        .unwrap();
    match &tool["content"] {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// The largest resident set of any child this test binary waited for, in KiB.
fn children_peak_kib() -> i64 {
    getrusage(UsageWho::RUSAGE_CHILDREN).unwrap().max_rss()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_400_mb_file_is_streamed_and_read_as_pi_16_reads_it() {
    let head = "first line\nsecond line\nthird line";
    let cases = [
        // The zeros make the third line 400 MB long: only measured, never kept.
        json!({"path": "big.txt", "offset": 2, "limit": 1}),
        json!({"path": "big.txt", "offset": 3}),
        json!({"path": "big.txt"}),
    ];
    let mut ours_results = Vec::new();
    for args in &cases {
        ours_results.push(read_result(ours(), head, args.clone()).await);
    }
    let peak_mib = children_peak_kib() / 1024;
    assert!(
        peak_mib < 100,
        "our pi peaked at {peak_mib} MiB reading a {} MiB file",
        BIG / 1024 / 1024
    );
    assert_eq!(
        ours_results[0],
        "second line\n\n[1 more lines in file. Use offset=3 to continue.]"
    );
    assert!(
        ours_results[1].starts_with("[Line 3 is 400.0MB, exceeds 50.0KB limit."),
        "{}",
        ours_results[1]
    );
    if let Some(wrapper) = ts16() {
        for (args, ours) in cases.iter().zip(&ours_results) {
            let theirs = read_result(ts16_pi(&wrapper), head, args.clone()).await;
            assert_eq!(ours, &theirs, "ours, then pi 1.6.0, for {args}");
        }
    }
}
