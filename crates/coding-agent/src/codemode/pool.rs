//! The codemode workers of this process: at most `PI_CODEMODE_MAX_WORKERS` (default 2)
//! script threads at once across every session, handed out in arrival order.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Workers when `PI_CODEMODE_MAX_WORKERS` does not say.
pub const DEFAULT_MAX_WORKERS: usize = 2;
/// The longest a script waits for a worker.
pub const WORKER_WAIT: Duration = Duration::from_secs(60);

/// The limit `PI_CODEMODE_MAX_WORKERS` sets: a positive integer, else the default.
pub fn max_workers() -> usize {
    std::env::var("PI_CODEMODE_MAX_WORKERS")
        .ok()
        .and_then(|v| v.trim().parse::<usize>().ok())
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_MAX_WORKERS)
}

fn slots() -> &'static Arc<Semaphore> {
    static SLOTS: OnceLock<Arc<Semaphore>> = OnceLock::new();
    SLOTS.get_or_init(|| Arc::new(Semaphore::new(max_workers())))
}

/// A worker slot, held until the script's thread ends; `None` when none became free within
/// `wait`.
pub async fn acquire(wait: Duration) -> Option<OwnedSemaphorePermit> {
    tokio::time::timeout(wait, slots().clone().acquire_owned())
        .await
        .ok()
        .and_then(Result::ok)
}
