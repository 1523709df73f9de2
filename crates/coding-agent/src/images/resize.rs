//! Fitting one image into a [`ResizeOptions`] profile, as pi 1.6 does it: an image already
//! within the limits is kept byte for byte; otherwise it is scaled (Lanczos3) to fit the
//! largest dimensions, encoded as PNG and as JPEG at the profile's quality and the smaller
//! one kept (pi 1.5), then lower JPEG qualities, then ever smaller sizes until it fits.

use std::io::Cursor;

use base64::Engine;
use image::codecs::jpeg::JpegEncoder;
use image::imageops::FilterType;
use image::{DynamicImage, ImageFormat};

use super::limits::ResizeOptions;
use super::orientation::apply_exif_orientation;

/// JPEG qualities tried after the profile's own, when neither first encoding fits.
const LOWER_QUALITIES: [u8; 4] = [85, 70, 55, 40];

/// An image fitted to a profile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resized {
    /// Base64 payload.
    pub data: String,
    pub mime_type: String,
    pub original_width: u32,
    pub original_height: u32,
    pub width: u32,
    pub height: u32,
    /// Whether it was re-encoded (false: the input bytes as they were).
    pub was_resized: bool,
}

impl Resized {
    /// The note telling the model how coordinates map back to the original, when resized.
    pub fn dimension_note(&self) -> Option<String> {
        if !self.was_resized {
            return None;
        }
        let scale = to_fixed_2(f64::from(self.original_width) / f64::from(self.width));
        Some(format!(
            "[Image: original {}x{}, displayed at {}x{}. Multiply coordinates by {scale} to map to original image.]",
            self.original_width, self.original_height, self.width, self.height
        ))
    }
}

/// A positive number with two decimals as JavaScript's `toFixed(2)` writes it: an exact
/// tie rounds up (Rust's own formatting would round it to even: 4.6875 gives 4.68).
fn to_fixed_2(value: f64) -> String {
    let exact = format!("{value:.40}");
    let Some((whole, fraction)) = exact.split_once('.') else {
        return format!("{value:.2}");
    };
    let tie = fraction.as_bytes().get(2) == Some(&b'5') && fraction[3..].bytes().all(|b| b == b'0');
    if tie {
        // Round the tie up by nudging past it.
        let cents = whole.parse::<f64>().unwrap_or(0.0) * 100.0
            + fraction[..2].parse::<f64>().unwrap_or(0.0)
            + 1.0;
        return format!("{:.2}", cents / 100.0);
    }
    format!("{value:.2}")
}

/// Decodes `bytes` (PNG, JPEG, GIF's first frame, WebP or BMP), upright per its EXIF data.
pub fn decode(bytes: &[u8]) -> Option<DynamicImage> {
    let mut image = image::load_from_memory(bytes).ok()?;
    apply_exif_orientation(&mut image, bytes);
    Some(image)
}

/// PNG bytes of `image`.
pub fn encode_png(image: &DynamicImage) -> Option<Vec<u8>> {
    let mut out = Cursor::new(Vec::new());
    image.write_to(&mut out, ImageFormat::Png).ok()?;
    Some(out.into_inner())
}

/// JPEG bytes of `image` at `quality` (any alpha channel dropped).
fn encode_jpeg(image: &DynamicImage, quality: u8) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let rgb = image.to_rgb8();
    JpegEncoder::new_with_quality(&mut out, quality)
        .encode_image(&rgb)
        .ok()?;
    Some(out)
}

/// A base64 payload and its MIME type.
struct Candidate {
    data: String,
    mime_type: &'static str,
}

fn candidate(bytes: Option<Vec<u8>>, mime_type: &'static str) -> Option<Candidate> {
    bytes.map(|bytes| Candidate {
        data: base64::engine::general_purpose::STANDARD.encode(bytes),
        mime_type,
    })
}

/// `bytes` fitted to `options`, or `None` when it cannot be decoded or fit even at 1x1.
pub fn resize_image(bytes: &[u8], mime_type: &str, options: &ResizeOptions) -> Option<Resized> {
    let image = decode(bytes)?;
    let (original_width, original_height) = (image.width(), image.height());
    let input_base64_size = bytes.len().div_ceil(3) * 4;
    if original_width <= options.max_width
        && original_height <= options.max_height
        && input_base64_size < options.max_bytes
    {
        return Some(Resized {
            data: base64::engine::general_purpose::STANDARD.encode(bytes),
            mime_type: mime_type.to_owned(),
            original_width,
            original_height,
            width: original_width,
            height: original_height,
            was_resized: false,
        });
    }
    let (mut width, mut height) = fit(original_width, original_height, options);
    let mut qualities = vec![options.jpeg_quality];
    qualities.extend(
        LOWER_QUALITIES
            .iter()
            .filter(|q| **q != options.jpeg_quality),
    );
    loop {
        let resized = image.resize_exact(width, height, FilterType::Lanczos3);
        let png = candidate(encode_png(&resized), "image/png");
        let jpeg = candidate(encode_jpeg(&resized, qualities[0]), "image/jpeg");
        // The smaller of PNG and JPEG first; lower JPEG qualities only when neither fits.
        let jpeg_first = match (&png, &jpeg) {
            (Some(png), Some(jpeg)) => jpeg.data.len() < png.data.len(),
            _ => false,
        };
        let first = if jpeg_first { [jpeg, png] } else { [png, jpeg] };
        let lower = qualities[1..]
            .iter()
            .map(|q| candidate(encode_jpeg(&resized, *q), "image/jpeg"));
        let fitting = first
            .into_iter()
            .chain(lower)
            .flatten()
            .find(|c| c.data.len() < options.max_bytes);
        if let Some(found) = fitting {
            return Some(Resized {
                data: found.data,
                mime_type: found.mime_type.to_owned(),
                original_width,
                original_height,
                width,
                height,
                was_resized: true,
            });
        }
        if width == 1 && height == 1 {
            return None;
        }
        let shrink = |v: u32| if v == 1 { 1 } else { (v * 3 / 4).max(1) };
        let next = (shrink(width), shrink(height));
        if next == (width, height) {
            return None;
        }
        (width, height) = next;
    }
}

/// The size within the largest dimensions, keeping the aspect ratio (rounded as pi does).
fn fit(width: u32, height: u32, options: &ResizeOptions) -> (u32, u32) {
    let (mut w, mut h) = (f64::from(width), f64::from(height));
    if w > f64::from(options.max_width) {
        h = (h * f64::from(options.max_width) / w).round();
        w = f64::from(options.max_width);
    }
    if h > f64::from(options.max_height) {
        w = (w * f64::from(options.max_height) / h).round();
        h = f64::from(options.max_height);
    }
    (w.max(1.0) as u32, h.max(1.0) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_dimension_is_fitted_keeping_the_ratio() {
        let options = ResizeOptions::default();
        assert_eq!(fit(3000, 2000, &options), (2000, 1333));
        assert_eq!(fit(1000, 4000, &options), (500, 2000));
    }

    #[test]
    fn ties_round_up_as_javascript_does() {
        assert_eq!(to_fixed_2(4.6875), "4.69");
        assert_eq!(to_fixed_2(1.5), "1.50");
        assert_eq!(to_fixed_2(800.0 / 427.0), "1.87");
        assert_eq!(to_fixed_2(0.125), "0.13");
    }

    #[test]
    fn the_note_names_the_scale() {
        let resized = Resized {
            data: String::new(),
            mime_type: "image/jpeg".into(),
            original_width: 3000,
            original_height: 2000,
            width: 2000,
            height: 1333,
            was_resized: true,
        };
        assert_eq!(
            resized.dimension_note().as_deref(),
            Some(
                "[Image: original 3000x2000, displayed at 2000x1333. Multiply coordinates by 1.50 to map to original image.]"
            )
        );
    }
}
