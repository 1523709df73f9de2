//! Errors returned by the mock-llm library.

/// Errors from parsing scripts or running the server.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// A script (or script list) was not valid JSON for [`crate::Script`].
    #[error("invalid script: {0}")]
    InvalidScript(#[source] serde_json::Error),
    /// An I/O error (binding, reading a script file, ...).
    #[error("i/o error: {0}")]
    Io(#[from] std::io::Error),
}
