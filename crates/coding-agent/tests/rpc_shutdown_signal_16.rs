//! RPC shutdown when stdin closes and SIGTERM arrives with it, as process managers do
//! (pi 1.5.1): the one signal does not cut the shutdown cleanup short (an extension's slow
//! `session_shutdown` handler finishes and pi exits 0), while a repeated signal ends pi at
//! once with 143. Ours and pi 1.6.0 (`PI_TS16`) run the same extension.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use mock_llm::MockServer;
use serde_json::{Value, json};
use support::rpc::{Env, Rpc};
use support::ts16::{pis, program_with_host};

/// A `session_shutdown` handler that takes 800 ms, logging its start and its end.
const SLOW_CLEANUP: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("session_shutdown", async () => {
    appendFileSync(process.env.SHUTDOWN_LOG, "started\n");
    await new Promise((resolve) => setTimeout(resolve, 800));
    appendFileSync(process.env.SHUTDOWN_LOG, "cleaned\n");
  });
}
"#;

fn terminate(pid: u32) {
    let status = std::process::Command::new("kill")
        .args(["-TERM", &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits (at most 20 s) until the log has `line`.
fn wait_for(log: &Path, line: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .any(|l| l == line)
    {
        assert!(Instant::now() < deadline, "no {line:?} in the log");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Closes stdin, sends SIGTERM once the cleanup started (`signals` times, 200 ms apart);
/// returns the exit code and the cleanup's log.
async fn shut_down(wrapper: &Option<PathBuf>, signals: usize) -> Value {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let ext = env.dir.path().join("slow-cleanup.ts");
    std::fs::write(&ext, SLOW_CLEANUP).unwrap();
    let log = env.dir.path().join("shutdown.log");
    let mut command = program_with_host(wrapper);
    command.env("SHUTDOWN_LOG", &log);
    let code = tokio::task::block_in_place(|| {
        let mut rpc = Rpc::start_program(&env, command, &["-e", ext.to_str().unwrap()]);
        rpc.call("s", json!({"type": "get_state"}));
        rpc.close_stdin();
        wait_for(&log, "started");
        for n in 0..signals {
            if n > 0 {
                std::thread::sleep(Duration::from_millis(200));
            }
            terminate(rpc.pid());
        }
        rpc.wait_exit()
    });
    let lines: Vec<String> = std::fs::read_to_string(&log)
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect();
    json!({"code": code, "log": lines})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_signal_with_end_of_input_lets_cleanup_finish_as_16() {
    for (who, wrapper) in pis() {
        let seen = shut_down(&wrapper, 1).await;
        assert_eq!(
            seen,
            json!({"code": 0, "log": ["started", "cleaned"]}),
            "{who}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_repeated_signal_ends_the_shutdown_at_once_as_16() {
    for (who, wrapper) in pis() {
        let seen = shut_down(&wrapper, 2).await;
        assert_eq!(seen, json!({"code": 143, "log": ["started"]}), "{who}");
    }
}
