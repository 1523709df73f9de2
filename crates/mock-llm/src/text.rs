//! Text helpers: UTF-8 safe chunking and deterministic filler text.

use std::borrow::Cow;

use crate::script::Item;

/// Default number of characters per streamed delta.
pub(crate) const DEFAULT_CHUNK_SIZE: usize = 8;

const LOREM: &str = "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod \
tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud \
exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat.\n";

/// Splits `text` into pieces of at most `chars` characters, never inside a UTF-8 character.
pub(crate) fn split_chars(text: &str, chars: usize) -> Vec<&str> {
    let chars = chars.max(1);
    let mut pieces = Vec::with_capacity(text.len() / chars + 1);
    let mut start = 0;
    let mut count = 0;
    for (idx, _) in text.char_indices() {
        if count == chars {
            pieces.push(&text[start..idx]);
            start = idx;
            count = 0;
        }
        count += 1;
    }
    if start < text.len() {
        pieces.push(&text[start..]);
    }
    pieces
}

/// Exactly `bytes` bytes of deterministic lorem-ipsum ASCII text.
pub(crate) fn filler(bytes: usize) -> String {
    LOREM.chars().cycle().take(bytes).collect()
}

/// The streamed text of a text-like item (text, thinking, filler), if any.
pub(crate) fn item_text(item: &Item) -> Option<Cow<'_, str>> {
    match item {
        Item::Text { text } | Item::Thinking { text, .. } => Some(Cow::Borrowed(text)),
        Item::Filler { bytes } => Some(Cow::Owned(filler(*bytes))),
        _ => None,
    }
}

/// The argument text streamed for a tool call item, if it is one.
pub(crate) fn tool_arguments(item: &Item) -> Option<Cow<'_, str>> {
    match item {
        Item::ToolCall { arguments, .. } => Some(Cow::Owned(crate::sse::to_json(arguments))),
        Item::ToolCallRaw { arguments, .. } => Some(Cow::Borrowed(arguments)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_is_char_safe() {
        assert_eq!(
            split_chars("héllo wörld", 3),
            vec!["hél", "lo ", "wör", "ld"]
        );
        assert_eq!(split_chars("", 3), Vec::<&str>::new());
        assert_eq!(split_chars("ab", 0), vec!["a", "b"]);
    }

    #[test]
    fn filler_has_exact_length() {
        assert_eq!(filler(1000).len(), 1000);
        assert!(filler(5).is_ascii());
    }
}
