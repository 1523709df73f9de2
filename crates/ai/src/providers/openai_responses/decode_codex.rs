//! The Responses events only pi's Codex client treats specially (its `error` and
//! `response.failed` texts, `end_turn`, the first terminal event ending the stream), and
//! cut JSON worded as node words it.

use serde_json::Value;

use super::{Decoder, Event, first_truthy};
use crate::assembler::Assembler;
use crate::sse::Flow;

impl Decoder {
    /// The events only pi's Codex client treats specially; `None` means "handle as usual".
    pub(super) fn codex_event(
        &mut self,
        kind: &str,
        event: &Event,
        data: &str,
        asm: &mut Assembler,
    ) -> Option<Result<Flow, String>> {
        match kind {
            "" => Some(Ok(Flow::Continue)),
            "error" => {
                let text = first_truthy([event.message.as_ref(), event.code.as_ref()])
                    .unwrap_or_else(|| {
                        serde_json::from_str::<Value>(data)
                            .map(|v| v.to_string())
                            .unwrap_or_else(|_| data.to_owned())
                    });
                Some(Err(format!("Codex error: {text}")))
            }
            "response.failed" => {
                asm.message_mut().raw_stop_reason =
                    event.response.as_ref().and_then(|r| r.status.clone());
                let message = event
                    .response
                    .as_ref()
                    .and_then(|r| r.error.as_ref())
                    .and_then(|e| first_truthy([e.get("message")]));
                Some(Err(
                    message.unwrap_or_else(|| "Codex response failed".to_owned())
                ))
            }
            "response.done" | "response.completed" | "response.incomplete" => {
                if let Some(Value::Bool(end_turn)) =
                    event.response.as_ref().and_then(|r| r.end_turn.as_ref())
                {
                    asm.message_mut().end_turn = Some(*end_turn);
                }
                Some(
                    self.complete(event.response.as_ref(), asm)
                        .map(|()| Flow::Stop),
                )
            }
            _ => None,
        }
    }
}

/// A cut-off JSON text's error in node's words, which pi's auto-retry reads ("Unterminated
/// string …" counts as transient there); other errors keep serde's words.
pub(super) fn js_json_error(error: &serde_json::Error, text: &str) -> String {
    if !error.is_eof() {
        return error.to_string();
    }
    if error.to_string().starts_with("EOF while parsing a string") {
        let line = text.matches('\n').count() + 1;
        let column = text
            .rsplit('\n')
            .next()
            .unwrap_or("")
            .encode_utf16()
            .count()
            + 1;
        format!(
            "Unterminated string in JSON at position {} (line {line} column {column})",
            text.encode_utf16().count()
        )
    } else {
        "Unexpected end of JSON input".to_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_json_is_worded_as_node_words_it() {
        let cut = r#"{"type":"response.completed","response":{"id":"re"#;
        let error = serde_json::from_str::<Value>(cut).unwrap_err();
        assert_eq!(
            js_json_error(&error, cut),
            format!(
                "Unterminated string in JSON at position {} (line 1 column {})",
                cut.len(),
                cut.len() + 1
            )
        );
        let cut = r#"{"type":"x","#;
        let error = serde_json::from_str::<Value>(cut).unwrap_err();
        assert_eq!(js_json_error(&error, cut), "Unexpected end of JSON input");
    }
}
