//! Colors and text styles as ANSI SGR sequences.
//!
//! Each attribute is closed by its own reset code (39 fg, 49 bg, 22 bold/dim, …) so
//! styles nest: a foreground inside a background keeps the background.

use std::fmt::Write as _;

/// How many colors the terminal shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ColorMode {
    /// 24-bit color (`COLORTERM=truecolor|24bit`).
    #[default]
    TrueColor,
    /// The xterm 256-color palette.
    Ansi256,
}

impl ColorMode {
    /// 24-bit color where the terminal was detected to show it (`COLORTERM=truecolor`,
    /// known terminals, `PI_TRUE_COLOR`, `terminal.trueColor`), else the 256-color palette.
    pub fn detect() -> Self {
        if crate::capabilities::get().true_color {
            ColorMode::TrueColor
        } else {
            ColorMode::Ansi256
        }
    }
}

/// A color: the terminal default, a palette index or 24-bit RGB.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Color {
    /// The terminal's own default (no code emitted).
    Default,
    /// xterm palette index 0–255.
    Ansi256(u8),
    /// 24-bit color.
    Rgb(u8, u8, u8),
}

impl Color {
    /// Parse `#rrggbb`.
    pub fn from_hex(hex: &str) -> Option<Color> {
        let h = hex.strip_prefix('#')?;
        if !h.is_ascii() {
            return None;
        }
        if h.len() == 3 {
            // `#rgb` is `#rrggbb` with each digit doubled.
            let doubled: String = h.chars().flat_map(|c| [c, c]).collect();
            return Color::from_hex(&format!("#{doubled}"));
        }
        if h.len() != 6 {
            return None;
        }
        let p = |i: usize| u8::from_str_radix(&h[i..i + 2], 16).ok();
        Some(Color::Rgb(p(0)?, p(2)?, p(4)?))
    }

    fn sgr(self, mode: ColorMode, background: bool) -> Option<String> {
        let lead = if background { 48 } else { 38 };
        match self {
            Color::Default => None,
            Color::Ansi256(i) => Some(format!("\x1b[{lead};5;{i}m")),
            Color::Rgb(r, g, b) => match mode {
                ColorMode::TrueColor => Some(format!("\x1b[{lead};2;{r};{g};{b}m")),
                ColorMode::Ansi256 => Some(format!("\x1b[{lead};5;{}m", rgb_to_256(r, g, b))),
            },
        }
    }
}

/// Nearest xterm-256 index (6×6×6 cube or gray ramp) of an RGB color.
pub fn rgb_to_256(r: u8, g: u8, b: u8) -> u8 {
    const LEVELS: [u8; 6] = [0, 95, 135, 175, 215, 255];
    let nearest = |v: u8| {
        let mut best = 0;
        for (i, l) in LEVELS.iter().enumerate() {
            if (i32::from(*l) - i32::from(v)).abs() < (i32::from(LEVELS[best]) - i32::from(v)).abs()
            {
                best = i;
            }
        }
        best
    };
    let (ri, gi, bi) = (nearest(r), nearest(g), nearest(b));
    let cube = 16 + 36 * ri + 6 * gi + bi;
    let dist = |a: (u8, u8, u8)| {
        let d = |x: u8, y: u8| (i32::from(x) - i32::from(y)).pow(2);
        d(a.0, r) + d(a.1, g) + d(a.2, b)
    };
    let cube_rgb = (LEVELS[ri], LEVELS[gi], LEVELS[bi]);
    let avg = (u32::from(r) + u32::from(g) + u32::from(b)) / 3;
    let gray_idx = (avg.saturating_sub(8) / 10).min(23) as u8;
    let gray = 8 + 10 * gray_idx;
    if dist((gray, gray, gray)) < dist(cube_rgb) {
        232 + gray_idx
    } else {
        cube as u8
    }
}

/// A text style: colors and attributes, applied with [`Style::paint`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Style {
    pub fg: Option<Color>,
    pub bg: Option<Color>,
    pub bold: bool,
    pub dim: bool,
    pub italic: bool,
    pub underline: bool,
    pub strikethrough: bool,
    pub inverse: bool,
    /// Color depth used when painting RGB colors.
    pub mode: ColorMode,
}

impl Style {
    /// No styling at all.
    pub const fn plain() -> Self {
        Style {
            fg: None,
            bg: None,
            bold: false,
            dim: false,
            italic: false,
            underline: false,
            strikethrough: false,
            inverse: false,
            mode: ColorMode::TrueColor,
        }
    }

    /// A style with a foreground color.
    pub fn fg(color: Color) -> Self {
        Style {
            fg: Some(color),
            ..Style::plain()
        }
    }

    /// A style with a background color.
    pub fn bg(color: Color) -> Self {
        Style {
            bg: Some(color),
            ..Style::plain()
        }
    }

    pub fn with_fg(mut self, color: Color) -> Self {
        self.fg = Some(color);
        self
    }
    pub fn with_bg(mut self, color: Color) -> Self {
        self.bg = Some(color);
        self
    }
    pub fn bold(mut self) -> Self {
        self.bold = true;
        self
    }
    pub fn dim(mut self) -> Self {
        self.dim = true;
        self
    }
    pub fn italic(mut self) -> Self {
        self.italic = true;
        self
    }
    pub fn underline(mut self) -> Self {
        self.underline = true;
        self
    }
    pub fn strikethrough(mut self) -> Self {
        self.strikethrough = true;
        self
    }
    pub fn inverse(mut self) -> Self {
        self.inverse = true;
        self
    }
    pub fn with_mode(mut self, mode: ColorMode) -> Self {
        self.mode = mode;
        self
    }

    /// The opening SGR sequence of this style (empty when plain).
    pub fn prefix(&self) -> String {
        let mut out = String::new();
        if let Some(fg) = self.fg.and_then(|c| c.sgr(self.mode, false)) {
            out.push_str(&fg);
        }
        if let Some(bg) = self.bg.and_then(|c| c.sgr(self.mode, true)) {
            out.push_str(&bg);
        }
        for (on, code) in [
            (self.bold, 1),
            (self.dim, 2),
            (self.italic, 3),
            (self.underline, 4),
            (self.inverse, 7),
            (self.strikethrough, 9),
        ] {
            if on {
                let _ = write!(out, "\x1b[{code}m");
            }
        }
        out
    }

    /// The closing sequence: each attribute's own reset, so outer styles survive.
    pub fn suffix(&self) -> String {
        let mut out = String::new();
        for (on, code) in [
            (self.strikethrough, 29),
            (self.inverse, 27),
            (self.underline, 24),
            (self.italic, 23),
            (self.bold || self.dim, 22),
        ] {
            if on {
                let _ = write!(out, "\x1b[{code}m");
            }
        }
        if self.bg.is_some_and(|c| c != Color::Default) {
            out.push_str("\x1b[49m");
        }
        if self.fg.is_some_and(|c| c != Color::Default) {
            out.push_str("\x1b[39m");
        }
        out
    }

    /// `text` wrapped in this style.
    pub fn paint(&self, text: &str) -> String {
        let prefix = self.prefix();
        if prefix.is_empty() {
            return text.to_string();
        }
        format!("{prefix}{text}{}", self.suffix())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paints_and_resets_each_attribute() {
        let s = Style::fg(Color::Rgb(1, 2, 3)).bold();
        assert_eq!(s.paint("x"), "\x1b[38;2;1;2;3m\x1b[1mx\x1b[22m\x1b[39m");
        assert_eq!(Style::plain().paint("x"), "x");
        let s = Style::bg(Color::Ansi256(236)).with_mode(ColorMode::Ansi256);
        assert_eq!(s.paint("y"), "\x1b[48;5;236my\x1b[49m");
    }

    #[test]
    fn maps_rgb_to_the_256_palette() {
        assert_eq!(rgb_to_256(0, 0, 0), 16);
        assert_eq!(rgb_to_256(255, 255, 255), 231);
        assert_eq!(rgb_to_256(128, 128, 128), 244);
        assert_eq!(Color::from_hex("#ff0080"), Some(Color::Rgb(255, 0, 128)));
        assert_eq!(Color::from_hex("ff0080"), None);
    }
}
