//! Drives the real `pi` binary in a pseudo-terminal through tmux: send keys, read the
//! screen (and the scrollback) as a user would see it.
#![allow(dead_code)]

use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::rpc::Env;

static NEXT: AtomicUsize = AtomicUsize::new(0);

/// Whether tmux is installed (the pty tests skip with a note otherwise).
pub fn available() -> bool {
    Command::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// One `pi` running in its own tmux server.
pub struct Tmux {
    socket: String,
    /// Where the wrapper shell writes pi's exit status.
    exit_file: std::path::PathBuf,
}

impl Tmux {
    /// Starts `pi <args>` in `env.work`, on a `cols`×`rows` terminal.
    pub fn start(env: &Env, args: &[&str], cols: u16, rows: u16) -> Tmux {
        Self::start_with(env, &[], args, cols, rows)
    }

    /// [`Tmux::start`] with extra environment variables.
    pub fn start_with(
        env: &Env,
        vars: &[(&str, &str)],
        args: &[&str],
        cols: u16,
        rows: u16,
    ) -> Tmux {
        Self::start_program(env, env!("CARGO_BIN_EXE_pi"), vars, args, cols, rows)
    }

    /// [`Tmux::start_with`] running another pi (pi 1.6.0's wrapper, say).
    pub fn start_program(
        env: &Env,
        pi: &str,
        vars: &[(&str, &str)],
        args: &[&str],
        cols: u16,
        rows: u16,
    ) -> Tmux {
        let socket = format!(
            "pi-test-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::SeqCst)
        );
        let exit_file = env.dir.path().join(format!("{socket}.exit"));
        let tmux = Tmux {
            socket,
            exit_file: exit_file.clone(),
        };
        // tmux is slow to notice a dead pane at times; a wrapper shell records the status.
        // Then it keeps the terminal open: when the last process on a pane exits right after
        // writing a burst (pi's exit output), tmux may close the pane before it has read
        // all of it (the pane looks drained while the kernel still holds the rest).
        let mut command = vec![
            "sh".to_owned(),
            "-c".to_owned(),
            format!(
                "\"$@\"; echo $? > {}; exec sleep 86400",
                shell_quote(&exit_file.display().to_string())
            ),
            "sh".to_owned(),
            "env".to_owned(),
            // A `CI` variable in the test's environment turns chalk's styles off in the
            // TypeScript pi (supports-color), which no user's terminal does.
            "-u".to_owned(),
            "CI".to_owned(),
            "-u".to_owned(),
            "NO_COLOR".to_owned(),
            "-u".to_owned(),
            "FORCE_COLOR".to_owned(),
            format!("PI_CODING_AGENT_DIR={}", env.agent.display()),
            format!("HOME={}", env.dir.path().display()),
            "COLORTERM=truecolor".to_owned(),
            "ANTHROPIC_API_KEY=".to_owned(),
            "OPENAI_API_KEY=".to_owned(),
        ];
        command.extend(vars.iter().map(|(k, v)| format!("{k}={v}")));
        command.push(pi.to_owned());
        command.extend(args.iter().map(|a| (*a).to_owned()));
        let shell_command = command
            .iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ");
        let out = tmux.run(&[
            "-f",
            "/dev/null",
            "new-session",
            "-d",
            "-s",
            "pi",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
            "-c",
            &env.work.display().to_string(),
            &shell_command,
        ]);
        assert!(
            out.status.success(),
            "tmux new-session: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        tmux.run(&["set-option", "-t", "pi", "remain-on-exit", "on"]);
        tmux.run(&["set-option", "-t", "pi", "history-limit", "10000"]);
        tmux
    }

    fn run(&self, args: &[&str]) -> Output {
        Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .args(args)
            .output()
            .expect("tmux runs")
    }

    /// Types `text` literally.
    pub fn type_text(&self, text: &str) {
        self.run(&["send-keys", "-t", "pi", "-l", text]);
    }

    /// Sends tmux key names: `Enter`, `Escape`, `C-c`, `M-Enter`, `BTab`, `Up`, …
    pub fn keys(&self, keys: &[&str]) {
        let mut args = vec!["send-keys", "-t", "pi"];
        args.extend_from_slice(keys);
        self.run(&args);
    }

    /// Sets a global session or window option (`set -g`); `window-style` sets the colors
    /// tmux reports to OSC 10/11 queries.
    pub fn set_global_option(&self, name: &str, value: &str) {
        self.run(&["set-option", "-g", name, value]);
    }

    /// Sets a server option (`set -s`), e.g. `extended-keys on`.
    pub fn set_server_option(&self, name: &str, value: &str) {
        self.run(&["set-option", "-s", name, value]);
    }

    /// Sends raw bytes as if typed (for sequences tmux has no name for).
    pub fn raw(&self, hex: &[u8]) {
        let hex: Vec<String> = hex.iter().map(|b| format!("{b:02x}")).collect();
        let mut args = vec!["send-keys", "-t", "pi", "-H"];
        let refs: Vec<&str> = hex.iter().map(String::as_str).collect();
        args.extend(refs);
        self.run(&args);
    }

    /// The visible screen, one line per row (trailing spaces trimmed by tmux).
    pub fn screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-t", "pi"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Appends every byte the program writes from now on to `file` (what tmux receives,
    /// before it parses it: hyperlinks and other sequences tmux would not keep).
    pub fn record_output(&self, file: &std::path::Path) {
        let command = format!("cat >> {}", shell_quote(&file.display().to_string()));
        self.run(&["pipe-pane", "-o", "-t", "pi", &command]);
    }

    /// What [`Tmux::record_output`] has recorded in `file` once `done` holds for it, or
    /// after `timeout` (the recording catches up with what tmux already shows).
    pub fn recorded_until(
        file: &std::path::Path,
        timeout: Duration,
        done: impl Fn(&str) -> bool,
    ) -> String {
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let bytes = std::fs::read(file).unwrap_or_default();
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if done(&text) || std::time::Instant::now() > deadline {
                return text;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// The visible screen with its colors and attributes as escape sequences.
    pub fn colored_screen(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-e", "-t", "pi"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The colored screen's non-empty rows above the first border (the transcript and
    /// header of regular mode), trailing blanks trimmed.
    pub fn colored_top(&self) -> Vec<String> {
        let screen = self.colored_screen();
        let rows: Vec<&str> = screen.lines().map(str::trim_end).collect();
        let end = rows
            .iter()
            .position(|r| r.contains("────"))
            .unwrap_or(rows.len());
        rows[..end]
            .iter()
            .filter(|r| !r.is_empty())
            .map(|r| (*r).to_owned())
            .collect()
    }

    /// Scrollback and screen together.
    pub fn history(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-t", "pi", "-S", "-", "-E", "-"]);
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Scrollback and screen with wrapped lines joined (for long URLs), trailing spaces
    /// trimmed.
    pub fn joined_history(&self) -> String {
        let out = self.run(&["capture-pane", "-p", "-J", "-t", "pi", "-S", "-", "-E", "-"]);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim_end)
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Waits until the screen satisfies `check`; panics with the screen after `timeout`.
    pub fn wait(&self, what: &str, timeout: Duration, check: impl Fn(&str) -> bool) -> String {
        let start = Instant::now();
        loop {
            let screen = self.screen();
            if check(&screen) {
                return screen;
            }
            if start.elapsed() > timeout {
                panic!(
                    "timed out waiting for {what}; screen:\n{screen}\n--- history:\n{}",
                    self.history()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the screen satisfies `check` and stays the same across two captures a
    /// little apart, so that a frame caught half drawn is never what a test compares.
    pub fn wait_steady(
        &self,
        what: &str,
        timeout: Duration,
        check: impl Fn(&str) -> bool,
    ) -> String {
        let start = Instant::now();
        loop {
            let left = timeout.saturating_sub(start.elapsed());
            let screen = self.wait(what, left, &check);
            std::thread::sleep(Duration::from_millis(100));
            if self.screen() == screen {
                return screen;
            }
        }
    }

    /// Waits until scrollback and screen contain `needle` (what a program printed as it
    /// exited reaches tmux a little after the exit); returns them.
    pub fn wait_history(&self, needle: &str) -> String {
        let start = Instant::now();
        loop {
            let history = self.history();
            if history.contains(needle) {
                return history;
            }
            if start.elapsed() > Duration::from_secs(15) {
                panic!("timed out waiting for {needle:?} in the history:\n{history}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Waits until the screen contains `needle`.
    pub fn wait_for(&self, needle: &str) -> String {
        self.wait(&format!("{needle:?}"), Duration::from_secs(15), |s| {
            s.contains(needle)
        })
    }

    /// A pane variable (`#{alternate_on}`, `#{mouse_sgr_flag}`, …) as tmux reports it.
    pub fn display(&self, format: &str) -> String {
        let out = self.run(&["display-message", "-p", "-t", "pi", format]);
        String::from_utf8_lossy(&out.stdout).trim().to_owned()
    }

    /// Lets the program set tmux's paste buffer with OSC 52 (`set-clipboard on`).
    pub fn accept_clipboard(&self) {
        self.run(&["set-option", "-s", "set-clipboard", "on"]);
    }

    /// tmux's newest paste buffer (what OSC 52 set), or `None` when there is none.
    pub fn clipboard(&self) -> Option<String> {
        let out = self.run(&["show-buffer"]);
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// How many paste buffers tmux holds (one per OSC 52 copy).
    pub fn buffer_count(&self) -> usize {
        let out = self.run(&["list-buffers"]);
        String::from_utf8_lossy(&out.stdout).lines().count()
    }

    /// Resizes the terminal.
    pub fn resize(&self, cols: u16, rows: u16) {
        self.run(&[
            "resize-window",
            "-t",
            "pi",
            "-x",
            &cols.to_string(),
            "-y",
            &rows.to_string(),
        ]);
    }

    /// The exit status once pi has exited.
    pub fn exit_status(&self) -> Option<i32> {
        let text = std::fs::read_to_string(&self.exit_file).ok()?;
        text.trim().parse().ok()
    }

    /// Waits for pi to exit and returns its status.
    pub fn wait_exit(&self, timeout: Duration) -> i32 {
        let start = Instant::now();
        loop {
            if let Some(code) = self.exit_status() {
                return code;
            }
            if start.elapsed() > timeout {
                panic!("pi did not exit; screen:\n{}", self.screen());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .arg("-L")
            .arg(&self.socket)
            .arg("kill-server")
            .output();
    }
}

fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_./=:,".contains(&b))
    {
        return arg.to_owned();
    }
    format!("'{}'", arg.replace('\'', r"'\''"))
}

/// Counts how often `needle` occurs in `haystack`.
pub fn count(haystack: &str, needle: &str) -> usize {
    haystack.matches(needle).count()
}
