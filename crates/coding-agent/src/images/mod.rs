//! New images before they enter the conversation, as pi 1.6 treats them: formats models do
//! not take (BMP) are converted to PNG, and every image is resized and re-encoded to the
//! model's `inputLimits.images.resize` profile (default 2000x2000 px, 4.5 MiB of base64,
//! JPEG quality 80), with notes telling the model what happened. Used by `read`, `@file`
//! attachments, prompt, steering and follow-up images, and tool-result images.

pub mod blocking;
pub mod limits;
pub mod orientation;
pub mod resize;

use base64::Engine;
use pi_ai::{ImageContent, InputBlock};

pub use limits::{ImagePolicy, ResizeOptions};

/// The note in place of an image that could not be converted.
pub const NOT_CONVERTED: &str =
    "[Image omitted: could not be converted to a supported inline image format.]";
/// The note in place of an image that could not be made small enough.
pub const NOT_RESIZED: &str =
    "[Image omitted: could not be resized below the inline image size limit.]";

/// An image ready for the conversation, with the notes on what was done to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Processed {
    /// Base64 payload.
    pub data: String,
    pub mime_type: String,
    pub hints: Vec<String>,
}

/// The MIME types sent as they are (others are converted to PNG first).
fn supported_mime_type(mime_type: &str) -> Option<&'static str> {
    let base = mime_type.split(';').next().unwrap_or("").trim();
    match base.to_ascii_lowercase().as_str() {
        "image/png" => Some("image/png"),
        "image/jpeg" | "image/jpg" => Some("image/jpeg"),
        "image/gif" => Some("image/gif"),
        "image/webp" => Some("image/webp"),
        _ => None,
    }
}

/// `bytes` (of type `mime_type`) made ready for a model under `policy`, or the note that
/// replaces it (pi 1.6's `processImage`).
pub fn process_image(
    bytes: &[u8],
    mime_type: &str,
    policy: &ImagePolicy,
) -> Result<Processed, &'static str> {
    let (bytes, mime_type, converted_from) = match supported_mime_type(mime_type) {
        Some(mime) => (bytes.to_vec(), mime, None),
        None => {
            let png = resize::decode(bytes)
                .and_then(|image| resize::encode_png(&image))
                .ok_or(NOT_CONVERTED)?;
            let from = mime_type
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase();
            (png, "image/png", Some(from))
        }
    };
    let conversion_hint = |to: &str| {
        converted_from
            .as_deref()
            .filter(|from| *from != to)
            .map(|from| format!("[Image converted from {from} to {to}.]"))
    };
    if !policy.auto_resize {
        return Ok(Processed {
            data: base64::engine::general_purpose::STANDARD.encode(&bytes),
            mime_type: mime_type.to_owned(),
            hints: conversion_hint(mime_type).into_iter().collect(),
        });
    }
    let resized = resize::resize_image(&bytes, mime_type, &policy.resize).ok_or(NOT_RESIZED)?;
    let hints = conversion_hint(&resized.mime_type)
        .into_iter()
        .chain(resized.dimension_note())
        .collect();
    Ok(Processed {
        data: resized.data,
        mime_type: resized.mime_type,
        hints,
    })
}

/// [`process_image`] for an image given as base64 (an undecodable payload cannot be
/// converted).
pub fn process_base64(
    image: &ImageContent,
    policy: &ImagePolicy,
) -> Result<Processed, &'static str> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image.data.as_str())
        .map_err(|_| NOT_CONVERTED)?;
    process_image(&bytes, &image.mime_type, policy)
}

/// A base64 image of any type we decode as a base64 PNG (what the terminal is sent for
/// the Kitty protocol, which takes PNG only).
pub fn png_base64(data: &str, _mime_type: &str) -> Option<String> {
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(data.trim()).ok()?;
    let png = resize::encode_png(&resize::decode(&bytes)?)?;
    Some(engine.encode(png))
}

/// A user's images (prompt, steering, follow-up) made ready, and the notes to append to
/// the text (failures become notes, and the image is dropped).
pub fn normalize_prompt_images(
    images: &[ImageContent],
    policy: &ImagePolicy,
) -> (Vec<ImageContent>, Vec<String>) {
    let mut kept = Vec::new();
    let mut hints = Vec::new();
    for image in images {
        match process_base64(image, policy) {
            Ok(processed) => {
                kept.push(ImageContent::new(processed.data, processed.mime_type));
                hints.extend(processed.hints);
            }
            Err(message) => hints.push(message.to_owned()),
        }
    }
    (kept, hints)
}

/// `text` with the image notes appended after a blank line (as pi 1.6 sends them).
pub fn text_with_hints(text: &str, hints: &[String]) -> String {
    if hints.is_empty() {
        text.to_owned()
    } else {
        format!("{text}\n\n{}", hints.join("\n"))
    }
}

/// Tool-result images made ready (pi 0.84): each changed image is replaced and followed by
/// a text block with its notes; an image that cannot be processed is kept as the tool gave
/// it. `None` when nothing changed.
pub fn normalize_tool_result_images(
    content: &[InputBlock],
    policy: &ImagePolicy,
) -> Option<Vec<InputBlock>> {
    if !content.iter().any(|b| matches!(b, InputBlock::Image(_))) {
        return None;
    }
    let mut out = Vec::with_capacity(content.len());
    let mut changed = false;
    for block in content {
        let InputBlock::Image(image) = block else {
            out.push(block.clone());
            continue;
        };
        match process_base64(image, policy) {
            Ok(p)
                if p.data != image.data.as_str()
                    || p.mime_type != image.mime_type
                    || !p.hints.is_empty() =>
            {
                out.push(InputBlock::Image(ImageContent::new(p.data, p.mime_type)));
                if !p.hints.is_empty() {
                    out.push(InputBlock::text(p.hints.join("\n")));
                }
                changed = true;
            }
            _ => out.push(block.clone()),
        }
    }
    changed.then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn png(width: u32, height: u32) -> Vec<u8> {
        let image = image::DynamicImage::ImageRgb8(image::RgbImage::from_pixel(
            width,
            height,
            image::Rgb([10, 200, 30]),
        ));
        resize::encode_png(&image).unwrap()
    }

    #[test]
    fn a_small_image_is_kept_byte_for_byte() {
        let bytes = png(40, 30);
        let processed = process_image(&bytes, "image/png", &ImagePolicy::default()).unwrap();
        assert_eq!(
            processed.data,
            base64::engine::general_purpose::STANDARD.encode(&bytes)
        );
        assert!(processed.hints.is_empty());
    }

    #[test]
    fn a_large_flat_image_is_scaled_to_the_profile() {
        let policy = ImagePolicy {
            auto_resize: true,
            resize: ResizeOptions {
                max_width: 100,
                max_height: 100,
                ..ResizeOptions::default()
            },
        };
        let processed = process_image(&png(400, 200), "image/png", &policy).unwrap();
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(&processed.data)
            .unwrap();
        let image = image::load_from_memory(&bytes).unwrap();
        assert_eq!((image.width(), image.height()), (100, 50));
        assert_eq!(
            processed.hints,
            [
                "[Image: original 400x200, displayed at 100x50. Multiply coordinates by 4.00 to map to original image.]"
            ]
        );
    }

    #[test]
    fn an_undecodable_unsupported_type_is_not_converted() {
        assert_eq!(
            process_image(b"BMxx", "image/bmp", &ImagePolicy::default()),
            Err(NOT_CONVERTED)
        );
    }
}
