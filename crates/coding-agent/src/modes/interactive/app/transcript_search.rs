//! Transcript search in fullscreen (pi 1.6's Ctrl+Shift+F): a box at the top right, the
//! matches highlighted in the visible rows, Enter and Shift+Enter moving between them (with
//! wrap-around) and scrolling the current one into view; Esc closes it where it is.

use pi_tui::input::Input;
use pi_tui::search::{Match, Span, find, highlight};
use pi_tui::width::{truncate_to_width, visible_width};

use super::App;
use crate::modes::interactive::chat_rows::ChatRows;
use crate::modes::interactive::extension_ui::line_input::LineInput;
use crate::modes::interactive::extension_ui::overlay_layout::composite_line;
use crate::modes::interactive::selectors::hotkeys::key_display;
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};

/// The search box's state.
pub(crate) struct TranscriptSearch {
    input: LineInput,
    matches: Vec<Match>,
    current: Option<usize>,
    /// Where "next" starts: the current match's row, or the top row when it opened.
    anchor_row: usize,
    /// What the matches were found in: the query and the transcript's size and last row.
    searched: Option<(String, usize, String)>,
    /// The current match must be brought into view at the next frame.
    reveal: bool,
}

impl TranscriptSearch {
    pub(super) fn open(top_row: usize) -> Self {
        let mut input = LineInput::with_prompt(" ", "Find in transcript");
        input.set_focused(true);
        TranscriptSearch {
            input,
            matches: Vec::new(),
            current: None,
            anchor_row: top_row,
            searched: None,
            reveal: false,
        }
    }

    fn query(&self) -> &str {
        self.input.value()
    }

    /// Edits the query; a new query searches on from the current match (or `top_row`).
    fn edit(&mut self, input: &Input, top_row: usize) -> bool {
        let before = self.query().to_owned();
        if !self.input.handle(input) {
            return false;
        }
        if self.query() != before {
            self.anchor_row = self
                .current
                .and_then(|c| self.matches.get(c))
                .and_then(|m| m.first())
                .map_or(top_row, |span| span.row);
        }
        true
    }

    /// Finds the matches again when the query or the transcript changed; the current one
    /// becomes the first at or after the anchor row.
    pub(super) fn refresh(&mut self, transcript: &ChatRows<'_>) {
        let key = (
            self.query().to_owned(),
            transcript.len(),
            transcript.last().unwrap_or_default().to_owned(),
        );
        if self.searched.as_ref() == Some(&key) {
            return;
        }
        let query_changed = self
            .searched
            .as_ref()
            .is_none_or(|(q, _, _)| q != self.query());
        self.searched = Some(key);
        self.matches = find(&transcript.to_vec(), self.query());
        if query_changed || self.current.is_none_or(|c| c >= self.matches.len()) {
            self.current = self
                .matches
                .iter()
                .position(|m| m.first().is_some_and(|s| s.row >= self.anchor_row))
                .or((!self.matches.is_empty()).then_some(0));
            self.reveal = self.current.is_some();
        }
    }

    /// Moves to the next (`1`) or previous (`-1`) match, wrapping around.
    fn step(&mut self, direction: isize) {
        let count = self.matches.len();
        if count == 0 {
            return;
        }
        let next = match self.current {
            Some(current) => (current as isize + direction).rem_euclid(count as isize) as usize,
            None => 0,
        };
        self.current = Some(next);
        if let Some(span) = self.matches[next].first() {
            self.anchor_row = span.row;
        }
        self.reveal = true;
    }

    /// The row to bring into view, once.
    pub(super) fn take_reveal(&mut self) -> Option<usize> {
        if !std::mem::take(&mut self.reveal) {
            return None;
        }
        let current = self.current?;
        self.matches[current].first().map(|s| s.row)
    }

    /// The spans on rows `top..top + height`, each with whether it is the current match.
    fn visible(&self, top: usize, height: usize) -> Vec<(Span, bool)> {
        let mut spans = Vec::new();
        // Matches are in row order: skip to the first that may reach the window.
        let first = self
            .matches
            .partition_point(|m| m.last().is_some_and(|s| s.row < top));
        for (index, found) in self.matches.iter().enumerate().skip(first) {
            if found.first().is_some_and(|s| s.row >= top + height) {
                break;
            }
            let current = self.current == Some(index);
            spans.extend(
                found
                    .iter()
                    .filter(|s| s.row >= top && s.row < top + height)
                    .map(|s| (*s, current)),
            );
        }
        spans
    }

    /// Highlights the matches in the visible `rows` (the first is content row `top`).
    pub(super) fn paint(&self, rows: &mut [String], top: usize, theme: &Theme) {
        let style = theme
            .fg(ThemeColor::SearchMatchText)
            .with_bg(theme.bg_color(ThemeBg::SearchMatchBg));
        let paint = |text: &str, current: bool| {
            if current {
                style.bold().inverse().paint(text)
            } else {
                style.underline().paint(text)
            }
        };
        let spans = self.visible(top, rows.len());
        for (offset, row) in rows.iter_mut().enumerate() {
            let on_row: Vec<(Span, bool)> = spans
                .iter()
                .filter(|(s, _)| s.row == top + offset)
                .copied()
                .collect();
            if !on_row.is_empty() {
                *row = highlight(row, &on_row, &paint);
            }
        }
    }

    /// The box's three rows, `width` wide, as pi 1.6's search box draws them: the query
    /// with the match counter, and the previous/next buttons in the bottom border.
    fn render_box(&self, width: usize, previous: &str, next: &str) -> [String; 3] {
        let inner = width.saturating_sub(2);
        let counter = match (self.query().is_empty(), self.current) {
            (true, _) => String::new(),
            (false, Some(current)) => format!("{}/{}", current + 1, self.matches.len()),
            (false, None) => "No matches".to_owned(),
        };
        let counter = truncate_to_width(&counter, inner.saturating_sub(3), "", false);
        let counter = if counter.is_empty() {
            counter
        } else {
            format!("\x1b[2m {counter} \x1b[22m")
        };
        let input_width = inner.saturating_sub(visible_width(&counter));
        let line = self.input.render(input_width.max(1)).remove(0);
        let line = truncate_to_width(&line, input_width, "", false);
        let pad = " ".repeat(input_width.saturating_sub(visible_width(&line)));
        let middle = format!("│{line}{pad}{counter}│");
        let bottom = match Buttons::fit(inner, previous, next) {
            Some(b) => format!(
                "└{} {}{}{} {}┘",
                "─".repeat(b.left),
                b.back,
                b.separator,
                b.forth,
                "─".repeat(b.right)
            ),
            None => format!("└{}┘", "─".repeat(inner)),
        };
        [format!("┌{}┐", "─".repeat(inner)), middle, bottom]
    }
}

/// The previous/next buttons of the box's bottom border, as pi 1.6 fits them: shortened
/// to arrows when the keys do not fit, left out when nothing fits; one dash stays at the
/// right.
struct Buttons {
    back: String,
    forth: String,
    separator: &'static str,
    /// Dashes before and after the buttons.
    left: usize,
    right: usize,
}

impl Buttons {
    fn fit(inner: usize, previous: &str, next: &str) -> Option<Buttons> {
        let room = inner.saturating_sub(3);
        let controls =
            |b: &str, f: &str, s: &str| visible_width(b) + visible_width(s) + visible_width(f);
        let (mut back, mut forth, mut separator) =
            (format!("↑ {previous}"), format!("↓ {next}"), " · ");
        if controls(&back, &forth, separator) > room {
            (back, forth, separator) = ("↑".to_owned(), "↓".to_owned(), " ");
        }
        let width = controls(&back, &forth, separator);
        if width > room {
            return None;
        }
        let right = usize::from(inner > width + 2);
        let left = inner.saturating_sub(width + 2 + right);
        Some(Buttons {
            back,
            forth,
            separator,
            left,
            right,
        })
    }

    /// Which button column `offset` of the bottom border is on: −1 previous, 1 next.
    fn at(&self, offset: usize) -> Option<isize> {
        let back_start = 1 + self.left + 1;
        let back_end = back_start + visible_width(&self.back);
        let forth_start = back_end + visible_width(self.separator);
        let forth_end = forth_start + visible_width(&self.forth);
        if (back_start..back_end).contains(&offset) {
            Some(-1)
        } else if (forth_start..forth_end).contains(&offset) {
            Some(1)
        } else {
            None
        }
    }
}

/// The box's first screen row.
const BOX_TOP: usize = 1;

/// The box's first column and width on a screen `width` wide: pi 1.6's overlay, 40% wide
/// (at least 32 columns), one column from the right edge.
fn box_place(width: usize) -> (usize, usize) {
    let box_width = (width * 2 / 5).max(32).min(width.saturating_sub(2)).max(1);
    (width.saturating_sub(box_width + 1), box_width)
}

/// The transcript's own keys, which reach it even while the box has the focus (pi 1.6).
const VIEWPORT_ACTIONS: [&str; 10] = [
    "tui.altScreen.pageUp",
    "tui.altScreen.pageDown",
    "tui.altScreen.halfPageUp",
    "tui.altScreen.halfPageDown",
    "tui.altScreen.lineUp",
    "tui.altScreen.lineDown",
    "tui.altScreen.previousPrompt",
    "tui.altScreen.nextPrompt",
    "tui.altScreen.top",
    "tui.altScreen.bottom",
];

/// A key as pi's buttons show it: the first binding, `shift+enter` as `Shift+Enter`.
fn button_key(keys: &[String]) -> String {
    key_display(&keys[..keys.len().min(1)])
}

impl App {
    /// Draws the search box over the frame's top right corner (below the first row).
    pub(super) fn draw_search_box(&self, frame: &mut [String], width: usize) {
        let Some(search) = self.fullscreen.as_ref().and_then(|f| f.search.as_ref()) else {
            return;
        };
        let (column, box_width) = box_place(width);
        let (previous, next) = self.button_keys();
        let rows = search.render_box(box_width, &previous, &next);
        pi_tui::image::hide_images_under(frame, BOX_TOP..BOX_TOP + rows.len(), column..width);
        for (offset, text) in rows.iter().enumerate() {
            if let Some(line) = frame.get_mut(BOX_TOP + offset) {
                *line = composite_line(line, text, column, box_width, width);
            }
        }
    }

    /// The keys the buttons name.
    fn button_keys(&self) -> (String, String) {
        (
            button_key(&self.keys.keys("tui.altScreen.searchPrevious")),
            button_key(&self.keys.keys("tui.altScreen.searchNext")),
        )
    }

    /// A left press at screen `row`, `column`: on a button of the open box it moves to
    /// the previous or next match (pi 1.6 acts on the press). True when it was a button.
    pub(super) fn on_search_press(&mut self, row: usize, column: usize) -> bool {
        let width = self.width();
        let (previous, next) = self.button_keys();
        let Some(search) = self.fullscreen.as_mut().and_then(|f| f.search.as_mut()) else {
            return false;
        };
        let (start, box_width) = box_place(width);
        if row != BOX_TOP + 2 || column < start || column >= start + box_width {
            return false;
        }
        let inner = box_width.saturating_sub(2);
        let Some(direction) =
            Buttons::fit(inner, &previous, &next).and_then(|b| b.at(column - start))
        else {
            return false;
        };
        if !search.query().is_empty() {
            search.step(direction);
        }
        true
    }

    /// Keys while the search box is open; true when the key was the box's.
    pub(super) fn on_search_key(&mut self, input: &Input) -> bool {
        let keys = std::sync::Arc::clone(&self.keys);
        let Some(screen) = self.fullscreen.as_mut() else {
            return false;
        };
        if keys.matches(input, "tui.altScreen.search") {
            screen.search = match screen.search {
                Some(_) => None,
                None => Some(TranscriptSearch::open(screen.viewport.top())),
            };
            return true;
        }
        let Some(search) = screen.search.as_mut() else {
            return false;
        };
        if keys.matches(input, "tui.altScreen.searchClose") {
            screen.search = None;
        } else if keys.matches(input, "tui.altScreen.searchNext") {
            search.step(1);
        } else if keys.matches(input, "tui.altScreen.searchPrevious") {
            search.step(-1);
        } else if VIEWPORT_ACTIONS.iter().any(|a| keys.matches(input, a)) {
            // Scrolling keys still reach the transcript.
            return false;
        } else {
            let top = screen.viewport.top();
            return search.edit(input, top);
        }
        true
    }
}
