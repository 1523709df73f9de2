//! The signals that end a headless run, with the exit codes pi reports for them.

/// Resolves with the exit code for the first of SIGINT (130), SIGTERM (143), SIGHUP (129);
/// `None` when the handlers cannot be installed.
pub async fn wait_for_signal() -> Option<i32> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut interrupt = signal(SignalKind::interrupt()).ok()?;
    let mut terminate = signal(SignalKind::terminate()).ok()?;
    let mut hangup = signal(SignalKind::hangup()).ok()?;
    tokio::select! {
        _ = interrupt.recv() => Some(130),
        _ = terminate.recv() => Some(143),
        _ = hangup.recv() => Some(129),
    }
}
