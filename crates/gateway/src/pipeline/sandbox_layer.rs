//! Layer 2: sandbox-aware substitution (`bash` → sandboxed bash, `exec` → sandboxed exec).
//! The sandbox itself lives in `crate::sandbox`; this layer only sees it through
//! [`ToolSandbox`].

use std::sync::Arc;

use pi_agent_core::AgentTool;

use super::error::PipelineError;

/// A sandbox that can replace tools by confined versions.
pub trait ToolSandbox: Send + Sync {
    /// Called for every tool: returns the sandboxed replacement for `bash`/`exec`, and the
    /// tool itself (the same `Arc`) for every other tool. The replacement must keep the name.
    fn substitute(&self, tool: Arc<dyn AgentTool>) -> Result<Arc<dyn AgentTool>, String>;
}

/// The tools after the sandbox layer.
pub struct SandboxOutcome {
    /// The tools, in their order, `bash`/`exec` replaced.
    pub tools: Vec<Arc<dyn AgentTool>>,
    /// The names of the tools the sandbox replaced.
    pub substituted: Vec<String>,
}

/// Passes every tool through the sandbox (`None`: no sandbox, tools unchanged). A sandbox
/// error, or a replacement with a different name, fails the pipeline: a session must not
/// start with an unconfined shell.
pub fn apply_sandbox(
    tools: Vec<Arc<dyn AgentTool>>,
    sandbox: Option<&dyn ToolSandbox>,
) -> Result<SandboxOutcome, PipelineError> {
    let Some(sandbox) = sandbox else {
        return Ok(SandboxOutcome {
            tools,
            substituted: Vec::new(),
        });
    };
    let mut substituted = Vec::new();
    let mut out = Vec::with_capacity(tools.len());
    for tool in tools {
        let name = tool.name().to_owned();
        let before = Arc::as_ptr(&tool).cast::<()>();
        let replaced = sandbox
            .substitute(tool)
            .map_err(|message| PipelineError::Sandbox {
                tool: name.clone(),
                message,
            })?;
        if replaced.name() != name {
            return Err(PipelineError::Sandbox {
                message: format!("the replacement is named `{}`", replaced.name()),
                tool: name,
            });
        }
        if Arc::as_ptr(&replaced).cast::<()>() != before {
            substituted.push(name);
        }
        out.push(replaced);
    }
    Ok(SandboxOutcome {
        tools: out,
        substituted,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::test_support::{FakeTool, names, strings};

    /// Replaces `bash` and `exec` by fakes described as sandboxed.
    struct FakeSandbox;

    impl ToolSandbox for FakeSandbox {
        fn substitute(&self, tool: Arc<dyn AgentTool>) -> Result<Arc<dyn AgentTool>, String> {
            match tool.name() {
                "bash" | "exec" => {
                    let mut fake = FakeTool::new(tool.name());
                    fake.description = format!("sandboxed {}", tool.name());
                    Ok(Arc::new(fake))
                }
                "broken" => Err("no landlock".into()),
                "rename" => Ok(FakeTool::arc("other")),
                _ => Ok(tool),
            }
        }
    }

    #[test]
    fn bash_and_exec_are_replaced_others_kept() {
        let read = FakeTool::arc("read");
        let tools = vec![read.clone(), FakeTool::arc("bash"), FakeTool::arc("exec")];
        let SandboxOutcome {
            tools: out,
            substituted,
        } = apply_sandbox(tools, Some(&FakeSandbox)).unwrap();
        assert_eq!(names(&out), strings(&["read", "bash", "exec"]));
        assert_eq!(substituted, strings(&["bash", "exec"]));
        assert!(Arc::ptr_eq(&out[0], &read));
        assert_eq!(out[1].description(), "sandboxed bash");
        assert_eq!(out[2].description(), "sandboxed exec");
    }

    #[test]
    fn no_sandbox_keeps_everything() {
        let bash = FakeTool::arc("bash");
        let SandboxOutcome {
            tools: out,
            substituted,
        } = apply_sandbox(vec![bash.clone()], None).unwrap();
        assert!(Arc::ptr_eq(&out[0], &bash));
        assert!(substituted.is_empty());
    }

    #[test]
    fn sandbox_errors_and_renames_fail() {
        let err = apply_sandbox(vec![FakeTool::arc("broken")], Some(&FakeSandbox))
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "sandbox substitution of `broken` failed: no landlock"
        );
        let err = apply_sandbox(vec![FakeTool::arc("rename")], Some(&FakeSandbox))
            .err()
            .unwrap();
        assert!(err.to_string().contains("named `other`"), "{err}");
    }
}
