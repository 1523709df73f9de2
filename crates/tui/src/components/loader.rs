//! A spinner with a message.

use crate::component::Component;
use crate::components::text::Text;
use crate::style::Style;

/// The braille spinner frames pi uses.
pub const SPINNER_FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// How often the app calls [`Loader::tick`] (pi's default frame interval).
pub const TICK_MS: u64 = 80;

/// A spinner frame and a message, preceded by an empty line; the app calls
/// [`Loader::tick`] on its animation timer (every [`TICK_MS`]).
#[derive(Debug, Clone)]
pub struct Loader {
    frame: usize,
    message: String,
    spinner_style: Style,
    message_style: Style,
    text: Text,
    /// Custom frames (`setWorkingIndicator`), drawn verbatim; `None`: the braille spinner.
    frames: Option<Vec<String>>,
    /// Ticks per frame (a custom interval rounded to whole ticks).
    ticks_per_frame: u64,
    ticks: u64,
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
            frames: None,
            ticks_per_frame: 1,
            ticks: 0,
        };
        loader.update();
        loader
    }

    /// Advance the animation by one tick (one frame at the default interval).
    pub fn tick(&mut self) {
        let count = self.frames.as_ref().map_or(SPINNER_FRAMES.len(), Vec::len);
        if count <= 1 {
            return;
        }
        self.ticks += 1;
        if self.ticks.is_multiple_of(self.ticks_per_frame) {
            self.frame = (self.frame + 1) % count;
            self.update();
        }
    }

    /// Custom indicator frames, drawn as given (no spinner style; an empty list shows the
    /// message alone), changing every `interval_ms` (rounded to whole ticks); `None`
    /// restores the braille spinner.
    pub fn set_indicator(&mut self, frames: Option<Vec<String>>, interval_ms: Option<u64>) {
        self.frames = frames;
        let interval = interval_ms.filter(|ms| *ms > 0).unwrap_or(TICK_MS);
        self.ticks_per_frame = ((interval + TICK_MS / 2) / TICK_MS).max(1);
        self.ticks = 0;
        self.frame = 0;
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
    /// Whether the spinner frames are the caller's own (drawn as given, unstyled).
    pub fn has_custom_frames(&self) -> bool {
        self.frames.is_some()
    }

    pub fn frame(&self) -> &str {
        match &self.frames {
            Some(frames) => frames.get(self.frame).map_or("", String::as_str),
            None => SPINNER_FRAMES[self.frame % SPINNER_FRAMES.len()],
        }
    }

    fn update(&mut self) {
        let frame = self.frame();
        let indicator = match (&self.frames, frame.is_empty()) {
            (_, true) => String::new(),
            (Some(_), false) => format!("{frame} "),
            (None, false) => format!("{} ", self.spinner_style.paint(frame)),
        };
        let text = format!("{indicator}{}", self.message_style.paint(&self.message));
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

    #[test]
    fn custom_indicators_replace_the_spinner() {
        let mut l = Loader::new("Busy", Style::plain(), Style::plain());
        l.set_indicator(Some(vec!["a".into(), "b".into()]), Some(160));
        assert_eq!(l.render(8)[1], " a Busy ");
        l.tick();
        assert_eq!(l.frame(), "a");
        l.tick();
        assert_eq!(l.frame(), "b");
        l.set_indicator(Some(Vec::new()), None);
        assert_eq!(l.render(8)[1], " Busy   ");
        l.set_indicator(None, None);
        assert_eq!(l.frame(), "⠋");
    }
}
