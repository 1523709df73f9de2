//! Agent messages: the LLM messages plus custom kinds an application adds.

use std::fmt;

use serde::de::value::MapAccessDeserializer;
use serde::de::{self, MapAccess, Visitor};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use pi_ai::{AssistantMessage, Message, ToolResultMessage, UserMessage};

/// A message of an application-defined kind (`bashExecution`, `custom`, …), kept as JSON.
///
/// Custom messages ride in the transcript; they reach the model only as
/// `convert_to_llm` decides.
#[derive(Debug, Clone, PartialEq)]
pub struct CustomMessage {
    /// The `role` tag.
    pub role: String,
    /// The whole message object, `role` included.
    pub data: Map<String, Value>,
}

impl CustomMessage {
    /// A custom message with this role and these fields (the role is added to the fields).
    pub fn new(role: impl Into<String>, fields: Map<String, Value>) -> Self {
        let role = role.into();
        let mut data = Map::with_capacity(fields.len() + 1);
        data.insert("role".into(), Value::String(role.clone()));
        data.extend(fields.into_iter().filter(|(k, _)| k != "role"));
        Self { role, data }
    }

    /// A field of the message.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.data.get(key)
    }
}

/// Any message of the transcript.
#[derive(Debug, Clone, PartialEq)]
// LLM messages are the common case; boxing them would cost an allocation per message.
#[allow(clippy::large_enum_variant)]
pub enum AgentMessage {
    Llm(Message),
    Custom(CustomMessage),
}

impl AgentMessage {
    /// The `role` tag.
    pub fn role(&self) -> &str {
        match self {
            Self::Llm(m) => m.role(),
            Self::Custom(c) => &c.role,
        }
    }

    /// The LLM message, if this is one.
    pub fn as_llm(&self) -> Option<&Message> {
        match self {
            Self::Llm(m) => Some(m),
            Self::Custom(_) => None,
        }
    }

    /// The assistant message, if this is one.
    pub fn as_assistant(&self) -> Option<&AssistantMessage> {
        match self {
            Self::Llm(Message::Assistant(a)) => Some(a),
            _ => None,
        }
    }

    /// Whether this is an assistant message.
    pub fn is_assistant(&self) -> bool {
        self.as_assistant().is_some()
    }
}

impl Serialize for AgentMessage {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Llm(m) => m.serialize(serializer),
            Self::Custom(c) => c.data.serialize(serializer),
        }
    }
}

impl<'de> Deserialize<'de> for AgentMessage {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(AgentMessageVisitor)
    }
}

/// Reads a message in one pass when `role` is its first key (as pi writes messages); other
/// objects are buffered first.
struct AgentMessageVisitor;

impl<'de> Visitor<'de> for AgentMessageVisitor {
    type Value = AgentMessage;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a message object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<AgentMessage, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return Err(de::Error::missing_field("role"));
        };
        if first == "role" {
            let role: String = map.next_value()?;
            if is_llm_role(&role) {
                return Message::deserialize_after_role(role, map).map(AgentMessage::Llm);
            }
            let rest = Map::<String, Value>::deserialize(MapAccessDeserializer::new(map))?;
            let mut data = Map::with_capacity(rest.len() + 1);
            data.insert("role".into(), Value::String(role));
            // A later `role` wins, as in JSON.parse: the message is read from the whole object.
            data.extend(rest);
            return from_object(data);
        }
        let mut data = Map::new();
        data.insert(first, map.next_value()?);
        while let Some((key, value)) = map.next_entry::<String, Value>()? {
            data.insert(key, value);
        }
        from_object(data)
    }
}

/// The message of a whole object: an LLM message by its `role`, else a custom one.
fn from_object<E: de::Error>(data: Map<String, Value>) -> Result<AgentMessage, E> {
    let role = data
        .get("role")
        .and_then(Value::as_str)
        .ok_or_else(|| de::Error::missing_field("role"))?
        .to_owned();
    if is_llm_role(&role) {
        return Message::deserialize(Value::Object(data))
            .map(AgentMessage::Llm)
            .map_err(de::Error::custom);
    }
    Ok(AgentMessage::Custom(CustomMessage { role, data }))
}

fn is_llm_role(role: &str) -> bool {
    matches!(role, "user" | "assistant" | "toolResult")
}

impl From<Message> for AgentMessage {
    fn from(m: Message) -> Self {
        Self::Llm(m)
    }
}

impl From<UserMessage> for AgentMessage {
    fn from(m: UserMessage) -> Self {
        Self::Llm(Message::User(m))
    }
}

impl From<AssistantMessage> for AgentMessage {
    fn from(m: AssistantMessage) -> Self {
        Self::Llm(Message::Assistant(m.into()))
    }
}

impl From<ToolResultMessage> for AgentMessage {
    fn from(m: ToolResultMessage) -> Self {
        Self::Llm(Message::ToolResult(m.into()))
    }
}

impl From<CustomMessage> for AgentMessage {
    fn from(m: CustomMessage) -> Self {
        Self::Custom(m)
    }
}

/// The default conversion: keep user, assistant and tool-result messages, drop the rest.
pub fn default_convert_to_llm(messages: &[AgentMessage]) -> Vec<Message> {
    messages
        .iter()
        .filter_map(|m| m.as_llm().cloned())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn custom_roles_round_trip_and_llm_roles_parse_typed() {
        let custom: AgentMessage = serde_json::from_str(
            r#"{"role":"bashExecution","command":"ls","output":"a","exitCode":0}"#,
        )
        .unwrap();
        assert_eq!(custom.role(), "bashExecution");
        assert!(matches!(custom, AgentMessage::Custom(_)));
        assert_eq!(
            serde_json::to_string(&custom).unwrap(),
            r#"{"role":"bashExecution","command":"ls","output":"a","exitCode":0}"#
        );
        let user: AgentMessage =
            serde_json::from_str(r#"{"role":"user","content":"hi","timestamp":1}"#).unwrap();
        assert!(matches!(user, AgentMessage::Llm(Message::User(_))));
        let bad = serde_json::from_str::<AgentMessage>(r#"{"role":"assistant","content":3}"#);
        assert!(bad.is_err());
    }

    /// Found by the session_file fuzz target: with `role` given twice, a custom message took
    /// its role from the first and its fields (role included) from the last, so it wrote
    /// back as a different message. The last wins, as in JSON.parse.
    #[test]
    fn a_later_role_wins() {
        let text = r#"{"role":"note","text":"x","role":"shout"}"#;
        let custom: AgentMessage = serde_json::from_str(text).unwrap();
        assert_eq!(custom.role(), "shout");
        let again: AgentMessage =
            serde_json::from_str(&serde_json::to_string(&custom).unwrap()).unwrap();
        assert_eq!(again, custom);
        let user: AgentMessage =
            serde_json::from_str(r#"{"role":"note","content":"hi","role":"user"}"#).unwrap();
        assert!(matches!(user, AgentMessage::Llm(Message::User(_))));
        assert!(serde_json::from_str::<AgentMessage>(r#"{"role":"","role":0}"#).is_err());
    }

    #[test]
    fn default_conversion_drops_custom_messages() {
        let messages = vec![
            AgentMessage::from(UserMessage::text("hi")),
            AgentMessage::from(CustomMessage::new("notification", Map::new())),
        ];
        let llm = default_convert_to_llm(&messages);
        assert_eq!(llm.len(), 1);
        assert_eq!(llm[0].role(), "user");
    }
}
