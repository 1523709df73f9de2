//! A tool result as the model gets it, as pi 1.5 maps it: text and images pass through,
//! audio, resource links and binary resources become a line of text, embedded text
//! resources their text; with no content, the structured content as indented JSON. Text
//! over 20 KB loses its middle around a `…N chars truncated…` marker, the whole text saved
//! to a file named in the result.

use std::path::PathBuf;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};

/// Text over this many bytes is cut in the middle.
pub const MAX_TEXT_BYTES: usize = 20 * 1024;

/// One block of a tool result for the model.
#[derive(Debug, Clone, PartialEq)]
pub enum Block {
    Text(String),
    Image { data: String, mime_type: String },
}

/// The model's view of a tool result.
pub fn to_blocks(result: &CallToolResult) -> Vec<Block> {
    let mut blocks: Vec<Block> = result.content.iter().map(block).collect();
    if blocks.is_empty()
        && let Some(structured) = &result.structured_content
    {
        blocks.push(Block::Text(pretty(structured)));
    }
    blocks
}

/// `JSON.stringify(value, null, 2)`.
pub fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// One content block for the model.
pub fn block(content: &ContentBlock) -> Block {
    match content {
        ContentBlock::Text(t) => Block::Text(t.text.clone()),
        ContentBlock::Image(i) => Block::Image {
            data: i.data.clone(),
            mime_type: i.mime_type.clone(),
        },
        ContentBlock::Audio(a) => Block::Text(format!("[audio {} omitted]", a.mime_type)),
        ContentBlock::ResourceLink(link) => Block::Text(format!("{}: {}", link.name, link.uri)),
        ContentBlock::Resource(embedded) => match &embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => Block::Text(text.clone()),
            ResourceContents::BlobResourceContents {
                blob,
                mime_type: Some(mime),
                ..
            } if mime.starts_with("image/") => Block::Image {
                data: blob.clone(),
                mime_type: mime.clone(),
            },
            ResourceContents::BlobResourceContents { uri, mime_type, .. } => Block::Text(format!(
                "[binary resource {uri} ({}) omitted]",
                mime_type.as_deref().unwrap_or("unknown type")
            )),
            _ => Block::Text("[unsupported MCP resource]".into()),
        },
        _ => Block::Text("[unsupported MCP content]".into()),
    }
}

/// The blocks with their text cut to [`MAX_TEXT_BYTES`] when longer; `save` keeps the whole
/// text and says where. Returns the blocks and the saved file.
pub fn limit(
    blocks: Vec<Block>,
    save: impl FnOnce(&str) -> std::io::Result<PathBuf>,
) -> (Vec<Block>, Option<PathBuf>) {
    let combined = blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text(t) => Some(t.as_str()),
            Block::Image { .. } => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let Some(cut) = truncate_middle(&combined, MAX_TEXT_BYTES) else {
        return (blocks, None);
    };
    let (saved, where_) = match save(&combined) {
        Ok(path) => {
            let note = format!(
                "\n\n[Full output: {} (read it with offset/limit)]",
                path.display()
            );
            (Some(path), note)
        }
        Err(e) => (None, format!("\n\n[Could not save the full output: {e}]")),
    };
    let text = format!(
        "Warning: truncated output (original token count: {})\nTotal output lines: {}\n\n{}{where_}",
        cut.total_bytes.div_ceil(4),
        cut.total_lines,
        cut.content
    );
    let mut out = vec![Block::Text(text)];
    out.extend(
        blocks
            .into_iter()
            .filter(|b| matches!(b, Block::Image { .. })),
    );
    (out, saved)
}

/// A text cut in the middle.
#[derive(Debug, PartialEq, Eq)]
pub struct Cut {
    pub content: String,
    pub total_bytes: usize,
    pub total_lines: usize,
}

/// Keeps the first and last halves of `max_bytes` (on character boundaries) around
/// `…N chars truncated…`; `None` when the text fits.
pub fn truncate_middle(text: &str, max_bytes: usize) -> Option<Cut> {
    if text.len() <= max_bytes {
        return None;
    }
    let mut head_end = max_bytes / 2;
    while head_end > 0 && !text.is_char_boundary(head_end) {
        head_end -= 1;
    }
    let mut tail_start = text.len() - (max_bytes - max_bytes / 2);
    while tail_start < text.len() && !text.is_char_boundary(tail_start) {
        tail_start += 1;
    }
    let removed = text[head_end..tail_start].chars().count();
    let lines = text.split('\n').count() - usize::from(text.ends_with('\n'));
    Some(Cut {
        content: format!(
            "{}\u{2026}{removed} chars truncated\u{2026}{}",
            &text[..head_end],
            &text[tail_start..]
        ),
        total_bytes: text.len(),
        total_lines: lines,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_text_loses_its_middle() {
        let text = format!("{}\n{}", "a".repeat(15_000), "é".repeat(10_000));
        let cut = truncate_middle(&text, MAX_TEXT_BYTES).unwrap();
        assert_eq!(cut.total_bytes, text.len());
        assert_eq!(cut.total_lines, 2);
        assert!(cut.content.starts_with(&"a".repeat(10_240)));
        assert!(cut.content.contains(" chars truncated\u{2026}"));
        assert!(truncate_middle("short", MAX_TEXT_BYTES).is_none());
        let (blocks, saved) = limit(vec![Block::Text(text)], |_| {
            Ok(PathBuf::from("/tmp/out.txt"))
        });
        assert_eq!(saved, Some(PathBuf::from("/tmp/out.txt")));
        let Block::Text(t) = &blocks[0] else { panic!() };
        assert!(t.starts_with("Warning: truncated output (original token count: "));
        assert!(t.ends_with("[Full output: /tmp/out.txt (read it with offset/limit)]"));
    }
}
