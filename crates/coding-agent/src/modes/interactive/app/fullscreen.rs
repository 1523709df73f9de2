//! Fullscreen mode (pi 1.6's default): the transcript scrolls in a viewport above a fixed
//! dock (queued messages, status, widgets, editor, footer), with the wheel, page keys, a
//! scrollbar and a label that jumps back to the latest message.

use std::time::{Duration, Instant};

use pi_tui::input::{Input, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};
use pi_tui::viewport::{Viewport, WheelAccelerator};
use pi_tui::width::{truncate_to_width, visible_width};

use super::App;
use super::scrollbar::Scrollbar;
use crate::config::tui_settings::{ExitOutput, ScrollbarMode, WheelLines};
use crate::modes::interactive::chat_rows::ChatRows;
use crate::modes::interactive::extension_ui::overlay_layout::composite_line;
use crate::modes::interactive::selectors::hotkeys::key_display;
use crate::modes::interactive::theme::{ThemeBg, ThemeColor};

/// How long a flash message stays (pi-tui's default).
const FLASH: Duration = Duration::from_millis(1000);
/// Alt+wheel moves this many times as far (pi-tui's `ALT_WHEEL_SCROLL_MULTIPLIER`).
const ALT_WHEEL_MULTIPLIER: usize = 5;

/// The viewport's state and the fullscreen settings in force.
pub(crate) struct Fullscreen {
    pub(super) viewport: Viewport,
    wheel: WheelAccelerator,
    pub(super) scrollbar: Scrollbar,
    pub(super) wheel_lines: WheelLines,
    pub(super) exit_output: ExitOutput,
    /// Where the jump label was drawn: `(screen row, first column, width)`.
    jump_label: Option<(usize, usize, usize)>,
    /// The open transcript search.
    pub(super) search: Option<super::transcript_search::TranscriptSearch>,
    pub(super) selection: super::selection::Selection,
    /// `fullscreenCopyOnSelect`: a selection is copied when the button comes up.
    copy_on_select: bool,
    /// A short message at the top right (`Copied!`) and when it goes.
    /// Short messages at the top right (`Copied!`), stacked one a row, each until its
    /// time is up (pi 1.6's flash container).
    flashes: Vec<(String, Instant)>,
    /// The editor's place in the dock as `(first row, rows)`, and on the screen.
    pub(super) slot_in_dock: (usize, usize),
    pub(super) slot_on_screen: Option<(usize, usize)>,
    /// Where the left button went down, while the pointer has not moved since (a click).
    pub(super) press_at: Option<(usize, usize)>,
}

impl Fullscreen {
    /// Takes the fullscreen settings again (changed in `/settings`).
    pub(crate) fn apply_settings(&mut self, settings: &crate::config::settings::Settings) {
        self.scrollbar.set_mode(settings.fullscreen_scrollbar());
        self.wheel_lines = settings.fullscreen_wheel_scroll_lines();
        self.exit_output = settings.fullscreen_exit_output();
        self.copy_on_select = settings.fullscreen_copy_on_select();
    }

    pub(crate) fn new(settings: &crate::config::settings::Settings) -> Self {
        Fullscreen {
            viewport: Viewport::default(),
            wheel: WheelAccelerator::default(),
            scrollbar: Scrollbar::new(settings.fullscreen_scrollbar()),
            wheel_lines: settings.fullscreen_wheel_scroll_lines(),
            exit_output: settings.fullscreen_exit_output(),
            jump_label: None,
            search: None,
            selection: super::selection::Selection::default(),
            copy_on_select: settings.fullscreen_copy_on_select(),
            flashes: Vec::new(),
            slot_in_dock: (0, 0),
            slot_on_screen: None,
            press_at: None,
        }
    }

    /// The transcript's drawing width: `always` keeps the last column for the bar.
    pub(super) fn transcript_width(&self, width: usize) -> usize {
        if self.scrollbar.mode == ScrollbarMode::Always {
            width.saturating_sub(1).max(1)
        } else {
            width
        }
    }

    /// Whether the `auto` scrollbar is still showing (the frame loop ticks until it hides).
    pub(super) fn is_lingering(&self) -> bool {
        self.scrollbar.is_lingering() || !self.flashes.is_empty()
    }

    /// Hides the `auto` scrollbar once its time is up; true when that changed the view.
    pub(super) fn tick(&mut self, now: Instant) -> bool {
        self.flashes.retain(|(_, until)| now < *until);
        self.scrollbar.tick(now)
    }

    fn moved(&mut self) {
        self.scrollbar.moved();
    }

    fn scroll_by(&mut self, delta: isize) {
        if self.viewport.scroll_by(delta) {
            self.moved();
        }
    }

    /// Rows one wheel notch moves.
    fn wheel_step(&mut self, direction: i8, alt: bool) -> usize {
        let rows = match self.wheel_lines {
            WheelLines::Fixed(n) => usize::from(n),
            WheelLines::Auto if local_macos() => 1,
            WheelLines::Auto => self.wheel.next(direction, Instant::now()),
        };
        if alt {
            rows * ALT_WHEEL_MULTIPLIER
        } else {
            rows
        }
    }
}

/// pi 1.6 trusts a local macOS terminal to accelerate the wheel itself.
/// Kitty images the viewport's edges cut through, cropped to the rows it shows: one whose
/// bottom is below the viewport, and one that starts above it (drawn from the top row).
fn crop_images(frame: &mut [String], transcript: &ChatRows<'_>, top: usize) {
    use pi_tui::image::{crop_kitty_line, is_image_line, kitty_image_in, max_kitty_rows};
    let height = frame.len();
    for (row, line) in frame.iter_mut().enumerate() {
        if let Some((_, image)) = kitty_image_in(line) {
            let visible = (height - row) as u32;
            if visible < image.rows {
                *line = crop_kitty_line(line, 0, visible);
            }
        }
    }
    let lowest = top.saturating_sub(max_kitty_rows() as usize);
    for row in (lowest..top).rev() {
        let Some(line) = transcript.get(row).filter(|l| is_image_line(l)) else {
            continue;
        };
        let Some((_, image)) = kitty_image_in(line) else {
            continue;
        };
        let hidden = (top - row) as u32;
        if hidden < image.rows
            && let Some(first) = frame.first_mut()
        {
            *first = crop_kitty_line(line, hidden, (height as u32).min(image.rows - hidden));
        }
        break;
    }
}

fn local_macos() -> bool {
    cfg!(target_os = "macos")
        && ["SSH_CONNECTION", "SSH_CLIENT", "SSH_TTY"]
            .iter()
            .all(|name| std::env::var_os(name).is_none())
}

impl App {
    /// One screen: the visible rows of the transcript above `dock`, with the search
    /// highlights, the selection, the scrollbar, the jump label, the search box and a flash
    /// drawn over them. Only the visible rows are copied out of the chat's cache.
    pub(super) fn compose_screen(
        &mut self,
        mut dock: Vec<String>,
        width: usize,
        rows: usize,
    ) -> Vec<String> {
        // The dock keeps its bottom rows when the screen is too short; one row stays
        // for the transcript.
        let dock_rows = dock.len().min(rows.saturating_sub(1));
        let cut = dock.len() - dock_rows;
        dock.drain(..cut);
        let height = rows - dock_rows;
        let label = self.jump_label_text();
        let Some(screen) = self.fullscreen.as_mut() else {
            return dock;
        };
        let (slot_start, slot_rows) = screen.slot_in_dock;
        screen.slot_on_screen =
            (slot_start >= cut).then_some((height + slot_start - cut, slot_rows));
        let transcript = self.chat.rows(screen.transcript_width(width));
        screen.viewport.update(transcript.len(), height);
        if let Some(search) = screen.search.as_mut() {
            search.refresh(&transcript);
            if let Some(row) = search.take_reveal() {
                screen.viewport.reveal(row);
            }
        }
        let top = screen.viewport.top();
        let mut frame = transcript.slice(top, top + height);
        frame.resize(height, String::new());
        crop_images(&mut frame, &transcript, top);
        if let Some(search) = screen.search.as_ref() {
            search.paint(&mut frame, top, &self.theme);
        }
        screen.selection.paint(&mut frame, top);
        screen
            .scrollbar
            .paint(&mut frame, &screen.viewport, width, &self.theme);
        screen.jump_label = None;
        if !screen.viewport.is_following() && height > 0 {
            let label_width = visible_width(&label).min(width);
            let column = (width - label_width) / 2;
            let row = height - 1;
            let label = truncate_to_width(&label, label_width, "", false);
            frame[row] = composite_line(&frame[row], &label, column, label_width, width);
            screen.jump_label = Some((row, column, label_width));
        }
        self.draw_search_box(&mut frame, width);
        let flashes = self.fullscreen.as_ref().map_or(&[][..], |f| &f.flashes[..]);
        let shown = flashes.len().min(frame.len());
        for (row, (message, _)) in frame.iter_mut().zip(&flashes[flashes.len() - shown..]) {
            let text = format!(
                "\x1b[7m{}\x1b[27m",
                truncate_to_width(&format!(" {message} "), width, "", false)
            );
            let text_width = visible_width(&text).min(width);
            *row = composite_line(row, &text, width - text_width, text_width, width);
        }
        frame.extend(dock);
        frame
    }

    /// The terminal's width in columns.
    pub(super) fn width(&self) -> usize {
        pi_tui::terminal::Terminal::size(self.renderer.terminal())
            .0
            .max(1)
    }

    /// ` ↓ Jump to latest message · Ctrl+End ` in the selected-row colours.
    fn jump_label_text(&self) -> String {
        let keys = self.keys.keys("tui.altScreen.bottom");
        let text = match keys.first() {
            Some(_) => format!(" ↓ Jump to latest message · {} ", key_display(&keys[..1])),
            None => " ↓ Jump to latest message ".to_owned(),
        };
        self.theme
            .fg(ThemeColor::Text)
            .with_bg(self.theme.bg_color(ThemeBg::SelectedBg))
            .paint(&text)
    }

    /// Whether a list, picker or dialog has the keys (then the page keys are theirs, as
    /// in pi 1.6).
    fn viewport_input_deferred(&self) -> bool {
        self.overlay.is_some()
            || !matches!(
                self.ext.key_target(),
                crate::modes::interactive::extension_ui::KeyTarget::App
            )
            || self.editor.is_showing_autocomplete()
    }

    /// The transcript's keys in fullscreen; true when `input` was one of them.
    pub(super) fn on_viewport_key(&mut self, input: &Input) -> bool {
        if self.fullscreen.is_none() || self.viewport_input_deferred() {
            return false;
        }
        let keys = std::sync::Arc::clone(&self.keys);
        let Some(screen) = self.fullscreen.as_mut() else {
            return false;
        };
        let height = screen.viewport.height();
        let half = (height / 2).max(1) as isize;
        if keys.matches(input, "tui.altScreen.pageUp") {
            if screen.viewport.page(-1) {
                screen.moved();
            }
        } else if keys.matches(input, "tui.altScreen.pageDown") {
            if screen.viewport.page(1) {
                screen.moved();
            }
        } else if keys.matches(input, "tui.altScreen.halfPageUp") {
            screen.scroll_by(-half);
        } else if keys.matches(input, "tui.altScreen.halfPageDown") {
            screen.scroll_by(half);
        } else if keys.matches(input, "tui.altScreen.lineUp") {
            screen.scroll_by(-1);
        } else if keys.matches(input, "tui.altScreen.lineDown") {
            screen.scroll_by(1);
        } else if keys.matches(input, "tui.altScreen.top") {
            if screen.viewport.to_start() {
                screen.moved();
            }
        } else if keys.matches(input, "tui.altScreen.bottom") {
            if screen.viewport.to_end() {
                screen.moved();
            }
        } else {
            return false;
        }
        true
    }

    /// A mouse report: the wheel scrolls the transcript (or moves an open list), a click
    /// on the jump label returns to the latest message.
    pub(super) async fn on_mouse(&mut self, mouse: MouseEvent) {
        if self.fullscreen.is_none() || self.on_scrollbar_mouse(&mouse) {
            return;
        }
        let direction: i8 = match mouse.kind {
            MouseEventKind::ScrollUp => -1,
            MouseEventKind::ScrollDown => 1,
            MouseEventKind::Down(MouseButton::Left) => {
                let point = (usize::from(mouse.row), usize::from(mouse.column));
                if self.on_search_press(point.0, point.1) {
                    return;
                }
                if let Some(screen) = self.fullscreen.as_mut() {
                    screen.press_at = Some(point);
                }
                self.press(point.0, point.1);
                return;
            }
            MouseEventKind::Drag(MouseButton::Left) => {
                let point = (usize::from(mouse.row), usize::from(mouse.column));
                if let Some(screen) = self.fullscreen.as_mut()
                    && screen.press_at != Some(point)
                {
                    screen.press_at = None;
                }
                self.drag(point.0, point.1);
                return;
            }
            MouseEventKind::Up(MouseButton::Left) => {
                let point = (usize::from(mouse.row), usize::from(mouse.column));
                let clicked = self
                    .fullscreen
                    .as_mut()
                    .and_then(|s| s.press_at.take())
                    .is_some_and(|at| at == point);
                self.release();
                if clicked {
                    self.click(point.0, point.1).await;
                }
                return;
            }
            _ => return,
        };
        // Over a list in the dock the notch moves its selection; anywhere else it
        // scrolls the transcript (pi 1.6 gives the wheel to the component under it).
        if self
            .wheel_over_list(usize::from(mouse.row), direction)
            .await
        {
            return;
        }
        let alt = mouse.modifiers.contains(KeyModifiers::ALT);
        if let Some(screen) = self.fullscreen.as_mut() {
            let rows = screen.wheel_step(direction, alt) as isize;
            screen.scroll_by(rows * isize::from(direction));
        }
    }

    /// The scrollbar's share of a mouse report: a drag going on takes every report, a left
    /// press on the bar grabs it, and the pointer over it reveals it. True when the report
    /// was the bar's.
    fn on_scrollbar_mouse(&mut self, mouse: &MouseEvent) -> bool {
        let width = self.width();
        // pi 1.6's overlays float over the transcript (extension overlays, not the menus
        // that take the editor's place).
        let overlay = self.ext.has_overlays();
        let Some(screen) = self.fullscreen.as_mut() else {
            return false;
        };
        if overlay {
            screen.scrollbar.leave();
            return false;
        }
        let (row, column) = (usize::from(mouse.row), usize::from(mouse.column));
        let release = matches!(mouse.kind, MouseEventKind::Up(_));
        let scroll = matches!(
            mouse.kind,
            MouseEventKind::ScrollUp | MouseEventKind::ScrollDown
        );
        let on_jump_label = screen
            .jump_label
            .is_some_and(|(label_row, start, label_width)| {
                row == label_row && column >= start && column < start + label_width
            });
        let handled = if scroll {
            false
        } else if screen.scrollbar.drag(&mut screen.viewport, row, release) {
            true
        } else if mouse.kind == MouseEventKind::Down(MouseButton::Left)
            && !on_jump_label
            && screen
                .scrollbar
                .press(&mut screen.viewport, row, column, width)
        {
            screen.selection.clear();
            true
        } else {
            false
        };
        screen
            .scrollbar
            .track_pointer(&screen.viewport, row, column, width);
        handled
    }

    /// The window lost focus: the pointer's hover and drag end, and a selection still
    /// being dragged is dropped (its button-up will never come), as in pi 1.6.
    pub(super) fn on_focus_lost(&mut self) {
        if let Some(screen) = self.fullscreen.as_mut() {
            screen.scrollbar.leave();
            if screen.selection.dragging {
                screen.selection.clear();
            }
        }
    }

    /// A left press: on the jump label it returns to the latest message; on the
    /// transcript it starts a selection (a word on a double click, a row on a triple).
    fn press(&mut self, row: usize, column: usize) {
        let width = self.width();
        let Some(screen) = self.fullscreen.as_mut() else {
            return;
        };
        if let Some((label_row, start, width)) = screen.jump_label
            && row == label_row
            && column >= start
            && column < start + width
        {
            if screen.viewport.to_end() {
                screen.moved();
            }
            return;
        }
        if row >= screen.viewport.height() {
            screen.selection.clear();
            return;
        }
        let point = (screen.viewport.top() + row, column);
        let rows = self.chat.rows(screen.transcript_width(width));
        let line = rows.get(point.0).unwrap_or_default();
        screen.selection.press(point, line, Instant::now());
    }

    fn drag(&mut self, row: usize, column: usize) {
        let width = self.width();
        let Some(screen) = self.fullscreen.as_mut() else {
            return;
        };
        let row = row.min(screen.viewport.height().saturating_sub(1));
        let point = (screen.viewport.top() + row, column);
        let rows = self.chat.rows(screen.transcript_width(width));
        let line = rows.get(point.0).unwrap_or_default();
        screen.selection.drag(point, line);
    }

    fn release(&mut self) {
        let Some(screen) = self.fullscreen.as_mut() else {
            return;
        };
        let was_dragging = screen.selection.dragging;
        screen.selection.release();
        if was_dragging && screen.copy_on_select && screen.selection.is_active() {
            self.copy_selection();
        }
    }

    /// Copies the selection (the system clipboard and OSC 52) and flashes `Copied!`;
    /// false when nothing is selected.
    pub(super) fn copy_selection(&mut self) -> bool {
        let width = self.width();
        let Some(screen) = self.fullscreen.as_ref() else {
            return false;
        };
        let Some((first, last)) = screen.selection.row_range() else {
            return false;
        };
        let rows = self
            .chat
            .rows(screen.transcript_width(width))
            .slice(first, last + 1);
        let Some(text) = screen.selection.text(&rows, first) else {
            return false;
        };
        self.copy_text_with_flash(&text);
        true
    }

    /// Copies `text` and says so with a flash at the top right (fullscreen's way).
    pub(super) fn copy_text_with_flash(&mut self, text: &str) {
        use crate::modes::interactive::clipboard;
        clipboard::copy_with_program(text);
        let terminal = self.renderer.terminal_mut();
        let _ = pi_tui::terminal::Terminal::write(terminal, &clipboard::osc52(text));
        let _ = pi_tui::terminal::Terminal::flush(terminal);
        if let Some(screen) = self.fullscreen.as_mut() {
            screen
                .flashes
                .push(("Copied!".to_owned(), Instant::now() + FLASH));
        }
    }
}

impl App {
    /// After fullscreen: the whole session as regular mode lays it out, on the main screen
    /// (`fullscreenExitOutput: "transcript"`).
    pub(super) fn print_document(&mut self) {
        self.overlay = None;
        let (width, _) = pi_tui::terminal::Terminal::size(self.renderer.terminal());
        let width = width.max(1);
        let mut lines = self.chat.render(width);
        lines.extend(self.dock_lines(width));
        let mut inline =
            pi_tui::renderer::Renderer::new(pi_tui::terminal::CrosstermTerminal::new());
        let _ = inline.render(lines);
        let _ = inline.stop();
    }

    /// `To resume this session:` and the command, when the session is saved on disk (pi
    /// 1.6 prints it on every quit but a signal's).
    pub(super) fn print_resume_hint(&self) {
        use std::io::{IsTerminal as _, Write as _};
        let mut stdout = std::io::stdout();
        if !stdout.is_terminal() {
            return;
        }
        let Some(file) = self.session.session_file().filter(|f| f.exists()) else {
            return;
        };
        let mut command = vec!["pi".to_owned()];
        let default_dir =
            crate::session::manager::default_session_dir(&self.agent_dir, self.session.cwd());
        if let Some(dir) = file.parent()
            && dir != default_dir
        {
            command.push("--session-dir".into());
            command.push(quote_if_needed(&dir.to_string_lossy()));
        }
        command.push("--session".into());
        command.push(self.session.session_id());
        let _ = write!(
            stdout,
            "\x1b[2mTo resume this session:\x1b[22m\n{}\n",
            command.join(" ")
        );
        let _ = stdout.flush();
    }
}

/// A shell word as pi quotes it: plain when safe, else in single quotes.
fn quote_if_needed(value: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-./~:@".contains(c);
    if !value.is_empty() && value.chars().all(safe) {
        value.to_owned()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_tui::image::{KittyImage, KittyOptions, encode_kitty, register_kitty_image};

    fn image_line(id: u32) -> String {
        register_kitty_image(
            id,
            KittyImage {
                columns: 4,
                rows: 4,
                dimensions: pi_tui::image::ImageDimensions {
                    width_px: 36,
                    height_px: 72,
                },
            },
        );
        encode_kitty(
            "QUJD",
            KittyOptions {
                columns: Some(4),
                rows: Some(4),
                image_id: Some(id),
                keep_cursor: true,
            },
        )
    }

    /// An image the dock would overlap is cut at the viewport's bottom edge; one whose top
    /// scrolled above it is drawn, cropped, from the viewport's first row.
    #[test]
    fn images_are_cropped_at_both_viewport_edges() {
        let image = image_line(9101);
        let settled: Vec<String> = ["a", &image, "", "", "", "b"]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        let rows = ChatRows {
            settled: &settled,
            live: Vec::new(),
        };
        let mut frame = rows.slice(0, 3);
        crop_images(&mut frame, &rows, 0);
        assert!(frame[1].contains("y=0,h=36,r=2;"), "{:?}", frame[1]);

        let mut frame = rows.slice(3, 6);
        crop_images(&mut frame, &rows, 3);
        assert!(frame[0].contains("y=36,h=36,r=2;"), "{:?}", frame[0]);
        assert_eq!(frame[2], "b");
    }
}
