//! The combined results of the events whose handlers can answer, as the session uses them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use pi_agent_core::AgentMessage;
use pi_ai::{ImageContent, InputBlock};

use super::actions::ExtensionMessage;

/// `tool_call`: whether the call is blocked, and the (possibly mutated) arguments.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallOutcome {
    pub block: bool,
    pub reason: Option<String>,
    pub input: Value,
    /// A blocked call ends the run when every result of its batch terminates.
    pub terminate: bool,
}

/// `tool_result`: field-by-field replacements of the tool's result.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Vec<InputBlock>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
}

impl ToolResultPatch {
    pub fn is_empty(&self) -> bool {
        self.content.is_none() && self.details.is_none() && self.is_error.is_none()
    }
}

/// `before_agent_start`: messages to add after the prompt, and a replacement system prompt
/// or changed prompt options.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BeforeAgentStartOutcome {
    pub messages: Vec<ExtensionMessage>,
    pub system_prompt: Option<String>,
    /// The event's `systemPromptOptions` as handlers changed them in place (pi 1.6.0 renders
    /// the prompt from them unless a handler returned a `systemPrompt`).
    pub system_prompt_options: Option<serde_json::Value>,
}

/// `input`: what becomes of a user's input.
#[derive(Debug, Clone, PartialEq)]
pub enum InputOutcome {
    Continue,
    Transform {
        text: String,
        images: Option<Vec<ImageContent>>,
    },
    /// An extension took care of it; nothing is sent.
    Handled,
}

/// `resources_discover`: extra resource paths, each with the extension that gave it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcePaths {
    #[serde(default)]
    pub skill_paths: Vec<ResourcePath>,
    #[serde(default)]
    pub prompt_paths: Vec<ResourcePath>,
    #[serde(default)]
    pub theme_paths: Vec<ResourcePath>,
}

/// A path from `resources_discover`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcePath {
    pub path: String,
    #[serde(default)]
    pub extension_path: String,
}

/// The answer of a `session_before_*` event.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SessionBeforeOutcome {
    pub cancel: bool,
    /// The whole result object (custom compaction, branch summary, …).
    pub result: Value,
}

/// A replaced `message_end` message, when a handler returned one of the same role.
pub type MessageReplacement = Option<AgentMessage>;

/// `user_bash`: how the user's `!command` runs instead of pi's own shell.
pub enum UserBashAnswer {
    /// The extension ran it: a `BashResult` in the TypeScript shape (`output`, `exitCode`,
    /// `cancelled`, `truncated`, `fullOutputPath`).
    Result(Value),
    /// Run it through the extension's operations (`bash_exec` with this handle).
    Operations {
        backend: std::sync::Arc<dyn super::backend::ExtensionBackend>,
        handle: Value,
    },
}
