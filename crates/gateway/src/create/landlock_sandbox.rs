//! Layer 2's sandbox: `bash` and `exec` confined by Landlock through `pi-sandbox`, and the
//! file tools' paths checked against the same allowed paths.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::AgentTool;
use pi_coding_agent::tools::bash::BashOptions;

use crate::pipeline::ToolSandbox;
use crate::sandbox::paths::PathGuard;
use crate::sandbox::{SandboxConfig, SandboxedBash, SandboxedExec, file_tools};

/// Replaces `bash` and `exec` with their sandboxed versions for one session and confines
/// the file tools.
pub struct LandlockSandbox {
    config: SandboxConfig,
    cwd: PathBuf,
    bash: BashOptions,
    guard: PathGuard,
}

impl LandlockSandbox {
    pub fn new(config: SandboxConfig, cwd: &Path, bash: BashOptions) -> Self {
        Self {
            guard: PathGuard::new(&config, cwd),
            config,
            cwd: cwd.to_path_buf(),
            bash,
        }
    }
}

impl ToolSandbox for LandlockSandbox {
    fn substitute(&self, tool: Arc<dyn AgentTool>) -> Result<Arc<dyn AgentTool>, String> {
        let built = match tool.name() {
            "bash" => SandboxedBash::new(self.config.clone(), &self.cwd)
                .options(self.bash.clone())
                .build(),
            "exec" => SandboxedExec::new(self.config.clone(), &self.cwd)
                .default_timeout(self.bash.default_timeout)
                .build(),
            _ => return Ok(file_tools::confine(tool, &self.guard, &self.cwd)),
        };
        built.map_err(|e| e.to_string())
    }
}
