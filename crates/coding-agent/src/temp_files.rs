//! The short-lived files pi puts in the temp dir, named `pi-<kind>-<pid>-…` so that what a
//! killed pi (`kill -9`) left behind is recognised and removed at the next start. Every
//! one of them is removed by pi itself on a normal exit or a signal; the sweep is only for
//! a process that could not clean up.

use std::path::{Path, PathBuf};

/// The kinds of temp files, as the word after `pi-` in their names.
const KINDS: [&str; 2] = ["ext", "editor"];

/// A path in the temp dir for this process: `pi-<kind>-<pid>-<random><suffix>`.
pub fn path(kind: &str, suffix: &str) -> PathBuf {
    debug_assert!(KINDS.contains(&kind), "unknown temp file kind {kind}");
    std::env::temp_dir().join(format!(
        "pi-{kind}-{}-{}{suffix}",
        std::process::id(),
        uuid::Uuid::new_v4().simple()
    ))
}

/// Removes the temp files of pi processes that no longer run; how many were removed.
pub fn sweep_stale() -> usize {
    sweep_stale_in(&std::env::temp_dir())
}

/// [`sweep_stale`] in `dir`.
pub fn sweep_stale_in(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        if is_running(pid) {
            continue;
        }
        // Files and sockets only: a directory of this name is not ours.
        let is_file = entry.file_type().is_ok_and(|t| !t.is_dir());
        if is_file && std::fs::remove_file(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The pid in a name made by [`path`], or `None` for any other name.
fn owner_pid(name: &str) -> Option<i32> {
    let rest = name.strip_prefix("pi-")?;
    let (kind, rest) = rest.split_once('-')?;
    if !KINDS.contains(&kind) {
        return None;
    }
    let (pid, rest) = rest.split_once('-')?;
    let random = rest.split('.').next()?;
    let is_random = random.len() == 32 && random.bytes().all(|b| b.is_ascii_hexdigit());
    let pid: i32 = pid.parse().ok()?;
    (is_random && pid > 0).then_some(pid)
}

/// Whether a process with this pid exists (one we may not signal still counts).
fn is_running(pid: i32) -> bool {
    use nix::errno::Errno;
    match nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), None) {
        Ok(()) => true,
        Err(Errno::ESRCH) => false,
        Err(_) => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_the_pid() {
        let made = path("ext", ".sock");
        let name = made.file_name().unwrap().to_str().unwrap();
        assert_eq!(owner_pid(name), Some(std::process::id() as i32));
        let random = "0123456789abcdef0123456789abcdef";
        assert_eq!(owner_pid(&format!("pi-editor-42-{random}.pi.md")), Some(42));
        for other in [
            format!("pi-bash-42-{random}.log"),
            format!("pi-ext-x-{random}.sock"),
            "pi-ext-42-short.sock".to_owned(),
            format!("pi-sandbox-{random}"),
            "notes.txt".to_owned(),
        ] {
            assert_eq!(owner_pid(&other), None, "{other}");
        }
    }

    #[test]
    fn only_files_of_ended_processes_go() {
        let dir = tempfile::tempdir().unwrap();
        // A child that has been reaped: its pid names no process (until reused, which
        // the sweep then takes for running and leaves alone).
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let random = "0123456789abcdef0123456789abcdef";
        let stale = dir.path().join(format!("pi-ext-{dead}-{random}.sock"));
        let live = dir
            .path()
            .join(format!("pi-ext-{}-{random}.sock", std::process::id()));
        let foreign = dir.path().join(format!("pi-bash-{dead}-{random}.log"));
        let folder = dir.path().join(format!("pi-editor-{dead}-{random}"));
        for file in [&stale, &live, &foreign] {
            std::fs::write(file, "").unwrap();
        }
        std::fs::create_dir(&folder).unwrap();
        let removed = sweep_stale_in(dir.path());
        if is_running(dead as i32) {
            return; // the pid was taken again in between
        }
        assert_eq!(removed, 1);
        assert!(!stale.exists());
        assert!(live.exists() && foreign.exists() && folder.exists());
    }
}
