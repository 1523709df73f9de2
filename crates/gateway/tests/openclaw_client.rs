//! OpenClaw's own client (`openclaw` 2026.9.6 from npm, installed by
//! `scripts/install-openclaw-client.sh`) against pi-gateway's OpenClaw listener, with
//! mock-llm behind it: `gateway call`, `agent` (text and JSON), a refused token, and the
//! TUI in tmux (history, a streamed reply, a tool card, an abort). Where the reference kit
//! is next to the checkout (`../shared/reference/openclaw`), its `check_client.sh` runs too.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use mock_llm::{Fault, Script};
use pi_gateway::openclaw::{self, OpenClawHandle};
use serde_json::Value;
use support::{ALICE, Env, relaxed};

async fn start() -> (Env, OpenClawHandle) {
    let env = Env::start(relaxed()).await;
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let gateway = std::sync::Arc::clone(env.gateway.as_ref().unwrap().gateway());
    let handle = openclaw::serve(listener, gateway).unwrap();
    (env, handle)
}

/// Runs the client with a private HOME under `env`.
async fn run(oc: &Path, env: &Env, args: &[&str], vars: &[(&str, &str)]) -> Output {
    let mut command = Command::new(oc);
    command
        .args(args)
        .env("OPENCLAW_KIT_HOME", env.dir.path().join("oc-home"))
        .env_remove("OPENCLAW_GATEWAY_URL")
        .env_remove("OPENCLAW_GATEWAY_TOKEN");
    for (key, value) in vars {
        command.env(key, value);
    }
    tokio::task::spawn_blocking(move || command.output().unwrap())
        .await
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A tmux session running the TUI.
struct Tui {
    socket: String,
}

impl Tui {
    fn start(oc: &Path, env: &Env, url: &str, token: &str) -> Tui {
        let socket = format!("pi-oc-{}-{}", std::process::id(), rand_suffix());
        let line = format!(
            "env OPENCLAW_KIT_HOME='{}' '{}' tui --url '{url}' --token '{token}' 2>'{}'",
            env.dir.path().join("oc-tui-home").display(),
            oc.display(),
            env.dir.path().join("tui.err").display()
        );
        let status = Command::new("tmux")
            .args([
                "-L",
                &socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "tui",
            ])
            .args(["-x", "120", "-y", "40", &line])
            .status()
            .unwrap();
        assert!(status.success());
        Tui { socket }
    }

    fn screen(&self) -> String {
        let out = Command::new("tmux")
            .args(["-L", &self.socket, "capture-pane", "-p", "-J", "-t", "tui"])
            .output()
            .unwrap();
        text(&out.stdout)
    }

    fn keys(&self, keys: &[&str]) {
        Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "tui"])
            .args(keys)
            .status()
            .unwrap();
    }

    /// Types a line and sends it.
    fn send(&self, line: &str) {
        Command::new("tmux")
            .args(["-L", &self.socket, "send-keys", "-t", "tui", "-l", line])
            .status()
            .unwrap();
        std::thread::sleep(Duration::from_millis(300));
        self.keys(&["Enter"]);
    }

    /// Waits until the screen satisfies `check`; the screen then.
    async fn wait(&self, what: &str, check: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            assert!(
                Instant::now() < deadline,
                "timed out waiting for {what}; screen:\n{screen}"
            );
            tokio::time::sleep(Duration::from_millis(250)).await;
        }
    }
}

impl Drop for Tui {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .status();
    }
}

fn rand_suffix() -> String {
    uuid::Uuid::new_v4().to_string()[..8].to_owned()
}

/// The status word of the TUI's status line (`idle`, `streaming`, `aborted`, …).
fn idle(screen: &str) -> bool {
    screen.lines().any(|l| l.contains("connected | idle"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openclaws_own_client_calls_asks_and_chats_in_its_tui() {
    let Some(oc) = support::openclaw_client() else {
        return;
    };
    let (env, listener) = start().await;
    let url = listener.url();
    std::fs::write(env.work.join("hello.txt"), "hello-from-file\n").unwrap();

    // `gateway call` with a wrong token: refused with OpenClaw's message.
    let out = run(
        &oc,
        &env,
        &[
            "gateway",
            "call",
            "sessions.list",
            "--url",
            &url,
            "--token",
            "wrong",
            "--json",
        ],
        &[],
    )
    .await;
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("unauthorized: gateway token mismatch")
            || text(&out.stdout).contains("unauthorized: gateway token mismatch"),
        "{}{}",
        text(&out.stdout),
        text(&out.stderr)
    );

    // `agent --message` (the URL counts as remote: it lists agents first), then --json.
    env.mock.push(Script::text("Hello from pi-rs"));
    let vars = [
        ("OPENCLAW_GATEWAY_URL", url.as_str()),
        ("OPENCLAW_GATEWAY_TOKEN", ALICE),
    ];
    let out = run(&oc, &env, &["agent", "--message", "first question"], &vars).await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(text(&out.stdout).trim(), "Hello from pi-rs");
    env.mock.push(Script::text("a JSON answer"));
    let out = run(
        &oc,
        &env,
        &["agent", "--agent", "main", "--message", "second", "--json"],
        &vars,
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["status"], "ok", "{json}");
    assert_eq!(json["result"]["payloads"][0]["text"], "a JSON answer");

    // `gateway call sessions.list` lists the session the agent used.
    let out = run(
        &oc,
        &env,
        &[
            "gateway",
            "call",
            "sessions.list",
            "--url",
            &url,
            "--token",
            ALICE,
            "--json",
        ],
        &[],
    )
    .await;
    assert!(out.status.success(), "{}", text(&out.stderr));
    let listed: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(listed["sessions"][0]["key"], "agent:main:main", "{listed}");

    // The TUI: the history, a streamed reply, a tool card, an abort.
    let tui = Tui::start(&oc, &env, &url, ALICE);
    tui.wait("the history", |s| {
        idle(s) && s.contains("first question") && s.contains("a JSON answer")
    })
    .await;
    // A model that takes a moment before it answers, as real ones do …
    let mut delayed = Script::text("A reply from the mock model, in pieces");
    delayed.fault = Some(Fault::Stall {
        after_events: 0,
        ms: 200,
    });
    env.mock.push(delayed);
    tui.send("tell me something");
    tui.wait("the reply", |s| {
        idle(s) && s.contains("A reply from the mock model, in pieces")
    })
    .await;
    // … and one that answers at once: the whole run can then be over before the TUI has
    // taken `chat.send`'s acknowledgement, which once left it busy for ever.
    tui.send("read hello.txt");
    let screen = tui
        .wait("the tool card and the answer", |s| {
            idle(s) && s.contains("done: hello-from-file")
        })
        .await;
    assert!(screen.contains("Read"), "{screen}");
    assert!(screen.contains("hello.txt"), "{screen}");
    let mut stalled = Script::text("a long reply that stalls in the middle of it");
    stalled.fault = Some(Fault::Stall {
        after_events: 3,
        ms: 30_000,
    });
    env.mock.push(stalled);
    tui.send("talk slowly");
    tui.wait("streaming", |s| s.contains("a long reply")).await;
    tui.keys(&["Escape"]);
    tui.wait("the abort", |s| {
        s.contains("run aborted") || s.contains("| aborted")
    })
    .await;
}

/// The kit's wrong-token check pipes both of the client's outputs into `grep -q` under
/// `pipefail`: when grep finds the refusal in stderr and exits before `cat` has written
/// stdout, `cat` dies of SIGPIPE and the check fails for any gateway, the real one too.
const KIT_RACE: &str =
    r#"cat "$W/call-badtoken.err" "$W/call-badtoken.out" | grep -qiE 'unauthori|token|auth'"#;
/// The same test without the race: grep reads both files itself.
const KIT_STEADY: &str =
    r#"grep -qiE 'unauthori|token|auth' "$W/call-badtoken.err" "$W/call-badtoken.out""#;

/// Copies the kit into `to` with [`KIT_RACE`] replaced by [`KIT_STEADY`]; every other
/// line runs as shipped. Returns the copy's `check_client.sh`.
fn steady_kit(kit_dir: &Path, to: &Path) -> std::path::PathBuf {
    for entry in std::fs::read_dir(kit_dir).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
    let script = to.join("check_client.sh");
    let text = std::fs::read_to_string(&script).unwrap();
    assert_eq!(
        text.matches(KIT_RACE).count(),
        1,
        "the kit's wrong-token check changed; look again at steady_kit"
    );
    // The kit's files are read-only; the copy is replaced, not written through.
    std::fs::remove_file(&script).unwrap();
    std::fs::write(&script, text.replace(KIT_RACE, KIT_STEADY)).unwrap();
    script
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_reference_check_client_passes_where_the_kit_is_present() {
    let Some(oc) = support::openclaw_client() else {
        return;
    };
    let kit_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/reference/openclaw");
    if !kit_dir.join("check_client.sh").exists() {
        eprintln!("the reference kit is not here: skipped");
        return;
    }
    let kit_copy = tempfile::tempdir().unwrap();
    let kit = steady_kit(&kit_dir, kit_copy.path());
    // The kit's python (its wire tap needs websockets) from the venv the client's install
    // script makes, ahead of the system's.
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/openclaw-client/venv/bin");
    let path = std::env::join_paths(std::iter::once(venv).chain(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    )))
    .unwrap();
    let has_websockets = Command::new("python3")
        .args(["-c", "import websockets"])
        .env("PATH", &path)
        .status()
        .is_ok_and(|s| s.success());
    if !has_websockets {
        assert!(
            std::env::var_os("PI_TEST_REQUIRE_OPENCLAW").is_none(),
            "python websockets is not installed (scripts/install-openclaw-client.sh)"
        );
        eprintln!("python websockets is not installed: skipped");
        return;
    }
    let (env, listener) = start().await;
    // One reply each for `agent --json`, `agent --message` and the TUI.
    for _ in 0..3 {
        env.mock.push(Script::text("Hello from pi-rs"));
    }
    let url = listener.url();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("bash")
            .arg(kit)
            .args(["--openclaw", oc.to_str().unwrap()])
            .args(["--expect", "Hello from pi-rs", &url, ALICE])
            .env("CHECK_TIMEOUT", "60")
            .env("PATH", path)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let report = text(&out.stdout);
    println!("{report}");
    assert!(
        report.contains("SUMMARY"),
        "{report}\n{}",
        text(&out.stderr)
    );
    assert!(!report.contains("FAIL"), "{report}");
    assert!(out.status.success(), "{report}");
}
