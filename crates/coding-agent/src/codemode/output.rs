//! A script's result as pi 1.6 lays it out: numbered text items, images in place with
//! the temp file each was saved to, one `<console_output>` block, the script error, and
//! output past `max_output_tokens` cut to its start and end with the whole in a temp file.

use std::io::Write;
use std::path::PathBuf;

use base64::Engine;

use super::vm::Emitted;
use crate::tools::truncate::format_size;

/// Characters per estimated token.
const CHARS_PER_TOKEN: usize = 4;
/// `max_output_tokens` when the script sets none.
pub const DEFAULT_MAX_OUTPUT_TOKENS: u64 = 10_000;

/// A block of the result.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    Image { data: String, mime_type: String },
}

/// The output blocks, ready to follow the header.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Laid {
    pub blocks: Vec<Block>,
    /// Where the whole output went when it was cut.
    pub full_output_path: Option<PathBuf>,
}

/// The text items numbered when there are several, images in place, the console lines in
/// one block at the end. `returned` is the returned value's text.
pub fn format(emitted: &[Emitted], returned: Option<String>) -> Vec<Block> {
    let total = emitted
        .iter()
        .filter(|e| matches!(e, Emitted::Text(_)))
        .count()
        + usize::from(returned.is_some());
    let mut blocks = Vec::new();
    let mut console = Vec::new();
    let mut number = 0;
    let mut push_text = |blocks: &mut Vec<Block>, text: &str| {
        number += 1;
        blocks.push(Block::Text(if total > 1 {
            format!("==> text {number}/{total} <==\n{text}")
        } else {
            text.to_owned()
        }));
    };
    for item in emitted {
        match item {
            Emitted::Text(text) => push_text(&mut blocks, text),
            Emitted::Console(line) => console.push(line.as_str()),
            Emitted::Image { mime_type, data } => blocks.push(Block::Image {
                data: data.clone(),
                mime_type: mime_type.clone(),
            }),
        }
    }
    if let Some(text) = returned {
        push_text(&mut blocks, &text);
    }
    if !console.is_empty() {
        blocks.push(Block::Text(format!(
            "<console_output>\n{}\n</console_output>",
            console.join("\n")
        )));
    }
    blocks
}

/// The text of a returned value given as JSON: a string as is, anything else as its JSON.
pub fn value_text(json: &str) -> String {
    match serde_json::from_str::<serde_json::Value>(json) {
        Ok(serde_json::Value::String(text)) => text,
        _ => json.to_owned(),
    }
}

/// Merges consecutive text blocks, a newline between two parts unless the first ends with
/// one.
pub fn join_adjacent_text(blocks: Vec<Block>) -> Vec<Block> {
    let mut joined: Vec<Block> = Vec::with_capacity(blocks.len());
    for block in blocks {
        match (joined.last_mut(), block) {
            (Some(Block::Text(previous)), Block::Text(text)) => {
                if !previous.is_empty() && !previous.ends_with('\n') {
                    previous.push('\n');
                }
                previous.push_str(&text);
            }
            (_, block) => joined.push(block),
        }
    }
    joined
}

/// Length as JavaScript counts it (UTF-16 code units).
fn js_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The first `units` UTF-16 units of `text`, never splitting a character.
fn slice_head(text: &str, units: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices() {
        used += c.len_utf16();
        if used > units {
            return &text[..at];
        }
    }
    text
}

/// The last `units` UTF-16 units of `text`, never splitting a character.
fn slice_tail(text: &str, units: usize) -> &str {
    let mut used = 0;
    for (at, c) in text.char_indices().rev() {
        used += c.len_utf16();
        if used > units {
            return &text[at + c.len_utf8()..];
        }
    }
    text
}

/// Cuts text past `max_tokens` to its start and end: all text becomes one block before
/// the images, and the whole text is written to a temp file.
pub fn truncate(blocks: Vec<Block>, max_tokens: u64) -> Laid {
    let texts: Vec<&str> = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(text) => Some(text.as_str()),
            Block::Image { .. } => None,
        })
        .collect();
    let combined = texts.join("\n");
    let budget = usize::try_from(max_tokens)
        .unwrap_or(usize::MAX)
        .saturating_mul(CHARS_PER_TOKEN);
    let length = js_len(&combined);
    if texts.is_empty() || length <= budget {
        return Laid {
            blocks,
            full_output_path: None,
        };
    }
    let head_units = budget / 2;
    let tail_units = budget - head_units;
    let head = slice_head(&combined, head_units);
    let tail = slice_tail(&combined, tail_units);
    let removed = length - js_len(head) - js_len(tail);
    let mut text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{head}\u{2026}{} tokens truncated\u{2026}{tail}",
        length.div_ceil(CHARS_PER_TOKEN),
        combined.split('\n').count(),
        removed.div_ceil(CHARS_PER_TOKEN),
    );
    let saved = save("txt", combined.as_bytes());
    match &saved {
        Ok(path) => text.push_str(&format!(
            "\n\n[Full output: {} (read with offset/limit)]",
            path.display()
        )),
        Err(error) => text.push_str(&format!("\n\n[Could not save the full output: {error}]")),
    }
    let mut out = vec![Block::Text(text)];
    out.extend(
        blocks
            .into_iter()
            .filter(|b| matches!(b, Block::Image { .. })),
    );
    Laid {
        blocks: out,
        full_output_path: saved.ok(),
    }
}

/// Saves each image to a temp file (identical images once) and names the file in a text
/// line before it.
pub fn save_images(blocks: Vec<Block>) -> Vec<Block> {
    let mut saved: Vec<(String, String)> = Vec::new();
    let mut out = Vec::with_capacity(blocks.len());
    for block in blocks {
        if let Block::Image { data, mime_type } = &block {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap_or_default();
            let label = match saved.iter().find(|(d, _)| d == data) {
                Some((_, path)) => Ok(path.clone()),
                None => save(extension(mime_type), &bytes).map(|path| {
                    let path = path.display().to_string();
                    saved.push((data.clone(), path.clone()));
                    path
                }),
            };
            out.push(Block::Text(match label {
                Ok(path) => format!(
                    "[Image saved to {path} ({mime_type}, {})]",
                    format_size(bytes.len())
                ),
                Err(error) => format!(
                    "[Image ({mime_type}, {}) could not be saved: {error}]",
                    format_size(bytes.len())
                ),
            }));
        }
        out.push(block);
    }
    out
}

fn extension(mime_type: &str) -> &'static str {
    match mime_type {
        "image/jpeg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        _ => "png",
    }
}

/// Writes `bytes` to a new `pi-codemode-<random>.<extension>` in the temp dir, readable by
/// the user alone. These files outlive the process: a later turn may read them.
fn save(extension: &str, bytes: &[u8]) -> std::io::Result<PathBuf> {
    let random = uuid::Uuid::new_v4().simple().to_string();
    let path = std::env::temp_dir().join(format!("pi-codemode-{}.{extension}", &random[..16]));
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(&path)?;
    file.write_all(bytes)?;
    Ok(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(s: &str) -> Emitted {
        Emitted::Text(s.into())
    }

    #[test]
    fn several_texts_are_numbered_and_console_lines_come_last() {
        let blocks = format(
            &[text("a"), Emitted::Console("hi".into()), text("{\"x\":1}")],
            Some("{\"z\":1}".into()),
        );
        assert_eq!(
            join_adjacent_text(blocks),
            vec![Block::Text(
                "==> text 1/3 <==\na\n==> text 2/3 <==\n{\"x\":1}\n==> text 3/3 <==\n{\"z\":1}\n<console_output>\nhi\n</console_output>"
                    .into()
            )]
        );
        assert_eq!(value_text("\"str\""), "str");
        assert_eq!(value_text("{\"b\":1,\"a\":2}"), "{\"b\":1,\"a\":2}");
    }

    #[test]
    fn long_output_keeps_its_start_and_end() {
        let long = format!("{}{}\n{}", "A".repeat(30), "B".repeat(30), "C".repeat(30));
        let laid = truncate(vec![Block::Text(long.clone())], 10);
        let Block::Text(text) = &laid.blocks[0] else {
            panic!("{laid:?}")
        };
        let path = laid.full_output_path.clone().unwrap();
        assert_eq!(
            text,
            &format!(
                "Warning: truncated output (original token count: 23)\nTotal output lines: 2\n\n{}\u{2026}13 tokens truncated\u{2026}{}\n\n[Full output: {} (read with offset/limit)]",
                "A".repeat(20),
                "C".repeat(20),
                path.display()
            )
        );
        assert_eq!(std::fs::read_to_string(&path).unwrap(), long);
        std::fs::remove_file(path).unwrap();
        let exact = truncate(vec![Block::Text("x".repeat(40))], 10);
        assert!(exact.full_output_path.is_none());
    }
}
