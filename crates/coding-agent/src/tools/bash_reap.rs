//! What one shell command started, found again so it can be ended: every live process in
//! the command's process group, and every process carrying the command's run marker in its
//! environment (what left the group through `setsid` or a double fork and `setsid`).
//! The marker is an environment variable every descendant inherits unless it replaces its
//! whole environment, so it finds descendants whose parent is long gone.

use std::collections::BTreeSet;
use std::os::unix::fs::MetadataExt;
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
    /// When the shell started (clock ticks after boot): an older process is not ours.
    since: u64,
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
            since: 0,
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
        self.since = group
            .and_then(|leader| u32::try_from(leader.as_raw()).ok())
            .and_then(read_stat)
            .map_or(0, |stat| stat.start);
    }

    /// Live (non-zombie) processes of this command, other than this process.
    pub fn members(&self) -> Vec<Pid> {
        self.scan().found
    }

    /// Reads the process table once: this command's live processes, and whether a
    /// process of this user showed no environment (one in the middle of `exec` does, for
    /// an instant, so it may be one of ours).
    fn scan(&self) -> Scan {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            // No /proc: only the group can be found.
            let found = match self.group {
                Some(group) if killpg(group, None).is_ok() => vec![group],
                _ => Vec::new(),
            };
            return Scan {
                found,
                uncertain: false,
            };
        };
        let own = std::process::id();
        let own_uid = std::fs::metadata("/proc/self").map(|m| m.uid()).ok();
        let mut scan = Scan {
            found: Vec::new(),
            uncertain: false,
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name.to_str().and_then(|n| n.parse::<u32>().ok()) else {
                continue;
            };
            if pid == own {
                continue;
            }
            let Some(stat) = read_stat(pid) else {
                continue;
            };
            if matches!(stat.state, 'Z' | 'X' | 'x')
                || stat.flags & PF_KTHREAD != 0
                || stat.start < self.since
            {
                continue;
            }
            let ours = if self.group.is_some_and(|g| g.as_raw() == stat.pgrp) {
                true
            } else {
                match std::fs::read(format!("/proc/{pid}/environ")) {
                    Ok(environ) if !environ.is_empty() => self.holds_marker(&environ),
                    // Empty or unreadable: uncertain only for a process of this user.
                    _ => {
                        let uid = entry.metadata().map(|m| m.uid()).ok();
                        scan.uncertain |= uid.is_some() && uid == own_uid;
                        false
                    }
                }
            };
            if ours && let Ok(raw) = i32::try_from(pid) {
                scan.found.push(Pid::from_raw(raw));
            }
        }
        scan
    }

    /// Whether a live process of this command is left.
    pub fn any_alive(&self) -> bool {
        !self.members().is_empty()
    }

    /// Sends `signal` to the group and to every marked process; returns who was signalled.
    pub fn signal(&self, signal: Signal) -> Vec<Pid> {
        self.signal_scan(signal).found
    }

    fn signal_scan(&self, signal: Signal) -> Scan {
        // Found before signalling, so those the signal ends at once are still counted.
        let scan = self.scan();
        if let Some(group) = self.group {
            // ESRCH only means the group is already gone.
            let _ = killpg(group, signal);
        }
        for pid in &scan.found {
            let _ = kill(*pid, signal);
        }
        scan
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
        // Most processes end within a few milliseconds of SIGTERM: look again soon first.
        let mut poll = Duration::from_millis(2);
        loop {
            let mut scan = self.signal_scan(signal);
            if scan.found.is_empty() && scan.uncertain {
                // A process in the middle of `exec` shows an empty environment for an
                // instant: look again before concluding none is left.
                sleep(CONFIRM).await;
                scan = self.signal_scan(signal);
            }
            let found = scan.found;
            if found.is_empty() {
                return ended.len();
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
            sleep(poll).await;
            poll = (poll * 2).min(POLL);
        }
    }

    /// Whether an environment block (`/proc/<pid>/environ`) holds this command's marker.
    fn holds_marker(&self, environ: &[u8]) -> bool {
        environ.starts_with(&self.needle)
            || memchr::memmem::find_iter(environ, &self.needle)
                .any(|at| at > 0 && environ[at - 1] == 0)
    }
}

impl Default for RunScope {
    fn default() -> Self {
        Self::new()
    }
}

/// What the process table says of one process.
struct Stat {
    state: char,
    pgrp: i32,
    flags: u64,
    /// Clock ticks after boot.
    start: u64,
}

/// One reading of the process table.
struct Scan {
    found: Vec<Pid>,
    uncertain: bool,
}

/// The kernel's flag of its own threads (they have no environment and are never ours).
const PF_KTHREAD: u64 = 0x0020_0000;

/// The state, process group, flags and start time of `pid`, from `/proc/<pid>/stat`.
fn read_stat(pid: u32) -> Option<Stat> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name may hold spaces and parentheses: the fields start after the last `)`.
    let (_, rest) = stat.rsplit_once(')')?;
    let fields: Vec<&str> = rest.split_whitespace().take(20).collect();
    Some(Stat {
        state: fields.first()?.chars().next()?,
        pgrp: fields.get(2)?.parse().ok()?,
        flags: fields.get(6)?.parse().ok()?,
        start: fields.get(19)?.parse().ok()?,
    })
}

/// Whether a live (non-zombie) process is in `group`.
pub fn group_alive(group: Pid) -> bool {
    let mut scope = RunScope::new();
    scope.set_group(Some(group));
    scope.any_alive()
}
