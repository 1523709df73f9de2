//! Transcript search in fullscreen (pi 1.6's Ctrl+Shift+F): a box at the top right, the
//! matches highlighted in the visible rows, Enter and Shift+Enter moving between them (with
//! wrap-around) and scrolling the current one into view; Esc closes it where it is.

use pi_tui::CURSOR_MARKER;
use pi_tui::input::{Input, KeyCode, KeyModifiers};
use pi_tui::search::{Match, Span, find, highlight};
use pi_tui::width::{truncate_to_width, visible_width};

use super::App;
use crate::modes::interactive::chat_rows::ChatRows;
use crate::modes::interactive::extension_ui::overlay_layout::composite_line;
use crate::modes::interactive::selectors::hotkeys::key_display;
use crate::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};

/// The search box's state.
#[derive(Default)]
pub(crate) struct TranscriptSearch {
    query: String,
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
        TranscriptSearch {
            anchor_row: top_row,
            ..Self::default()
        }
    }

    /// Finds the matches again when the query or the transcript changed; the current one
    /// becomes the first at or after the anchor row.
    pub(super) fn refresh(&mut self, transcript: &ChatRows<'_>) {
        let key = (
            self.query.clone(),
            transcript.len(),
            transcript.last().unwrap_or_default().to_owned(),
        );
        if self.searched.as_ref() == Some(&key) {
            return;
        }
        let query_changed = self
            .searched
            .as_ref()
            .is_none_or(|(q, _, _)| *q != self.query);
        self.searched = Some(key);
        self.matches = find(&transcript.to_vec(), &self.query);
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
            .fg(ThemeColor::Text)
            .with_bg(theme.bg_color(ThemeBg::SelectedBg));
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

    /// The box's three rows, `width` wide.
    fn render_box(&self, width: usize, theme: &Theme, previous: &str, next: &str) -> [String; 3] {
        let border = theme.fg(ThemeColor::Border);
        let dim = theme.fg(ThemeColor::Dim);
        let inner = width.saturating_sub(4);
        let counter = match (self.query.trim().is_empty(), self.current) {
            (true, _) => String::new(),
            (false, Some(current)) => format!("{}/{}", current + 1, self.matches.len()),
            (false, None) => "No matches".to_owned(),
        };
        let text = if self.query.is_empty() {
            format!("{CURSOR_MARKER}{}", dim.paint("Find in transcript"))
        } else {
            format!("{}{CURSOR_MARKER}", self.query)
        };
        let room = inner.saturating_sub(visible_width(&counter) + 1);
        let text = if visible_width(&text) > room {
            truncate_to_width(&text, room, "", false)
        } else {
            text
        };
        let gap = inner.saturating_sub(visible_width(&text) + visible_width(&counter));
        let middle = format!(
            "{} {text}{}{} {}",
            border.paint("│"),
            " ".repeat(gap),
            dim.paint(&counter),
            border.paint("│")
        );
        let buttons = [
            format!(" ↑ {previous} · ↓ {next} "),
            " ↑ ↓ ".to_owned(),
            String::new(),
        ]
        .into_iter()
        .find(|b| visible_width(b) + 3 <= width)
        .unwrap_or_default();
        let dashes = width.saturating_sub(3 + visible_width(&buttons));
        let bottom = format!(
            "{}{buttons}{}",
            border.paint(&format!("└{}", "─".repeat(dashes))),
            border.paint("─┘")
        );
        let top = border.paint(&format!("┌{}┐", "─".repeat(width.saturating_sub(2))));
        [top, middle, bottom]
    }
}

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
        let box_width = (width * 2 / 5).max(32).min(width);
        let column = width - box_width;
        let previous = button_key(&self.keys.keys("tui.altScreen.searchPrevious"));
        let next = button_key(&self.keys.keys("tui.altScreen.searchNext"));
        let rows = search.render_box(box_width, &self.theme, &previous, &next);
        pi_tui::image::hide_images_under(frame, 1..1 + rows.len(), column..width);
        for (offset, text) in rows.iter().enumerate() {
            if let Some(line) = frame.get_mut(1 + offset) {
                *line = composite_line(line, text, column, box_width, width);
            }
        }
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
        } else {
            match input {
                Input::Paste(text) => search.query.push_str(&text.replace(['\r', '\n'], " ")),
                Input::Key(key) => match key.code {
                    KeyCode::Backspace => {
                        search.query.pop();
                    }
                    KeyCode::Char(c)
                        if !key
                            .modifiers
                            .intersects(KeyModifiers::CONTROL | KeyModifiers::ALT) =>
                    {
                        search.query.push(c);
                    }
                    // Scrolling keys still reach the transcript.
                    _ => return false,
                },
            }
        }
        true
    }
}
