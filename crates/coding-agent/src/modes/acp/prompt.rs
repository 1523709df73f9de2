//! An ACP prompt as pi takes one: the text blocks joined, an embedded text resource inlined
//! as an `@file` argument is (`<file name="…">…</file>`), a resource link named for the
//! model to open, images attached.

use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};
use base64::Engine;
use pi_ai::ImageContent;

/// The prompt text and its images.
pub struct Prompt {
    pub text: String,
    pub images: Vec<ImageContent>,
}

/// A `file://` URI as a path, anything else as it is.
fn shown(uri: &str) -> String {
    uri.strip_prefix("file://").unwrap_or(uri).to_owned()
}

/// Turns the blocks into pi's prompt; audio is named, not sent (no model here hears).
pub fn from_blocks(blocks: &[ContentBlock]) -> Prompt {
    let mut text = String::new();
    let mut images = Vec::new();
    let mut files = String::new();
    for block in blocks {
        match block {
            ContentBlock::Text(t) => text.push_str(&t.text),
            ContentBlock::Image(image) => {
                images.push(ImageContent::new(
                    image.data.clone(),
                    image.mime_type.clone(),
                ));
            }
            ContentBlock::ResourceLink(link) => {
                files.push_str(&format!("<file name=\"{}\"></file>\n", shown(&link.uri)));
            }
            ContentBlock::Resource(resource) => match &resource.resource {
                EmbeddedResourceResource::TextResourceContents(contents) => {
                    files.push_str(&format!(
                        "<file name=\"{}\">\n{}\n</file>\n",
                        shown(&contents.uri),
                        contents.text
                    ));
                }
                EmbeddedResourceResource::BlobResourceContents(contents) => {
                    let mime = contents.mime_type.clone().unwrap_or_default();
                    if mime.starts_with("image/") {
                        images.push(ImageContent::new(contents.blob.clone(), mime));
                    } else {
                        let bytes = base64::engine::general_purpose::STANDARD
                            .decode(contents.blob.as_bytes())
                            .map_or(0, |b| b.len());
                        files.push_str(&format!(
                            "<file name=\"{}\">({bytes} bytes of {mime})</file>\n",
                            shown(&contents.uri)
                        ));
                    }
                }
                _ => {}
            },
            ContentBlock::Audio(audio) => {
                text.push_str(&format!(
                    "\n[audio attachment of type {} left out]",
                    audio.mime_type
                ));
            }
            _ => {}
        }
    }
    Prompt {
        text: format!("{files}{text}"),
        images,
    }
}
