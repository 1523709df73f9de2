//! What one shell command started, found again so it can be ended: every live process in
//! the command's process group, and every process carrying the command's run marker in its
//! environment (what left the group through `setsid` or a double fork and `setsid`).
//! The marker is an environment variable every descendant inherits unless it replaces its
//! whole environment, so it finds descendants whose parent is long gone.

use std::collections::BTreeSet;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::time::{Instant, sleep};

/// The environment variable holding the run marker of the command that started a process.
pub const RUN_MARKER_ENV: &str = "PI_BASH_RUN";

/// How often the process table is read again while waiting for processes to end.
const POLL: Duration = Duration::from_millis(20);
/// The pause before the scan that confirms an empty one.
const CONFIRM: Duration = Duration::from_millis(5);
/// How many SIGKILL rounds are tried against processes that keep forking.
const KILL_ROUNDS: usize = 50;

/// The processes of one command: its process group and its run marker.
#[derive(Debug, Clone)]
pub struct RunScope {
    group: Option<Pid>,
    marker: String,
    /// `NAME=value\0`, as the marker appears in `/proc/<pid>/environ`.
    needle: Vec<u8>,
}

impl RunScope {
    /// A scope with a fresh marker and no group yet.
    pub fn new() -> Self {
        let marker = uuid::Uuid::new_v4().simple().to_string();
        let needle = format!("{RUN_MARKER_ENV}={marker}\0").into_bytes();
        Self {
            group: None,
            marker,
            needle,
        }
    }

    /// The value of [`RUN_MARKER_ENV`] to give the command.
    pub fn marker(&self) -> &str {
        &self.marker
    }

    /// Sets the process group (the shell's pid; it leads its own group).
    pub fn set_group(&mut self, group: Option<Pid>) {
        self.group = group;
    }

    /// Live (non-zombie) processes of this command, other than this process.
    pub fn members(&self) -> Vec<Pid> {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            // No /proc: only the group can be found.
            return match self.group {
                Some(group) if killpg(group, None).is_ok() => vec![group],
                _ => Vec::new(),
            };
        };
        let own = std::process::id();
        let mut found = Vec::new();
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid == own {
                continue;
            }
            let Some((state, pgrp)) = read_stat(pid) else {
                continue;
            };
            if matches!(state, 'Z' | 'X' | 'x') {
                continue;
            }
            let in_group = self.group.is_some_and(|g| g.as_raw() == pgrp);
            if (in_group || self.carries_marker(pid))
                && let Ok(raw) = i32::try_from(pid)
            {
                found.push(Pid::from_raw(raw));
            }
        }
        found
    }

    /// Whether a live process of this command is left.
    pub fn any_alive(&self) -> bool {
        !self.members().is_empty()
    }

    /// Sends `signal` to the group and to every marked process; returns who was signalled.
    pub fn signal(&self, signal: Signal) -> Vec<Pid> {
        // Found before signalling, so those the signal ends at once are still counted.
        let members = self.members();
        if let Some(group) = self.group {
            // ESRCH only means the group is already gone.
            let _ = killpg(group, signal);
        }
        for pid in &members {
            let _ = kill(*pid, signal);
        }
        members
    }

    /// Ends every process of this command: SIGTERM, then SIGKILL to what is left after
    /// `grace` (at once when `grace` is zero). Returns how many distinct processes were
    /// ended, not counting `exclude` (the shell itself).
    pub async fn end_all(&self, grace: Duration, exclude: Option<Pid>) -> usize {
        let mut ended: BTreeSet<i32> = BTreeSet::new();
        let mut note = |pids: &[Pid]| {
            ended.extend(
                pids.iter()
                    .filter(|pid| Some(**pid) != exclude)
                    .map(|pid| pid.as_raw()),
            );
        };
        let deadline = Instant::now() + grace;
        let mut signal = Signal::SIGTERM;
        let mut rounds = 0;
        loop {
            let mut found = self.signal(signal);
            if found.is_empty() {
                // A process in the middle of `exec` can show an empty environment for an
                // instant: only two empty scans in a row mean none is left.
                sleep(CONFIRM).await;
                found = self.signal(signal);
                if found.is_empty() {
                    return ended.len();
                }
            }
            note(&found);
            if signal == Signal::SIGTERM && Instant::now() >= deadline {
                signal = Signal::SIGKILL;
            }
            if signal == Signal::SIGKILL {
                rounds += 1;
                if rounds > KILL_ROUNDS {
                    return ended.len();
                }
            }
            sleep(POLL).await;
        }
    }

    /// Whether `/proc/<pid>/environ` holds this command's marker (unreadable: no).
    fn carries_marker(&self, pid: u32) -> bool {
        let Ok(environ) = std::fs::read(format!("/proc/{pid}/environ")) else {
            return false;
        };
        environ.starts_with(&self.needle)
            || memchr::memmem::find_iter(&environ, &self.needle)
                .any(|at| at > 0 && environ[at - 1] == 0)
    }
}

impl Default for RunScope {
    fn default() -> Self {
        Self::new()
    }
}

/// The state letter and process group of `pid`, from `/proc/<pid>/stat`.
fn read_stat(pid: u32) -> Option<(char, i32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields start after the last `)`.
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse::<i32>().ok()?;
    Some((state, pgrp))
}

/// Whether a live (non-zombie) process is in `group`.
pub fn group_alive(group: Pid) -> bool {
    let mut scope = RunScope::new();
    scope.set_group(Some(group));
    scope.any_alive()
}
