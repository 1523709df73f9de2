//! The Landlock sandbox end to end: the `pi-sandbox` launcher, and the sandboxed `bash` and
//! `exec` tools. On a kernel without Landlock (ABI v3+) every test instead checks that the
//! launcher refuses to run anything (exit 126) and that the tools cannot be built.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use pi_agent_core::{AgentTool, AgentToolResult, ToolError};
use pi_coding_agent::tools::bash::{BashOptions, bash_tool};
use pi_gateway::sandbox::{
    SandboxConfig, SandboxError, SandboxedBash, SandboxedExec, landlock_available, sandbox_tools,
};

const LAUNCHER: &str = env!("CARGO_BIN_EXE_pi-sandbox");

/// A temp dir with the writable `a` and the protected sibling `b` (holding `b/keep`).
struct Dirs {
    _root: tempfile::TempDir,
    a: PathBuf,
    b: PathBuf,
}

fn dirs() -> Dirs {
    let root = tempfile::tempdir().unwrap();
    let a = root.path().join("a");
    let b = root.path().join("b");
    std::fs::create_dir(&a).unwrap();
    std::fs::create_dir(&b).unwrap();
    std::fs::write(b.join("keep"), "original\n").unwrap();
    Dirs { _root: root, a, b }
}

fn launch(write: &Path, program: &[&str]) -> Output {
    Command::new(LAUNCHER)
        .arg("--write")
        .arg(write)
        .arg("--")
        .args(program)
        .output()
        .unwrap()
}

fn sh(write: &Path, script: &str) -> Output {
    launch(write, &["/bin/sh", "-c", script])
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

/// Whether Landlock can be used here. When it cannot, checks the refusal instead: the
/// launcher exits 126 with the reason, and the tools are not built.
fn landlock_or_refusal(dirs: &Dirs) -> bool {
    match landlock_available() {
        Ok(abi) => {
            assert!(abi >= 3);
            true
        }
        Err(SandboxError::Unavailable(_)) => {
            let output = sh(&dirs.a, "touch ran");
            assert_eq!(output.status.code(), Some(126), "{output:?}");
            assert!(
                stderr(&output).contains("pi-sandbox: Landlock is not available on this kernel"),
                "{output:?}"
            );
            let built = SandboxedBash::new(config(dirs, None), &dirs.a).build();
            assert!(matches!(built, Err(SandboxError::Unavailable(_))));
            assert!(!dirs.a.join("ran").exists());
            false
        }
        Err(other) => panic!("unexpected error {other:?}"),
    }
}

fn config(dirs: &Dirs, timeout: Option<Duration>) -> SandboxConfig {
    let mut config = SandboxConfig::new(LAUNCHER);
    config.allowed_write_paths.push(dirs.a.clone());
    config.timeout = timeout;
    config
}

fn assert_b_untouched(dirs: &Dirs) {
    let mut names: Vec<_> = std::fs::read_dir(&dirs.b)
        .unwrap()
        .map(|entry| entry.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["keep"], "unexpected entries in b");
    assert_eq!(
        std::fs::read_to_string(dirs.b.join("keep")).unwrap(),
        "original\n"
    );
}

#[test]
fn launcher_confines_writes_to_write_paths() {
    let dirs = dirs();
    if !landlock_or_refusal(&dirs) {
        return;
    }
    let (a, b) = (dirs.a.display(), dirs.b.display());

    // Below the write path: create, overwrite, truncate, rename, mkdir, remove.
    let inside = sh(
        &dirs.a,
        &format!(
            "echo one > {a}/f && echo two >> {a}/f && truncate -s 0 {a}/g && \
             echo three > {a}/g && mv {a}/g {a}/h && mkdir {a}/d && cp {a}/h {a}/d/ && \
             rm {a}/f"
        ),
    );
    assert!(inside.status.success(), "{inside:?}");
    assert!(!dirs.a.join("f").exists());
    assert_eq!(
        std::fs::read_to_string(dirs.a.join("h")).unwrap(),
        "three\n"
    );
    assert_eq!(
        std::fs::read_to_string(dirs.a.join("d/h")).unwrap(),
        "three\n"
    );

    // Reading the sibling still works.
    let read = launch(&dirs.a, &["cat", &format!("{b}/keep")]);
    assert!(read.status.success(), "{read:?}");
    assert_eq!(read.stdout, b"original\n");

    // Everything that would change the sibling fails.
    std::fs::write(dirs.a.join("m"), "moved?\n").unwrap();
    let attempts = [
        format!("echo new > {b}/new"),
        format!("touch {b}/touched"),
        format!("echo clobber > {b}/keep"),
        format!("echo more >> {b}/keep"),
        format!("truncate -s 0 {b}/keep"),
        format!("rm {b}/keep"),
        format!("rm -f {b}/keep"),
        format!("mv {a}/m {b}/m"),
        format!("mv {b}/keep {a}/stolen"),
        format!("ln {a}/m {b}/link"),
        format!("ln -s {a}/m {b}/symlink"),
        format!("mkdir {b}/dir"),
        format!("mkfifo {b}/fifo"),
    ];
    for attempt in &attempts {
        let output = sh(&dirs.a, attempt);
        assert!(!output.status.success(), "`{attempt}` succeeded");
        assert!(
            stderr(&output).contains("Permission denied"),
            "`{attempt}`: {output:?}"
        );
    }
    assert_b_untouched(&dirs);
    assert_eq!(
        std::fs::read_to_string(dirs.a.join("m")).unwrap(),
        "moved?\n"
    );
    assert!(!dirs.a.join("stolen").exists());

    // The terminal devices stay usable.
    let devices = sh(
        &dirs.a,
        "echo x > /dev/null && head -c 3 /dev/zero > /dev/null",
    );
    assert!(devices.status.success(), "{devices:?}");
}

#[test]
fn launcher_exit_codes() {
    let dirs = dirs();
    if !landlock_or_refusal(&dirs) {
        return;
    }
    let missing = launch(&dirs.a, &["/no/such/program"]);
    assert_eq!(missing.status.code(), Some(127), "{missing:?}");
    assert!(stderr(&missing).starts_with("pi-sandbox: cannot run /no/such/program"));

    let code = sh(&dirs.a, "exit 7");
    assert_eq!(code.status.code(), Some(7));

    let bad_path = launch(&dirs.a.join("missing"), &["true"]);
    assert_eq!(bad_path.status.code(), Some(126), "{bad_path:?}");
    assert!(stderr(&bad_path).starts_with("pi-sandbox: sandbox path"));

    let usage = Command::new(LAUNCHER).arg("true").output().unwrap();
    assert_eq!(usage.status.code(), Some(126));
    assert!(stderr(&usage).contains("usage: pi-sandbox"));

    let start = Instant::now();
    let timed_out = Command::new(LAUNCHER)
        .args(["--timeout-ms", "200", "--", "sleep", "10"])
        .output()
        .unwrap();
    assert_eq!(timed_out.status.code(), Some(124), "{timed_out:?}");
    assert!(stderr(&timed_out).contains("timed out after 200 ms"));
    assert!(start.elapsed() < Duration::from_secs(5));

    // The spawned (timeout) mode is confined as well.
    let confined = Command::new(LAUNCHER)
        .arg("--write")
        .arg(&dirs.a)
        .args(["--timeout-ms", "5000", "--argv-json"])
        .arg(json!(["touch", dirs.b.join("t")]).to_string())
        .output()
        .unwrap();
    assert_eq!(confined.status.code(), Some(1), "{confined:?}");
    assert_b_untouched(&dirs);
}

async fn run(tool: &Arc<dyn AgentTool>, args: Value) -> Result<AgentToolResult, ToolError> {
    tool.execute("call", args, CancellationToken::new(), Arc::new(|_| {}))
        .await
}

/// The text of a failed call: a command that exits non-zero is an error result (as in
/// pi 1.6.0), other failures are errors.
fn failure(result: Result<AgentToolResult, ToolError>) -> String {
    match result {
        Err(error) => error.0,
        Ok(result) => {
            assert!(result.is_error, "{result:?}");
            text(&result)
        }
    }
}

fn text(result: &AgentToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect()
}

#[tokio::test]
async fn sandboxed_bash_writes_only_below_write_paths() {
    let dirs = dirs();
    if !landlock_or_refusal(&dirs) {
        return;
    }
    let tool = SandboxedBash::new(config(&dirs, None), &dirs.a)
        .build()
        .unwrap();
    // Same face as the ordinary bash tool.
    let plain = bash_tool(dirs.a.clone(), BashOptions::default());
    assert_eq!(tool.name(), "bash");
    assert_eq!(tool.description(), plain.description());
    assert_eq!(tool.parameters(), plain.parameters());

    let ok = run(&tool, json!({"command": "echo hi > x && cat x && pwd"}))
        .await
        .unwrap();
    assert_eq!(text(&ok), format!("hi\n{}\n", dirs.a.display()));
    assert_eq!(std::fs::read_to_string(dirs.a.join("x")).unwrap(), "hi\n");

    let command = format!("echo hi > {}/y", dirs.b.display());
    let denied = failure(run(&tool, json!({ "command": command })).await);
    assert!(denied.contains("Permission denied"), "{denied:?}");
    assert!(denied.contains("Command exited with code"), "{denied:?}");
    assert!(!dirs.b.join("y").exists());
    assert_b_untouched(&dirs);
}

/// As the CLI's bash: a background job, a double-forked daemon and a `setsid` child do
/// not outlive the sandboxed call, and the result says how many were ended.
#[tokio::test]
async fn sandboxed_bash_ends_what_the_command_left_running() {
    let dirs = dirs();
    if !landlock_or_refusal(&dirs) {
        return;
    }
    let tool = SandboxedBash::new(config(&dirs, None), &dirs.a)
        .build()
        .unwrap();
    let command = "sleep 300 & echo $! >> pids; \
         ( setsid sh -c 'echo $$ >> pids; exec sleep 301' & ) ; \
         setsid sh -c 'echo $$ >> pids; exec sleep 302' & \
         while [ $(wc -l < pids) -lt 3 ]; do sleep 0.01; done; echo started";
    let result = run(&tool, json!({ "command": command })).await.unwrap();
    let pids: Vec<i32> = std::fs::read_to_string(dirs.a.join("pids"))
        .unwrap()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect();
    let alive: Vec<i32> = pids
        .iter()
        .copied()
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                let state = stat.rsplit_once(')').unwrap().1.split_whitespace().next();
                !matches!(state, Some("Z" | "X"))
            })
        })
        .collect();
    for pid in &alive {
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    }
    assert_eq!(pids.len(), 3);
    assert!(alive.is_empty(), "survived the sandboxed call: {alive:?}");
    assert!(
        text(&result).starts_with("started\n\n\n[Ended 3 processes"),
        "{}",
        text(&result)
    );
}

#[tokio::test]
async fn sandboxed_bash_caps_the_timeout() {
    let dirs = dirs();
    if !landlock_or_refusal(&dirs) {
        return;
    }
    let tool = SandboxedBash::new(config(&dirs, Some(Duration::from_secs(1))), &dirs.a)
        .build()
        .unwrap();
    // The configured timeout is the documented default.
    let doc = tool.parameters()["properties"]["timeout"]["description"].clone();
    assert_eq!(doc, json!("Timeout in seconds (optional, default 1)"));

    for args in [
        json!({"command": "sleep 30", "timeout": 120}),
        json!({"command": "sleep 30"}),
    ] {
        let start = Instant::now();
        let err = run(&tool, args).await.unwrap_err();
        assert!(
            err.0.contains("Command timed out after 1 seconds"),
            "{err:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(10));
    }
    // A shorter timeout than the cap is kept.
    let start = Instant::now();
    let err = run(&tool, json!({"command": "sleep 30", "timeout": 0.2}))
        .await
        .unwrap_err();
    assert!(err.0.contains("timed out after 0.2 seconds"), "{err:?}");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[tokio::test]
async fn sandboxed_exec_runs_programs_without_a_shell() {
    let dirs = dirs();
    if !landlock_or_refusal(&dirs) {
        return;
    }
    let tool = SandboxedExec::new(config(&dirs, Some(Duration::from_secs(1))), &dirs.a)
        .build()
        .unwrap();
    assert_eq!(tool.name(), "exec");

    // No shell: `$HOME` and `>` are plain arguments.
    let echoed = run(&tool, json!({"command": ["echo", "$HOME", ">", "it's"]}))
        .await
        .unwrap();
    assert_eq!(text(&echoed), "$HOME > it's\n");

    run(&tool, json!({"command": ["touch", "made"]}))
        .await
        .unwrap();
    assert!(dirs.a.join("made").exists());

    let denied = failure(run(&tool, json!({"command": ["touch", dirs.b.join("z")]})).await);
    assert!(denied.contains("Permission denied"), "{denied:?}");
    assert!(denied.contains("Command exited with code 1"), "{denied:?}");
    assert_b_untouched(&dirs);

    let missing = failure(run(&tool, json!({"command": ["no-such-program-here"]})).await);
    assert!(
        missing.contains("Command exited with code 127"),
        "{missing:?}"
    );

    let err = run(&tool, json!({"command": ["sleep", "30"], "timeout": 60}))
        .await
        .unwrap_err();
    assert!(
        err.0.contains("Command timed out after 1 seconds"),
        "{err:?}"
    );

    let bad = run(&tool, json!({"command": "echo hi"})).await.unwrap_err();
    assert!(bad.0.contains("non-empty array of strings"), "{bad:?}");
}

#[test]
fn sandbox_tools_replaces_bash_and_exec_and_confines_the_file_tools() {
    let dirs = dirs();
    if !landlock_or_refusal(&dirs) {
        return;
    }
    let exec_stub = SandboxedExec::new(SandboxConfig::new(LAUNCHER), &dirs.a)
        .build()
        .unwrap();
    let read = pi_coding_agent::tools::read::read_tool(dirs.a.clone());
    let tools = vec![
        bash_tool(dirs.a.clone(), BashOptions::default()),
        Arc::clone(&read),
        exec_stub,
    ];
    let originals: Vec<_> = tools.iter().map(Arc::as_ptr).collect();
    let sandboxed =
        sandbox_tools(tools, &config(&dirs, None), &dirs.a, BashOptions::default()).unwrap();
    let names: Vec<_> = sandboxed.iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["bash", "read", "exec"]);
    // `read` is the same tool behind the path check.
    assert!(!Arc::ptr_eq(&sandboxed[1], &read));
    assert_eq!(sandboxed[1].parameters(), read.parameters());
    assert_ne!(Arc::as_ptr(&sandboxed[0]), originals[0]);
    assert_ne!(Arc::as_ptr(&sandboxed[2]), originals[2]);

    // A missing launcher or write path is reported when the tools are built.
    let mut no_launcher = config(&dirs, None);
    no_launcher.launcher = dirs.a.join("pi-sandbox");
    let bash = vec![bash_tool(dirs.a.clone(), BashOptions::default())];
    let err = sandbox_tools(bash.clone(), &no_launcher, &dirs.a, BashOptions::default());
    assert!(matches!(err, Err(SandboxError::LauncherNotFound(_))));
    let mut bad_path = config(&dirs, None);
    bad_path.allowed_write_paths.push(PathBuf::from("missing"));
    let err = sandbox_tools(bash, &bad_path, &dirs.a, BashOptions::default());
    assert!(matches!(err, Err(SandboxError::BadPath { .. })));
}
