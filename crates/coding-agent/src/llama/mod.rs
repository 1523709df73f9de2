//! pi 1.6.0's built-in `llama.cpp` extension, natively: a provider for the llama.cpp router
//! server (its loaded models as chat models over `/v1/chat/completions`) and the `/llama`
//! command that loads, unloads and downloads the router's models.
//!
//! Left out: llama.cpp models as classifiers (`ctx.modelRegistry.classify`, decision models
//! over `/v1/systemone`, `llama-cpp-classify`): this build has no classifier API. Their
//! entries are still written to the shared catalog file as pi 1.6.0 writes them.

pub mod catalog;
pub mod client;
pub mod command;
pub mod config;
pub mod error;
pub mod events;
pub mod format;
pub mod huggingface;
pub mod login;
pub mod progress;
pub mod refresh;
pub mod store;
pub mod ui;
pub mod url;
pub mod wire;

pub use error::LlamaError;

/// The provider's id and name, and the built-in extension's (`builtin:llama.cpp`).
pub const PROVIDER_ID: &str = "llama.cpp";

/// What `/llama` says in modes without a terminal UI.
pub const INTERACTIVE_ONLY: &str = "/llama is available in interactive mode";

/// The `llama` command as RPC `get_commands` lists it, as pi 1.6.0 does for its built-in
/// extension.
pub fn command_entry() -> serde_json::Value {
    serde_json::json!({
        "name": "llama",
        "description": "Manage llama.cpp router models",
        "source": "extension",
        "sourceInfo": {
            "path": "builtin:llama.cpp",
            "source": "builtin",
            "scope": "temporary",
            "origin": "top-level",
        },
    })
}
