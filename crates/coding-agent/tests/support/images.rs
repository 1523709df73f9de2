//! Test images made on the spot (a noisy photo-like JPEG, a flat PNG, a BMP, a JPEG with
//! an EXIF orientation after an XMP segment), a models.json for an image-capable mock
//! model, and the images a recorded Chat Completions request carries, decoded.
#![allow(dead_code)]

use std::io::Cursor;

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::{DynamicImage, ImageFormat, Rgb, RgbImage};
use serde_json::{Value, json};

use mock_llm::MockServer;

use super::rpc::Env;

/// A photo-like picture: gradients with pseudo-random noise, so JPEG beats PNG by far.
pub fn photo(width: u32, height: u32) -> RgbImage {
    let mut seed: u32 = 0x2545_F491;
    RgbImage::from_fn(width, height, |x, y| {
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        let noise = (seed & 0x3F) as u8;
        Rgb([
            ((x * 255 / width) as u8).saturating_add(noise),
            ((y * 255 / height) as u8).saturating_add(noise / 2),
            128u8.saturating_add(noise),
        ])
    })
}

/// JPEG bytes of `image` at quality 90.
pub fn jpeg(image: &RgbImage) -> Vec<u8> {
    let mut out = Vec::new();
    JpegEncoder::new_with_quality(&mut out, 90)
        .encode_image(image)
        .unwrap();
    out
}

/// `image` encoded as `format`.
pub fn encode(image: &RgbImage, format: ImageFormat) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    DynamicImage::ImageRgb8(image.clone())
        .write_to(&mut out, format)
        .unwrap();
    out.into_inner()
}

/// One flat color.
pub fn flat(width: u32, height: u32) -> RgbImage {
    RgbImage::from_pixel(width, height, Rgb([30, 120, 220]))
}

fn app1(payload: &[u8]) -> Vec<u8> {
    let mut segment = vec![0xFF, 0xE1];
    segment.extend_from_slice(&u16::try_from(payload.len() + 2).unwrap().to_be_bytes());
    segment.extend_from_slice(payload);
    segment
}

/// A JPEG of `image` whose EXIF says `orientation`, in an APP1 segment that follows an
/// XMP (non-EXIF) APP1 segment.
pub fn jpeg_with_orientation_after_xmp(image: &RgbImage, orientation: u16) -> Vec<u8> {
    let plain = jpeg(image);
    let mut tiff = b"II\x2a\0\x08\0\0\0".to_vec();
    tiff.extend_from_slice(&1u16.to_le_bytes());
    tiff.extend_from_slice(&0x0112u16.to_le_bytes());
    tiff.extend_from_slice(&3u16.to_le_bytes());
    tiff.extend_from_slice(&1u32.to_le_bytes());
    tiff.extend_from_slice(&orientation.to_le_bytes());
    tiff.extend_from_slice(&[0, 0, 0, 0, 0, 0]);
    let mut exif = b"Exif\0\0".to_vec();
    exif.extend(tiff);
    let mut out = plain[..2].to_vec();
    out.extend(app1(
        b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta xmlns:x=\"adobe:ns:meta/\"/>",
    ));
    out.extend(app1(&exif));
    out.extend_from_slice(&plain[2..]);
    out
}

/// Rewrites `env`'s models.json so `mock-model` takes images, with `input_limits` (a
/// models.json `inputLimits` object) when given.
pub fn image_model(env: &Env, server: &MockServer, input_limits: Option<Value>) {
    let mut model = json!({"id": "mock-model", "name": "Mock Model", "input": ["text", "image"],
                           "contextWindow": 128000, "maxTokens": 16384});
    if let Some(limits) = input_limits {
        model["inputLimits"] = limits;
    }
    let models = json!({"providers": {"mock": {"baseUrl": server.openai_base_url(),
        "api": "openai-completions", "apiKey": "mock-key", "models": [model]}}});
    std::fs::write(env.agent.join("models.json"), models.to_string()).unwrap();
}

/// An image a request carried.
#[derive(Debug, Clone, PartialEq)]
pub struct SentImage {
    pub mime_type: String,
    pub width: u32,
    pub height: u32,
    /// Length of the base64 payload.
    pub base64_len: usize,
    /// The decoded pixels.
    pub pixels: DynamicImage,
}

/// Every `image_url` part of a Chat Completions request body, decoded.
pub fn sent_images(body: &Value) -> Vec<SentImage> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        let Some(parts) = message["content"].as_array() else {
            continue;
        };
        for part in parts {
            let Some(url) = part["image_url"]["url"].as_str() else {
                continue;
            };
            let (head, data) = url.split_once(";base64,").unwrap();
            let mime_type = head.trim_start_matches("data:").to_owned();
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data)
                .unwrap();
            let pixels = image::load_from_memory(&bytes).unwrap();
            out.push(SentImage {
                mime_type,
                width: pixels.width(),
                height: pixels.height(),
                base64_len: data.len(),
                pixels,
            });
        }
    }
    out
}

/// Every text part (or string content) of a Chat Completions request body, in order.
pub fn sent_texts(body: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for message in body["messages"].as_array().unwrap() {
        match &message["content"] {
            Value::String(text) => out.push(text.clone()),
            Value::Array(parts) => out.extend(
                parts
                    .iter()
                    .filter_map(|p| p["text"].as_str().map(str::to_owned)),
            ),
            _ => {}
        }
    }
    out
}
