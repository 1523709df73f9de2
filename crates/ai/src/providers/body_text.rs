//! Text in a request body: a message's own text is passed as the shared text it is, so a
//! text read from a session file is written into the body from its JSON literal (a copy),
//! not decoded and escaped again.

use std::borrow::Cow;

use serde::{Serialize, Serializer};

use crate::types::SharedStr;

/// A string field of a request body.
#[derive(Debug, Clone)]
pub enum BodyText<'a> {
    Str(Cow<'a, str>),
    Shared(SharedStr),
    /// A short prefix and a shared text, as one string (`data:<mime>;base64,<data>`).
    Prefixed(String, SharedStr),
}

/// A `data:` URL of base64 data, written from the data's literal.
pub fn data_url<'a>(mime: &str, data: &SharedStr) -> BodyText<'a> {
    BodyText::Prefixed(format!("data:{mime};base64,"), data.clone())
}

impl BodyText<'_> {
    pub fn is_empty(&self) -> bool {
        match self {
            Self::Str(text) => text.is_empty(),
            Self::Shared(text) => text
                .raw_json()
                .map_or_else(|| text.is_empty(), |raw| raw.len() <= 2),
            Self::Prefixed(prefix, text) => prefix.is_empty() && text.is_empty(),
        }
    }
}

/// The texts joined by `separator`: the one text itself when there is one.
pub fn joined<'a>(texts: &[&SharedStr], separator: &str) -> BodyText<'a> {
    match texts {
        [] => BodyText::Str(Cow::Borrowed("")),
        [single] => BodyText::Shared((*single).clone()),
        many => BodyText::Str(Cow::Owned(
            many.iter()
                .map(|t| t.as_str())
                .collect::<Vec<_>>()
                .join(separator),
        )),
    }
}

impl Default for BodyText<'_> {
    fn default() -> Self {
        Self::Str(Cow::Borrowed(""))
    }
}

impl<'a> From<&'a str> for BodyText<'a> {
    fn from(text: &'a str) -> Self {
        Self::Str(Cow::Borrowed(text))
    }
}

impl From<String> for BodyText<'_> {
    fn from(text: String) -> Self {
        Self::Str(Cow::Owned(text))
    }
}

impl<'a> From<Cow<'a, str>> for BodyText<'a> {
    fn from(text: Cow<'a, str>) -> Self {
        Self::Str(text)
    }
}

impl From<&SharedStr> for BodyText<'_> {
    fn from(text: &SharedStr) -> Self {
        Self::Shared(text.clone())
    }
}

impl Serialize for BodyText<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Str(text) => serializer.serialize_str(text),
            Self::Shared(text) => text.serialize(serializer),
            Self::Prefixed(prefix, text) => text.serialize_prefixed(prefix, serializer),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_texts_are_written_from_their_literal() {
        let a: SharedStr = serde_json::from_str(r#""a\nb""#).unwrap();
        let b = SharedStr::from("c");
        assert_eq!(
            serde_json::to_string(&joined(&[&a], "\n")).unwrap(),
            r#""a\nb""#
        );
        assert_eq!(
            serde_json::to_string(&joined(&[&a, &b], "\n")).unwrap(),
            r#""a\nb\nc""#
        );
        assert!(joined(&[], "").is_empty());
        let empty: SharedStr = serde_json::from_str(r#""""#).unwrap();
        assert!(BodyText::from(&empty).is_empty());
        assert!(!BodyText::from(&a).is_empty());
    }

    #[test]
    fn data_urls_are_written_from_the_literal_whatever_the_text_holds() {
        let raw: SharedStr = serde_json::from_str(r#""QUJD""#).unwrap();
        let decoded = SharedStr::from("QUJD");
        for data in [&raw, &decoded] {
            let url = data_url("image/png", data);
            assert_eq!(
                serde_json::to_string(&url).unwrap(),
                r#""data:image/png;base64,QUJD""#
            );
            let (written, left_out) =
                crate::types::stored_text::measuring(|| serde_json::to_string(&url).unwrap());
            assert_eq!(written.len() + left_out, 28);
            assert_eq!(
                serde_json::to_value(&url).unwrap(),
                serde_json::json!("data:image/png;base64,QUJD")
            );
        }
    }
}
