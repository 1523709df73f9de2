//! LLM messages: user, assistant and tool result (seed 002, Appendix A.1).

use std::fmt;
use std::sync::Arc;

use serde::de::{self, MapAccess, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

use super::content::{AssistantBlock, InputBlock, ToolCall};
use super::role::{AssistantRole, ToolResultRole, UserRole};
use super::shared_str::{RAW_VALUE_TOKEN, SharedStr, not_a_string_literal, read_literal};
use super::shared_vec::SharedVec;
use super::thinking::ThinkingLevel;
use super::usage::Usage;

/// Milliseconds since the Unix epoch, as every message's `timestamp` holds.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}

/// Why an assistant message ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum StopReason {
    #[default]
    Stop,
    Length,
    ToolUse,
    Error,
    Aborted,
    /// A message still streaming (pi-ai 0.83's partial messages): replaced by the real reason
    /// when the stream ends.
    Pending,
}

impl StopReason {
    /// `error` or `aborted`: the message did not complete.
    pub fn is_failure(self) -> bool {
        matches!(self, Self::Error | Self::Aborted)
    }
}

/// A user's content: a plain string or a list of text and image blocks.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum UserContent {
    Text(SharedStr),
    Blocks(SharedVec<InputBlock>),
}

impl<'de> Deserialize<'de> for UserContent {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Asked for as a raw value, serde_json hands over the literal: a string stays raw, a
        // list of blocks is read from it. Other deserializers give the value itself.
        deserializer.deserialize_newtype_struct(RAW_VALUE_TOKEN, UserContentVisitor)
    }
}

struct UserContentVisitor;

impl<'de> Visitor<'de> for UserContentVisitor {
    type Value = UserContent;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a string or a list of content blocks")
    }

    fn visit_str<E: de::Error>(self, text: &str) -> Result<UserContent, E> {
        Ok(UserContent::Text(text.into()))
    }

    fn visit_string<E: de::Error>(self, text: String) -> Result<UserContent, E> {
        Ok(UserContent::Text(text.into()))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<UserContent, A::Error> {
        let mut blocks = Vec::with_capacity(seq.size_hint().unwrap_or(1));
        while let Some(block) = seq.next_element()? {
            blocks.push(block);
        }
        Ok(UserContent::Blocks(blocks.into()))
    }

    fn visit_newtype_struct<D: serde::Deserializer<'de>>(
        self,
        inner: D,
    ) -> Result<UserContent, D::Error> {
        inner.deserialize_any(self)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<UserContent, A::Error> {
        let literal = read_literal(map)?;
        match literal.as_str().as_bytes().first() {
            Some(b'"') => Ok(UserContent::Text(SharedStr::from_literal(literal))),
            Some(b'[') => serde_json::from_str(literal.as_str())
                .map(UserContent::Blocks)
                .map_err(de::Error::custom),
            _ => Err(not_a_string_literal(literal.as_str(), &self)),
        }
    }
}

impl Default for UserContent {
    fn default() -> Self {
        Self::Blocks(Vec::new().into())
    }
}

/// A message from the user.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UserMessage {
    #[serde(default)]
    pub role: UserRole,
    pub content: UserContent,
    #[serde(default)]
    pub timestamp: i64,
}

impl UserMessage {
    /// A user message holding one text block, stamped now.
    pub fn text(text: impl Into<SharedStr>) -> Self {
        Self {
            role: UserRole,
            content: UserContent::Blocks(vec![InputBlock::text(text)].into()),
            timestamp: now_ms(),
        }
    }

    /// A user message from blocks, stamped now.
    pub fn blocks(blocks: Vec<InputBlock>) -> Self {
        Self {
            role: UserRole,
            content: UserContent::Blocks(blocks.into()),
            timestamp: now_ms(),
        }
    }

    /// The text of the message: the string content, or its text blocks joined.
    pub fn text_content(&self) -> String {
        match &self.content {
            UserContent::Text(text) => text.to_string(),
            UserContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| match b {
                    InputBlock::Text(t) => Some(t.text.as_str()),
                    _ => None,
                })
                .collect(),
        }
    }
}

/// A message produced by the model (complete, or partial while streaming).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AssistantMessage {
    #[serde(default)]
    pub role: AssistantRole,
    pub content: SharedVec<AssistantBlock>,
    pub api: String,
    pub provider: String,
    pub model: String,
    #[serde(default)]
    pub usage: Usage,
    #[serde(default)]
    pub stop_reason: StopReason,
    #[serde(default)]
    pub timestamp: i64,
    /// The provider's id for this response, when it gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_id: Option<String>,
    /// The concrete model that answered, when it differs from `model` (e.g. OpenRouter `auto`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_model: Option<String>,
    /// OpenAI Codex's terminal `end_turn` signal, kept for diagnostics (pi-ai 0.84.2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_turn: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error_message: Option<String>,
    /// Redacted provider/runtime diagnostics, kept opaque.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<serde_json::Value>,
    /// The provider's own stop reason before it was mapped to `stopReason` (pi-ai 1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw_stop_reason: Option<String>,
    /// Milliseconds from the request to the final event, set when the stream ends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The thinking level the request was made with (`off` when reasoning was not asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_level: Option<ThinkingLevel>,
    /// The provider's own effort the reply was made with, where the provider keeps one per
    /// message (Claude's mid-conversation effort, pi-ai 0.85): later requests replay it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_thinking_level: Option<String>,
}

impl AssistantMessage {
    /// An empty message for a model, as a stream starts it.
    pub fn empty(api: &str, provider: &str, model: &str) -> Self {
        Self {
            api: api.to_owned(),
            provider: provider.to_owned(),
            model: model.to_owned(),
            timestamp: now_ms(),
            ..Self::default()
        }
    }

    /// The tool calls of this message, in order.
    pub fn tool_calls(&self) -> impl Iterator<Item = &ToolCall> {
        self.content.iter().filter_map(AssistantBlock::as_tool_call)
    }

    /// The concatenated text blocks.
    pub fn text(&self) -> String {
        self.content
            .iter()
            .filter_map(AssistantBlock::as_text)
            .collect()
    }
}

/// The result of one tool call, as the model will see it.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultMessage {
    #[serde(default)]
    pub role: ToolResultRole,
    pub tool_call_id: String,
    pub tool_name: String,
    pub content: SharedVec<InputBlock>,
    /// Tool-specific structured details (diffs, truncation info); never sent to the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<serde_json::Value>,
    #[serde(default)]
    pub is_error: bool,
    /// Milliseconds the tool ran, when it was executed in this process (pi 1.6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// The tool calls the tool made itself (codemode's scripts, pi 1.6):
    /// `{ calls: [{ id, name, status, arguments | argumentsBytes, durationMs?, error? }], complete }`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nested_calls: Option<serde_json::Value>,
    #[serde(default)]
    pub timestamp: i64,
}

/// Any LLM message, tagged by `role`.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Message {
    User(UserMessage),
    Assistant(Arc<AssistantMessage>),
    ToolResult(Arc<ToolResultMessage>),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum MessageWire {
    User(UserMessage),
    /// Boxed: assistant and tool result messages are much larger than a user message.
    Assistant(Box<AssistantMessage>),
    ToolResult(Box<ToolResultMessage>),
}

impl From<MessageWire> for Message {
    fn from(wire: MessageWire) -> Self {
        match wire {
            MessageWire::User(m) => Self::User(m),
            MessageWire::Assistant(m) => Self::Assistant(Arc::from(m)),
            MessageWire::ToolResult(m) => Self::ToolResult(Arc::from(m)),
        }
    }
}

impl<'de> Deserialize<'de> for Message {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        super::tag_first::deserialize_tag_first::<_, MessageWire>(deserializer, "role")
            .map(Self::from)
    }
}

impl Message {
    /// Reads a message whose `role` has been read already; `rest` holds its other fields.
    pub fn deserialize_after_role<'de, A: MapAccess<'de>>(
        role: String,
        rest: A,
    ) -> Result<Self, A::Error> {
        super::tag_first::deserialize_variant::<A, MessageWire>(role, rest).map(Self::from)
    }
}

impl Message {
    /// The message's `role` tag.
    pub fn role(&self) -> &'static str {
        match self {
            Self::User(_) => UserRole::VALUE,
            Self::Assistant(_) => AssistantRole::VALUE,
            Self::ToolResult(_) => ToolResultRole::VALUE,
        }
    }

    /// The message's timestamp in milliseconds.
    pub fn timestamp(&self) -> i64 {
        match self {
            Self::User(m) => m.timestamp,
            Self::Assistant(m) => m.timestamp,
            Self::ToolResult(m) => m.timestamp,
        }
    }
}

impl From<UserMessage> for Message {
    fn from(m: UserMessage) -> Self {
        Self::User(m)
    }
}

impl From<AssistantMessage> for Message {
    fn from(m: AssistantMessage) -> Self {
        Self::Assistant(Arc::new(m))
    }
}

impl From<ToolResultMessage> for Message {
    fn from(m: ToolResultMessage) -> Self {
        Self::ToolResult(Arc::new(m))
    }
}
