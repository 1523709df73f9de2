//! A spinner with a message.

use crate::component::Component;
use crate::components::text::Text;
use crate::style::Style;

/// The braille spinner frames pi uses.
pub const SPINNER_FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// A spinner frame and a message, preceded by an empty line; the app calls
/// [`Loader::tick`] on its animation timer (pi uses 80 ms).
#[derive(Debug, Clone)]
pub struct Loader {
    frame: usize,
    message: String,
    spinner_style: Style,
    message_style: Style,
    text: Text,
}

impl Loader {
    /// A loader showing `message`, spinner and message painted with the given styles.
    pub fn new(message: impl Into<String>, spinner_style: Style, message_style: Style) -> Self {
        let mut loader = Loader {
            frame: 0,
            message: message.into(),
            spinner_style,
            message_style,
            text: Text::new("").with_padding(1, 0),
        };
        loader.update();
        loader
    }

    /// Advance the spinner by one frame.
    pub fn tick(&mut self) {
        self.frame = (self.frame + 1) % SPINNER_FRAMES.len();
        self.update();
    }

    /// Replace the message.
    pub fn set_message(&mut self, message: impl Into<String>) {
        self.message = message.into();
        self.update();
    }

    /// The message shown.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The spinner frame shown.
    pub fn frame(&self) -> &'static str {
        SPINNER_FRAMES[self.frame % SPINNER_FRAMES.len()]
    }

    fn update(&mut self) {
        let text = format!(
            "{} {}",
            self.spinner_style.paint(self.frame()),
            self.message_style.paint(&self.message)
        );
        self.text.set_text(text);
    }
}

impl Component for Loader {
    fn render(&mut self, width: usize) -> Vec<String> {
        let mut lines = vec![String::new()];
        lines.extend(self.text.render(width));
        lines
    }

    fn invalidate(&mut self) {
        self.text.invalidate();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spins_through_the_frames() {
        let mut l = Loader::new("Working...", Style::plain(), Style::plain());
        assert_eq!(l.render(16), vec!["", " ⠋ Working...   "]);
        l.tick();
        assert_eq!(l.frame(), "⠙");
        for _ in 0..9 {
            l.tick();
        }
        assert_eq!(l.frame(), "⠋");
        l.set_message("Done");
        assert_eq!(l.render(8)[1], " ⠋ Done ");
        assert_eq!(l.message(), "Done");
    }
}
