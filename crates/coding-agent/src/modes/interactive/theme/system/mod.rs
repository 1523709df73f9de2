//! pi 1.6's `system` theme: the theme's colors derived from the terminal's own. Each token
//! belongs to a color family (its hue) and must reach a contrast level on the surfaces it is
//! drawn on; lightness comes from those rules, hue and saturation from the terminal's palette
//! (or the family's own hue). A terminal that reports no colors gets ANSI palette indices
//! and its default colors, which it renders in its own theme.

mod recipe;

use std::collections::HashMap;
use std::sync::RwLock;

use pi_tui::color_space::{
    Okhsl, Oklch, Rgb, okhsl_to_rgb, oklab_to_okhsl_lightness, oklch_to_rgb, rgb_to_okhsl,
    rgb_to_oklch,
};
use pi_tui::terminal_colors::TerminalColors;

use recipe::{FOREGROUND_TOKENS, Family, Level, NEUTRAL, PANELS, RULES, TOKENS};

/// The reserved theme name.
pub const SYSTEM_THEME_NAME: &str = "system";

/// Whether a terminal (or a theme) is dark or light.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appearance {
    Dark,
    Light,
}

/// One token's color in the generated theme.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SystemColor {
    /// The terminal's default color.
    Default,
    /// An ANSI palette index (0-15), drawn in the terminal's own palette.
    Index(u8),
    Rgb(Rgb),
}

/// The generated theme: a color per token (pi 1.6's token names), the foreground tokens
/// drawn faint, and the appearance it was made for.
#[derive(Debug, Clone, PartialEq)]
pub struct SystemTheme {
    pub colors: HashMap<&'static str, SystemColor>,
    pub dim: Vec<&'static str>,
    pub appearance: Option<Appearance>,
}

/// The colors this terminal reported (set once interactive mode asked it).
static TERMINAL: RwLock<Option<TerminalColors>> = RwLock::new(None);

/// Records the terminal's reported colors for the themes made from now on.
pub fn set_terminal_colors(colors: TerminalColors) {
    if let Ok(mut slot) = TERMINAL.write() {
        *slot = Some(colors);
    }
}

/// The appearance the terminal last reported with mode 2031 (`CSI ? 997 ; 1|2 n`).
static REPORTED: RwLock<Option<Appearance>> = RwLock::new(None);

/// Records the terminal's light/dark report, the fallback for terminals that do not
/// report their background.
pub fn set_reported_appearance(appearance: Option<Appearance>) {
    if let Ok(mut slot) = REPORTED.write() {
        *slot = appearance;
    }
}

/// The terminal's reported colors (none when it was not asked or said nothing).
pub fn terminal_colors() -> TerminalColors {
    TERMINAL
        .read()
        .ok()
        .and_then(|slot| slot.clone())
        .unwrap_or_default()
}

/// `COLORFGBG`'s background (its last field): 0-6 and 8 are dark, other palette colors
/// light, anything else says nothing (pi 1.6's rule).
pub fn colorfgbg_appearance(value: Option<&str>) -> Option<Appearance> {
    let bg = value?.split(';').next_back()?.trim();
    if bg.is_empty() || bg.len() > 2 || !bg.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    match bg.parse::<u8>().ok()? {
        0..=6 | 8 => Some(Appearance::Dark),
        9..=15 | 7 => Some(Appearance::Light),
        _ => None,
    }
}

/// Whether the terminal is dark or light: its reported background, else its mode 2031
/// report, else `COLORFGBG`, else dark (pi 1.6's `detectTerminalTheme`).
pub fn terminal_appearance_now() -> Appearance {
    let reported = REPORTED.read().ok().and_then(|slot| *slot);
    let colorfgbg = std::env::var("COLORFGBG").ok();
    detect_appearance(&terminal_colors(), reported, colorfgbg.as_deref())
}

/// [`terminal_appearance_now`] for given inputs.
pub fn detect_appearance(
    colors: &TerminalColors,
    reported: Option<Appearance>,
    colorfgbg: Option<&str>,
) -> Appearance {
    if let Some(background) = colors.background {
        return terminal_appearance(background, colors.foreground);
    }
    reported
        .or_else(|| colorfgbg_appearance(colorfgbg))
        .unwrap_or(Appearance::Dark)
}

/// The system theme for this terminal.
pub fn generate_for_terminal() -> SystemTheme {
    generate(&terminal_colors(), 1.0, Some(terminal_appearance_now()))
}

/// WCAG 2 contrast ratio that body text keeps on its surfaces.
const TEXT_MINIMUM_WCAG_CONTRAST: f64 = 4.5;

fn oklab_lightness(color: Rgb) -> f64 {
    rgb_to_oklch(color).l
}

/// WCAG 2 relative luminance.
pub fn relative_luminance(color: Rgb) -> f64 {
    let linear = |c: u8| {
        let v = f64::from(c) / 255.0;
        if v <= 0.04045 {
            v / 12.92
        } else {
            ((v + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(color.r) + 0.7152 * linear(color.g) + 0.0722 * linear(color.b)
}

/// WCAG 2 contrast ratio, 1-21.
pub fn wcag_contrast(a: Rgb, b: Rgb) -> f64 {
    let (x, y) = (relative_luminance(a), relative_luminance(b));
    (x.max(y) + 0.05) / (x.min(y) + 0.05)
}

const WHITE: Rgb = Rgb::new(255, 255, 255);
const BLACK: Rgb = Rgb::new(0, 0, 0);

/// Dark or light, from the terminal's colors: the direction of its own foreground when
/// text can be readable that way, else whichever of white or black text reads better.
pub fn terminal_appearance(background: Rgb, foreground: Option<Rgb>) -> Appearance {
    let white = wcag_contrast(WHITE, background);
    let black = wcag_contrast(BLACK, background);
    if let Some(foreground) = foreground {
        let (fl, bl) = (oklab_lightness(foreground), oklab_lightness(background));
        if (fl - bl).abs() > 0.05 {
            let (appearance, best) = if fl > bl {
                (Appearance::Dark, white)
            } else {
                (Appearance::Light, black)
            };
            if best >= TEXT_MINIMUM_WCAG_CONTRAST {
                return appearance;
            }
        }
    }
    if white >= black {
        Appearance::Dark
    } else {
        Appearance::Light
    }
}

/// Saturation weight at an OKHSL lightness: a Gaussian (center 0.5, sigma 0.25), 0 at
/// black and white, 1 in the middle.
fn bell_weight(lightness: f64) -> f64 {
    let gaussian = |x: f64| (-((x - 0.5).powi(2)) / (2.0 * 0.25f64.powi(2))).exp();
    (gaussian(lightness) - gaussian(0.0)) / (1.0 - gaussian(0.0))
}

/// A family's saturation relative to its maximum at a lightness.
fn saturation_curve(family: Family, lightness: f64) -> f64 {
    let floor = if family.max > 0.0 {
        family.min / family.max
    } else {
        1.0
    };
    floor + (1.0 - floor) * bell_weight(lightness)
}

/// The target lightness for a level on a surface, or `None` where it cannot be reached.
fn level_target(level: Level, appearance: Appearance, surface_l: f64) -> Option<f64> {
    let (dark, light) = level.curves();
    let curve = match appearance {
        Appearance::Dark => dark,
        Appearance::Light => light,
    };
    if surface_l < curve.reachable.0 || surface_l > curve.reachable.1 {
        return None;
    }
    Some(
        curve
            .coefficients
            .iter()
            .enumerate()
            .map(|(power, c)| c * surface_l.powi(power as i32))
            .sum(),
    )
}

/// A terminal color's OKHSL channels and its OKLCH chroma.
#[derive(Debug, Clone, Copy)]
struct Source {
    hsl: Okhsl,
    chroma: f64,
}

fn source_of(color: Rgb) -> Source {
    Source {
        hsl: rgb_to_okhsl(color),
        chroma: rgb_to_oklch(color).c,
    }
}

/// A source color's hue at another lightness: its saturation applies at its own lightness
/// and falls off toward black and white along the family's curve; chroma never rises above
/// the source's (pastel palettes stay pastel).
fn anchored(source: Source, family: Family, lightness: f64, saturation: f64) -> Rgb {
    let anchor = saturation_curve(family, source.hsl.l);
    let falloff = if anchor > 0.0 {
        (saturation_curve(family, lightness) / anchor).min(1.0)
    } else {
        1.0
    };
    let color = okhsl_to_rgb(Okhsl {
        h: source.hsl.h,
        s: source.hsl.s * falloff * saturation,
        l: lightness,
    });
    let cap = source.chroma * falloff * saturation;
    let lch = rgb_to_oklch(color);
    if lch.c <= cap {
        color
    } else {
        oklch_to_rgb(Oklch {
            l: lch.l,
            c: cap,
            h: source.hsl.h,
        })
    }
}

/// Moves a text color toward white or black until it reaches the WCAG minimum on every
/// surface.
fn with_text_contrast(color: Rgb, surfaces: &[Rgb], lighter: bool) -> Rgb {
    let meets = |c: Rgb| {
        surfaces
            .iter()
            .all(|s| wcag_contrast(c, *s) >= TEXT_MINIMUM_WCAG_CONTRAST)
    };
    if meets(color) {
        return color;
    }
    let Okhsl { h, s, l } = rgb_to_okhsl(color);
    let at = |lightness: f64| okhsl_to_rgb(Okhsl { h, s, l: lightness });
    let extreme = if lighter { 1.0 } else { 0.0 };
    if !meets(at(extreme)) {
        return at(extreme);
    }
    let (mut low, mut high) = (l, extreme);
    for _ in 0..20 {
        let middle = (low + high) / 2.0;
        if meets(at(middle)) {
            high = middle;
        } else {
            low = middle;
        }
    }
    at(high)
}

/// Tokens in dependency order: every surface before the tokens drawn on it.
fn solve_order() -> Vec<&'static str> {
    fn visit(token: &'static str, order: &mut Vec<&'static str>) {
        if order.contains(&token) {
            return;
        }
        for rule in RULES.iter().filter(|r| r.token == token) {
            for surface in rule.on {
                if *surface != "background" {
                    visit(surface, order);
                }
            }
        }
        order.push(token);
    }
    let mut order = Vec::new();
    for rule in RULES {
        visit(rule.token, &mut order);
    }
    order
}

/// The system theme for what the terminal reported. `saturation` (0-1) scales every hue;
/// `hint` is the appearance to assume when it reported no background.
pub fn generate(
    terminal: &TerminalColors,
    saturation: f64,
    hint: Option<Appearance>,
) -> SystemTheme {
    let saturation = saturation.clamp(0.0, 1.0);
    let Some(background) = terminal.background else {
        return indexed(saturation, hint);
    };
    let palette: Option<Vec<Source>> = terminal
        .palette
        .as_ref()
        .filter(|p| p.len() == 16)
        .map(|p| p.iter().copied().map(source_of).collect());
    let foreground = terminal.foreground;
    let appearance = terminal_appearance(background, foreground);
    let solver = Solver {
        appearance,
        lighter: appearance == Appearance::Dark,
        background,
        background_l: oklab_lightness(background),
        palette,
        saturation,
    };
    let (solved, relaxation) = solver.solve_relaxed();
    let mut colors: HashMap<&'static str, SystemColor> = TOKENS
        .iter()
        .map(|(token, _)| {
            let color = solved
                .get(token)
                .map_or(SystemColor::Default, |c| SystemColor::Rgb(*c));
            (*token, color)
        })
        .collect();
    let surfaces_of = |token: &str| -> Vec<Rgb> {
        RULES
            .iter()
            .filter(|r| r.token == token)
            .flat_map(|r| r.on.iter())
            .map(|s| solved.get(s).copied().unwrap_or(background))
            .collect()
    };
    for token in FOREGROUND_TOKENS {
        let surfaces = surfaces_of(token);
        let mut text = solved.get(token).copied();
        if let Some(foreground) = foreground {
            let targets: Vec<Option<f64>> = surfaces
                .iter()
                .map(|s| solver.target(Level::Emphasis, oklab_lightness(*s), relaxation))
                .collect();
            if targets
                .iter()
                .all(|t| t.is_some_and(|v| (0.0..=1.0).contains(&v)))
            {
                let values = targets.iter().flatten().copied();
                let needed = if solver.lighter {
                    values.fold(f64::MIN, f64::max)
                } else {
                    values.fold(f64::MAX, f64::min)
                };
                let foreground_l = oklab_lightness(foreground);
                let enough = if solver.lighter {
                    foreground_l >= needed
                } else {
                    foreground_l <= needed
                };
                if enough {
                    colors.insert(token, SystemColor::Default);
                    continue;
                }
                text = Some(anchored(
                    source_of(foreground),
                    NEUTRAL,
                    oklab_to_okhsl_lightness(needed),
                    saturation,
                ));
            }
        }
        if let Some(text) = text {
            colors.insert(
                token,
                SystemColor::Rgb(with_text_contrast(text, &surfaces, solver.lighter)),
            );
        }
    }
    SystemTheme {
        colors,
        dim: Vec::new(),
        appearance: Some(appearance),
    }
}

/// Colors for a terminal that reported nothing: palette indices 0-15 and its default colors.
/// Neutral tokens below body text are faint (SGR 2); panels have no background.
fn indexed(saturation: f64, appearance: Option<Appearance>) -> SystemTheme {
    let mut colors = HashMap::new();
    let mut dim = Vec::new();
    for (token, family) in TOKENS {
        if PANELS.contains(token) {
            colors.insert(*token, SystemColor::Default);
            continue;
        }
        let color = if !family.neutral && saturation > 0.0 {
            SystemColor::Index(recipe::slot_of(token))
        } else {
            SystemColor::Default
        };
        colors.insert(*token, color);
        if family.neutral && !FOREGROUND_TOKENS.contains(token) {
            dim.push(*token);
        }
    }
    SystemTheme {
        colors,
        dim,
        appearance,
    }
}

/// The contrast solver for one terminal background.
struct Solver {
    appearance: Appearance,
    lighter: bool,
    background: Rgb,
    background_l: f64,
    palette: Option<Vec<Source>>,
    saturation: f64,
}

impl Solver {
    /// A token's color at an OKLab lightness.
    fn paint(&self, token: &str, oklab_l: f64) -> Rgb {
        let lightness = oklab_to_okhsl_lightness(oklab_l);
        let family = recipe::family_of(token);
        match &self.palette {
            None => okhsl_to_rgb(Okhsl {
                h: family.hue,
                s: (family.min + (family.max - family.min) * bell_weight(lightness))
                    * self.saturation,
                l: lightness,
            }),
            Some(palette) => anchored(
                palette[usize::from(recipe::slot_of(token))],
                family,
                lightness,
                self.saturation,
            ),
        }
    }

    /// The lightness a level needs on a surface, relaxed by `t`: from 0 to 1 levels
    /// stronger than the readable floor move toward it; from 1 to 2 all move toward the
    /// surface.
    fn target(&self, level: Level, surface_l: f64, t: f64) -> Option<f64> {
        let reached = level_target(level, self.appearance, surface_l);
        if reached.is_none() && t == 0.0 {
            return None;
        }
        let extreme = if self.lighter { 1.0 } else { 0.0 };
        let floor_level = match self.appearance {
            Appearance::Dark => Level::Readable,
            Appearance::Light => Level::Subtle,
        };
        let distance = reached.unwrap_or(extreme) - surface_l;
        let floor =
            level_target(floor_level, self.appearance, surface_l).unwrap_or(extreme) - surface_l;
        let compressed = if distance.abs() > floor.abs() {
            distance - (distance - floor) * t.min(1.0)
        } else {
            distance
        };
        Some(surface_l + compressed * (1.0 - (t - 1.0).max(0.0)))
    }

    /// A panel's color, kept where white (or black) text still reads on it.
    fn limit_panel(&self, token: &str, l: f64) -> Rgb {
        let extreme_text = if self.lighter { WHITE } else { BLACK };
        let readable = |c: Rgb| wcag_contrast(extreme_text, c) >= TEXT_MINIMUM_WCAG_CONTRAST;
        let color = self.paint(token, l);
        if readable(color) {
            return color;
        }
        let (mut low, mut high) = (self.background_l, l);
        for _ in 0..20 {
            let middle = (low + high) / 2.0;
            if readable(self.paint(token, middle)) {
                low = middle;
            } else {
                high = middle;
            }
        }
        self.paint(token, low)
    }

    fn solve(&self, t: f64) -> Option<HashMap<&'static str, Rgb>> {
        let mut colors: HashMap<&'static str, Rgb> = HashMap::new();
        colors.insert("background", self.background);
        for token in solve_order() {
            let mut targets = Vec::new();
            for rule in RULES.iter().filter(|r| r.token == token) {
                for surface in rule.on {
                    let surface_color = colors.get(surface).copied().unwrap_or(self.background);
                    let value = self.target(rule.level, oklab_lightness(surface_color), t)?;
                    if !(0.0..=1.0).contains(&value) {
                        return None;
                    }
                    targets.push(value);
                }
            }
            let l = if self.lighter {
                targets.iter().copied().fold(f64::MIN, f64::max)
            } else {
                targets.iter().copied().fold(f64::MAX, f64::min)
            };
            let color = if PANELS.contains(&token) {
                self.limit_panel(token, l)
            } else {
                self.paint(token, l)
            };
            colors.insert(token, color);
        }
        Some(colors)
    }

    /// Solves strictly, or (mid-gray backgrounds) relaxed as little as possible.
    fn solve_relaxed(&self) -> (HashMap<&'static str, Rgb>, f64) {
        if let Some(colors) = self.solve(0.0) {
            return (colors, 0.0);
        }
        let (mut low, mut high) = (0.0, 2.0);
        let mut colors = self.solve(high);
        for _ in 0..20 {
            let middle = (low + high) / 2.0;
            match self.solve(middle) {
                Some(attempt) => {
                    high = middle;
                    colors = Some(attempt);
                }
                None => low = middle,
            }
        }
        (colors.unwrap_or_default(), high)
    }
}

#[cfg(test)]
mod tests;
