//! Themes: the dark and light built-ins and user theme files in the TypeScript pi format.
//!
//! A theme file names every color key of [`ThemeColor`] and [`ThemeBg`]; values are
//! `#rrggbb`, a `vars` name (resolved recursively), a 256-color index or `""` (terminal default).

mod loader;
mod schema;
pub mod system;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use pi_tui::style::{Color, ColorMode, Style};

pub use loader::{
    ThemeSources, available_themes, default_theme_name, load_theme, load_theme_from_path,
    load_theme_with_mode, non_interactive_theme, parse_auto_theme, terminal_theme_name,
    theme_name_for_background,
};
pub use schema::{
    ColorValue, ExportColorsJson, REQUIRED_COLOR_KEYS, ThemeBg, ThemeColor, ThemeColors, ThemeJson,
    UnknownKey,
};

/// The built-in dark theme file.
pub const DARK_JSON: &str = include_str!("dark.json");
/// The built-in light theme file.
pub const LIGHT_JSON: &str = include_str!("light.json");

/// Why a theme could not be loaded; every message names the file (or built-in).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ThemeError {
    /// The file could not be read.
    #[error("theme {label}: cannot read: {message}")]
    Read { label: String, message: String },
    /// The file is not JSON of the theme shape.
    #[error("theme {label}: invalid theme file: {message}")]
    Json { label: String, message: String },
    /// `colors` lacks required keys.
    #[error("theme {label}: missing color keys: {}", keys.join(", "))]
    MissingColors { label: String, keys: Vec<String> },
    /// A value starting with `#` is not `#rrggbb`.
    #[error("theme {label}: {key}: invalid hex color {value:?} (expected #rrggbb)")]
    BadHex {
        label: String,
        key: String,
        value: String,
    },
    /// An `oklch(…)`/`okhsl(…)` value that does not parse or is out of range.
    #[error(
        "theme {label}: {key}: invalid color {value:?} (expected oklch(L C H) or okhsl(H S L))"
    )]
    BadColor {
        label: String,
        key: String,
        value: String,
    },
    /// A value names a var that `vars` does not define.
    #[error("theme {label}: {key}: unknown variable {var:?}")]
    UnknownVar {
        label: String,
        key: String,
        var: String,
    },
    /// Vars refer to each other in a loop.
    #[error("theme {label}: {key}: variable cycle {}", chain.join(" -> "))]
    VarCycle {
        label: String,
        key: String,
        chain: Vec<String>,
    },
}

enum ResolveError {
    BadHex(String),
    BadColor(String),
    UnknownVar(String),
    Cycle(Vec<String>),
}

/// Resolve a color value through `vars` to a terminal color.
fn resolve_value(
    value: &ColorValue,
    vars: &BTreeMap<String, ColorValue>,
) -> Result<Color, ResolveError> {
    let mut seen: HashSet<&str> = HashSet::new();
    let mut chain: Vec<String> = Vec::new();
    let mut current = value;
    loop {
        match current {
            ColorValue::Default => return Ok(Color::Default),
            ColorValue::Index(i) => return Ok(Color::Ansi256(*i)),
            ColorValue::Hex(h) => {
                return Color::from_hex(h).ok_or_else(|| ResolveError::BadHex(h.clone()));
            }
            ColorValue::Function(f) => {
                return pi_tui::color_space::parse_color_function(f)
                    .map(|c| Color::Rgb(c.r, c.g, c.b))
                    .ok_or_else(|| ResolveError::BadColor(f.clone()));
            }
            ColorValue::Var(name) => {
                chain.push(name.clone());
                if !seen.insert(name.as_str()) {
                    return Err(ResolveError::Cycle(chain));
                }
                current = vars
                    .get(name)
                    .ok_or_else(|| ResolveError::UnknownVar(name.clone()))?;
            }
        }
    }
}

fn resolve_keyed(
    label: &str,
    key: String,
    value: &ColorValue,
    vars: &BTreeMap<String, ColorValue>,
) -> Result<Color, ThemeError> {
    resolve_value(value, vars).map_err(|e| {
        let label = label.to_string();
        match e {
            ResolveError::BadHex(value) => ThemeError::BadHex { label, key, value },
            ResolveError::BadColor(value) => ThemeError::BadColor { label, key, value },
            ResolveError::UnknownVar(var) => ThemeError::UnknownVar { label, key, var },
            ResolveError::Cycle(chain) => ThemeError::VarCycle { label, key, chain },
        }
    })
}

/// Parse a theme file's text; `label` (usually the path) prefixes every error.
pub fn parse_theme_json(label: &str, text: &str) -> Result<ThemeJson, ThemeError> {
    let json_err = |e: serde_json::Error| ThemeError::Json {
        label: label.to_string(),
        message: e.to_string(),
    };
    let value: serde_json::Value = serde_json::from_str(text).map_err(json_err)?;
    if let Some(colors) = value.get("colors").and_then(|c| c.as_object()) {
        let mut missing: Vec<String> = REQUIRED_COLOR_KEYS
            .iter()
            .filter(|k| !colors.contains_key(**k))
            .map(|k| (*k).to_string())
            .collect();
        if !missing.is_empty() {
            missing.sort();
            return Err(ThemeError::MissingColors {
                label: label.to_string(),
                keys: missing,
            });
        }
    }
    serde_json::from_value(value).map_err(json_err)
}

/// Resolved HTML export backgrounds (the theme file's optional `export` section).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ExportColors {
    /// Page background.
    pub page_bg: Option<Color>,
    /// Message card background.
    pub card_bg: Option<Color>,
    /// Info box background.
    pub info_bg: Option<Color>,
}

/// A loaded theme: every key resolved to a color, painted in one color mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Theme {
    name: String,
    source: Option<PathBuf>,
    mode: ColorMode,
    fg: Vec<Color>,
    bg: Vec<Color>,
    /// Foreground keys drawn faint (SGR 2) on top of their color (the system theme's
    /// neutrals when the terminal reported no colors).
    dim: Vec<bool>,
    /// The background the theme is made for, when it says (the system theme does).
    light: Option<bool>,
    export: ExportColors,
}

impl Theme {
    /// Resolve a parsed theme file; `label` names it in errors.
    pub fn from_json(
        json: &ThemeJson,
        label: &str,
        mode: ColorMode,
        source: Option<PathBuf>,
    ) -> Result<Theme, ThemeError> {
        let empty = BTreeMap::new();
        let vars = json.vars.as_ref().unwrap_or(&empty);
        let fg = ThemeColor::ALL
            .iter()
            .map(|k| {
                resolve_keyed(
                    label,
                    format!("colors.{}", k.key()),
                    json.colors.fg(*k),
                    vars,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let bg = ThemeBg::ALL
            .iter()
            .map(|k| {
                resolve_keyed(
                    label,
                    format!("colors.{}", k.key()),
                    json.colors.bg(*k),
                    vars,
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let section = json.export.clone().unwrap_or_default();
        let export_color = |key: &str, value: &Option<ColorValue>| {
            value
                .as_ref()
                .map(|v| resolve_keyed(label, format!("export.{key}"), v, vars))
                .transpose()
                .map(|c| c.filter(|c| *c != Color::Default))
        };
        let export = ExportColors {
            page_bg: export_color("pageBg", &section.page_bg)?,
            card_bg: export_color("cardBg", &section.card_bg)?,
            info_bg: export_color("infoBg", &section.info_bg)?,
        };
        Ok(Theme {
            name: json.name.clone(),
            source,
            mode,
            fg,
            bg,
            dim: vec![false; ThemeColor::ALL.len()],
            light: json.appearance.as_deref().map(|a| a == "light"),
            export,
        })
    }

    /// Parse and resolve a theme file's text.
    pub fn parse(label: &str, text: &str, mode: ColorMode) -> Result<Theme, ThemeError> {
        Theme::from_json(&parse_theme_json(label, text)?, label, mode, None)
    }

    /// A built-in theme (`system`, `dark` or `light`).
    pub fn builtin(name: &str, mode: ColorMode) -> Option<Theme> {
        let text = match name {
            system::SYSTEM_THEME_NAME => return Some(Theme::system(mode)),
            "dark" => DARK_JSON,
            "light" => LIGHT_JSON,
            _ => return None,
        };
        Theme::parse(&format!("<builtin {name}>"), text, mode).ok()
    }

    /// The built-in dark theme; a last-resort plain theme if it ever failed to parse.
    pub fn dark(mode: ColorMode) -> Theme {
        Theme::builtin("dark", mode).unwrap_or_else(|| Theme::plain(mode))
    }

    /// A theme with every color the terminal default.
    pub fn plain(mode: ColorMode) -> Theme {
        Theme {
            name: "plain".to_string(),
            source: None,
            mode,
            fg: vec![Color::Default; ThemeColor::ALL.len()],
            bg: vec![Color::Default; ThemeBg::ALL.len()],
            dim: vec![false; ThemeColor::ALL.len()],
            light: None,
            export: ExportColors::default(),
        }
    }

    /// pi 1.6's `system` theme, generated from the terminal's reported colors.
    pub fn system(mode: ColorMode) -> Theme {
        Theme::from_system(&system::generate_for_terminal(), mode)
    }

    /// A theme of generated system colors.
    pub fn from_system(generated: &system::SystemTheme, mode: ColorMode) -> Theme {
        let color = |key: &str, fallback: Option<&str>| match generated
            .colors
            .get(key)
            .or_else(|| fallback.and_then(|f| generated.colors.get(f)))
        {
            Some(system::SystemColor::Index(i)) => Color::Ansi256(*i),
            Some(system::SystemColor::Rgb(c)) => Color::Rgb(c.r, c.g, c.b),
            Some(system::SystemColor::Default) | None => Color::Default,
        };
        Theme {
            name: system::SYSTEM_THEME_NAME.to_string(),
            source: None,
            mode,
            fg: ThemeColor::ALL
                .iter()
                .map(|k| color(k.key(), k.fallback().map(ThemeColor::key)))
                .collect(),
            bg: ThemeBg::ALL
                .iter()
                .map(|k| color(k.key(), k.fallback().map(ThemeBg::key)))
                .collect(),
            dim: ThemeColor::ALL
                .iter()
                .map(|k| generated.dim.contains(&k.key()))
                .collect(),
            light: generated.appearance.map(|a| a == system::Appearance::Light),
            export: ExportColors::default(),
        }
    }

    /// The theme's `name`.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The file the theme came from (`None` for built-ins).
    pub fn source_path(&self) -> Option<&Path> {
        self.source.as_deref()
    }

    /// The color mode styles are painted in.
    pub fn mode(&self) -> ColorMode {
        self.mode
    }

    /// The same theme painted in another color mode.
    pub fn with_mode(mut self, mode: ColorMode) -> Theme {
        self.mode = mode;
        self
    }

    /// The resolved foreground color of a key.
    pub fn color(&self, key: ThemeColor) -> Color {
        self.fg.get(key as usize).copied().unwrap_or(Color::Default)
    }

    /// The resolved background color of a key.
    pub fn bg_color(&self, key: ThemeBg) -> Color {
        self.bg.get(key as usize).copied().unwrap_or(Color::Default)
    }

    /// A style with the key's foreground color (faint where the theme says so).
    pub fn fg(&self, key: ThemeColor) -> Style {
        let style = Style::fg(self.color(key)).with_mode(self.mode);
        if self.dim.get(key as usize).copied().unwrap_or(false) {
            style.dim()
        } else {
            style
        }
    }

    /// A style with the key's background color.
    pub fn bg(&self, key: ThemeBg) -> Style {
        Style::bg(self.bg_color(key)).with_mode(self.mode)
    }

    /// The editor border style for a thinking level.
    pub fn thinking_border(&self, level: pi_ai::ThinkingLevel) -> Style {
        self.fg(ThemeColor::thinking(level))
    }

    /// The theme as the extension host paints it for extensions (pi 1.6.0's `Theme`):
    /// every key's opening sequence in this theme's mode (`\e[39m` / `\e[49m` for the
    /// terminal default), the keys drawn faint, and the mode.
    pub fn host_spec(&self) -> serde_json::Value {
        let sgr = |style: Style, default: &str| {
            let prefix = style.with_mode(self.mode).prefix();
            if prefix.is_empty() {
                default.to_owned()
            } else {
                prefix
            }
        };
        let fg: serde_json::Map<String, serde_json::Value> = ThemeColor::ALL
            .iter()
            .map(|k| {
                (
                    k.key().to_owned(),
                    sgr(Style::fg(self.color(*k)), "\x1b[39m").into(),
                )
            })
            .collect();
        let bg: serde_json::Map<String, serde_json::Value> = ThemeBg::ALL
            .iter()
            .map(|k| {
                (
                    k.key().to_owned(),
                    sgr(Style::bg(self.bg_color(*k)), "\x1b[49m").into(),
                )
            })
            .collect();
        let dim: Vec<&str> = ThemeColor::ALL
            .iter()
            .filter(|k| self.dim.get(**k as usize).copied().unwrap_or(false))
            .map(|k| k.key())
            .collect();
        serde_json::json!({
            "name": self.name,
            "mode": match self.mode {
                ColorMode::TrueColor => "truecolor",
                ColorMode::Ansi256 => "256color",
            },
            "fg": fg,
            "bg": bg,
            "dim": dim,
        })
    }

    /// The export section's resolved colors.
    pub fn export_colors(&self) -> ExportColors {
        self.export
    }

    /// Whether the theme is meant for a light background.
    ///
    /// Judged by the luminance of the export page background, else the user message background.
    pub fn is_light(&self) -> bool {
        if let Some(light) = self.light {
            return light;
        }
        let probe = self
            .export
            .page_bg
            .unwrap_or_else(|| self.bg_color(ThemeBg::UserMessageBg));
        match color_rgb(probe) {
            Some((r, g, b)) => {
                let lum = 0.299 * f64::from(r) + 0.587 * f64::from(g) + 0.114 * f64::from(b);
                lum > 128.0
            }
            None => self.name == "light",
        }
    }

    /// Every key as a CSS hex color (`#rrggbb`), for the HTML export.
    ///
    /// Terminal-default colors become a readable text color for the theme's background.
    pub fn css_colors(&self) -> Vec<(&'static str, String)> {
        let default = if self.is_light() {
            "#000000"
        } else {
            "#e5e5e7"
        };
        let css = |c: Color| css_hex(c).unwrap_or_else(|| default.to_string());
        let fg = ThemeColor::ALL
            .iter()
            .map(|k| (k.key(), css(self.color(*k))));
        let bg = ThemeBg::ALL
            .iter()
            .map(|k| (k.key(), css(self.bg_color(*k))));
        fg.chain(bg).collect()
    }
}

/// The RGB value of a color (palette indices approximated); `None` for the terminal default.
pub fn color_rgb(color: Color) -> Option<(u8, u8, u8)> {
    match color {
        Color::Default => None,
        Color::Rgb(r, g, b) => Some((r, g, b)),
        Color::Ansi256(i) => Some(ansi256_rgb(i)),
    }
}

/// `#rrggbb` of a color; `None` for the terminal default.
pub fn css_hex(color: Color) -> Option<String> {
    color_rgb(color).map(|(r, g, b)| format!("#{r:02x}{g:02x}{b:02x}"))
}

/// Approximate RGB of an xterm-256 palette index.
pub fn ansi256_rgb(index: u8) -> (u8, u8, u8) {
    const BASIC: [(u8, u8, u8); 16] = [
        (0, 0, 0),
        (128, 0, 0),
        (0, 128, 0),
        (128, 128, 0),
        (0, 0, 128),
        (128, 0, 128),
        (0, 128, 128),
        (192, 192, 192),
        (128, 128, 128),
        (255, 0, 0),
        (0, 255, 0),
        (255, 255, 0),
        (0, 0, 255),
        (255, 0, 255),
        (0, 255, 255),
        (255, 255, 255),
    ];
    match index {
        0..=15 => BASIC[usize::from(index)],
        16..=231 => {
            let cube = index - 16;
            let level = |n: u8| if n == 0 { 0 } else { 55 + n * 40 };
            (level(cube / 36), level((cube % 36) / 6), level(cube % 6))
        }
        _ => {
            let gray = 8 + (index - 232) * 10;
            (gray, gray, gray)
        }
    }
}
