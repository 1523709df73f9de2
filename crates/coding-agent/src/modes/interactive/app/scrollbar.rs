//! The fullscreen transcript's scrollbar (pi 1.6's `ScrollView` bar): when it shows, how it
//! is painted, and the pointer on it — hovering reveals and holds it, pressing the track
//! jumps there, dragging the thumb scrolls.

use std::time::{Duration, Instant};

use pi_tui::viewport::Viewport;

use crate::config::tui_settings::ScrollbarMode;
use crate::modes::interactive::extension_ui::overlay_layout::composite_line;
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// How long the `auto` scrollbar stays after the last scroll (pi-tui's default).
const LINGER: Duration = Duration::from_millis(1000);

/// Where the bar is drawn over the transcript's window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Geometry {
    thumb_top: usize,
    thumb_rows: usize,
    track_rows: usize,
}

impl Geometry {
    /// pi-tui's geometry: a thumb of at least two rows, placed by the scroll position.
    fn of(viewport: &Viewport) -> Geometry {
        let track_rows = viewport.height();
        let (thumb_top, thumb_rows) = viewport.thumb().unwrap_or((0, track_rows));
        Geometry {
            thumb_top,
            thumb_rows,
            track_rows,
        }
    }

    fn on_thumb(&self, row: usize) -> bool {
        row >= self.thumb_top && row < self.thumb_top + self.thumb_rows
    }
}

/// The bar's state: the setting, the `auto` bar's time left, the pointer over it and a drag.
#[derive(Debug, Clone)]
pub(super) struct Scrollbar {
    pub(super) mode: ScrollbarMode,
    /// The `auto` bar shows until then after a scroll.
    until: Option<Instant>,
    /// The pointer is over the bar: it shows (thumb drawn solid) and does not hide.
    hover: bool,
    /// A drag holds the thumb at this row offset from its top.
    drag: Option<usize>,
}

impl Scrollbar {
    pub(super) fn new(mode: ScrollbarMode) -> Self {
        Scrollbar {
            mode,
            until: None,
            hover: false,
            drag: None,
        }
    }

    /// Takes a new setting; a bar that is no longer `auto` drops its timer.
    pub(super) fn set_mode(&mut self, mode: ScrollbarMode) {
        self.mode = mode;
        if mode != ScrollbarMode::Auto {
            self.until = None;
        }
    }

    /// The view scrolled: the `auto` bar shows, and hides a second after the last scroll
    /// unless the pointer holds it.
    pub(super) fn moved(&mut self) {
        if self.mode == ScrollbarMode::Auto && !self.hover {
            self.until = Some(Instant::now() + LINGER);
        }
    }

    /// Whether a timer is running (the frame loop ticks until it ends).
    pub(super) fn is_lingering(&self) -> bool {
        self.until.is_some()
    }

    /// Ends the `auto` bar's time when it is up; true when that changed the view.
    pub(super) fn tick(&mut self, now: Instant) -> bool {
        match self.until {
            Some(until) if now >= until => {
                self.until = None;
                true
            }
            _ => false,
        }
    }

    /// Whether the bar is drawn over `viewport` now.
    pub(super) fn visible(&self, viewport: &Viewport) -> bool {
        match self.mode {
            ScrollbarMode::Hidden => false,
            ScrollbarMode::Always => true,
            ScrollbarMode::Auto => {
                viewport.thumb().is_some() && (self.hover || self.until.is_some())
            }
        }
    }

    /// Whether `(row, column)` is on the bar; `reveal` also counts a hidden `auto` bar
    /// whose content overflows (pointing there brings it up).
    fn hit(
        &self,
        viewport: &Viewport,
        row: usize,
        column: usize,
        width: usize,
        reveal: bool,
    ) -> bool {
        let shown = self.visible(viewport)
            || (reveal && self.mode == ScrollbarMode::Auto && viewport.thumb().is_some());
        shown && width > 0 && column == width - 1 && row < viewport.height()
    }

    /// The pointer is over the bar or left it; leaving starts the `auto` bar's linger.
    fn set_hover(&mut self, hover: bool) {
        if hover == self.hover {
            return;
        }
        self.hover = hover;
        if hover {
            self.until = None;
        } else {
            self.moved();
        }
    }

    /// Follows the pointer after a mouse report that did not go to an overlay.
    pub(super) fn track_pointer(
        &mut self,
        viewport: &Viewport,
        row: usize,
        column: usize,
        width: usize,
    ) {
        if self.drag.is_none() {
            let over = self.hit(viewport, row, column, width, true);
            self.set_hover(over);
        }
    }

    /// The pointer went somewhere the bar cannot be (an overlay, another window).
    pub(super) fn leave(&mut self) {
        self.drag = None;
        self.set_hover(false);
    }

    /// A left press: on the bar it grabs the thumb (pressing the track first moves the
    /// thumb's middle there). True when the press was the bar's.
    pub(super) fn press(
        &mut self,
        viewport: &mut Viewport,
        row: usize,
        column: usize,
        width: usize,
    ) -> bool {
        if !self.hit(viewport, row, column, width, false) {
            return false;
        }
        self.set_hover(true);
        let geometry = Geometry::of(viewport);
        let grab = if geometry.on_thumb(row) {
            row - geometry.thumb_top
        } else {
            let grab = geometry.thumb_rows / 2;
            self.scroll_to_pointer(viewport, geometry, row, grab);
            grab
        };
        self.drag = Some(grab);
        true
    }

    /// During a drag every report moves the thumb with the pointer, and the release ends
    /// it. False when no drag is going on.
    pub(super) fn drag(&mut self, viewport: &mut Viewport, row: usize, release: bool) -> bool {
        let Some(grab) = self.drag else {
            return false;
        };
        if release {
            self.drag = None;
        } else {
            self.scroll_to_pointer(viewport, Geometry::of(viewport), row, grab);
        }
        true
    }

    fn scroll_to_pointer(
        &mut self,
        viewport: &mut Viewport,
        geometry: Geometry,
        row: usize,
        grab: usize,
    ) {
        let travel = geometry.track_rows - geometry.thumb_rows;
        let offset = row.saturating_sub(grab).min(travel);
        let top = if travel == 0 {
            0
        } else {
            ((offset as f64 / travel as f64) * viewport.max_top() as f64).round() as usize
        };
        if viewport.scroll_to(top) {
            self.moved();
        }
    }

    /// Draws the bar in the last column of the window's rows.
    pub(super) fn paint(
        &self,
        frame: &mut [String],
        viewport: &Viewport,
        width: usize,
        theme: &Theme,
    ) {
        if !self.visible(viewport) || width == 0 {
            return;
        }
        let geometry = Geometry::of(viewport);
        let track = theme.fg(ThemeColor::ScrollbarTrack);
        let thumb = theme.fg(ThemeColor::ScrollbarThumb);
        let thumb_glyph = if self.hover || self.drag.is_some() {
            "█"
        } else {
            "┃"
        };
        for (row, line) in frame.iter_mut().enumerate() {
            let glyph = if geometry.on_thumb(row) {
                thumb.paint(thumb_glyph)
            } else {
                track.paint("│")
            };
            *line = composite_line(line, &glyph, width - 1, 1, width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn viewport(content: usize, height: usize) -> Viewport {
        let mut viewport = Viewport::default();
        viewport.update(content, height);
        viewport
    }

    /// Pointing at the last column reveals the hidden `auto` bar and holds it; leaving
    /// starts its linger.
    #[test]
    fn hovering_reveals_and_holds_the_auto_bar() {
        let view = viewport(100, 10);
        let mut bar = Scrollbar::new(ScrollbarMode::Auto);
        assert!(!bar.visible(&view));
        bar.track_pointer(&view, 3, 79, 80);
        assert!(bar.visible(&view) && !bar.is_lingering());
        bar.track_pointer(&view, 3, 40, 80);
        assert!(bar.visible(&view) && bar.is_lingering());
        assert!(bar.tick(Instant::now() + LINGER));
        assert!(!bar.visible(&view));
        // Content that fits has no bar to reveal.
        bar.track_pointer(&viewport(5, 10), 3, 79, 80);
        assert!(!bar.visible(&viewport(5, 10)));
    }

    /// Pressing the track centres the thumb on the pointer; dragging follows it to the
    /// ends, and the end follows new content again.
    #[test]
    fn pressing_and_dragging_move_the_view() {
        let mut view = viewport(100, 10);
        let mut bar = Scrollbar::new(ScrollbarMode::Always);
        assert_eq!(view.top(), 90);
        assert!(!bar.press(&mut view, 0, 10, 80));
        assert!(bar.press(&mut view, 0, 79, 80));
        assert_eq!(view.top(), 0);
        assert!(!view.is_following());
        assert!(bar.drag(&mut view, 5, false));
        assert_eq!(view.top(), 45);
        assert!(bar.drag(&mut view, 9, false));
        assert_eq!(view.top(), 90);
        assert!(view.is_following());
        assert!(bar.drag(&mut view, 9, true));
        assert!(!bar.drag(&mut view, 3, false));
    }
}
