//! A scrolling window over a long list of rows (pi 1.6's fullscreen transcript): where it
//! stands, whether it follows the end, and the scrollbar drawn beside it.

/// Rows kept in view when paging (pi-tui's `PAGE_SCROLL_OVERLAP`).
pub const PAGE_OVERLAP: usize = 4;

/// The window's position over `content` rows shown `height` at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Viewport {
    /// First content row shown.
    top: usize,
    /// At the end, new rows scroll in; scrolled away from it, the view stays put.
    following: bool,
    content: usize,
    height: usize,
}

impl Default for Viewport {
    fn default() -> Self {
        Viewport {
            top: 0,
            following: true,
            content: 0,
            height: 1,
        }
    }
}

impl Viewport {
    /// The largest `top`.
    pub fn max_top(&self) -> usize {
        self.content.saturating_sub(self.height)
    }

    pub fn top(&self) -> usize {
        self.top
    }

    pub fn height(&self) -> usize {
        self.height
    }

    pub fn content(&self) -> usize {
        self.content
    }

    /// Whether the view follows the end (what the jump label's absence means).
    pub fn is_following(&self) -> bool {
        self.following
    }

    /// Takes the new content and window sizes: a following view moves to the end, another
    /// one keeps its row, clamped.
    pub fn update(&mut self, content: usize, height: usize) {
        self.content = content;
        self.height = height.max(1);
        self.top = if self.following {
            self.max_top()
        } else {
            self.top.min(self.max_top())
        };
    }

    /// Moves by `delta` rows; reaching the end follows it again. Returns whether it moved.
    pub fn scroll_by(&mut self, delta: isize) -> bool {
        let before = self.top;
        let target = self.top.saturating_add_signed(delta).min(self.max_top());
        self.top = target;
        self.following = target == self.max_top();
        self.top != before
    }

    /// Moves to `top` (clamped), as a scrollbar drag does; reaching the end follows it
    /// again. Returns whether it moved.
    pub fn scroll_to(&mut self, top: usize) -> bool {
        let before = self.top;
        self.top = top.min(self.max_top());
        self.following = self.top == self.max_top();
        self.top != before
    }

    /// One page up (negative) or down: the window's height less the overlap.
    pub fn page(&mut self, direction: isize) -> bool {
        let step = self.height.saturating_sub(PAGE_OVERLAP).max(1) as isize;
        self.scroll_by(step * direction.signum())
    }

    pub fn to_start(&mut self) -> bool {
        let moved = self.top != 0;
        self.top = 0;
        self.following = self.max_top() == 0;
        moved
    }

    pub fn to_end(&mut self) -> bool {
        let moved = self.top != self.max_top();
        self.top = self.max_top();
        self.following = true;
        moved
    }

    /// Shows `row` (a search match), a third of the way down unless it is in view
    /// already; either way the view stops following the end, as pi 1.6's does.
    pub fn reveal(&mut self, row: usize) {
        self.following = false;
        if row >= self.top && row < self.top + self.height {
            return;
        }
        self.top = row.saturating_sub(self.height / 3).min(self.max_top());
    }

    /// The scrollbar's thumb as `(first row, rows)` within the window, when content
    /// overflows it.
    pub fn thumb(&self) -> Option<(usize, usize)> {
        let track = self.height;
        if self.content <= track || track == 0 {
            return None;
        }
        let size = ((track * track) as f64 / self.content as f64).round() as usize;
        let size = size.min(track).max(track.min(2));
        let max_top = self.max_top();
        let offset = if max_top == 0 {
            0
        } else {
            ((self.top as f64 / max_top as f64) * (track - size) as f64).round() as usize
        };
        Some((offset, size))
    }
}

/// pi 1.6's `"auto"` wheel speed: a lone notch moves one row, a fast spin up to six.
#[derive(Debug, Clone, Default)]
pub struct WheelAccelerator {
    last: Option<(std::time::Instant, i8)>,
    average_gap_ms: Option<f64>,
    carry: f64,
}

impl WheelAccelerator {
    /// Rows for one notch in `direction` (−1 up, 1 down) at `now`.
    pub fn next(&mut self, direction: i8, now: std::time::Instant) -> usize {
        let gap = self
            .last
            .filter(|(_, dir)| *dir == direction)
            .map(|(at, _)| now.saturating_duration_since(at).as_secs_f64() * 1000.0);
        self.last = Some((now, direction));
        let Some(gap) = gap.filter(|g| *g <= 200.0) else {
            self.average_gap_ms = None;
            self.carry = 0.0;
            return 1;
        };
        if gap < 5.0 {
            return 1;
        }
        let average = self.average_gap_ms.map_or(gap, |a| (a + gap) / 2.0);
        self.average_gap_ms = Some(average);
        let lines = (100.0 / average).clamp(1.0, 6.0) + self.carry;
        let whole = lines.floor();
        self.carry = lines - whole;
        whole as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn a_following_view_stays_at_the_end_and_a_scrolled_one_stays_put() {
        let mut view = Viewport::default();
        view.update(100, 20);
        assert_eq!(view.top(), 80);
        assert!(view.scroll_by(-5));
        assert!(!view.is_following());
        view.update(150, 20);
        assert_eq!(view.top(), 75);
        assert!(view.scroll_by(100));
        assert!(view.is_following());
        view.update(200, 20);
        assert_eq!(view.top(), 180);
    }

    #[test]
    fn pages_keep_four_rows_and_the_ends_are_reached() {
        let mut view = Viewport::default();
        view.update(100, 24);
        view.page(-1);
        assert_eq!(view.top(), 76 - 20);
        view.to_start();
        assert_eq!(view.top(), 0);
        assert!(!view.scroll_by(-1));
        view.to_end();
        assert!(view.is_following());
    }

    #[test]
    fn the_thumb_is_proportional_and_at_least_two_rows() {
        let mut view = Viewport::default();
        view.update(10, 20);
        assert_eq!(view.thumb(), None);
        view.update(1000, 20);
        assert_eq!(view.thumb(), Some((18, 2)));
        view.to_start();
        assert_eq!(view.thumb(), Some((0, 2)));
        view.update(40, 20);
        assert_eq!(view.thumb(), Some((0, 10)));
    }

    #[test]
    fn fast_wheel_spins_speed_up_to_six_rows() {
        let mut wheel = WheelAccelerator::default();
        let start = Instant::now();
        assert_eq!(wheel.next(1, start), 1);
        let mut at = start;
        let mut steps = Vec::new();
        for _ in 0..5 {
            at += Duration::from_millis(10);
            steps.push(wheel.next(1, at));
        }
        assert_eq!(steps, vec![6, 6, 6, 6, 6]);
        // A pause or a change of direction starts over.
        assert_eq!(wheel.next(-1, at + Duration::from_millis(10)), 1);
        assert_eq!(wheel.next(-1, at + Duration::from_millis(500)), 1);
        // A slow spin: 50 ms apart is two rows.
        assert_eq!(wheel.next(-1, at + Duration::from_millis(550)), 2);
    }
}
