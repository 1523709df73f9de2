//! The signals that end a headless run, with the exit codes pi reports for them.

use std::future::Future;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Resolves with the exit code for the first of SIGINT (130), SIGTERM (143), SIGHUP (129);
/// `None` when the handlers cannot be installed. The handlers are installed by this call,
/// not when the future is first polled: a signal that comes before then must not end pi
/// without its cleanup (`session_shutdown`).
pub fn wait_for_signal() -> impl Future<Output = Option<i32>> {
    let installed = ExitSignals::install();
    async move { Some(installed?.recv().await) }
}

/// The installed handlers.
struct ExitSignals {
    interrupt: Signal,
    terminate: Signal,
    hangup: Signal,
}

impl ExitSignals {
    fn install() -> Option<Self> {
        Some(Self {
            interrupt: signal(SignalKind::interrupt()).ok()?,
            terminate: signal(SignalKind::terminate()).ok()?,
            hangup: signal(SignalKind::hangup()).ok()?,
        })
    }

    async fn recv(mut self) -> i32 {
        tokio::select! {
            _ = self.interrupt.recv() => 130,
            _ = self.terminate.recv() => 143,
            _ = self.hangup.recv() => 129,
        }
    }
}
