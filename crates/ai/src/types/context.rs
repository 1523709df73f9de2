//! What one LLM call sees: system prompt, messages and tools.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::message::Message;

/// A tool the model may call, described by a JSON Schema for its arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    pub name: String,
    pub description: String,
    pub parameters: Value,
    /// Whether the tool asks the provider to sample its arguments constrained by the schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub constrained_sampling: Option<ConstrainedSampling>,
}

/// How a tool asks for constrained sampling of its arguments (pi-ai 1.6's
/// `constrainedSampling`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ConstrainedSampling {
    /// Strict JSON-schema sampling where the API has it.
    JsonSchema { strict: Strictness },
    /// A grammar for the single string input (OpenAI custom tools); ours sends these tools
    /// as plain JSON-schema tools.
    Grammar { variants: Value },
}

/// Whether strict sampling is wished for or needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strictness {
    /// Strict where the provider supports it and the schema fits; plain otherwise.
    Prefer,
    /// Strict, or the request fails.
    Require,
}

/// The input of one LLM call.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Context {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    pub messages: Vec<Message>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<Tool>,
    /// The transcript's system messages (pi-ai 1.6), for models that take system messages
    /// mid-conversation (`compat.supportsMidConvoSystemMessages`); empty when the request
    /// has none. `system_prompt` and `tools` stay the current state, which every other
    /// model gets.
    #[serde(skip)]
    pub system_messages: Vec<SystemMessage>,
}

/// A system message of the transcript: the first one holds the system prompt and tools,
/// a later one what changed (prompt sections set or removed, tools added or removed).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SystemMessage {
    /// Where it stands: before `messages[at]` of the context (`messages.len()`: last).
    pub at: usize,
    /// Its plain text.
    pub content: String,
    /// Named prompt sections, in order: set to a text, or removed (`None`).
    pub sections: Vec<(String, Option<String>)>,
    /// Tools declared (added, or redefined under the same name).
    pub tools_added: Vec<Tool>,
    /// Names of tools withdrawn.
    pub tools_removed: Vec<String>,
}
