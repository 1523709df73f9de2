//! A stdio MCP server's other processes end with pi, as in pi 1.6.0, also when the server's
//! main process already exited: `pi mcp list` starts a server whose shell leaves a
//! `sleep` behind, once serving and once exiting at once; after pi exits, the `sleep` must
//! be gone. Ours and pi 1.6.0 (`PI_TS16`) run the same case.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::json;

use mock_llm::MockServer;
use support::mcp::{fixture, write_config};
use support::rpc::Env;
use support::ts16::{pis, program, run};

/// Whether the process is gone (or a zombie nobody reaped yet).
fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z')),
    }
}

/// Waits (a bounded while) for the process to end; whether it did.
fn ends(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if gone(pid) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

/// Runs `pi mcp list` with a server whose shell starts `sleep` in the background, then
/// serves (`serve`) or exits; returns the first line pi printed (the server's status) and
/// whether the `sleep` ended after pi exited.
fn sleep_ends(wrapper: &Option<std::path::PathBuf>, serve: bool) -> (String, bool) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let pid_file = env.dir.path().join("sleep.pid");
    let notes = env.dir.path().join("notes.txt");
    let then = if serve {
        format!(
            "exec python3 {} {}",
            fixture("test_server.py").display(),
            notes.display()
        )
    } else {
        "exit 0".to_owned()
    };
    let script = format!("sleep 1000 & echo $! > {}; {then}", pid_file.display());
    write_config(
        &env,
        json!({"tools": {"command": "sh", "args": ["-c", script]}}),
    );
    let mut command = program(wrapper);
    command.env("PI_OFFLINE", "1");
    let out = run(&env, command, &["mcp", "list"]);
    assert!(out.status.code().is_some(), "{out:?}");
    let pid: u32 = read_pid(&pid_file);
    let ended = ends(pid);
    if !ended {
        let _ = std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status();
    }
    let status = String::from_utf8_lossy(&out.stdout)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned();
    (status, ended)
}

fn read_pid(path: &Path) -> u32 {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("no pid in {}", path.display()))
}

#[test]
fn a_servers_background_processes_end_with_pi() {
    for (name, wrapper) in pis() {
        assert_eq!(
            sleep_ends(&wrapper, true),
            (
                "tools: connected, 7 tools (direct, global)".to_owned(),
                true
            ),
            "{name}: serving server"
        );
        // The server is reported failed at once (not after the start timeout, which the
        // `sleep` holding its stdout would have made it wait for).
        assert_eq!(
            sleep_ends(&wrapper, false),
            ("tools: failed (direct, global)".to_owned(), true),
            "{name}: server that exited"
        );
    }
}
