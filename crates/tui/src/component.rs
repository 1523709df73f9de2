//! The component contract: state in, lines out.

use crate::input::Input;

/// Zero-width marker a focused component puts where the hardware cursor belongs;
/// the renderer strips it and moves the terminal cursor there (IME windows follow it).
pub const CURSOR_MARKER: &str = "\x1b_pi:c\x07";

/// Something that draws itself as lines of at most `width` visible columns.
///
/// Lines may hold ANSI SGR sequences; the renderer resets styles at each line end.
pub trait Component {
    /// Render to lines for a viewport `width` columns wide.
    fn render(&mut self, width: usize) -> Vec<String>;

    /// Handle input while focused; returns true when the input was consumed.
    fn handle_input(&mut self, _input: &Input) -> bool {
        false
    }

    /// Drop cached rendering (theme change, resize).
    fn invalidate(&mut self) {}
}
