//! What can go wrong talking to a llama.cpp router (or Hugging Face for it). The texts are
//! those pi 1.6.0 shows; none carries the API key.

/// A failed router or Hugging Face call.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum LlamaError {
    /// The configured URL does not parse.
    #[error("Invalid URL")]
    InvalidUrl,
    /// The URL is not http or https.
    #[error("Server URL must use http or https")]
    UnsupportedScheme,
    /// The connection failed; `detail` is the network-level cause.
    #[error("Could not reach llama.cpp server at {url}: {detail}")]
    Unreachable { url: String, detail: String },
    /// The router answered with an error: its `error.message`, else
    /// `llama.cpp returned HTTP <status>`.
    #[error("{0}")]
    Server(String),
    /// `GET /models` had no `data` list.
    #[error("llama.cpp returned an invalid model catalog")]
    InvalidCatalog,
    /// `GET /models` listed models without a status: a single-model server.
    #[error("Server is not running in llama.cpp router mode")]
    NotRouter,
    /// A model went back to `unloaded` (or reported `failed`) while loading.
    #[error("Model failed to load")]
    LoadFailed,
    /// The model's process died while loading.
    #[error("Model exited with code {0}")]
    Exited(i64),
    /// A download the router reported as failed.
    #[error("{0}")]
    DownloadFailed(String),
    /// A request took longer than its 15 seconds.
    #[error("The operation was aborted due to timeout")]
    Timeout,
    /// Stopped by the user.
    #[error("Cancelled")]
    Cancelled,
    /// The catalog refresh after an action did not finish in time.
    #[error("Model catalog refresh timed out.")]
    RefreshTimedOut,
    /// Hugging Face could not be reached.
    #[error("fetch failed")]
    HubUnreachable,
    /// Hugging Face answered with an error or something unexpected.
    #[error("{0}")]
    Hub(String),
    /// The model catalog could not be saved.
    #[error("Could not save the llama.cpp model catalog: {0}")]
    Store(String),
}

impl LlamaError {
    /// A network failure as pi 1.6.0 tells them apart (`fetch failed`, timeouts): `/llama`
    /// then offers Retry instead of reporting the error.
    pub fn is_connection_error(&self) -> bool {
        matches!(
            self,
            Self::Timeout | Self::HubUnreachable | Self::RefreshTimedOut
        )
    }

    /// The text of `/llama`'s "llama.cpp unavailable" dialog.
    pub fn connection_message(&self) -> String {
        if self.is_connection_error() {
            "Could not connect to the server.".to_owned()
        } else {
            self.to_string()
        }
    }
}
