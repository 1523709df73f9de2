//! Commands run in the client's terminals when it offers them (an editor under ACP with
//! `terminal: true`): the user watches the command live in the editor, and `bash` gets its
//! output and exit status back. One client per process, as with client_files.

use std::path::Path;
use std::sync::{Arc, PoisonError, RwLock};
use std::time::Duration;

use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

/// How a command run in the client's terminal ended.
#[derive(Debug, Clone, Default)]
pub struct TerminalRun {
    /// The output the client kept (its tail when it cut it).
    pub output: String,
    pub exit_code: Option<i32>,
    /// The signal that ended it, as the client names it (`SIGTERM`).
    pub signal: Option<String>,
    pub cancelled: bool,
    pub timed_out: bool,
}

/// What the client offers.
pub trait ClientTerminal: Send + Sync {
    /// Runs `command` with bash in `cwd`; `started` gets the terminal's id once it exists
    /// (to show it with the tool call). `cancel` and `timeout` kill it.
    fn run<'a>(
        &'a self,
        command: &'a str,
        cwd: &'a Path,
        timeout: Option<Duration>,
        cancel: CancellationToken,
        started: Box<dyn FnOnce(String) + Send + 'a>,
    ) -> BoxFuture<'a, Result<TerminalRun, String>>;
}

static CLIENT: RwLock<Option<Arc<dyn ClientTerminal>>> = RwLock::new(None);

/// Runs commands through `client` from now on (`None`: in pi's own shell).
pub fn set(client: Option<Arc<dyn ClientTerminal>>) {
    *CLIENT.write().unwrap_or_else(PoisonError::into_inner) = client;
}

/// The client, when one is set.
pub fn get() -> Option<Arc<dyn ClientTerminal>> {
    CLIENT
        .read()
        .unwrap_or_else(PoisonError::into_inner)
        .clone()
}

/// A signal name as a number (`SIGKILL` 9), for the exit code pi reports.
pub fn signal_number(name: &str) -> Option<i32> {
    let name = name.strip_prefix("SIG").unwrap_or(name);
    Some(match name {
        "HUP" => 1,
        "INT" => 2,
        "QUIT" => 3,
        "KILL" => 9,
        "SEGV" => 11,
        "PIPE" => 13,
        "TERM" => 15,
        _ => return name.parse().ok(),
    })
}
