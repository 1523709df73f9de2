//! The interactive UI's layout settings of pi 1.6 (`tuiMode` and the `fullscreen*` keys),
//! read as leniently as pi 1.6.0 reads them: an unknown value is the default.

use serde_json::Value;

use super::settings::Settings;

/// `tuiMode`: the fullscreen viewport (default) or the terminal's own scrollback.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TuiMode {
    Regular,
    Fullscreen,
}

impl TuiMode {
    /// Parses `--tui-mode`'s value, with pi 1.6.0's errors.
    pub fn parse_flag(value: Option<&str>) -> Result<Self, String> {
        match value {
            Some("regular") => Ok(Self::Regular),
            Some("fullscreen") => Ok(Self::Fullscreen),
            None => Err("--tui-mode requires regular or fullscreen".into()),
            Some(v) if v.starts_with('-') => {
                Err("--tui-mode requires regular or fullscreen".into())
            }
            Some(other) => Err(format!(
                "Invalid TUI mode \"{other}\". Valid values: regular, fullscreen"
            )),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Regular => "regular",
            Self::Fullscreen => "fullscreen",
        }
    }
}

/// `fullscreenExitOutput`: what is printed when fullscreen ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitOutput {
    /// The whole transcript, as regular mode would have left it.
    Transcript,
    /// Only how to resume the session.
    ResumeHint,
}

/// `fullscreenScrollbar`: when the transcript's scrollbar shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScrollbarMode {
    Auto,
    Always,
    Hidden,
}

/// `fullscreenWheelScrollLines`: a fixed step, or pi's accelerated `"auto"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WheelLines {
    Auto,
    Fixed(u16),
}

impl ExitOutput {
    /// The setting's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Transcript => "transcript",
            Self::ResumeHint => "resume-hint",
        }
    }
}

impl ScrollbarMode {
    /// The setting's value.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Auto => "auto",
            Self::Always => "always",
            Self::Hidden => "hidden",
        }
    }
}

impl std::fmt::Display for WheelLines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Auto => f.write_str("auto"),
            Self::Fixed(n) => write!(f, "{n}"),
        }
    }
}

fn text(value: Option<&Value>) -> Option<&str> {
    value.and_then(Value::as_str)
}

impl Settings {
    /// `tuiMode`: anything but `"regular"` is fullscreen.
    pub fn tui_mode(&self) -> TuiMode {
        match text(self.tui_mode.as_ref()) {
            Some("regular") => TuiMode::Regular,
            _ => TuiMode::Fullscreen,
        }
    }

    pub fn fullscreen_exit_output(&self) -> ExitOutput {
        match text(self.fullscreen_exit_output.as_ref()) {
            Some("resume-hint") => ExitOutput::ResumeHint,
            _ => ExitOutput::Transcript,
        }
    }

    pub fn fullscreen_scrollbar(&self) -> ScrollbarMode {
        match text(self.fullscreen_scrollbar.as_ref()) {
            Some("always") => ScrollbarMode::Always,
            Some("hidden") => ScrollbarMode::Hidden,
            _ => ScrollbarMode::Auto,
        }
    }

    /// `fullscreenCopyOnSelect` (default true).
    pub fn fullscreen_copy_on_select(&self) -> bool {
        self.fullscreen_copy_on_select
            .as_ref()
            .and_then(Value::as_bool)
            .unwrap_or(true)
    }

    /// `fullscreenWheelScrollLines`: a number is floored and kept within 1..=100.
    pub fn fullscreen_wheel_scroll_lines(&self) -> WheelLines {
        match self
            .fullscreen_wheel_scroll_lines
            .as_ref()
            .and_then(Value::as_f64)
        {
            Some(lines) if lines.is_finite() => {
                WheelLines::Fixed(lines.floor().clamp(1.0, 100.0) as u16)
            }
            _ => WheelLines::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings(json: Value) -> Settings {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn unknown_values_are_the_defaults() {
        let s = settings(
            serde_json::json!({"tuiMode": "tiny", "fullscreenScrollbar": 3,
            "fullscreenExitOutput": "all", "fullscreenCopyOnSelect": "no",
            "fullscreenWheelScrollLines": "fast"}),
        );
        assert_eq!(s.tui_mode(), TuiMode::Fullscreen);
        assert_eq!(s.fullscreen_scrollbar(), ScrollbarMode::Auto);
        assert_eq!(s.fullscreen_exit_output(), ExitOutput::Transcript);
        assert!(s.fullscreen_copy_on_select());
        assert_eq!(s.fullscreen_wheel_scroll_lines(), WheelLines::Auto);
    }

    #[test]
    fn known_values_are_read() {
        let s = settings(
            serde_json::json!({"tuiMode": "regular", "fullscreenScrollbar": "hidden",
            "fullscreenExitOutput": "resume-hint", "fullscreenCopyOnSelect": false,
            "fullscreenWheelScrollLines": 250.7}),
        );
        assert_eq!(s.tui_mode(), TuiMode::Regular);
        assert_eq!(s.fullscreen_scrollbar(), ScrollbarMode::Hidden);
        assert_eq!(s.fullscreen_exit_output(), ExitOutput::ResumeHint);
        assert!(!s.fullscreen_copy_on_select());
        assert_eq!(s.fullscreen_wheel_scroll_lines(), WheelLines::Fixed(100));
        assert_eq!(
            settings(serde_json::json!({"fullscreenWheelScrollLines": 0.5}))
                .fullscreen_wheel_scroll_lines(),
            WheelLines::Fixed(1)
        );
    }

    #[test]
    fn the_flag_is_checked_as_pi_checks_it() {
        assert_eq!(TuiMode::parse_flag(Some("regular")), Ok(TuiMode::Regular));
        assert_eq!(
            TuiMode::parse_flag(Some("bogus")).unwrap_err(),
            "Invalid TUI mode \"bogus\". Valid values: regular, fullscreen"
        );
        assert_eq!(
            TuiMode::parse_flag(Some("-p")).unwrap_err(),
            "--tui-mode requires regular or fullscreen"
        );
    }
}
