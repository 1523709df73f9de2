//! Layer 2's sandbox: `bash` and `exec` confined by Landlock through `pi-sandbox`.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use pi_agent_core::AgentTool;
use pi_coding_agent::tools::bash::BashOptions;

use crate::pipeline::ToolSandbox;
use crate::sandbox::{SandboxConfig, SandboxedBash, SandboxedExec};

/// Replaces `bash` and `exec` with their sandboxed versions for one session.
pub struct LandlockSandbox {
    config: SandboxConfig,
    cwd: PathBuf,
    bash: BashOptions,
}

impl LandlockSandbox {
    pub fn new(config: SandboxConfig, cwd: &Path, bash: BashOptions) -> Self {
        Self {
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
            _ => return Ok(tool),
        };
        built.map_err(|e| e.to_string())
    }
}
