//! Content blocks: text, thinking, image and tool calls (seed 002, Appendix D).

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::role::{ImageTag, TextTag, ThinkingTag, ToolCallTag};
use super::shared_str::SharedStr;

/// Plain text; `textSignature` carries provider metadata (OpenAI Responses message ids).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TextContent {
    #[serde(rename = "type", default)]
    pub kind: TextTag,
    pub text: SharedStr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub text_signature: Option<String>,
}

impl TextContent {
    /// A text block with no signature.
    pub fn new(text: impl Into<SharedStr>) -> Self {
        Self {
            kind: TextTag,
            text: text.into(),
            text_signature: None,
        }
    }
}

/// Model reasoning; the signature lets the provider verify it when replayed.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThinkingContent {
    #[serde(rename = "type", default)]
    pub kind: ThinkingTag,
    pub thinking: SharedStr,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking_signature: Option<String>,
    /// Set when a safety filter redacted the reasoning; the payload is in the signature.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redacted: Option<bool>,
}

impl ThinkingContent {
    /// A thinking block with no signature.
    pub fn new(thinking: impl Into<SharedStr>) -> Self {
        Self {
            kind: ThinkingTag,
            thinking: thinking.into(),
            ..Self::default()
        }
    }

    /// Whether the provider redacted this block.
    pub fn is_redacted(&self) -> bool {
        self.redacted == Some(true)
    }
}

/// A base64 image with its MIME type.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ImageContent {
    #[serde(rename = "type", default)]
    pub kind: ImageTag,
    pub data: SharedStr,
    pub mime_type: String,
}

impl ImageContent {
    /// An image block from base64 data.
    pub fn new(data: impl Into<SharedStr>, mime_type: impl Into<String>) -> Self {
        Self {
            kind: ImageTag,
            data: data.into(),
            mime_type: mime_type.into(),
        }
    }
}

/// A tool call requested by the model, with its (best-known) parsed arguments.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    #[serde(rename = "type", default)]
    pub kind: ToolCallTag,
    pub id: String,
    pub name: String,
    #[serde(default)]
    pub arguments: Map<String, Value>,
    /// Google-specific opaque signature for reusing thought context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thought_signature: Option<String>,
    /// Why the streamed arguments could not be read, with the raw text (the arguments are
    /// then empty); validation reports it to the model instead of running the tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments_error: Option<String>,
}

impl ToolCall {
    /// A tool call with the given id, name and arguments.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: Map<String, Value>,
    ) -> Self {
        Self {
            kind: ToolCallTag,
            id: id.into(),
            name: name.into(),
            arguments,
            thought_signature: None,
            arguments_error: None,
        }
    }
}

/// A block of an assistant message.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum AssistantBlock {
    Text(TextContent),
    Thinking(ThinkingContent),
    ToolCall(ToolCall),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum AssistantBlockWire {
    Text(TextContent),
    Thinking(ThinkingContent),
    ToolCall(ToolCall),
}

impl<'de> Deserialize<'de> for AssistantBlock {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match super::tag_first::deserialize_tag_first::<_, AssistantBlockWire>(
                deserializer,
                "type",
            )? {
                AssistantBlockWire::Text(b) => Self::Text(b),
                AssistantBlockWire::Thinking(b) => Self::Thinking(b),
                AssistantBlockWire::ToolCall(b) => Self::ToolCall(b),
            },
        )
    }
}

impl AssistantBlock {
    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            _ => None,
        }
    }

    /// The tool call of a tool-call block.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            Self::ToolCall(t) => Some(t),
            _ => None,
        }
    }
}

/// A block of user or tool-result content: text or image.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputBlock {
    Text(TextContent),
    Image(ImageContent),
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
enum InputBlockWire {
    Text(TextContent),
    Image(ImageContent),
}

impl<'de> Deserialize<'de> for InputBlock {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Ok(
            match super::tag_first::deserialize_tag_first::<_, InputBlockWire>(
                deserializer,
                "type",
            )? {
                InputBlockWire::Text(b) => Self::Text(b),
                InputBlockWire::Image(b) => Self::Image(b),
            },
        )
    }
}

impl InputBlock {
    /// A text block.
    pub fn text(text: impl Into<SharedStr>) -> Self {
        Self::Text(TextContent::new(text))
    }

    /// The text of a text block.
    pub fn as_text(&self) -> Option<&str> {
        match self {
            Self::Text(t) => Some(&t.text),
            Self::Image(_) => None,
        }
    }
}
