//! Clicks in fullscreen's dock (pi 1.6 routes a click — a press and release on one cell —
//! to the component under it): in the editor the cursor goes to the clicked character, in
//! `/settings` the clicked setting changes as Enter would change it.

use super::App;
use super::overlay::Overlay;

impl App {
    /// A left click at screen `row`, `column` that no selection or bar took.
    pub(super) async fn click(&mut self, row: usize, column: usize) {
        let Some((start, rows)) = self.fullscreen.as_ref().and_then(|f| f.slot_on_screen) else {
            return;
        };
        if row < start || row >= start + rows {
            return;
        }
        let editor_shown = self.overlay.is_none()
            && self.ext.editor.is_none()
            && self.ext.inline_custom().is_none()
            && !self.ext.has_dialog();
        if editor_shown {
            let width = self.width();
            self.editor.click(row - start, column, width);
        } else if let Some(Overlay::Settings(menu)) = self.overlay.as_mut() {
            let event = menu.click(row - start);
            self.on_settings_event(event);
        }
    }

    /// A wheel notch at screen `row`: over `/settings` its selection moves one row and
    /// stops at the ends; over the editor's suggestions they move as the arrow keys move
    /// them. True when the notch was taken.
    pub(super) async fn wheel_over_list(&mut self, row: usize, direction: i8) -> bool {
        let Some((start, rows)) = self.fullscreen.as_ref().and_then(|f| f.slot_on_screen) else {
            return false;
        };
        if row < start || row >= start + rows {
            return false;
        }
        if let Some(Overlay::Settings(menu)) = self.overlay.as_mut() {
            return menu.wheel(direction);
        }
        if self.overlay.is_none() && self.editor.is_showing_autocomplete() {
            let key = if direction < 0 {
                pi_tui::KeyCode::Up
            } else {
                pi_tui::KeyCode::Down
            };
            self.route_input(&pi_tui::input::Input::key(key)).await;
            return true;
        }
        false
    }
}
