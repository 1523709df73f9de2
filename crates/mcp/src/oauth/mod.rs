//! OAuth for remote MCP servers, as pi 1.5 does it: state in `mcp-auth.json` under pi's
//! keys and layout, discovery, dynamic client registration or a client metadata document,
//! PKCE sign-in through a loopback callback (`pi mcp login`), and refresh by connections.

pub mod client;
pub mod discovery;
pub mod document;
pub mod flow;
pub mod settings;
pub mod sign_in;
pub mod state;
pub mod store;

pub use client::{Refreshed, ServerAuth};
pub use discovery::Challenge;
pub use settings::OAuthSettings;
pub use store::AuthStore;

/// Why a sign-in or a refresh failed; messages never carry a token.
#[derive(Debug, thiserror::Error)]
pub enum OAuthError {
    #[error("{0}")]
    Flow(String),
    /// The authorization server answered with an OAuth error code.
    #[error("{message}")]
    Server { code: String, message: String },
    #[error("Sign-in cancelled")]
    Cancelled,
    #[error("could not store MCP credentials: {0}")]
    Store(#[from] std::io::Error),
}

/// Milliseconds since the epoch.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// An error with its causes, for messages (reqwest's own text omits them).
pub(crate) fn error_chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
