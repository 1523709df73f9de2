//! Layer 4: channel tools, injected by the client binding (e.g. `discord_reply`), appended
//! as given. A channel tool may declare the scope a principal needs to use it.

use std::sync::Arc;

use pi_agent_core::AgentTool;

use super::base::append_unique;
use super::error::PipelineError;
use super::scopes::ScopeTable;

/// A tool of the channel binding, with the scope it requires (if any).
#[derive(Clone)]
pub struct ChannelTool {
    /// The tool.
    pub tool: Arc<dyn AgentTool>,
    /// The scope a principal needs for it; `None` needs none.
    pub scope: Option<String>,
}

impl ChannelTool {
    /// A channel tool that requires no scope.
    pub fn new(tool: Arc<dyn AgentTool>) -> Self {
        Self { tool, scope: None }
    }

    /// The same tool, requiring `scope`.
    pub fn with_scope(mut self, scope: impl Into<String>) -> Self {
        self.scope = Some(scope.into());
        self
    }
}

impl From<Arc<dyn AgentTool>> for ChannelTool {
    fn from(tool: Arc<dyn AgentTool>) -> Self {
        Self::new(tool)
    }
}

/// Appends the channel tools in their order; a name already taken by an earlier layer is an
/// error. Their declared scopes are added to `scopes`.
pub fn append_channel_tools(
    tools: Vec<Arc<dyn AgentTool>>,
    channel: &[ChannelTool],
    scopes: &mut ScopeTable,
) -> Result<Vec<Arc<dyn AgentTool>>, PipelineError> {
    let tools = append_unique(
        tools,
        channel.iter().map(|c| c.tool.clone()).collect(),
        "channel",
    )?;
    for c in channel {
        if let Some(scope) = &c.scope {
            scopes.require(c.tool.name(), scope);
        }
    }
    Ok(tools)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pipeline::test_support::{FakeTool, names, strings};

    #[test]
    fn appends_in_order_and_records_scopes() {
        let mut scopes = ScopeTable::empty();
        let tools = append_channel_tools(
            vec![FakeTool::arc("read")],
            &[
                FakeTool::arc("discord_reply").into(),
                ChannelTool::new(FakeTool::arc("discord_send_file")).with_scope("files"),
            ],
            &mut scopes,
        )
        .unwrap();
        assert_eq!(
            names(&tools),
            strings(&["read", "discord_reply", "discord_send_file"])
        );
        assert_eq!(scopes.required("discord_send_file"), Some("files"));
        assert_eq!(scopes.required("discord_reply"), None);
    }

    #[test]
    fn a_channel_tool_cannot_shadow_an_earlier_tool() {
        let mut scopes = ScopeTable::empty();
        let err = append_channel_tools(
            vec![FakeTool::arc("bash")],
            &[FakeTool::arc("bash").into()],
            &mut scopes,
        )
        .err()
        .unwrap();
        assert!(matches!(
            err,
            PipelineError::DuplicateTool {
                layer: "channel",
                ..
            }
        ));
    }
}
