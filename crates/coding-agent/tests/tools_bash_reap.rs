//! No process outlives a bash call: what a command leaves running — a background job, a
//! double-forked daemon, a `setsid` child — is ended when its shell exits, on timeout and
//! on abort; `keep_background` (settings `bash.keepBackgroundProcesses`) keeps them.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::time::Duration;

use pi_agent_core::{AgentToolResult, ToolError, ToolUpdateFn};
use pi_coding_agent::tools::bash::{BashOptions, bash_tool};
use pi_coding_agent::tools::bash_process::{RunOptions, run_command};
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// No call may take longer than this.
const GUARD: Duration = Duration::from_secs(20);

/// Starts the three kinds of leftovers and writes their pids, one per line, to `pids`:
/// a background job, a daemon that double-forks and calls `setsid`, and a `setsid` child.
fn leftovers(pids: &Path) -> String {
    format!(
        "sleep 300 & echo $! >> {f}; \
         ( setsid sh -c 'echo $$ >> {f}; exec sleep 301' & ) ; \
         setsid sh -c 'echo $$ >> {f}; exec sleep 302' & \
         while [ $(wc -l < {f}) -lt 3 ]; do sleep 0.01; done; echo started",
        f = pids.display()
    )
}

fn read_pids(path: &Path) -> Vec<i32> {
    let text = std::fs::read_to_string(path).unwrap();
    let pids: Vec<i32> = text.lines().map(|l| l.trim().parse().unwrap()).collect();
    assert_eq!(pids.len(), 3, "{text:?}");
    pids
}

/// Alive and not a zombie.
fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => false,
        Ok(stat) => {
            let state = stat.rsplit_once(')').unwrap().1.split_whitespace().next();
            !matches!(state, Some("Z" | "X"))
        }
    }
}

/// The process group and the session of `pid`.
fn group_and_session(pid: i32) -> (i32, i32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    (fields[2].parse().unwrap(), fields[3].parse().unwrap())
}

fn kill(pid: i32) {
    let _ = nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), nix::sys::signal::SIGKILL);
}

async fn call(
    cwd: &Path,
    options: BashOptions,
    args: serde_json::Value,
    cancel: CancellationToken,
) -> Result<AgentToolResult, ToolError> {
    let tool = bash_tool(cwd.to_path_buf(), options);
    let on_update: ToolUpdateFn = std::sync::Arc::new(|_| {});
    tokio::time::timeout(GUARD, tool.execute("call-1", args, cancel, on_update))
        .await
        .expect("the bash tool hung")
}

fn text(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_job_daemon_and_setsid_child_end_with_the_call() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let args = json!({ "command": leftovers(&pid_file) });
    let result = call(
        dir.path(),
        BashOptions::default(),
        args,
        CancellationToken::new(),
    )
    .await
    .unwrap();
    let pids = read_pids(&pid_file);
    let survivors: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    survivors.iter().for_each(|p| kill(*p));
    assert!(survivors.is_empty(), "survived the call: {survivors:?}");
    assert_eq!(
        text(&result),
        "started\n\n\n[Ended 3 processes left running in the background: processes a command \
         starts do not outlive it]"
    );
    assert_eq!(result.details.unwrap()["endedProcesses"], 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_setting_keeps_background_processes() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let options = BashOptions {
        keep_background: true,
        ..BashOptions::default()
    };
    let args = json!({ "command": leftovers(&pid_file) });
    let result = call(dir.path(), options, args, CancellationToken::new())
        .await
        .unwrap();
    let pids = read_pids(&pid_file);
    let kept: Vec<bool> = pids.iter().map(|p| alive(*p)).collect();
    // The daemon and the setsid child really left the command's group and session.
    let shell_group = group_and_session(pids[0]).0;
    let (daemon_group, _) = group_and_session(pids[1]);
    pids.iter().for_each(|p| kill(*p));
    assert_eq!(kept, [true, true, true], "the setting did not keep them");
    assert_ne!(daemon_group, shell_group);
    assert_eq!(text(&result), "started\n");
    assert!(result.details.is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_ends_everything_even_with_the_setting() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let options = BashOptions {
        keep_background: true,
        ..BashOptions::default()
    };
    let command = format!("{}; sleep 300", leftovers(&pid_file));
    let args = json!({ "command": command, "timeout": 2 });
    let error = call(dir.path(), options, args, CancellationToken::new())
        .await
        .unwrap_err();
    let pids = read_pids(&pid_file);
    let survivors: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    survivors.iter().for_each(|p| kill(*p));
    assert!(survivors.is_empty(), "survived the timeout: {survivors:?}");
    assert_eq!(error.0, "started\n\n\nCommand timed out after 2 seconds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn abort_ends_everything() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let command = format!("{}; sleep 300", leftovers(&pid_file));
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watched = pid_file.clone();
    let canceller = tokio::spawn(async move {
        for _ in 0..400 {
            let lines = std::fs::read_to_string(&watched).map_or(0, |t| t.lines().count());
            if lines == 3 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        // Give the shell a moment to write "started".
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let error = call(
        dir.path(),
        BashOptions::default(),
        json!({ "command": command }),
        cancel,
    )
    .await
    .unwrap_err();
    canceller.await.unwrap();
    let pids = read_pids(&pid_file);
    let survivors: Vec<i32> = pids.iter().copied().filter(|p| alive(*p)).collect();
    survivors.iter().for_each(|p| kill(*p));
    assert!(survivors.is_empty(), "survived the abort: {survivors:?}");
    assert!(error.0.ends_with("Command aborted"), "{:?}", error.0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_command_counts_what_it_ended() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let out = run_command(&leftovers(&pid_file), dir.path(), RunOptions::default())
        .await
        .unwrap();
    let pids = read_pids(&pid_file);
    pids.iter().for_each(|p| kill(*p));
    assert_eq!(out.ended_processes, 3);
    assert_eq!(out.exit_code, Some(0));

    // Nothing left behind: nothing to count.
    let out = run_command("echo quiet", dir.path(), RunOptions::default())
        .await
        .unwrap();
    assert_eq!(out.ended_processes, 0);
}

mod support;

/// The user's `!` bash (here the RPC `bash` command, which runs the same code) ends what
/// the command left running too, says how many in `endedProcesses`, and the setting
/// `bash.keepBackgroundProcesses` keeps them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn user_bash_through_the_binary_ends_leftovers_unless_kept() {
    use support::rpc::{Env, Rpc};
    let server = mock_llm::MockServer::start().await.unwrap();
    for keep in [false, true] {
        let settings = json!({"bash": {"keepBackgroundProcesses": keep}});
        let env = Env::new(&server, 128_000, settings);
        let pid_file = env.dir.path().join("pids");
        let mut rpc = Rpc::start(&env, &[]);
        let answer = rpc.call(
            "b1",
            json!({"type": "bash", "command": leftovers(&pid_file)}),
        );
        let pids = read_pids(&pid_file);
        let alive_after: Vec<bool> = pids.iter().map(|p| alive(*p)).collect();
        pids.iter().for_each(|p| kill(*p));
        assert_eq!(answer["success"], true, "{answer}");
        assert_eq!(answer["data"]["output"], "started\n");
        if keep {
            assert_eq!(alive_after, [true, true, true]);
            assert!(answer["data"].get("endedProcesses").is_none(), "{answer}");
        } else {
            assert_eq!(alive_after, [false, false, false]);
            assert_eq!(answer["data"]["endedProcesses"], 3, "{answer}");
        }
        assert_eq!(rpc.finish(), Some(0));
    }
}
