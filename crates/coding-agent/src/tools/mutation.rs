//! Serializes changes to the same file: parallel tool calls may edit or write one file, and
//! each must see the previous one's result.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

static LOCKS: LazyLock<Mutex<HashMap<PathBuf, Arc<tokio::sync::Mutex<()>>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));

/// Runs `work` while holding the lock of `path` (canonical when it exists).
pub async fn with_file_lock<T>(path: &Path, work: impl Future<Output = T>) -> T {
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let lock = {
        let mut locks = LOCKS.lock().unwrap_or_else(|p| p.into_inner());
        Arc::clone(locks.entry(key).or_default())
    };
    let _guard = lock.lock().await;
    work.await
}
