//! Where output goes. Outside interactive mode pi keeps stdout for protocol output only
//! (print-mode text, JSON events); everything informational goes to stderr, as the
//! TypeScript pi does.

use std::io::{IsTerminal, Write};

/// The destination for informational text (help, version, model lists, warnings).
#[derive(Debug, Clone, Copy)]
pub struct Output {
    info_to_stderr: bool,
}

impl Output {
    /// `interactive` is true when stdin is a terminal and no non-interactive mode was asked for.
    pub fn new(interactive: bool) -> Self {
        Self {
            info_to_stderr: !interactive,
        }
    }

    /// Whether stdin is a terminal.
    pub fn stdin_is_tty() -> bool {
        std::io::stdin().is_terminal()
    }

    /// Writes informational text plus a newline.
    pub fn info(&self, text: &str) {
        if self.info_to_stderr {
            let _ = writeln!(std::io::stderr().lock(), "{text}");
        } else {
            let _ = writeln!(std::io::stdout().lock(), "{text}");
        }
    }
}
