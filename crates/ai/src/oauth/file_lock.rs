//! The lock on a credentials file (`auth.json`, `mcp-auth.json`) shared with the TypeScript pi: like its `proper-lockfile`, a
//! directory `<real path of auth.json>.lock` made with `mkdir` (atomic), taken over when
//! its mtime is older than 10 s (a holder that died), removed on release.

use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

/// proper-lockfile's default: a lock not refreshed for this long is stale.
const STALE: Duration = Duration::from_secs(10);
/// How long to wait for another holder before giving up.
const WAIT: Duration = Duration::from_secs(30);

/// Held while alive; the directory goes when it drops.
#[derive(Debug)]
pub struct FileLock {
    dir: PathBuf,
}

impl FileLock {
    /// Takes the lock for `file` (its real path when it exists), waiting for another
    /// holder up to 30 s.
    pub fn acquire(file: &Path) -> io::Result<Self> {
        let real = std::fs::canonicalize(file).unwrap_or_else(|_| file.to_path_buf());
        let mut dir = real.into_os_string();
        dir.push(".lock");
        let dir = PathBuf::from(dir);
        let started = Instant::now();
        let mut pause = Duration::from_millis(5);
        loop {
            match std::fs::create_dir(&dir) {
                Ok(()) => return Ok(Self { dir }),
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    if is_stale(&dir) {
                        // Another waiter may take it over at the same moment: whoever
                        // makes the directory next wins.
                        let _ = std::fs::remove_dir(&dir);
                        continue;
                    }
                    if started.elapsed() > WAIT {
                        return Err(io::Error::new(
                            io::ErrorKind::TimedOut,
                            format!("{} is locked by another process", file.display()),
                        ));
                    }
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(Duration::from_millis(100));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

impl FileLock {
    /// Marks the lock as alive (its mtime), so waiters do not take it over as stale while
    /// a long step (a token refresh) runs under it.
    pub fn touch(&self) {
        if let Ok(dir) = std::fs::File::open(&self.dir) {
            let _ = dir.set_modified(SystemTime::now());
        }
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

fn is_stale(dir: &Path) -> bool {
    std::fs::metadata(dir)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|modified| SystemTime::now().duration_since(modified).ok())
        .is_some_and(|age| age > STALE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_a_stale_lock_is_taken_over() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("auth.json");
        std::fs::write(&file, "{}").unwrap();
        let lock_dir = dir.path().join("auth.json.lock");
        {
            let _held = FileLock::acquire(&file).unwrap();
            assert!(lock_dir.is_dir());
            let (sender, receiver) = std::sync::mpsc::channel();
            let waiting = file.clone();
            let waiter = std::thread::spawn(move || {
                let lock = FileLock::acquire(&waiting).unwrap();
                sender.send(()).unwrap();
                drop(lock);
            });
            assert!(
                receiver.recv_timeout(Duration::from_millis(100)).is_err(),
                "the second holder waits"
            );
            drop(_held);
            receiver.recv_timeout(Duration::from_secs(5)).unwrap();
            waiter.join().unwrap();
        }
        assert!(!lock_dir.exists());
        // A lock left by a dead process, 20 s old.
        std::fs::create_dir(&lock_dir).unwrap();
        let old = SystemTime::now() - Duration::from_secs(20);
        std::fs::File::open(&lock_dir)
            .unwrap()
            .set_modified(old)
            .unwrap();
        drop(FileLock::acquire(&file).unwrap());
        assert!(!lock_dir.exists());
    }
}
