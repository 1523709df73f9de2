//! SIGTERM and SIGHUP end pi after its extensions' `session_shutdown` cleanup (pi 0.77):
//! an extension records the event's reason, pi in RPC mode gets the signal once ready, and
//! ours and pi 1.6.0 (`PI_TS16`) leave the same record.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use mock_llm::MockServer;
use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use serde_json::json;
use support::rpc::Env;
use support::ts16::{pis, program_with_host};

const EXTENSION: &str = r#"
import { appendFileSync } from "node:fs";
export default function (pi) {
  pi.on("session_start", async () => { process.stdout.write(""); });
  pi.on("session_shutdown", async (event) => {
    appendFileSync(process.env.SHUTDOWN_LOG, `${event.reason}\n`);
  });
}
"#;

/// What the extension recorded when `signal` ended pi in RPC mode.
async fn recorded(wrapper: &Option<std::path::PathBuf>, signal: Signal) -> String {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let extension = env.work.join("cleanup.ts");
    std::fs::write(&extension, EXTENSION).unwrap();
    let log = env.dir.path().join("shutdown.log");
    let mut child = program_with_host(wrapper)
        .args(["--mode", "rpc", "-e", extension.to_str().unwrap()])
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("SHUTDOWN_LOG", &log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Ready once it answers a command (the extensions have loaded by then).
    let mut stdin = child.stdin.take().unwrap();
    std::io::Write::write_all(&mut stdin, b"{\"id\":\"s\",\"type\":\"get_state\"}\n").unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let answered = tokio::task::block_in_place(|| {
        lines.any(|line| line.is_ok_and(|l| l.contains("\"id\":\"s\"")))
    });
    assert!(answered, "no answer to get_state");
    kill(Pid::from_raw(child.id() as i32), signal).unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "pi did not exit on {signal}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    drop(stdin);
    let _ = status;
    std::fs::read_to_string(&log).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_and_sighup_run_session_shutdown() {
    for signal in [Signal::SIGTERM, Signal::SIGHUP] {
        for (name, wrapper) in pis() {
            assert_eq!(
                recorded(&wrapper, signal).await,
                "quit\n",
                "{name}, {signal}"
            );
        }
    }
}
