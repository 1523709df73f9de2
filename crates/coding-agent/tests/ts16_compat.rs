//! Our `pi` answers as pi 1.6.0, the release it matches, where a user or a tool can see
//! the difference. Each test checks ours on its own and, when `PI_TS16` names pi 1.6.0's
//! wrapper, runs the same case there and asserts both give the same answer.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use serde_json::json;

use mock_llm::MockServer;
use support::rpc::Env;
use support::ts16::{ours, run, ts16, ts16_pi};

/// What `pi <args>` prints: exit code, stdout, stderr.
fn answer(output: std::process::Output) -> (Option<i32>, String, String) {
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn version_and_help_header_as_pi_16() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    for flag in ["--version", "-v"] {
        let got = answer(run(&env, ours(), &[flag]));
        assert_eq!(got, (Some(0), "1.6.0\n".into(), String::new()), "{flag}");
        assert_eq!(got.1.trim(), pi_coding_agent::PI_VERSION);
        if let Some(wrapper) = ts16() {
            assert_eq!(got, answer(run(&env, ts16_pi(&wrapper), &[flag])), "{flag}");
        }
    }
    // pi's help starts with its name and no version.
    let first_line = |out: std::process::Output| {
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .next()
            .unwrap_or_default()
            .to_owned()
    };
    let ours_help = first_line(run(&env, ours(), &["--help"]));
    assert_eq!(
        ours_help,
        "pi - AI coding assistant with read, bash, edit, write tools"
    );
    if let Some(wrapper) = ts16() {
        assert_eq!(
            ours_help,
            first_line(run(&env, ts16_pi(&wrapper), &["--help"]))
        );
    }
}
