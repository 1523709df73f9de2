//! An image drawn inline in the terminal's protocol, or as a `[Image: …]` line where the
//! terminal shows none (pi-tui's `Image`).

use std::sync::OnceLock;

use crate::capabilities::{self, ImageProtocol};
use crate::component::Component;
use crate::image::{
    ImageDimensions, allocate_image_id, cell_dimensions, image_dimensions, image_fallback,
    render_image,
};
use crate::style::Style;
use crate::width::truncate_to_width;

/// Turns a base64 image of some type into a base64 PNG (Kitty is sent PNGs only).
pub type PngTranscoder = fn(&str, &str) -> Option<String>;

static TRANSCODER: OnceLock<PngTranscoder> = OnceLock::new();

/// Installs the PNG transcoder (the application has the image codecs, pi-tui does not).
pub fn set_png_transcoder(transcoder: PngTranscoder) {
    let _ = TRANSCODER.set(transcoder);
}

/// How an image is laid out and what stands for it as text.
#[derive(Debug, Clone, Default)]
pub struct ImageOptions {
    /// Widest the image gets, in cells (60 by default).
    pub max_width_cells: Option<u32>,
    /// Tallest it gets, in rows (by default as many rows as a square of its width).
    pub max_height_cells: Option<u32>,
    /// The file it came from, named in the text fallback.
    pub filename: Option<String>,
    /// The fallback line's colour.
    pub fallback_style: Style,
}

/// One image: its first row carries the sequence, the rows below it are kept empty.
pub struct Image {
    data: String,
    mime_type: String,
    dimensions: ImageDimensions,
    options: ImageOptions,
    image_id: Option<u32>,
    png: Option<Option<(String, Option<ImageDimensions>)>>,
    cache: Option<(usize, Vec<String>)>,
}

impl Image {
    /// An image from base64 `data` of `mime_type` (800×600 when its header is unreadable).
    pub fn new(
        data: impl Into<String>,
        mime_type: impl Into<String>,
        options: ImageOptions,
    ) -> Self {
        let data = data.into();
        let mime_type = mime_type.into();
        let dimensions = image_dimensions(&data, &mime_type).unwrap_or(ImageDimensions {
            width_px: 800,
            height_px: 600,
        });
        Image {
            data,
            mime_type,
            dimensions,
            options,
            image_id: None,
            png: None,
            cache: None,
        }
    }

    fn fallback(&self, width: usize) -> Vec<String> {
        let text = image_fallback(
            &self.mime_type,
            Some(self.dimensions),
            self.options.filename.as_deref(),
        );
        vec![truncate_to_width(
            &self.options.fallback_style.paint(&text),
            width,
            "...",
            false,
        )]
    }

    fn draw(&mut self, width: usize) -> Vec<String> {
        let Some(protocol) = capabilities::get().images else {
            return self.fallback(width);
        };
        let max_width = (width.saturating_sub(2) as u32)
            .min(self.options.max_width_cells.unwrap_or(60))
            .max(1);
        let cell = cell_dimensions();
        let default_height = (f64::from(max_width) * f64::from(cell.width_px)
            / f64::from(cell.height_px))
        .ceil()
        .max(1.0) as u32;
        let max_height = self.options.max_height_cells.unwrap_or(default_height);
        let (data, dimensions) =
            if protocol == ImageProtocol::Kitty && self.mime_type != "image/png" {
                let (data, mime) = (&self.data, &self.mime_type);
                let png = self.png.get_or_insert_with(|| {
                    let png = TRANSCODER.get().and_then(|t| t(data, mime))?;
                    let dims = image_dimensions(&png, "image/png");
                    Some((png, dims))
                });
                match png {
                    Some((png, dims)) => (png.as_str(), dims.unwrap_or(self.dimensions)),
                    None => return self.fallback(width),
                }
            } else {
                (self.data.as_str(), self.dimensions)
            };
        if protocol == ImageProtocol::Kitty && self.image_id.is_none() {
            self.image_id = Some(allocate_image_id());
        }
        let Some(image) =
            render_image(data, dimensions, max_width, Some(max_height), self.image_id)
        else {
            return self.fallback(width);
        };
        let blank = image.rows.saturating_sub(1) as usize;
        match protocol {
            ImageProtocol::Kitty => {
                let mut lines = vec![image.sequence];
                lines.extend(std::iter::repeat_n(String::new(), blank));
                lines
            }
            ImageProtocol::Iterm2 => {
                // iTerm2 draws from the cursor down: go back up to the image's first row.
                let mut lines = vec![String::new(); blank];
                let up = if blank > 0 {
                    format!("\x1b[{blank}A")
                } else {
                    String::new()
                };
                lines.push(format!("{up}{}", image.sequence));
                lines
            }
        }
    }
}

impl Component for Image {
    fn render(&mut self, width: usize) -> Vec<String> {
        if let Some((w, lines)) = &self.cache
            && *w == width
        {
            return lines.clone();
        }
        let lines = self.draw(width);
        self.cache = Some((width, lines.clone()));
        lines
    }

    fn invalidate(&mut self) {
        self.cache = None;
    }
}
