//! Layer 1: pi's built-in tools by name, plus the custom tools of the embedding code.
//!
//! Duplicates: as in pi's TypeScript, a custom tool overrides the built-in tool of the same
//! name (it takes the built-in's place in the list, and a warning says so). Two custom tools
//! with one name are an error; a built-in named twice is built once, with a warning. A custom
//! `bash` still passes through the sandbox layer, which decides about tools named
//! `bash`/`exec`. Tools of later layers may not reuse a name ([`append_unique`]).

use std::path::Path;
use std::sync::Arc;

use pi_agent_core::AgentTool;
use pi_coding_agent::tools::bash::BashOptions;
use pi_coding_agent::tools::build_tools;

use super::error::PipelineError;

/// Builds the built-in tools named in `builtin` (in that order) and merges `custom` into
/// them: a custom tool replaces the built-in of the same name in place, the others are
/// appended in their order. Warnings (repeated names, overrides) are pushed to `warnings`.
pub fn base_tools(
    builtin: &[String],
    cwd: &Path,
    bash: BashOptions,
    custom: Vec<Arc<dyn AgentTool>>,
    warnings: &mut Vec<String>,
) -> Result<Vec<Arc<dyn AgentTool>>, PipelineError> {
    let mut names: Vec<String> = Vec::with_capacity(builtin.len());
    for name in builtin {
        let name = name.trim().to_owned();
        if names.contains(&name) {
            warnings.push(format!(
                "base tools: built-in tool `{name}` is listed twice; built once"
            ));
        } else {
            names.push(name);
        }
    }
    let mut tools = build_tools(&names, cwd, bash).map_err(PipelineError::UnknownBuiltinTool)?;
    let mut custom_names: Vec<String> = Vec::with_capacity(custom.len());
    for tool in custom {
        let name = tool.name().to_owned();
        if custom_names.contains(&name) {
            return Err(PipelineError::DuplicateTool {
                name,
                layer: "base (custom tools)",
            });
        }
        custom_names.push(name.clone());
        match tools.iter().position(|t| t.name() == name) {
            Some(at) => {
                warnings.push(format!(
                    "base tools: custom tool `{name}` overrides the built-in tool"
                ));
                tools[at] = tool;
            }
            None => tools.push(tool),
        }
    }
    Ok(tools)
}

/// Appends the tools of a later layer; a name already present is an error (a channel or
/// runtime tool must never silently replace e.g. the sandboxed `bash`).
pub fn append_unique(
    mut tools: Vec<Arc<dyn AgentTool>>,
    added: Vec<Arc<dyn AgentTool>>,
    layer: &'static str,
) -> Result<Vec<Arc<dyn AgentTool>>, PipelineError> {
    for tool in added {
        if tools.iter().any(|t| t.name() == tool.name()) {
            return Err(PipelineError::DuplicateTool {
                name: tool.name().to_owned(),
                layer,
            });
        }
        tools.push(tool);
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::test_support::{FakeTool, names, strings};

    fn cwd() -> std::path::PathBuf {
        std::env::temp_dir()
    }

    #[test]
    fn builds_builtins_in_order_and_appends_custom_tools() {
        let mut warnings = Vec::new();
        let tools = base_tools(
            &strings(&["read", "bash", "ls"]),
            &cwd(),
            BashOptions::default(),
            vec![FakeTool::arc("deploy")],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(names(&tools), strings(&["read", "bash", "ls", "deploy"]));
        assert!(warnings.is_empty());
        assert!(tools[0].parameters()["properties"].get("path").is_some());
    }

    #[test]
    fn custom_tool_overrides_the_builtin_in_place() {
        let mut warnings = Vec::new();
        let tools = base_tools(
            &strings(&["read", "bash"]),
            &cwd(),
            BashOptions::default(),
            vec![FakeTool::arc("read")],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(names(&tools), strings(&["read", "bash"]));
        assert_eq!(tools[0].description(), "read description");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("overrides"));
    }

    #[test]
    fn duplicate_custom_tools_and_unknown_builtins_fail() {
        let mut warnings = Vec::new();
        let err = base_tools(
            &[],
            &cwd(),
            BashOptions::default(),
            vec![FakeTool::arc("x"), FakeTool::arc("x")],
            &mut warnings,
        )
        .err()
        .unwrap();
        assert!(matches!(err, PipelineError::DuplicateTool { ref name, .. } if name == "x"));

        let err = base_tools(
            &strings(&["read", "teleport"]),
            &cwd(),
            BashOptions::default(),
            vec![],
            &mut warnings,
        )
        .err()
        .unwrap();
        assert!(err.to_string().contains("teleport"), "{err}");
    }

    #[test]
    fn repeated_builtin_is_built_once() {
        let mut warnings = Vec::new();
        let tools = base_tools(
            &strings(&["read", "read"]),
            &cwd(),
            BashOptions::default(),
            vec![],
            &mut warnings,
        )
        .unwrap();
        assert_eq!(names(&tools), strings(&["read"]));
        assert_eq!(warnings.len(), 1);
    }

    #[test]
    fn append_unique_rejects_a_taken_name() {
        let tools = vec![FakeTool::arc("bash")];
        let err = append_unique(tools.clone(), vec![FakeTool::arc("bash")], "channel")
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "duplicate tool name `bash` added by the channel layer"
        );
        let ok = append_unique(tools, vec![FakeTool::arc("reply")], "channel").unwrap();
        assert_eq!(names(&ok), strings(&["bash", "reply"]));
    }
}
