//! The active theme's colours as CSS for the page, as pi 1.6.0's export writes them: every
//! theme colour as `--<key>`, the `export` section's backgrounds (or ones derived from
//! `userMessageBg`) as `--exportPageBg`, `--exportCardBg`, `--exportInfoBg`, and the page's
//! own variables mapped onto them.

use pi_tui::style::Color;

use crate::modes::interactive::theme::{Theme, color_rgb};

/// An `rgb(r, g, b)` or `#rrggbb` colour's channels.
fn parse_rgb(color: &str) -> Option<(f64, f64, f64)> {
    if let Some(hex) = color.strip_prefix('#')
        && hex.len() == 6
    {
        let channel = |i: usize| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok();
        return Some((
            f64::from(channel(0)?),
            f64::from(channel(2)?),
            f64::from(channel(4)?),
        ));
    }
    let inner = color.strip_prefix("rgb(")?.strip_suffix(')')?;
    let parts: Vec<f64> = inner
        .split(',')
        .map(|p| p.trim().parse::<f64>().ok())
        .collect::<Option<_>>()?;
    match parts.as_slice() {
        [r, g, b] => Some((*r, *g, *b)),
        _ => None,
    }
}

/// Relative luminance (0 dark – 1 light).
fn luminance((r, g, b): (f64, f64, f64)) -> f64 {
    let linear = |c: f64| {
        let s = c / 255.0;
        if s <= 0.03928 {
            s / 12.92
        } else {
            ((s + 0.055) / 1.055).powf(2.4)
        }
    };
    0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b)
}

/// `color` with each channel scaled by `factor`, as `rgb(r, g, b)`.
fn scaled(color: &str, factor: f64) -> String {
    match parse_rgb(color) {
        Some((r, g, b)) => {
            let c = |v: f64| (v * factor).round().clamp(0.0, 255.0);
            format!("rgb({}, {}, {})", c(r), c(g), c(b))
        }
        None => color.to_owned(),
    }
}

/// Page, card and info backgrounds derived from the user message background.
fn derived(base: &str) -> [String; 3] {
    let Some((r, g, b)) = parse_rgb(base) else {
        return [
            "rgb(24, 24, 30)".into(),
            "rgb(30, 30, 36)".into(),
            "rgb(60, 55, 40)".into(),
        ];
    };
    if luminance((r, g, b)) > 0.5 {
        [
            scaled(base, 0.96),
            base.to_owned(),
            format!(
                "rgb({}, {}, {})",
                (r + 10.0).min(255.0),
                (g + 5.0).min(255.0),
                (b - 20.0).max(0.0)
            ),
        ]
    } else {
        [
            scaled(base, 0.7),
            scaled(base, 0.85),
            format!(
                "rgb({}, {}, {})",
                (r + 20.0).min(255.0),
                (g + 15.0).min(255.0),
                b
            ),
        ]
    }
}

/// A `<style>` block with the theme's colours, overriding the page's default palette.
pub(super) fn theme_style(theme: &Theme) -> String {
    let colors = theme.css_colors();
    let get = |key: &str| {
        colors
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.clone())
    };
    let user_bg = get("userMessageBg").unwrap_or_else(|| "#343541".to_owned());
    let [page, card, info] = derived(&user_bg);
    let export = theme.export_colors();
    let hex = |c: Option<Color>| {
        c.and_then(color_rgb)
            .map(|(r, g, b)| format!("#{r:02x}{g:02x}{b:02x}"))
    };
    let page = hex(export.page_bg).unwrap_or(page);
    let card = hex(export.card_bg).unwrap_or(card);
    let info = hex(export.info_bg).unwrap_or(info);
    let mut css = String::from("<style id=\"theme\">\n:root {\n");
    for (key, value) in &colors {
        css.push_str(&format!("  --{key}: {value};\n"));
    }
    css.push_str(&format!(
        "  --exportPageBg: {page};\n  --exportCardBg: {card};\n  --exportInfoBg: {info};\n"
    ));
    // The page's own palette, from the theme.
    let mapped = [
        ("bg", page.clone()),
        ("card", card),
        ("card-alt", info),
        ("code-bg", page),
        ("user", user_bg),
        ("warn", get("warning").unwrap_or_default()),
        ("summary", get("customMessageBg").unwrap_or_default()),
        ("thinking", get("thinkingText").unwrap_or_default()),
        ("ins", get("toolDiffAdded").unwrap_or_default()),
        ("del", get("toolDiffRemoved").unwrap_or_default()),
    ];
    for (key, value) in mapped {
        if !value.is_empty() {
            css.push_str(&format!("  --{key}: {value};\n"));
        }
    }
    css.push_str("}\n</style>\n");
    css
}
