//! Suspending pi to the shell as pi 1.6 does: Ctrl+Z and `kill -TSTP` from outside both
//! restore the terminal (main screen, mouse reports off) before pi stops, and `fg` brings
//! the fullscreen UI back, redrawn. Ours and pi 1.6.0 (`PI_TS16`) in an interactive bash in
//! tmux, the same steps and the same terminal states for both.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::process::Command;
use std::time::Duration;

use mock_llm::MockServer;
use serde_json::json;
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path, stub_search_tools};

const WAIT: Duration = Duration::from_secs(15);

/// The children of process `pid`.
fn children(pid: &str) -> Vec<String> {
    let out = Command::new("pgrep").args(["-P", pid]).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(str::to_owned)
        .collect()
}

/// Waits until tmux reports the pane's screen and mouse state as `alternate` and `mouse`.
fn wait_state(tmux: &Tmux, what: &str, alternate: &str, mouse: &str, needle: &str) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let state = (
            tmux.display("#{alternate_on}"),
            tmux.display("#{mouse_any_flag}#{mouse_button_flag}"),
        );
        let screen = tmux.screen();
        if state.0 == alternate && state.1 == mouse && screen.contains(needle) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: {state:?}, wanted ({alternate}, {mouse}) and {needle:?}:\n{screen}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ctrl_z_and_kill_tstp_restore_the_terminal_and_fg_redraws_as_16() {
    if !tmux::available() || Command::new("bash").arg("--version").output().is_err() {
        eprintln!("tmux or bash is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({}));
        if wrapper.is_some() {
            stub_search_tools(&env.agent);
        }
        let pi = program_path(&wrapper);
        let vars = [
            ("PI_OFFLINE", "1"),
            ("PI_BIN", pi.as_str()),
            ("PS1", "shell$ "),
        ];
        let tmux = Tmux::start_program(
            &env,
            "bash",
            &vars,
            &["--norc", "--noprofile", "-i"],
            100,
            30,
        );
        tmux.wait(&format!("{name}: shell"), WAIT, |s| s.contains("shell$"));
        tmux.type_text("\"$PI_BIN\"");
        tmux.keys(&["Enter"]);
        // Fullscreen: the alternate screen, and the mouse reported. The tmux warning comes
        // last (pi 1.6.0 may still drop a key before it).
        wait_state(&tmux, &format!("{name}: started"), "1", "11", "mock-model");
        tmux.wait(&format!("{name}: settled"), WAIT, |s| {
            s.contains("extended-keys")
        });

        tmux.keys(&["C-z"]);
        wait_state(&tmux, &format!("{name}: Ctrl+Z"), "0", "00", "Stopped");
        tmux.type_text("fg");
        tmux.keys(&["Enter"]);
        wait_state(&tmux, &format!("{name}: fg"), "1", "11", "mock-model");

        // The same from outside: pi is the shell's child.
        let pane = tmux.display("#{pane_pid}");
        let shell = children(&pane);
        assert_eq!(shell.len(), 1, "{name}: the shell under {pane}");
        let pis_running = children(&shell[0]);
        assert_eq!(pis_running.len(), 1, "{name}: pi under the shell");
        let status = Command::new("kill")
            .args(["-TSTP", &pis_running[0]])
            .status()
            .unwrap();
        assert!(status.success());
        wait_state(&tmux, &format!("{name}: kill -TSTP"), "0", "00", "Stopped");
        tmux.type_text("fg");
        tmux.keys(&["Enter"]);
        wait_state(&tmux, &format!("{name}: fg again"), "1", "11", "mock-model");

        // pi still works after both, and leaves as usual.
        tmux.type_text("hello");
        tmux.wait(&format!("{name}: typed"), WAIT, |s| s.contains("hello"));
        tmux.keys(&["C-c"]);
        tmux.wait(&format!("{name}: cleared"), WAIT, |s| !s.contains("hello"));
        tmux.keys(&["C-d"]);
        wait_state(&tmux, &format!("{name}: exited"), "0", "00", "shell$");
    }
}
