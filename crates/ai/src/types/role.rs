//! Zero-sized markers for the constant `role` and `type` tags of the JSON contract.
//!
//! Each message and content struct carries its tag as a marker field, so the struct serializes
//! to the full JSON object on its own (an event's `partial`, a `toolcall_end`'s `toolCall`).

macro_rules! tag_marker {
    ($(#[$doc:meta])* $name:ident = $value:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
        pub struct $name;

        impl $name {
            /// The tag's JSON value.
            pub const VALUE: &'static str = $value;
        }

        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str($value)
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                let value = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
                if value == $value {
                    Ok($name)
                } else {
                    Err(serde::de::Error::invalid_value(
                        serde::de::Unexpected::Str(&value),
                        &$value,
                    ))
                }
            }
        }
    };
}

tag_marker!(/// `"role": "user"`
    UserRole = "user");
tag_marker!(/// `"role": "assistant"`
    AssistantRole = "assistant");
tag_marker!(/// `"role": "toolResult"`
    ToolResultRole = "toolResult");
tag_marker!(/// `"type": "text"`
    TextTag = "text");
tag_marker!(/// `"type": "thinking"`
    ThinkingTag = "thinking");
tag_marker!(/// `"type": "image"`
    ImageTag = "image");
tag_marker!(/// `"type": "toolCall"`
    ToolCallTag = "toolCall");
