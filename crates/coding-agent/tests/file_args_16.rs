//! CLI `@file` arguments as pi 1.6.0 sends them: a text file that happens to begin with
//! `GIF` is text, not an image (pi 0.87). Our `pi` and pi 1.6.0 (`PI_TS16`) run in print
//! mode in the same folder against the mock model; the user message sent must be equal.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;

use mock_llm::{MockServer, Script};
use serde_json::json;
use support::rpc::{Env, last_user_text};
use support::ts16::{ours, run, ts16, ts16_pi};

/// The user text `program` sends for `-p @gif.txt Summarize.`.
fn user_text(server: &MockServer, env: &Env, program: Command) -> String {
    server.clear_queue();
    server.clear_requests();
    server.push(Script::text("Ok."));
    let output = run(
        env,
        program,
        &["--no-session", "-p", "@gif.txt", "Summarize."],
    );
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    last_user_text(&requests.first().expect("a request").body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_text_file_starting_with_gif_is_attached_as_text_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    std::fs::write(env.work.join("gif.txt"), "GIF89 notes: plain text.\n").unwrap();
    let ours_text = user_text(&server, &env, ours());
    let path = env.work.join("gif.txt");
    assert_eq!(
        ours_text,
        format!(
            "<file name=\"{}\">\nGIF89 notes: plain text.\n\n</file>\nSummarize.",
            path.display()
        )
    );
    if let Some(wrapper) = ts16() {
        assert_eq!(user_text(&server, &env, ts16_pi(&wrapper)), ours_text);
    }
}
