//! Output of background processes a bash command leaves running, with settings
//! `bash.keepBackgroundProcesses` (pi 1.6.0 always keeps them): what they write after the
//! shell exited is read for as long as they keep writing (pi 0.79.4), and a timeout that
//! stops them after the shell exited says so, with the shell's exit code and time (pi
//! 1.5.1). The model calls `bash` in print mode through ours and pi 1.6.0 (`PI_TS16`); the
//! tool results they sent back must agree.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;

use mock_llm::{MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// A background perl writing `late1`..`late<count>` every 30 ms (no fork per line, so the
/// gaps stay well under the 100 ms quiet time that ends reading even on a busy machine).
fn writer(count: u32) -> String {
    format!(
        "perl -e '$|=1; for $i (1..{count}) {{ print \"late$i\\n\"; select(undef,undef,undef,0.03) }}' &"
    )
}

/// The text of the tool result the model got back for one `bash` call with `args`.
async fn bash_result(wrapper: &Option<PathBuf>, args: Value) -> String {
    let server = MockServer::start().await.unwrap();
    server.push(Script::tool_call("bash", args));
    server.push(Script::text("Done."));
    let env = Env::new(
        &server,
        128_000,
        json!({"bash": {"keepBackgroundProcesses": true}}),
    );
    let output = tokio::task::block_in_place(|| {
        run(
            &env,
            program(wrapper),
            &["--tools", "bash", "-p", "Run it."],
        )
    });
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let requests = server.requests();
    let last = &requests.last().unwrap().body;
    last["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or("").to_owned())
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_written_after_the_shell_exits_is_kept_as_16() {
    // The shell exits while perl is half way through its lines.
    let command = format!("{} sleep 0.3; echo early", writer(20));
    for (who, wrapper) in pis() {
        let text = bash_result(&wrapper, json!({"command": command})).await;
        let lines: Vec<&str> = text.lines().collect();
        assert!(lines.contains(&"early"), "{who}: {text}");
        let late: Vec<&str> = lines.iter().copied().filter(|l| *l != "early").collect();
        let expected: Vec<String> = (1..=20).map(|i| format!("late{i}")).collect();
        assert_eq!(late, expected, "{who}: every late line, in order: {text}");
    }
}

/// The status line of a timed-out result, the shell's run time replaced by `S`, and that
/// time in seconds.
fn timeout_status(text: &str) -> (String, f64) {
    let status = text.rsplit("\n\n").next().unwrap().to_owned();
    let after = status
        .split(" after ")
        .nth(2)
        .and_then(|rest| rest.split(' ').next())
        .unwrap_or_else(|| panic!("no shell time in {status:?}"));
    let seconds: f64 = after.parse().unwrap();
    (
        status.replacen(&format!(" after {after} "), " after S ", 1),
        seconds,
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_timeout_after_the_shell_exited_names_its_exit_as_16() {
    // perl writes for 3 s; the shell exits with 3 after 0.2 s; the timeout is 1 s.
    let command = format!("{} sleep 0.2; exit 3", writer(100));
    let mut statuses = Vec::new();
    for (who, wrapper) in pis() {
        let text = bash_result(&wrapper, json!({"command": command, "timeout": 1})).await;
        assert!(text.starts_with("late1\n"), "{who}: {text}");
        let (status, seconds) = timeout_status(&text);
        assert!((0.2..0.9).contains(&seconds), "{who}: {text}");
        statuses.push((who, status));
    }
    assert_eq!(
        statuses[0].1,
        "Command timed out after 1 seconds. The shell exited with code 3 after S seconds, \
         but background processes it started kept writing output until the timeout.",
        "{statuses:?}"
    );
    for (who, status) in &statuses[1..] {
        assert_eq!(status, &statuses[0].1, "ours and {who}");
    }
}
