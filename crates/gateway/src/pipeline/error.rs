//! The errors that stop a pipeline from being built.

use std::path::PathBuf;

/// Why the tool pipeline of a session could not be built.
#[derive(Debug, thiserror::Error)]
pub enum PipelineError {
    /// A built-in tool name that pi does not know (layer 1).
    #[error("base tools: {0}")]
    UnknownBuiltinTool(String),
    /// Two tools would be sent to the model under one name.
    #[error("duplicate tool name `{name}` added by the {layer} layer")]
    DuplicateTool {
        /// The name used twice.
        name: String,
        /// The layer that tried to add it a second time.
        layer: &'static str,
    },
    /// The sandbox refused to substitute a tool, or renamed it (layer 2).
    #[error("sandbox substitution of `{tool}` failed: {message}")]
    Sandbox {
        /// The tool being substituted.
        tool: String,
        /// What the sandbox reported.
        message: String,
    },
    /// The policy file exists but could not be read.
    #[error("cannot read tool policy file {}: {source}", path.display())]
    ConfigRead {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The policy file is not valid JSON of the expected shape.
    #[error("malformed tool policy file {}: {source}", path.display())]
    ConfigParse {
        /// The file.
        path: PathBuf,
        /// The parse error, with line and column.
        source: serde_json::Error,
    },
}
