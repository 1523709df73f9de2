//! The built-in tools: `read`, `write`, `edit`, `bash`, `grep`, `find`, `ls`.

pub mod atomic_write;
pub mod bash;
pub mod bash_env;
pub mod bash_output;
pub mod bash_process;
pub mod bash_reap;
pub mod bash_structured;
pub mod client_files;
pub mod client_terminal;
pub mod delegate;
pub mod edit;
pub mod edit_diff;
pub mod edit_match;
pub mod find;
pub mod grep;
pub(crate) mod grep_lines;
pub mod ls;
pub mod mutation;
pub mod path;
pub mod read;
mod read_lines;
pub mod truncate;
pub mod write;

use std::path::Path;
use std::sync::Arc;

use pi_agent_core::AgentTool;

/// How read, bash, edit and write ask for their arguments (pi 1.6): strictly sampled
/// against their schemas where the provider can, plainly otherwise.
pub const STRICT_IF_POSSIBLE: pi_ai::ConstrainedSampling = pi_ai::ConstrainedSampling::JsonSchema {
    strict: pi_ai::Strictness::Prefer,
};

/// The tools active when none are named: read, bash, edit, write.
pub const DEFAULT_TOOLS: [&str; 4] = ["read", "bash", "edit", "write"];
/// Every built-in tool name.
pub const ALL_TOOLS: [&str; 7] = ["read", "bash", "edit", "write", "grep", "find", "ls"];
/// The built-ins `--tools` can name: the tools above and, when built in, `codemode`
/// (never active unless asked for).
#[cfg(feature = "codemode")]
pub const SELECTABLE_TOOLS: [&str; 8] = [
    "read", "bash", "edit", "write", "grep", "find", "ls", "codemode",
];
#[cfg(not(feature = "codemode"))]
pub const SELECTABLE_TOOLS: [&str; 7] = ALL_TOOLS;

/// Builds the named tools for a session in `cwd`; unknown names are returned as errors.
pub fn build_tools(
    names: &[String],
    cwd: &Path,
    bash: bash::BashOptions,
) -> Result<Vec<Arc<dyn AgentTool>>, String> {
    names
        .iter()
        .map(|name| {
            let cwd = cwd.to_path_buf();
            Ok(match name.as_str() {
                "read" => read::read_tool(cwd),
                "bash" => bash::bash_tool(cwd, bash.clone()),
                "edit" => edit::edit_tool(cwd),
                "write" => write::write_tool(cwd),
                "grep" => grep::grep_tool(cwd),
                "find" => find::find_tool(cwd),
                "ls" => ls::ls_tool(cwd),
                other => {
                    return Err(format!(
                        "Unknown tool: {other} (known: {})",
                        ALL_TOOLS.join(", ")
                    ));
                }
            })
        })
        .collect()
}
