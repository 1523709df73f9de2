//! Where overlays go and how they are drawn over the frame: pi-tui's
//! `resolveOverlayLayout` and `compositeOverlays`, with the static `OverlayOptions`
//! (`width`, `minWidth`, `maxHeight`, `anchor`, `row`, `col`, `offsetX`, `offsetY`,
//! `margin`) read from JSON.

use pi_tui::width::{slice_columns, truncate_to_width, visible_width};
use serde_json::Value;

/// Resets styles (and an open hyperlink) around a pasted-in overlay.
const SEGMENT_RESET: &str = "\x1b[0m\x1b]8;;\x07";

/// An overlay's resolved box on the screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverlayLayout {
    pub width: usize,
    pub row: usize,
    pub col: usize,
    pub max_height: Option<usize>,
}

/// A number, or a `"50%"` of `reference`.
fn size_value(value: Option<&Value>, reference: usize) -> Option<i64> {
    match value? {
        Value::Number(n) => n.as_f64().map(|f| f as i64),
        Value::String(s) => {
            let percent: f64 = s.strip_suffix('%')?.parse().ok()?;
            Some((reference as f64 * percent / 100.0).floor() as i64)
        }
        _ => None,
    }
}

/// A percentage position (`"25%"`) as a fraction.
fn percent(value: &Value) -> Option<f64> {
    value
        .as_str()?
        .strip_suffix('%')?
        .parse::<f64>()
        .ok()
        .map(|p| p / 100.0)
}

fn int(options: &Value, key: &str) -> Option<i64> {
    options.get(key).and_then(Value::as_f64).map(|f| f as i64)
}

/// Margins `(top, right, bottom, left)`: a number for all sides, or an object.
fn margins(options: &Value) -> (i64, i64, i64, i64) {
    match options.get("margin") {
        Some(Value::Number(n)) => {
            let m = n.as_f64().unwrap_or(0.0).max(0.0) as i64;
            (m, m, m, m)
        }
        Some(margin @ Value::Object(_)) => {
            let side = |key: &str| int(margin, key).unwrap_or(0).max(0);
            (side("top"), side("right"), side("bottom"), side("left"))
        }
        _ => (0, 0, 0, 0),
    }
}

fn anchor_row(anchor: &str, height: i64, avail: i64, top: i64) -> i64 {
    match anchor {
        "top-left" | "top-center" | "top-right" => top,
        "bottom-left" | "bottom-center" | "bottom-right" => top + avail - height,
        _ => top + (avail - height).div_euclid(2),
    }
}

fn anchor_col(anchor: &str, width: i64, avail: i64, left: i64) -> i64 {
    match anchor {
        "top-left" | "left-center" | "bottom-left" => left,
        "top-right" | "right-center" | "bottom-right" => left + avail - width,
        _ => left + (avail - width).div_euclid(2),
    }
}

/// The box of an overlay `height` lines tall on a `term_width`×`term_height` screen.
pub fn resolve_layout(
    options: &Value,
    height: usize,
    term_width: usize,
    term_height: usize,
) -> OverlayLayout {
    let (tw, th) = (term_width as i64, term_height as i64);
    let (m_top, m_right, m_bottom, m_left) = margins(options);
    let avail_w = (tw - m_left - m_right).max(1);
    let avail_h = (th - m_top - m_bottom).max(1);
    let mut width = size_value(options.get("width"), term_width).unwrap_or(80.min(avail_w));
    if let Some(min) = int(options, "minWidth") {
        width = width.max(min);
    }
    let width = width.clamp(1, avail_w);
    let max_height = size_value(options.get("maxHeight"), term_height).map(|h| h.clamp(1, avail_h));
    let height = max_height.map_or(height as i64, |m| (height as i64).min(m));
    let anchor = options
        .get("anchor")
        .and_then(Value::as_str)
        .unwrap_or("center");
    let mut row = match options.get("row") {
        Some(value @ Value::String(_)) => match percent(value) {
            Some(p) => m_top + ((avail_h - height).max(0) as f64 * p).floor() as i64,
            None => anchor_row("center", height, avail_h, m_top),
        },
        Some(value) if value.is_number() => int(options, "row").unwrap_or(0),
        _ => anchor_row(anchor, height, avail_h, m_top),
    };
    let mut col = match options.get("col") {
        Some(value @ Value::String(_)) => match percent(value) {
            Some(p) => m_left + ((avail_w - width).max(0) as f64 * p).floor() as i64,
            None => anchor_col("center", width, avail_w, m_left),
        },
        Some(value) if value.is_number() => int(options, "col").unwrap_or(0),
        _ => anchor_col(anchor, width, avail_w, m_left),
    };
    row += int(options, "offsetY").unwrap_or(0);
    col += int(options, "offsetX").unwrap_or(0);
    let row = row.min(th - m_bottom - height).max(m_top).max(0);
    let col = col.min(tw - m_right - width).max(m_left).max(0);
    OverlayLayout {
        width: width as usize,
        row: row as usize,
        col: col as usize,
        max_height: max_height.map(|h| h as usize),
    }
}

/// One overlay ready to draw: its lines (already cut to `max_height`) and box.
#[derive(Debug, Clone)]
pub struct PlacedOverlay {
    pub lines: Vec<String>,
    pub layout: OverlayLayout,
}

/// `overlay` pasted over columns `col..col+width` of `base`, the line kept `total` wide.
pub fn composite_line(base: &str, overlay: &str, col: usize, width: usize, total: usize) -> String {
    if pi_tui::image::is_image_line(base) {
        // Nothing is drawn into an image's row (pi's `compositeTuiLine`).
        return base.to_owned();
    }
    let before = slice_columns(base, 0, col);
    let before_width = visible_width(&before);
    let overlay = if visible_width(overlay) > width {
        truncate_to_width(overlay, width, "", false)
    } else {
        overlay.to_owned()
    };
    let overlay_width = visible_width(&overlay);
    let after_start = col + width;
    let after = slice_columns(base, after_start, total.saturating_sub(after_start));
    let after_width = visible_width(&after);
    let mut line = before;
    line.push_str(&" ".repeat(col.saturating_sub(before_width)));
    line.push_str(SEGMENT_RESET);
    line.push_str(&overlay);
    line.push_str(&" ".repeat(width.saturating_sub(overlay_width)));
    line.push_str(SEGMENT_RESET);
    line.push_str(&after);
    let after_target = total.saturating_sub(col.max(before_width) + width.max(overlay_width));
    line.push_str(&" ".repeat(after_target.saturating_sub(after_width)));
    if visible_width(&line) > total {
        truncate_to_width(&line, total, "", false)
    } else {
        line
    }
}

/// The frame with the overlays drawn over its last screenful (padded to the screen
/// height first, so overlays sit at screen positions).
pub fn composite(
    mut lines: Vec<String>,
    overlays: &[PlacedOverlay],
    term_width: usize,
    term_height: usize,
) -> Vec<String> {
    if overlays.is_empty() {
        return lines;
    }
    let needed = overlays
        .iter()
        .map(|o| o.layout.row + o.lines.len())
        .max()
        .unwrap_or(0);
    let height = lines.len().max(term_height).max(needed);
    lines.resize(height, String::new());
    let viewport = height.saturating_sub(term_height);
    for overlay in overlays {
        let top = viewport + overlay.layout.row;
        pi_tui::image::hide_images_under(
            &mut lines,
            top..top + overlay.lines.len(),
            overlay.layout.col..overlay.layout.col + overlay.layout.width,
        );
        for (i, text) in overlay.lines.iter().enumerate() {
            let index = viewport + overlay.layout.row + i;
            if let Some(line) = lines.get_mut(index) {
                *line = composite_line(
                    line,
                    text,
                    overlay.layout.col,
                    overlay.layout.width,
                    term_width,
                );
            }
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn centered_by_default_and_anchored_when_asked() {
        let layout = resolve_layout(&json!({"width": 20}), 4, 100, 30);
        assert_eq!((layout.width, layout.row, layout.col), (20, 13, 40));
        let corner = resolve_layout(
            &json!({"width": "50%", "anchor": "bottom-right", "margin": 1}),
            5,
            100,
            30,
        );
        assert_eq!((corner.width, corner.row, corner.col), (50, 24, 49));
        let placed = resolve_layout(&json!({"row": "0%", "col": 3, "offsetY": 2}), 3, 100, 30);
        assert_eq!((placed.width, placed.row, placed.col), (80, 2, 3));
        let capped = resolve_layout(&json!({"maxHeight": 5}), 40, 100, 30);
        assert_eq!(capped.max_height, Some(5));
    }

    #[test]
    fn overlays_paste_over_the_last_screenful() {
        let base: Vec<String> = (0..5).map(|i| format!("line {i} xxxxxxxx")).collect();
        let overlay = PlacedOverlay {
            lines: vec!["AB".into()],
            layout: OverlayLayout {
                width: 3,
                row: 1,
                col: 2,
                max_height: None,
            },
        };
        let out = composite(base, &[overlay], 16, 3);
        assert_eq!(out.len(), 5);
        let plain = crate::modes::interactive::components::strip_ansi(&out[3]);
        assert_eq!(plain, "liAB 3 xxxxxxxx ");
    }
}
