//! One SSE frame (event) and its byte rendering.

use bytes::Bytes;

use crate::script::LineEnding;

/// One SSE event: optional `event:` name plus a single `data:` line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Frame {
    /// The `event:` field, if any.
    pub event: Option<String>,
    /// The `data:` payload (must not contain line breaks).
    pub data: String,
}

impl Frame {
    /// A frame with only a `data:` line.
    pub fn data(data: impl Into<String>) -> Frame {
        Frame {
            event: None,
            data: data.into(),
        }
    }

    /// A frame with an `event:` line and a `data:` line.
    pub fn named(event: impl Into<String>, data: impl Into<String>) -> Frame {
        Frame {
            event: Some(event.into()),
            data: data.into(),
        }
    }

    /// Renders the frame, ending every line with the given line ending.
    pub fn render(&self, line_ending: LineEnding) -> Bytes {
        let eol = match line_ending {
            LineEnding::Lf => "\n",
            LineEnding::Crlf => "\r\n",
        };
        let mut out = String::with_capacity(self.data.len() + 32);
        if let Some(event) = &self.event {
            out.push_str("event: ");
            out.push_str(event);
            out.push_str(eol);
        }
        out.push_str("data: ");
        out.push_str(&self.data);
        out.push_str(eol);
        out.push_str(eol);
        Bytes::from(out)
    }
}

/// Serializes a value to compact JSON (infallible for the plain types used here).
pub(crate) fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| String::from("{}"))
}
