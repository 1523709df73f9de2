//! `pi --sandbox` (and settings `sandbox`) through the real binary: bash and the file tools
//! may write in the cwd, the temp dir and the configured paths and nowhere else; the
//! network can be turned off; the footer says the sandbox is on. On a kernel without
//! Landlock the run is refused with the reason instead.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::PathBuf;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use mock_llm::{Item, MockServer, Script};
use serde_json::{Value, json};
use support::rpc::Env;

/// The scratch layout: `work` (the cwd), `tmp` (the run's TMPDIR), `outside` (protected,
/// holding `keep.txt`) and `extra` (allowed by settings when a test says so).
struct Dirs {
    tmp: PathBuf,
    outside: PathBuf,
    extra: PathBuf,
}

fn dirs(env: &Env) -> Dirs {
    let root = env.dir.path();
    let dirs = Dirs {
        tmp: root.join("tmp"),
        outside: root.join("outside"),
        extra: root.join("extra"),
    };
    for dir in [&dirs.tmp, &dirs.outside, &dirs.extra] {
        std::fs::create_dir_all(dir).unwrap();
    }
    std::fs::write(dirs.outside.join("keep.txt"), "original\n").unwrap();
    dirs
}

fn pi(env: &Env, dirs: &Dirs, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pi"))
        .args(args)
        .current_dir(&env.work)
        .env("PI_CODING_AGENT_DIR", &env.agent)
        .env("HOME", env.dir.path())
        .env("TMPDIR", &dirs.tmp)
        .env_remove("PI_CODING_AGENT_SESSION_DIR")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("pi runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The results of a JSON-mode run's tool calls, in the order of the calls (they may end
/// in another order): (is error, result text).
fn tool_results(output: &Output) -> Vec<(bool, String)> {
    let events: Vec<Value> = text(&output.stdout)
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .collect();
    events
        .iter()
        .filter(|event| event["type"] == "tool_execution_start")
        .map(|start| {
            let end = events
                .iter()
                .find(|e| {
                    e["type"] == "tool_execution_end" && e["toolCallId"] == start["toolCallId"]
                })
                .unwrap();
            let text = end["result"]["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_owned();
            (end["isError"] == true, text)
        })
        .collect()
}

/// Whether Landlock works here; when it does not, checks that `--sandbox` is refused with
/// the reason and runs nothing.
fn landlock_or_refusal(env: &Env, dirs: &Dirs) -> bool {
    match pi_coding_agent::sandbox::landlock_available() {
        Ok(_) => true,
        Err(_) => {
            assert!(
                std::env::var_os("PI_TEST_REQUIRE_LANDLOCK").is_none(),
                "Landlock is required here"
            );
            let out = pi(env, dirs, &["--sandbox", "-p", "hi"]);
            assert_eq!(out.status.code(), Some(1));
            assert!(
                text(&out.stderr).contains("--sandbox: Landlock is not available"),
                "{}",
                text(&out.stderr)
            );
            false
        }
    }
}

fn calls(server: &MockServer, items: Vec<Item>) {
    server.push(Script::new(items));
    server.push(Script::text("done"));
}

fn outside_path(dirs: &Dirs, name: &str) -> String {
    dirs.outside.join(name).display().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_outside_are_refused_for_bash_and_the_file_tools() {
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let dirs = dirs(&env);
    if !landlock_or_refusal(&env, &dirs) {
        return;
    }
    let keep = outside_path(&dirs, "keep.txt");
    calls(
        &server,
        vec![
            Item::tool_call(
                "bash",
                json!({"command": "echo in > inside.txt && echo ok"}),
            ),
            Item::tool_call(
                "bash",
                json!({"command": format!("echo out > {}", outside_path(&dirs, "bash.txt"))}),
            ),
            Item::tool_call(
                "bash",
                json!({"command": "echo t > \"$TMPDIR/tmp.txt\" && echo tmp-ok"}),
            ),
            Item::tool_call(
                "write",
                json!({"path": "sub/written.txt", "content": "w\n"}),
            ),
            Item::tool_call(
                "write",
                json!({"path": outside_path(&dirs, "write.txt"), "content": "w\n"}),
            ),
            Item::tool_call(
                "edit",
                json!({"path": keep, "edits": [{"oldText": "original", "newText": "changed"}]}),
            ),
            Item::tool_call("read", json!({"path": keep})),
        ],
    );
    let out = pi(&env, &dirs, &["--sandbox", "--mode", "json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let results = tool_results(&out);
    assert_eq!(results.len(), 7, "{results:?}");

    assert_eq!(results[0], (false, "ok\n".to_owned()));
    assert_eq!(
        std::fs::read_to_string(env.work.join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(results[1].0, "bash wrote outside: {:?}", results[1]);
    assert!(
        results[1].1.contains("Permission denied"),
        "{:?}",
        results[1]
    );
    assert!(!dirs.outside.join("bash.txt").exists());
    assert_eq!(results[2], (false, "tmp-ok\n".to_owned()));
    assert!(dirs.tmp.join("tmp.txt").exists());

    assert!(!results[3].0, "{:?}", results[3]);
    assert_eq!(
        std::fs::read_to_string(env.work.join("sub/written.txt")).unwrap(),
        "w\n"
    );
    assert!(results[4].0, "write outside: {:?}", results[4]);
    assert!(results[4].1.contains("Sandbox"), "{:?}", results[4]);
    assert!(!dirs.outside.join("write.txt").exists());
    assert!(results[5].0, "edit outside: {:?}", results[5]);
    assert_eq!(std::fs::read_to_string(&keep).unwrap(), "original\n");
    // Reading stays allowed everywhere.
    assert_eq!(results[6], (false, "original\n".to_owned()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn settings_turn_it_on_add_write_paths_and_turn_the_network_off() {
    let server = MockServer::start().await.unwrap();
    let port = server.addr().port();
    let probe = format!("exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected");
    // Off the sandbox and with it (the network on by default), the connection works.
    for settings in [json!({}), json!({"sandbox": true})] {
        let env = Env::new(&server, 128_000, settings);
        let dirs = dirs(&env);
        if !landlock_or_refusal(&env, &dirs) {
            return;
        }
        calls(
            &server,
            vec![Item::tool_call("bash", json!({"command": probe}))],
        );
        let out = pi(&env, &dirs, &["--mode", "json", "go"]);
        assert_eq!(tool_results(&out), [(false, "connected\n".to_owned())]);
    }

    let env = Env::new(&server, 128_000, json!({}));
    let dirs = dirs(&env);
    let settings = json!({
        "defaultProvider": "mock", "defaultModel": "mock-model",
        "sandbox": {"writePaths": [dirs.extra.display().to_string()], "network": false}
    });
    std::fs::write(env.agent.join("settings.json"), settings.to_string()).unwrap();
    let extra = dirs.extra.join("e.txt").display().to_string();
    calls(
        &server,
        vec![
            Item::tool_call(
                "bash",
                json!({"command": format!("echo e > {extra} && echo ok")}),
            ),
            Item::tool_call(
                "bash",
                json!({"command": format!("echo out > {}", outside_path(&dirs, "o.txt"))}),
            ),
            Item::tool_call("bash", json!({"command": probe})),
        ],
    );
    let out = pi(&env, &dirs, &["--mode", "json", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let results = tool_results(&out);
    assert_eq!(results[0], (false, "ok\n".to_owned()));
    assert!(results[1].0, "{:?}", results[1]);
    assert!(!dirs.outside.join("o.txt").exists());
    assert!(results[2].0, "the network stayed on: {:?}", results[2]);
    assert!(!results[2].1.contains("connected"), "{:?}", results[2]);

    // A malformed setting is a clear error, and nothing runs.
    std::fs::write(
        env.agent.join("settings.json"),
        json!({"defaultProvider": "mock", "defaultModel": "mock-model", "sandbox": "yes"})
            .to_string(),
    )
    .unwrap();
    let out = pi(&env, &dirs, &["-p", "go"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("\"sandbox\" must be true, false or an object"),
        "{}",
        text(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_footer_shows_the_sandbox() {
    if !support::tmux::available() {
        eprintln!("skipped: tmux is not installed");
        return;
    }
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let dirs = dirs(&env);
    if !landlock_or_refusal(&env, &dirs) {
        return;
    }
    let plain = support::tmux::Tmux::start(&env, &[], 100, 30);
    let screen = plain.wait_for("mock-model");
    assert!(!screen.contains("[sandbox]"), "{screen}");
    drop(plain);
    let sandboxed = support::tmux::Tmux::start(&env, &["--sandbox"], 100, 30);
    sandboxed.wait("the sandbox label", Duration::from_secs(20), |s| {
        s.contains("[sandbox]") && s.contains("mock-model")
    });
}

/// What is in the run's TMPDIR, by name.
fn leftovers(dirs: &Dirs) -> Vec<String> {
    std::fs::read_dir(&dirs.tmp)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

/// A sandboxed run leaves nothing in the temp dir: not after a normal exit, not after
/// SIGTERM, SIGINT or SIGHUP in the middle of a sandboxed command. A stale extension-host
/// socket of a process that was killed is removed at the next start.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_is_left_in_the_temp_dir() {
    use std::io::BufRead;
    let server = MockServer::start().await.unwrap();
    let env = Env::new(&server, 128_000, json!({}));
    let dirs = dirs(&env);
    if !landlock_or_refusal(&env, &dirs) {
        return;
    }
    // What `kill -9` left: a socket named for a process that no longer runs.
    let mut gone = Command::new("true").spawn().unwrap();
    let dead = gone.id();
    gone.wait().unwrap();
    let stale = dirs.tmp.join(format!(
        "pi-ext-{dead}-0123456789abcdef0123456789abcdef.sock"
    ));
    std::fs::write(&stale, "").unwrap();

    calls(
        &server,
        vec![
            Item::tool_call("bash", json!({"command": "echo one"})),
            Item::tool_call("bash", json!({"command": "echo two"})),
        ],
    );
    let out = pi(&env, &dirs, &["--sandbox", "-p", "go"]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(leftovers(&dirs), Vec::<String>::new());

    for (signal, code) in [
        (nix::sys::signal::Signal::SIGTERM, 143),
        (nix::sys::signal::Signal::SIGINT, 130),
        (nix::sys::signal::Signal::SIGHUP, 129),
    ] {
        server.push(Script::new(vec![Item::tool_call(
            "bash",
            json!({"command": "echo started; exec sleep 60"}),
        )]));
        let mut child = Command::new(env!("CARGO_BIN_EXE_pi"))
            .args(["--sandbox", "--mode", "json", "go"])
            .current_dir(&env.work)
            .env("PI_CODING_AGENT_DIR", &env.agent)
            .env("HOME", env.dir.path())
            .env("TMPDIR", &dirs.tmp)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        // The command has printed: the sandboxed shell is running.
        let stdout = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut lines = stdout.lines();
        let started = lines
            .by_ref()
            .map_while(Result::ok)
            .any(|line| line.contains("\"tool_execution_update\"") && line.contains("started"));
        assert!(started, "{signal}: the command never ran");
        let pid = nix::unistd::Pid::from_raw(child.id() as i32);
        nix::sys::signal::kill(pid, signal).unwrap();
        let rest: Vec<String> = lines.map_while(Result::ok).collect();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{signal}: {rest:?}");
        assert_eq!(leftovers(&dirs), Vec::<String>::new(), "{signal}");
    }
}
