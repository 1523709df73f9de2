//! Images on the alternate screen, drawn as pi 1.6's fullscreen draws them: when a row an
//! image covers changes, every placement is deleted and the frame is redrawn with the image
//! rows last (so text written after them cannot cut them), and a Kitty image the terminal
//! already has is placed again (`a=p`) instead of being sent again.

use std::collections::HashSet;

use crate::capabilities::ImageProtocol;
use crate::image::{self, KITTY_PREFIX, is_image_line, kitty_image_in};

/// Deletes every Kitty placement, keeping the uploaded images.
pub const DELETE_KITTY_PLACEMENTS: &str = "\x1b_Ga=d,d=a,q=2\x1b\\";

/// The placement keys a re-placement (`a=p`) keeps from the transmission's controls.
const PLACEMENT_KEYS: [&str; 17] = [
    "i", "p", "x", "y", "w", "h", "X", "Y", "c", "r", "C", "U", "z", "P", "Q", "H", "V",
];

/// The Kitty images the terminal holds (by id), uploaded by earlier frames.
#[derive(Debug, Default)]
pub struct ScreenImages {
    uploaded: HashSet<u32>,
}

/// How a frame with images is written.
#[derive(Debug, PartialEq, Eq)]
pub struct ImageFrame {
    /// Every row is rewritten (a row an image covers changed).
    pub redraw: bool,
    /// Written before the rows (placements deleted, or the screen cleared for iTerm2).
    pub prefix: String,
    /// The rows as written (Kitty transmissions turned into placements when uploaded).
    pub lines: Vec<String>,
}

impl ScreenImages {
    /// Forgets the uploads (the terminal was reset or left).
    pub fn clear(&mut self) {
        self.uploaded.clear();
    }

    /// How to write `rows` over `prev` in the terminal's image `protocol`; `None` when no
    /// image is or was on screen and the frame is written as usual.
    pub fn frame(
        &mut self,
        rows: &[String],
        prev: &[String],
        full: bool,
        protocol: Option<ImageProtocol>,
    ) -> Option<ImageFrame> {
        let any = |lines: &[String]| lines.iter().any(|l| is_image_line(l));
        if !any(rows) && !any(prev) {
            return None;
        }
        let kitty = protocol == Some(ImageProtocol::Kitty);
        let changed: Vec<bool> = rows
            .iter()
            .enumerate()
            .map(|(row, line)| full || prev.get(row) != Some(line))
            .collect();
        let anchors = rows.iter().enumerate().any(|(row, line)| {
            changed[row] && (is_image_line(line) || prev.get(row).is_some_and(|p| is_image_line(p)))
        });
        let covered = kitty
            && !anchors
            && changed.iter().any(|c| *c)
            && rows.iter().enumerate().any(|(row, line)| {
                placement_rows(line).is_some_and(|n| {
                    (row..row + n).any(|r| changed.get(r).copied().unwrap_or(false))
                })
            });
        let redraw = full || anchors || covered;
        let mut prefix = String::new();
        if full {
            if kitty && !self.uploaded.is_empty() {
                prefix.push_str(DELETE_KITTY_PLACEMENTS);
            } else if kitty {
                prefix.push_str(image::DELETE_ALL_KITTY_IMAGES);
            }
        } else if redraw {
            prefix.push_str(if kitty {
                DELETE_KITTY_PLACEMENTS
            } else {
                "\x1b[2J"
            });
        }
        let lines = if redraw && kitty {
            rows.iter().map(|line| self.place(line)).collect()
        } else {
            rows.to_vec()
        };
        Some(ImageFrame {
            redraw,
            prefix,
            lines,
        })
    }

    /// `line` with its Kitty transmission replaced by a placement when the terminal has
    /// the image already; the image counts as uploaded from now on.
    fn place(&mut self, line: &str) -> String {
        let Some((id, _)) = kitty_image_in(line) else {
            return line.to_owned();
        };
        if !self.uploaded.insert(id)
            && let Some(placed) = placement(line)
        {
            return placed;
        }
        line.to_owned()
    }
}

/// Rows a Kitty placement in `line` covers (its `r=`, or the registered image's rows).
fn placement_rows(line: &str) -> Option<usize> {
    let start = line.find(KITTY_PREFIX)? + KITTY_PREFIX.len();
    let controls = &line[start..start + line[start..].find(';')?];
    let explicit = controls
        .split(',')
        .find_map(|c| c.strip_prefix("r="))
        .and_then(|r| r.parse::<usize>().ok())
        .filter(|r| *r > 0);
    explicit.or_else(|| kitty_image_in(line).map(|(_, image)| image.rows as usize))
}

/// `line` with the whole Kitty transmission (all its `m=1` chunks) replaced by an `a=p`
/// placement with the same placement controls.
fn placement(line: &str) -> Option<String> {
    let start = line.find(KITTY_PREFIX)?;
    let controls_at = start + KITTY_PREFIX.len();
    let first_controls = &line[controls_at..controls_at + line[controls_at..].find(';')?];
    let mut at = start;
    let mut controls = first_controls;
    let end = loop {
        let terminator =
            at + KITTY_PREFIX.len() + line[at + KITTY_PREFIX.len()..].find("\x1b\\")?;
        let end = terminator + 2;
        if !controls.split(',').any(|c| c == "m=1") {
            break end;
        }
        at = end;
        if !line[at..].starts_with(KITTY_PREFIX) {
            return None;
        }
        let from = at + KITTY_PREFIX.len();
        controls = &line[from..from + line[from..].find(';')?];
    };
    let kept: Vec<&str> = first_controls
        .split(',')
        .filter(|c| PLACEMENT_KEYS.contains(&c.split('=').next().unwrap_or("")))
        .collect();
    Some(format!(
        "{}\x1b_Ga=p,q=2,{}\x1b\\{}",
        &line[..start],
        kept.join(","),
        &line[end..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::image::{KittyImage, KittyOptions, encode_kitty, register_kitty_image};

    fn image_line(id: u32, data: &str) -> String {
        register_kitty_image(
            id,
            KittyImage {
                columns: 4,
                rows: 2,
                dimensions: image::ImageDimensions {
                    width_px: 36,
                    height_px: 36,
                },
            },
        );
        encode_kitty(
            data,
            KittyOptions {
                columns: Some(4),
                rows: Some(2),
                image_id: Some(id),
                keep_cursor: true,
            },
        )
    }

    #[test]
    fn an_uploaded_image_is_placed_not_sent_again() {
        let big = "A".repeat(5000);
        let line = image_line(77, &big);
        assert_eq!(
            placement(&format!("ab{line}cd")).as_deref(),
            Some("ab\x1b_Ga=p,q=2,C=1,c=4,r=2,i=77\x1b\\cd")
        );
        let mut images = ScreenImages::default();
        assert_eq!(images.place(&line), line);
        assert_eq!(images.place(&line), "\x1b_Ga=p,q=2,C=1,c=4,r=2,i=77\x1b\\");
    }

    #[test]
    fn rows_without_images_are_left_to_the_usual_diff() {
        let mut images = ScreenImages::default();
        let rows = vec!["a".to_owned(), "b".to_owned()];
        assert_eq!(
            images.frame(&rows, &rows, false, Some(ImageProtocol::Kitty)),
            None
        );
    }

    #[test]
    fn a_changed_row_under_an_image_redraws_it() {
        let line = image_line(78, "QUJD");
        let mut images = ScreenImages::default();
        let prev = vec![line.clone(), String::new(), "x".to_owned()];
        let mut rows = prev.clone();
        assert!(
            !images
                .frame(&rows, &prev, false, Some(ImageProtocol::Kitty))
                .unwrap()
                .redraw
        );
        rows[2] = "y".to_owned();
        assert!(
            !images
                .frame(&rows, &prev, false, Some(ImageProtocol::Kitty))
                .unwrap()
                .redraw,
            "row 2 is below the image"
        );
        rows[1] = "z".to_owned();
        assert!(
            images
                .frame(&rows, &prev, false, Some(ImageProtocol::Kitty))
                .unwrap()
                .redraw,
            "row 1 is under it"
        );
    }
}
