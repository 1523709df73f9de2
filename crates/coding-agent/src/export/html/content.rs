//! Message content: text and image blocks, custom content, and long text folded behind
//! a preview.

use serde_json::Value;

use pi_ai::InputBlock;

use super::ansi::{ansi_to_html, has_escapes};
use super::format::{count, esc};
use super::markdown::markdown_div;

/// Text with more lines than this is folded behind a preview.
const FOLD_LINES: usize = 20;
/// Text longer than this (in bytes) is folded behind a preview.
const FOLD_BYTES: usize = 4000;
/// Lines shown in the preview of folded text.
const PREVIEW_LINES: usize = 8;
/// Characters shown at most in the preview of folded text.
const PREVIEW_CHARS: usize = 1200;

/// Text and image blocks of user or custom content.
pub(super) fn input_blocks(blocks: &[InputBlock]) -> String {
    let mut html = String::new();
    for block in blocks {
        match block {
            InputBlock::Text(text) => html.push_str(&markdown_div(&text.text)),
            InputBlock::Image(image) => html.push_str(&image_tag(&image.mime_type, &image.data)),
        }
    }
    html
}

/// The content of a custom message: a string (markdown), blocks, or anything else as JSON.
pub(super) fn custom_content(content: &Value) -> String {
    match content {
        Value::String(text) => markdown_div(text),
        Value::Array(_) => match serde_json::from_value::<Vec<InputBlock>>(content.clone()) {
            Ok(blocks) => input_blocks(&blocks),
            Err(_) => fold(
                &serde_json::to_string_pretty(content).unwrap_or_default(),
                "json",
            ),
        },
        Value::Null => String::new(),
        other => fold(
            &serde_json::to_string_pretty(other).unwrap_or_default(),
            "json",
        ),
    }
}

/// An `<img>` with the image inline as a `data:` URI.
pub(super) fn image_tag(mime_type: &str, data: &str) -> String {
    let mime_ok = mime_type.starts_with("image/")
        && mime_type
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-./".contains(c));
    let mime = if mime_ok { mime_type } else { "image/png" };
    let data: String = data
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '/' | '='))
        .collect();
    format!("<img class=\"image\" alt=\"image\" src=\"data:{mime};base64,{data}\">\n")
}

/// Preformatted text; long text shows a preview and folds the rest behind `<details>`.
pub(super) fn fold(text: &str, class: &str) -> String {
    fold_with(text, class, esc)
}

/// Terminal output folded as [`fold`] does, escape sequences rendered (colours, links).
pub(super) fn fold_terminal(text: &str, class: &str) -> String {
    if has_escapes(text) {
        fold_with(text, &format!("{class} ansi"), ansi_to_html)
    } else {
        fold(text, class)
    }
}

/// [`fold`] with `render` turning the text (and the preview) into HTML.
fn fold_with(text: &str, class: &str, render: fn(&str) -> String) -> String {
    let text = text.trim_end_matches('\n');
    let lines = text.lines().count();
    if lines <= FOLD_LINES && text.len() <= FOLD_BYTES {
        return format!("<pre class=\"{class}\">{}</pre>\n", render(text));
    }
    let mut preview = text
        .lines()
        .take(PREVIEW_LINES)
        .collect::<Vec<_>>()
        .join("\n");
    if let Some((cut, _)) = preview.char_indices().nth(PREVIEW_CHARS) {
        preview.truncate(cut);
    }
    let what = if lines > 1 {
        count(lines as u64, "line", "lines")
    } else {
        count(text.chars().count() as u64, "character", "characters")
    };
    format!(
        "<div class=\"fold\"><details><summary>Show all {what}</summary><pre class=\"{class}\">{}</pre></details><pre class=\"{class} preview\">{}\n…</pre></div>\n",
        render(text),
        render(&preview)
    )
}
