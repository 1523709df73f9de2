//! The `bash` tool against real shells: output, exit codes, streaming, timeouts, aborts,
//! process-group cleanup, background daemons and truncation.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_agent_core::{AgentToolResult, ToolError, ToolUpdateFn};
use pi_coding_agent::tools::bash::{BashOptions, bash_tool};
use pi_coding_agent::tools::bash_process::{RunOptions, run_command};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// Liveness guard: no call may take longer than this.
const GUARD: Duration = Duration::from_secs(20);

type Updates = Arc<Mutex<Vec<(Instant, AgentToolResult)>>>;

fn recorder() -> (ToolUpdateFn, Updates) {
    let updates: Updates = Arc::default();
    let sink = Arc::clone(&updates);
    let on_update: ToolUpdateFn = Arc::new(move |result| {
        sink.lock().unwrap().push((Instant::now(), result));
    });
    (on_update, updates)
}

async fn run_in(
    cwd: &Path,
    options: BashOptions,
    args: Value,
    cancel: CancellationToken,
) -> (Result<AgentToolResult, ToolError>, Updates) {
    let tool = bash_tool(cwd.to_path_buf(), options);
    let (on_update, updates) = recorder();
    let result = tokio::time::timeout(GUARD, tool.execute("call-1", args, cancel, on_update))
        .await
        .expect("the bash tool hung");
    (result, updates)
}

async fn run(command: &str) -> Result<AgentToolResult, ToolError> {
    let cwd = std::env::temp_dir();
    let args = json!({ "command": command });
    run_in(&cwd, BashOptions::default(), args, CancellationToken::new())
        .await
        .0
}

fn text(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect()
}

/// Gone, or a zombie nobody has reaped yet (it runs nothing and holds nothing).
fn process_gone(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => {
            let state = stat.rsplit_once(')').unwrap().1.split_whitespace().next();
            matches!(state, Some("Z" | "X"))
        }
    }
}

async fn wait_for_file(path: &Path) -> String {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(path)
            && text.ends_with('\n')
        {
            return text;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{} never appeared", path.display());
}

fn pids(text: &str) -> Vec<i32> {
    text.split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn echo_output_and_schema() {
    let result = run("echo hello").await.unwrap();
    assert_eq!(text(&result), "hello\n");
    assert_eq!(result.details, None);
    assert_eq!(text(&run("true").await.unwrap()), "(no output)");

    let tool = bash_tool(std::env::temp_dir(), BashOptions::default());
    assert_eq!(tool.name(), "bash");
    assert_eq!(
        tool.parameters(),
        &json!({
            "type": "object",
            "required": ["command"],
            "properties": {
                "command": { "type": "string", "description": "Bash command to execute" },
                "timeout": {
                    "type": "number",
                    "description": "Timeout in seconds (optional, no default timeout)"
                },
            },
        })
    );
    assert!(tool.description().contains("2000 lines or 50KB"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stderr_is_merged_in_order() {
    let result = run("echo out1; echo err1 >&2; echo out2; echo err2 >&2")
        .await
        .unwrap();
    assert_eq!(text(&result), "out1\nerr1\nout2\nerr2\n");
}

/// The text of a result the model sees as an error (pi 1.6.0 returns a failing command as
/// an error result, keeping its details).
fn error_text(result: Result<AgentToolResult, ToolError>) -> String {
    let result = result.unwrap();
    assert!(result.is_error, "{result:?}");
    text(&result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn non_zero_exit_is_an_error_with_the_output() {
    let err = error_text(run("echo oops; echo bad >&2; exit 3").await);
    assert_eq!(err, "oops\nbad\n\n\nCommand exited with code 3");
    let err = error_text(run("exit 1").await);
    assert_eq!(err, "(no output)\n\nCommand exited with code 1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exit_by_signal_and_bad_setup_are_clear_errors() {
    // A shell killed by a signal exits with 128 + its number, as pi reports it.
    let err = error_text(run("echo before; kill -KILL $$").await);
    assert_eq!(err, "before\n\n\nCommand exited with code 137");

    let missing = std::env::temp_dir().join("pi-bash-test-no-such-dir");
    let args = json!({ "command": "echo hi" });
    let (result, _) = run_in(
        &missing,
        BashOptions::default(),
        args.clone(),
        CancellationToken::new(),
    )
    .await;
    assert_eq!(
        result.unwrap_err().0,
        format!(
            "Working directory does not exist: {}\nCannot execute bash commands.",
            missing.display()
        )
    );

    let options = BashOptions {
        shell: Some(PathBuf::from("/no/such/shell")),
        ..BashOptions::default()
    };
    let (result, _) = run_in(
        &std::env::temp_dir(),
        options,
        args,
        CancellationToken::new(),
    )
    .await;
    assert_eq!(
        result.unwrap_err().0,
        "Custom shell path not found: /no/such/shell"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn output_streams_as_updates_before_the_end() {
    let cwd = std::env::temp_dir();
    let args = json!({ "command": "for i in 1 2 3; do echo line$i; sleep 0.4; done" });
    let tool = bash_tool(cwd, BashOptions::default());
    let (on_update, updates) = recorder();
    let result = tool
        .execute("call-1", args, CancellationToken::new(), on_update)
        .await
        .unwrap();
    let finished = Instant::now();
    assert_eq!(text(&result), "line1\nline2\nline3\n");

    let updates = updates.lock().unwrap();
    // The first update is the empty placeholder sent at the start.
    assert!(updates[0].1.content.is_empty());
    let first = updates
        .iter()
        .find(|(_, u)| !text(u).is_empty())
        .expect("no output update");
    assert_eq!(text(&first.1), "line1\n");
    assert!(finished - first.0 >= Duration::from_millis(500));
    assert_eq!(first.1.details, Some(json!({})));
    let texts: Vec<String> = updates.iter().map(|(_, u)| text(u)).collect();
    assert!(texts.contains(&"line1\nline2\n".to_owned()), "{texts:?}");
    assert_eq!(texts.last().unwrap(), "line1\nline2\nline3\n");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn timeout_kills_the_command() {
    let started = Instant::now();
    let cwd = std::env::temp_dir();
    let args = json!({ "command": "echo started; sleep 30", "timeout": 1 });
    let (result, _) = run_in(&cwd, BashOptions::default(), args, CancellationToken::new()).await;
    assert_eq!(
        result.unwrap_err().0,
        "started\n\n\nCommand timed out after 1 seconds"
    );
    assert!(started.elapsed() < Duration::from_secs(5));

    // The configured default applies when the call gives none.
    let options = BashOptions {
        default_timeout: Some(Duration::from_millis(500)),
        ..BashOptions::default()
    };
    let args = json!({ "command": "sleep 30" });
    let (result, _) = run_in(&cwd, options, args, CancellationToken::new()).await;
    assert_eq!(result.unwrap_err().0, "Command timed out after 0.5 seconds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancel_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pids");
    let command = format!(
        "sleep 300 & echo $! > {0}.tmp; (sleep 301 &); echo $$ >> {0}.tmp; echo running; \
         mv {0}.tmp {0}; sleep 300",
        pid_file.display()
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watched = pid_file.clone();
    // The pid file appears after "running" is written, so the output is in the pipe before
    // the abort (it raced the abort on a loaded CI machine).
    let canceller = tokio::spawn(async move {
        let pids = wait_for_file(&watched).await;
        trigger.cancel();
        pids
    });
    let started = Instant::now();
    let (result, _) = run_in(
        dir.path(),
        BashOptions::default(),
        json!({ "command": command }),
        cancel,
    )
    .await;
    assert_eq!(result.unwrap_err().0, "running\n\n\nCommand aborted");
    assert!(started.elapsed() < Duration::from_secs(5));
    let pids = pids(&canceller.await.unwrap());
    assert_eq!(pids.len(), 2);
    for pid in pids {
        assert!(process_gone(pid), "process {pid} survived the abort");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn processes_ignoring_sigterm_are_killed_after_the_grace() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let command = format!(
        "trap '' TERM; sleep 300 & echo $! > {0}.tmp; mv {0}.tmp {0}; wait",
        pid_file.display()
    );
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    let watched = pid_file.clone();
    let canceller = tokio::spawn(async move {
        let pid = wait_for_file(&watched).await;
        trigger.cancel();
        pid
    });
    let (result, _) = run_in(
        dir.path(),
        BashOptions::default(),
        json!({ "command": command }),
        cancel,
    )
    .await;
    assert_eq!(result.unwrap_err().0, "Command aborted");
    let pid = pids(&canceller.await.unwrap())[0];
    assert!(process_gone(pid), "process {pid} survived SIGKILL");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn background_daemon_holding_the_pipe_does_not_hang() {
    let started = Instant::now();
    let result = run("echo group=$$; sleep 100 & (sleep 60 &); echo done")
        .await
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    let output = text(&result);
    assert!(output.starts_with("group="), "{output:?}");
    assert!(
        output.ends_with(
            "done\n\n\n[Ended 2 processes left running in the background: \
             processes a command starts do not outlive it]"
        ),
        "{output:?}"
    );
    assert_eq!(result.details.unwrap()["endedProcesses"], 2);
    let group: i32 = output
        .lines()
        .find_map(|l| l.strip_prefix("group="))
        .unwrap()
        .parse()
        .unwrap();
    assert!(!pi_coding_agent::tools::bash_process::group_alive(
        nix::unistd::Pid::from_raw(group)
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_output_keeps_the_tail_and_saves_everything() {
    let (result, updates) = run_in(
        &std::env::temp_dir(),
        BashOptions::default(),
        json!({ "command": "seq 1 5000" }),
        CancellationToken::new(),
    )
    .await;
    let result = result.unwrap();
    let details = result.details.clone().unwrap();
    let path = details["fullOutputPath"].as_str().unwrap().to_owned();
    let name = Path::new(&path).file_name().unwrap().to_str().unwrap();
    assert!(
        name.starts_with("pi-bash-") && name.ends_with(".log"),
        "{name}"
    );
    assert!(Path::new(&path).starts_with(std::env::temp_dir()));
    let output = text(&result);
    // As pi 1.6.0 counts lines, the final newline starts no line of its own.
    assert!(output.starts_with("3001\n3002\n"), "{}", &output[..20]);
    assert!(output.ends_with(&format!(
        "4999\n5000\n\n[Showing lines 3001-5000 of 5000. Full output: {path}]"
    )));
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["totalLines"], 5000);
    assert_eq!(details["truncation"]["outputLines"], 2000);
    let saved = std::fs::read_to_string(&path).unwrap();
    let expected: String = (1..=5000).map(|i| format!("{i}\n")).collect();
    assert_eq!(saved, expected);
    let last_update = updates.lock().unwrap().last().unwrap().1.clone();
    assert_eq!(
        last_update.details.unwrap()["fullOutputPath"],
        path.as_str()
    );
    std::fs::remove_file(&path).unwrap();

    // Long lines hit the byte limit first.
    let result = run("head -c 200000 /dev/zero | tr '\\0' a | fold -w 1000")
        .await
        .unwrap();
    let details = result.details.clone().unwrap();
    assert_eq!(details["truncation"]["truncatedBy"], "bytes");
    let path = details["fullOutputPath"].as_str().unwrap();
    let output = text(&result);
    // 200 lines (the last without a newline); 51 lines of ~1000 bytes fit in 50 KB.
    assert!(
        output.ends_with(&format!(
            "[Showing lines 150-200 of 200 (50.0KB limit). Full output: {path}]"
        )),
        "{}",
        &output[output.len() - 120..]
    );
    assert_eq!(std::fs::metadata(path).unwrap().len(), 200_199);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdin_is_dev_null() {
    let started = Instant::now();
    let result = run("cat; read line || echo eof").await.unwrap();
    assert_eq!(text(&result), "eof\n");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runs_in_the_cwd_with_the_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let options = BashOptions {
        command_prefix: Some("GREETING=prefixed".to_owned()),
        ..BashOptions::default()
    };
    let args = json!({ "command": "pwd; echo $GREETING" });
    let (result, _) = run_in(dir.path(), options, args, CancellationToken::new()).await;
    let output = text(&result.unwrap());
    let mut lines = output.lines();
    let pwd = PathBuf::from(lines.next().unwrap());
    assert_eq!(
        pwd.canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
    assert_eq!(lines.next(), Some("prefixed"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_command_reports_the_raw_outcome() {
    let chunks = Arc::new(Mutex::new(String::new()));
    let sink = Arc::clone(&chunks);
    let options = RunOptions {
        on_chunk: Some(Arc::new(move |chunk: &str| {
            sink.lock().unwrap().push_str(chunk)
        })),
        ..RunOptions::default()
    };
    let out = run_command("echo hi; exit 4", &std::env::temp_dir(), options)
        .await
        .unwrap();
    assert_eq!(out.output, "hi\n");
    assert_eq!(out.exit_code, Some(4));
    assert!(!out.cancelled && !out.timed_out && !out.truncated());
    assert_eq!(out.full_output_path, None);
    assert_eq!(*chunks.lock().unwrap(), "hi\n");

    let cancel = CancellationToken::new();
    cancel.cancel();
    let options = RunOptions {
        cancel,
        ..RunOptions::default()
    };
    let out = run_command("echo never", &std::env::temp_dir(), options)
        .await
        .unwrap();
    assert!(out.cancelled);
    assert_eq!((out.output.as_str(), out.exit_code), ("", None));
}

#[test]
fn accumulator_decodes_split_characters_and_keeps_a_bounded_tail() {
    use pi_coding_agent::tools::bash_output::OutputAccumulator;

    let mut acc = OutputAccumulator::new(3, 16);
    let bytes = "é\n".as_bytes();
    assert_eq!(acc.append(&bytes[..1]), "");
    assert_eq!(acc.append(&bytes[1..]), "é\n");
    assert_eq!(acc.append(b"\xff\n"), "\u{FFFD}\n");
    let snapshot = acc.snapshot(false);
    assert!(!snapshot.truncation.truncated());
    assert_eq!(snapshot.full_output_path, None);

    let mut all = String::from("é\n\u{FFFD}\n");
    for i in 0..200 {
        let line = format!("line {i}\n");
        acc.append(line.as_bytes());
        all.push_str(&line);
    }
    acc.finish();
    let snapshot = acc.snapshot(true);
    assert_eq!(snapshot.content, "line 199");
    assert_eq!(snapshot.truncation.total_lines, all.lines().count());
    assert_eq!(snapshot.truncation.total_bytes, all.len());
    let path = snapshot.full_output_path.unwrap();
    acc.close_temp_file();
    let saved = std::fs::read(&path).unwrap();
    // The file keeps the raw bytes, invalid ones included.
    assert_eq!(&saved[..5], b"\xc3\xa9\n\xff\n");
    assert_eq!(saved.len(), all.len() - "\u{FFFD}".len() + 1);
    std::fs::remove_file(path).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_call_kills_the_group() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let command = format!(
        "sleep 300 & echo $! > {0}.tmp; mv {0}.tmp {0}; sleep 300",
        pid_file.display()
    );
    let tool = bash_tool(dir.path().to_path_buf(), BashOptions::default());
    let (on_update, _) = recorder();
    let call = tool.execute(
        "call-1",
        json!({ "command": command }),
        CancellationToken::new(),
        on_update,
    );
    tokio::select! {
        _ = call => panic!("the command ended on its own"),
        text = wait_for_file(&pid_file) => {
            let pid = pids(&text)[0];
            // `call` is dropped when select! returns.
            tokio::spawn(async move {
                for _ in 0..100 {
                    if process_gone(pid) {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                panic!("process {pid} survived the dropped call");
            })
        }
    }
    .await
    .unwrap();
}
