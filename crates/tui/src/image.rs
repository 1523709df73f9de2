//! Inline images in the terminal's own protocols (Kitty graphics, iTerm2 `File=`), sized in
//! cells as pi 1.6 sizes them, and the text shown where a terminal has no image protocol.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use base64::Engine;
use base64::engine::general_purpose::STANDARD;

use crate::capabilities::{self, ImageProtocol};

/// What starts a Kitty graphics command.
pub const KITTY_PREFIX: &str = "\x1b_G";
/// What starts an iTerm2 inline file.
pub const ITERM2_PREFIX: &str = "\x1b]1337;File=";
/// Base64 characters per Kitty transmission chunk.
const KITTY_CHUNK: usize = 4096;

/// An image's size in pixels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImageDimensions {
    pub width_px: u32,
    pub height_px: u32,
}

/// One terminal cell in pixels (the terminal answers `CSI 16 t`; 9×18 until it does).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CellDimensions {
    pub width_px: u32,
    pub height_px: u32,
}

static CELL: Mutex<CellDimensions> = Mutex::new(CellDimensions {
    width_px: 9,
    height_px: 18,
});

/// The cell size images are laid out with.
pub fn cell_dimensions() -> CellDimensions {
    *CELL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records the cell size the terminal reported.
pub fn set_cell_dimensions(cell: CellDimensions) {
    *CELL.lock().unwrap_or_else(|e| e.into_inner()) = cell;
}

/// The cell-size query written at startup when the terminal shows images.
pub const CELL_SIZE_QUERY: &str = "\x1b[16t";

/// The terminal's answer to [`CELL_SIZE_QUERY`] (`CSI 6 ; height ; width t`), if `data` is
/// one; a zero size is recognized but not usable (`Some(None)`).
pub fn parse_cell_size_response(data: &str) -> Option<Option<CellDimensions>> {
    let body = data.strip_prefix("\x1b[6;")?.strip_suffix('t')?;
    let (height, width) = body.split_once(';')?;
    let height: u32 = height.parse().ok()?;
    let width: u32 = width.parse().ok()?;
    Some((height > 0 && width > 0).then_some(CellDimensions {
        width_px: width,
        height_px: height,
    }))
}

/// Whether a rendered line carries an image sequence (such lines are never cut or padded).
pub fn is_image_line(line: &str) -> bool {
    line.contains(KITTY_PREFIX) || line.contains(ITERM2_PREFIX)
}

/// A random Kitty image id (1..=u32::MAX-1), as pi allocates one per image.
pub fn allocate_image_id() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    (hasher.finish() % u64::from(u32::MAX - 1)) as u32 + 1
}

/// Kitty options: columns and rows to fill, the image id, and whether the cursor stays.
#[derive(Debug, Clone, Copy, Default)]
pub struct KittyOptions {
    pub columns: Option<u32>,
    pub rows: Option<u32>,
    pub image_id: Option<u32>,
    pub keep_cursor: bool,
}

/// A PNG (base64) transmitted and shown at the cursor (`a=T,f=100`), in 4096-character
/// chunks when longer.
pub fn encode_kitty(base64_data: &str, options: KittyOptions) -> String {
    let mut params = vec!["a=T".to_owned(), "f=100".to_owned(), "q=2".to_owned()];
    if options.keep_cursor {
        params.push("C=1".to_owned());
    }
    if let Some(c) = options.columns.filter(|c| *c > 0) {
        params.push(format!("c={c}"));
    }
    if let Some(r) = options.rows.filter(|r| *r > 0) {
        params.push(format!("r={r}"));
    }
    if let Some(i) = options.image_id.filter(|i| *i > 0) {
        params.push(format!("i={i}"));
    }
    let params = params.join(",");
    if base64_data.len() <= KITTY_CHUNK {
        return format!("\x1b_G{params};{base64_data}\x1b\\");
    }
    let mut out = String::with_capacity(base64_data.len() + 64);
    let chunks = base64_data.as_bytes().chunks(KITTY_CHUNK);
    let count = chunks.len();
    for (i, chunk) in chunks.enumerate() {
        // Base64 is ASCII: every chunk boundary is a char boundary.
        let chunk = std::str::from_utf8(chunk).unwrap_or_default();
        let head = match i {
            0 => format!("{params},m=1"),
            _ if i + 1 == count => "m=0".to_owned(),
            _ => "m=1".to_owned(),
        };
        out.push_str(&format!("\x1b_G{head};{chunk}\x1b\\"));
    }
    out
}

/// Deletes one Kitty image and its placements.
pub fn delete_kitty_image(image_id: u32) -> String {
    format!("\x1b_Ga=d,d=I,i={image_id},q=2\x1b\\")
}

/// Deletes every Kitty image.
pub const DELETE_ALL_KITTY_IMAGES: &str = "\x1b_Ga=d,d=A,q=2\x1b\\";

/// An inline iTerm2 file `width` cells wide, the height following the aspect ratio.
pub fn encode_iterm2(base64_data: &str, width: u32) -> String {
    format!(
        "\x1b]1337;File=inline=1;size={};width={width};height=auto:{base64_data}\x07",
        decoded_len(base64_data)
    )
}

/// Bytes the base64 text decodes to.
fn decoded_len(base64_data: &str) -> usize {
    let data = base64_data.trim_end_matches('=');
    data.len() * 3 / 4
}

/// Columns and rows an image takes at most `max_width` × `max_height` cells, keeping its
/// aspect ratio; `optimize` (Kitty, which stretches to the cells) picks the cell count
/// that distorts it least.
pub fn image_cell_size(
    image: ImageDimensions,
    max_width: u32,
    max_height: Option<u32>,
    cell: CellDimensions,
    optimize: bool,
) -> (u32, u32) {
    let max_width = f64::from(max_width.max(1));
    let max_height = max_height.map(|h| f64::from(h.max(1)));
    let (iw, ih) = (
        f64::from(image.width_px.max(1)),
        f64::from(image.height_px.max(1)),
    );
    let (cw, ch) = (f64::from(cell.width_px), f64::from(cell.height_px));
    let width_scale = max_width * cw / iw;
    let height_scale = max_height.map_or(width_scale, |h| h * ch / ih);
    let scale = width_scale.min(height_scale);
    let columns = (iw * scale / cw).ceil().min(max_width).max(1.0);
    let mut rows = (ih * scale / ch).ceil().max(1.0);
    if let Some(h) = max_height {
        rows = rows.min(h);
    }
    let mut columns = columns;
    if optimize {
        if width_scale <= height_scale {
            rows = less_distorted(rows, columns * cw * ih / (iw * ch));
        } else {
            columns = less_distorted(columns, rows * ch * iw / (ih * cw));
        }
    }
    (columns as u32, rows as u32)
}

/// `upper` or one less, whichever is nearer `ideal` as a ratio.
fn less_distorted(upper: f64, ideal: f64) -> f64 {
    if upper <= 1.0 {
        return upper;
    }
    let lower = upper - 1.0;
    let distortion = |n: f64| (n / ideal).max(ideal / n);
    if distortion(lower) < distortion(upper) {
        lower
    } else {
        upper
    }
}

/// The pixel size read from a PNG, JPEG, GIF or WebP header.
pub fn image_dimensions(base64_data: &str, mime_type: &str) -> Option<ImageDimensions> {
    let bytes = STANDARD.decode(base64_data.trim()).ok()?;
    let dims = |w: u32, h: u32| {
        Some(ImageDimensions {
            width_px: w,
            height_px: h,
        })
    };
    let u16be = |at: usize| Some(u16::from_be_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
    let u16le = |at: usize| Some(u16::from_le_bytes([*bytes.get(at)?, *bytes.get(at + 1)?]));
    let u32be = |at: usize| Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?));
    match mime_type {
        "image/png" => {
            if bytes.len() < 24 || !bytes.starts_with(&[137, 80, 78, 71]) {
                return None;
            }
            dims(u32be(16)?, u32be(20)?)
        }
        "image/jpeg" => {
            if !bytes.starts_with(&[0xff, 0xd8]) {
                return None;
            }
            let mut at = 2;
            while at + 9 < bytes.len() {
                if bytes[at] != 0xff {
                    at += 1;
                    continue;
                }
                let marker = bytes[at + 1];
                if (0xc0..=0xc2).contains(&marker) {
                    return dims(u32::from(u16be(at + 7)?), u32::from(u16be(at + 5)?));
                }
                let length = usize::from(u16be(at + 2)?);
                if length < 2 {
                    return None;
                }
                at += 2 + length;
            }
            None
        }
        "image/gif" => {
            if bytes.len() < 10 || !(bytes.starts_with(b"GIF87a") || bytes.starts_with(b"GIF89a")) {
                return None;
            }
            dims(u32::from(u16le(6)?), u32::from(u16le(8)?))
        }
        "image/webp" => {
            if bytes.len() < 30 || &bytes[0..4] != b"RIFF" || &bytes[8..12] != b"WEBP" {
                return None;
            }
            match &bytes[12..16] {
                b"VP8 " => dims(
                    u32::from(u16le(26)? & 0x3fff),
                    u32::from(u16le(28)? & 0x3fff),
                ),
                b"VP8L" => {
                    let bits = u32::from_le_bytes(bytes.get(21..25)?.try_into().ok()?);
                    dims((bits & 0x3fff) + 1, ((bits >> 14) & 0x3fff) + 1)
                }
                b"VP8X" => {
                    let u24 = |at: usize| {
                        u32::from(bytes[at])
                            | (u32::from(bytes[at + 1]) << 8)
                            | (u32::from(bytes[at + 2]) << 16)
                    };
                    dims(u24(24) + 1, u24(27) + 1)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

/// What a Kitty image takes on screen, kept by id so a cropped or re-placed row can be
/// rebuilt from its sequence.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KittyImage {
    pub columns: u32,
    pub rows: u32,
    pub dimensions: ImageDimensions,
}

fn kitty_registry() -> &'static Mutex<HashMap<u32, KittyImage>> {
    static REGISTRY: OnceLock<Mutex<HashMap<u32, KittyImage>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

static MAX_KITTY_ROWS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);

/// The most rows any image drawn so far takes (how far from a row an image that still
/// reaches into it can be anchored).
pub fn max_kitty_rows() -> u32 {
    MAX_KITTY_ROWS.load(std::sync::atomic::Ordering::Relaxed)
}

/// Remembers the size of Kitty image `id` (at most 1,000 are kept).
pub fn register_kitty_image(id: u32, image: KittyImage) {
    MAX_KITTY_ROWS.fetch_max(image.rows, std::sync::atomic::Ordering::Relaxed);
    let mut registry = kitty_registry().lock().unwrap_or_else(|e| e.into_inner());
    if registry.len() >= 1000 && !registry.contains_key(&id) {
        registry.clear();
    }
    registry.insert(id, image);
}

/// The registered Kitty image whose sequence starts `line`'s graphics command.
pub fn kitty_image_in(line: &str) -> Option<(u32, KittyImage)> {
    let controls = kitty_controls(line)?;
    let id = control(controls, "i")?.parse().ok()?;
    let registry = kitty_registry().lock().unwrap_or_else(|e| e.into_inner());
    registry.get(&id).map(|image| (id, *image))
}

/// The control keys of the first Kitty command in `line` (`a=T,f=100,…`).
fn kitty_controls(line: &str) -> Option<&str> {
    let start = line.find(KITTY_PREFIX)? + KITTY_PREFIX.len();
    let rest = &line[start..];
    Some(&rest[..rest.find(';')?])
}

fn control<'a>(controls: &'a str, key: &str) -> Option<&'a str> {
    controls
        .split(',')
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
}

/// The ids of the Kitty images `line` transmits or places.
pub fn kitty_ids(line: &str) -> Vec<u32> {
    let mut ids = Vec::new();
    let mut rest = line;
    while let Some(start) = rest.find(KITTY_PREFIX) {
        rest = &rest[start + KITTY_PREFIX.len()..];
        let controls = &rest[..rest.find([';', '\x1b']).unwrap_or(rest.len())];
        if let Some(id) = control(controls, "i").and_then(|i| i.parse().ok())
            && !ids.contains(&id)
        {
            ids.push(id);
        }
    }
    ids
}

/// Rows the first Kitty image of `line` covers (`r=`, or as registered).
pub fn kitty_rows(line: &str) -> Option<usize> {
    let controls = kitty_controls(line)?;
    control(controls, "r")
        .and_then(|r| r.parse::<usize>().ok())
        .filter(|r| *r > 0)
        .or_else(|| kitty_image_in(line).map(|(_, image)| image.rows as usize))
}

/// `line`'s Kitty image showing only `visible` of its rows from row `hidden` on (the
/// source rectangle cut with `y`/`h`, the placement given `r`), as fullscreen draws an
/// image the viewport's edge cuts through.
pub fn crop_kitty_line(line: &str, hidden: u32, visible: u32) -> String {
    let Some((_, image)) = kitty_image_in(line) else {
        return line.to_owned();
    };
    let Some(start) = line.find(KITTY_PREFIX) else {
        return line.to_owned();
    };
    if hidden >= image.rows || visible == 0 {
        return line.to_owned();
    }
    let shown = visible.min(image.rows - hidden);
    if hidden == 0 && shown == image.rows {
        return line.to_owned();
    }
    let height = u64::from(image.dimensions.height_px);
    let rows = u64::from(image.rows);
    let y = height * u64::from(hidden) / rows;
    let end = (height * u64::from(hidden + shown)).div_ceil(rows);
    let h = (end.min(height).saturating_sub(y)).max(1);
    let controls_start = start + KITTY_PREFIX.len();
    let Some(controls_len) = line[controls_start..].find(';') else {
        return line.to_owned();
    };
    let mut controls: Vec<String> = line[controls_start..controls_start + controls_len]
        .split(',')
        .filter(|c| !(c.starts_with("y=") || c.starts_with("h=") || c.starts_with("r=")))
        .map(str::to_owned)
        .collect();
    controls.extend([format!("y={y}"), format!("h={h}"), format!("r={shown}")]);
    format!(
        "{}{KITTY_PREFIX}{}{}",
        &line[..start],
        controls.join(","),
        &line[controls_start + controls_len..]
    )
}

/// `line` without its image sequences (Kitty commands; iTerm2 files with the cursor move
/// before them): what is left where an overlay covers an image.
pub fn strip_image_sequences(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    loop {
        let kitty = rest.find(KITTY_PREFIX);
        let iterm = rest.find(ITERM2_PREFIX);
        let Some(start) = [kitty, iterm].into_iter().flatten().min() else {
            out.push_str(rest);
            return out;
        };
        let (end, keep_to) = if Some(start) == kitty {
            match rest[start..].find("\x1b\\") {
                Some(e) => (start + e + 2, start),
                None => (rest.len(), start),
            }
        } else {
            let end = rest[start..]
                .find('\x07')
                .map_or(rest.len(), |e| start + e + 1);
            (
                end,
                start - cursor_up_before(&rest[..start]).map_or(0, |(len, _)| len),
            )
        };
        out.push_str(&rest[..keep_to]);
        rest = &rest[end..];
    }
}

/// The `CSI n A` that ends `before`: its length and `n`.
fn cursor_up_before(before: &str) -> Option<(usize, usize)> {
    let body = before.strip_suffix('A')?;
    let digits = body.len() - body.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    let n = body[body.len() - digits..].parse().ok()?;
    body[..body.len() - digits]
        .ends_with("\x1b[")
        .then_some((digits + 3, n))
}

/// The rows (relative to the line's own) and columns an image in `line` covers.
fn image_extent(line: &str) -> Option<(isize, isize, usize, usize)> {
    if let Some(start) = line.find(KITTY_PREFIX) {
        let controls = kitty_controls(line).unwrap_or("");
        let registered = kitty_image_in(line).map(|(_, image)| image);
        let columns = control(controls, "c")
            .and_then(|c| c.parse::<usize>().ok())
            .or(registered.map(|i| i.columns as usize));
        let rows = control(controls, "r")
            .and_then(|r| r.parse::<usize>().ok())
            .filter(|r| *r > 0)
            .or(registered.map(|i| i.rows as usize))
            .unwrap_or(1);
        let col = crate::width::visible_width(&line[..start]);
        return Some((
            0,
            rows as isize - 1,
            col,
            col + columns.unwrap_or(usize::MAX / 2),
        ));
    }
    let start = line.find(ITERM2_PREFIX)?;
    let before = &line[..start];
    let up = cursor_up_before(before);
    let text_before = &before[..before.len() - up.map_or(0, |(len, _)| len)];
    let columns = line[start..]
        .split([';', ':'])
        .find_map(|p| p.strip_prefix("width="))
        .and_then(|w| w.parse::<usize>().ok());
    let col = crate::width::visible_width(text_before);
    Some((
        -(up.map_or(0, |(_, n)| n) as isize),
        0,
        col,
        col + columns.unwrap_or(usize::MAX / 2),
    ))
}

/// Strips the images an overlay at `rows` × `columns` (screen rows of `lines`) would sit
/// under: the terminal draws images above text, so they would cover it.
pub fn hide_images_under(
    lines: &mut [String],
    rows: std::ops::Range<usize>,
    columns: std::ops::Range<usize>,
) {
    if rows.is_empty() || columns.is_empty() {
        return;
    }
    let reach = max_kitty_rows() as usize;
    let first = rows.start.saturating_sub(reach);
    let last = (rows.end + reach).min(lines.len());
    for (index, line) in lines.iter_mut().enumerate().take(last).skip(first) {
        let Some((top, bottom, left, right)) = image_extent(line) else {
            continue;
        };
        let (top, bottom) = (index as isize + top, index as isize + bottom);
        if top < rows.end as isize
            && bottom >= rows.start as isize
            && left < columns.end
            && right > columns.start
        {
            *line = strip_image_sequences(line);
        }
    }
}

/// An image drawn for the detected protocol: the escape sequence and the cells it covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderedImage {
    pub sequence: String,
    pub columns: u32,
    pub rows: u32,
}

/// `base64_data` (a PNG for Kitty) drawn at most `max_width` × `max_height` cells, or
/// `None` when the terminal shows no images.
pub fn render_image(
    base64_data: &str,
    dimensions: ImageDimensions,
    max_width: u32,
    max_height: Option<u32>,
    image_id: Option<u32>,
) -> Option<RenderedImage> {
    let protocol = capabilities::get().images?;
    let kitty = protocol == ImageProtocol::Kitty;
    let (columns, rows) =
        image_cell_size(dimensions, max_width, max_height, cell_dimensions(), kitty);
    let sequence = match protocol {
        ImageProtocol::Kitty => {
            if let Some(id) = image_id {
                register_kitty_image(
                    id,
                    KittyImage {
                        columns,
                        rows,
                        dimensions,
                    },
                );
            }
            encode_kitty(
                base64_data,
                KittyOptions {
                    columns: Some(columns),
                    rows: Some(rows),
                    image_id,
                    keep_cursor: true,
                },
            )
        }
        ImageProtocol::Iterm2 => {
            MAX_KITTY_ROWS.fetch_max(rows, std::sync::atomic::Ordering::Relaxed);
            encode_iterm2(base64_data, columns)
        }
    };
    Some(RenderedImage {
        sequence,
        columns,
        rows,
    })
}

/// `[Image: <file> [mime] WxH]`: what stands for an image the terminal cannot show.
pub fn image_fallback(
    mime_type: &str,
    dimensions: Option<ImageDimensions>,
    filename: Option<&str>,
) -> String {
    let mut parts = Vec::new();
    if let Some(name) = filename {
        let home = std::env::var("HOME").unwrap_or_default();
        let shown = match name.strip_prefix(&home) {
            Some(rest) if !home.is_empty() && (rest.is_empty() || rest.starts_with('/')) => {
                format!("~{rest}")
            }
            _ => name.to_owned(),
        };
        let path = std::path::Path::new(name);
        parts.push(if path.is_absolute() {
            capabilities::link_if_supported(&shown, &capabilities::file_url(path))
        } else {
            shown
        });
    }
    parts.push(format!("[{mime_type}]"));
    if let Some(d) = dimensions {
        parts.push(format!("{}x{}", d.width_px, d.height_px));
    }
    format!("[Image: {}]", parts.join(" "))
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
