//! EXIF orientation of JPEG and WebP files, read as pi 1.6 reads it: the first APP1
//! segment that carries an `Exif\0\0` header counts, so an XMP (or other non-EXIF) APP1
//! segment before it is skipped rather than ending the search (pi 0.85).

use image::DynamicImage;
use image::metadata::Orientation;

const EXIF_HEADER: &[u8; 6] = b"Exif\0\0";
/// The TIFF tag holding the orientation.
const ORIENTATION_TAG: u16 = 0x0112;

/// The EXIF orientation value (1..=8) of `bytes`, 1 when there is none or it is invalid.
pub fn exif_orientation(bytes: &[u8]) -> u8 {
    let tiff = if bytes.starts_with(&[0xFF, 0xD8]) {
        jpeg_tiff_offset(bytes)
    } else if bytes.len() >= 12 && &bytes[0..4] == b"RIFF" && &bytes[8..12] == b"WEBP" {
        webp_tiff_offset(bytes)
    } else {
        None
    };
    tiff.map_or(1, |start| orientation_from_tiff(bytes, start))
}

/// `image` turned upright as its EXIF orientation says.
pub fn apply_exif_orientation(image: &mut DynamicImage, original: &[u8]) {
    let value = exif_orientation(original);
    if value != 1
        && let Some(orientation) = Orientation::from_exif(value)
    {
        image.apply_orientation(orientation);
    }
}

/// Where the TIFF header of a JPEG's EXIF APP1 segment starts, walking the markers.
fn jpeg_tiff_offset(bytes: &[u8]) -> Option<usize> {
    let mut at = 2;
    while at + 1 < bytes.len() {
        if bytes[at] != 0xFF {
            return None;
        }
        let marker = bytes[at + 1];
        if marker == 0xFF {
            // A fill byte before the marker.
            at += 1;
            continue;
        }
        if marker == 0xE1 {
            let payload = at + 4;
            if payload + EXIF_HEADER.len() > bytes.len() {
                return None;
            }
            if bytes[payload..].starts_with(EXIF_HEADER) {
                return Some(payload + EXIF_HEADER.len());
            }
        }
        if at + 4 > bytes.len() {
            return None;
        }
        let length = usize::from(u16::from_be_bytes([bytes[at + 2], bytes[at + 3]]));
        at += 2 + length;
    }
    None
}

/// Where the TIFF header of a WebP's `EXIF` chunk starts (after an optional `Exif\0\0`).
fn webp_tiff_offset(bytes: &[u8]) -> Option<usize> {
    let mut at = 12;
    while at + 8 <= bytes.len() {
        let id = &bytes[at..at + 4];
        let size = u32::from_le_bytes([bytes[at + 4], bytes[at + 5], bytes[at + 6], bytes[at + 7]]);
        let size = usize::try_from(size).ok()?;
        let data = at + 8;
        if id == b"EXIF" {
            if data.checked_add(size)? > bytes.len() {
                return None;
            }
            let prefixed = size >= EXIF_HEADER.len() && bytes[data..].starts_with(EXIF_HEADER);
            return Some(if prefixed {
                data + EXIF_HEADER.len()
            } else {
                data
            });
        }
        // Chunks are padded to an even size.
        at = data.checked_add(size)?.checked_add(size % 2)?;
    }
    None
}

/// The orientation entry of the first IFD of the TIFF block at `start`, 1 when absent.
fn orientation_from_tiff(bytes: &[u8], start: usize) -> u8 {
    if start + 8 > bytes.len() {
        return 1;
    }
    let little = bytes[start] == b'I' && bytes[start + 1] == b'I';
    let u16_at = |pos: usize| {
        let pair = [bytes[pos], bytes[pos + 1]];
        if little {
            u16::from_le_bytes(pair)
        } else {
            u16::from_be_bytes(pair)
        }
    };
    let quad = [
        bytes[start + 4],
        bytes[start + 5],
        bytes[start + 6],
        bytes[start + 7],
    ];
    let offset = if little {
        u32::from_le_bytes(quad)
    } else {
        u32::from_be_bytes(quad)
    };
    let Some(ifd) = usize::try_from(offset)
        .ok()
        .and_then(|o| start.checked_add(o))
    else {
        return 1;
    };
    if ifd + 2 > bytes.len() {
        return 1;
    }
    for entry in 0..usize::from(u16_at(ifd)) {
        let pos = ifd + 2 + entry * 12;
        if pos + 12 > bytes.len() {
            return 1;
        }
        if u16_at(pos) == ORIENTATION_TAG {
            let value = u16_at(pos + 8);
            return if (1..=8).contains(&value) {
                value as u8
            } else {
                1
            };
        }
    }
    1
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A big-endian TIFF block with one IFD entry: orientation `value`.
    fn tiff(value: u16) -> Vec<u8> {
        let mut t = b"MM\0\x2a\0\0\0\x08".to_vec();
        t.extend_from_slice(&1u16.to_be_bytes());
        t.extend_from_slice(&ORIENTATION_TAG.to_be_bytes());
        t.extend_from_slice(&3u16.to_be_bytes());
        t.extend_from_slice(&1u32.to_be_bytes());
        t.extend_from_slice(&value.to_be_bytes());
        t.extend_from_slice(&[0, 0]);
        t
    }

    fn app1(payload: &[u8]) -> Vec<u8> {
        let mut segment = vec![0xFF, 0xE1];
        segment.extend_from_slice(&u16::try_from(payload.len() + 2).unwrap().to_be_bytes());
        segment.extend_from_slice(payload);
        segment
    }

    #[test]
    fn exif_after_a_non_exif_app1_segment_is_found() {
        let mut jpeg = vec![0xFF, 0xD8];
        jpeg.extend(app1(b"http://ns.adobe.com/xap/1.0/\0<x:xmpmeta/>"));
        let mut exif = EXIF_HEADER.to_vec();
        exif.extend(tiff(6));
        jpeg.extend(app1(&exif));
        jpeg.extend_from_slice(&[0xFF, 0xD9]);
        assert_eq!(exif_orientation(&jpeg), 6);
    }

    #[test]
    fn no_exif_means_upright() {
        assert_eq!(exif_orientation(&[0xFF, 0xD8, 0xFF, 0xD9]), 1);
        assert_eq!(exif_orientation(b"not an image"), 1);
    }
}
