//! A classifier call's input (pi 1.6's `ClassifierContext`): JSON state, optional images
//! and typed questions, parsed from what a script passed once codemode has checked it.

use serde::Deserialize;
use serde_json::{Map, Value};

/// One question about the state.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Question {
    /// Pick one key of `criteria` (each key's meaning as its value).
    Choice {
        instructions: String,
        criteria: Map<String, Value>,
    },
    /// Score on the levels of `criteria`, lowest first.
    Score {
        instructions: String,
        criteria: Vec<String>,
    },
    /// Yes (`true`) or no (`false`), each with its meaning.
    Bool {
        instructions: String,
        criteria: BoolCriteria,
    },
}

/// What yes and no mean for a `bool` question.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct BoolCriteria {
    #[serde(rename = "true")]
    pub yes: String,
    #[serde(rename = "false")]
    pub no: String,
}

impl Question {
    pub fn instructions(&self) -> &str {
        match self {
            Question::Choice { instructions, .. }
            | Question::Score { instructions, .. }
            | Question::Bool { instructions, .. } => instructions,
        }
    }
}

/// An image judged with the state.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Image {
    pub data: String,
    pub mime_type: String,
}

/// The state, images and questions (in the order the script wrote them).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ClassifierContext {
    pub state: Map<String, Value>,
    #[serde(default)]
    pub images: Vec<Image>,
    pub questions: Questions,
}

/// Questions by ID in the order the script wrote them.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Questions(pub Vec<(String, Question)>);

impl<'de> Deserialize<'de> for Questions {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // serde_json's `preserve_order` map keeps the written order.
        let raw = Map::<String, Value>::deserialize(deserializer)?;
        raw.into_iter()
            .map(|(id, value)| {
                Question::deserialize(value)
                    .map(|question| (id, question))
                    .map_err(serde::de::Error::custom)
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Questions)
    }
}

impl Questions {
    /// The question with this ID.
    pub fn get(&self, id: &str) -> Option<&Question> {
        self.0.iter().find(|(key, _)| key == id).map(|(_, q)| q)
    }
}
