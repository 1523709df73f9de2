use super::*;

fn rgb(hex: &str) -> Rgb {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    Rgb::new((v >> 16) as u8, (v >> 8) as u8, v as u8)
}

#[test]
fn a_silent_terminal_gets_palette_indices_and_faint_neutrals() {
    let theme = generate(&TerminalColors::default(), 1.0, Some(Appearance::Dark));
    assert_eq!(theme.colors["accent"], SystemColor::Index(5));
    assert_eq!(theme.colors["syntaxString"], SystemColor::Index(2));
    assert_eq!(theme.colors["thinkingXhigh"], SystemColor::Index(13));
    assert_eq!(theme.colors["text"], SystemColor::Default);
    assert_eq!(theme.colors["userMessageBg"], SystemColor::Default);
    assert!(theme.dim.contains(&"muted") && !theme.dim.contains(&"border"));
    assert!(!theme.dim.contains(&"text") && !theme.dim.contains(&"toolTitle"));
    assert_eq!(theme.appearance, Some(Appearance::Dark));
    // Grayscale (colors pending): every hue is the default color.
    let gray = generate(&TerminalColors::default(), 0.0, None);
    assert_eq!(gray.colors["accent"], SystemColor::Default);
}

#[test]
fn appearance_follows_the_background_and_foreground() {
    assert_eq!(terminal_appearance(rgb("#1e1e2e"), None), Appearance::Dark);
    assert_eq!(terminal_appearance(rgb("#fdf6e3"), None), Appearance::Light);
    assert_eq!(
        terminal_appearance(rgb("#808080"), Some(rgb("#000000"))),
        Appearance::Light
    );
    assert_eq!(colorfgbg_appearance(Some("15;0")), Some(Appearance::Dark));
    assert_eq!(colorfgbg_appearance(Some("0;15")), Some(Appearance::Light));
    assert_eq!(colorfgbg_appearance(Some("0;x")), None);
}

#[test]
fn a_reported_background_gives_readable_colors() {
    for (bg, fg) in [
        ("#1e1e2e", "#cdd6f4"),
        ("#ffffff", "#000000"),
        ("#7f7f7f", "#ffffff"),
    ] {
        let colors = TerminalColors {
            foreground: Some(rgb(fg)),
            background: Some(rgb(bg)),
            palette: None,
        };
        let theme = generate(&colors, 1.0, None);
        let background = rgb(bg);
        for token in ["accent", "error", "success", "muted"] {
            let SystemColor::Rgb(color) = theme.colors[token] else {
                panic!("{token} on {bg}: {:?}", theme.colors[token]);
            };
            assert!(
                wcag_contrast(color, background) > 1.5,
                "{token} {color:?} on {bg}"
            );
        }
        assert!(theme.dim.is_empty());
    }
}

#[test]
fn the_background_decides_then_the_light_dark_report_then_colorfgbg() {
    let none = TerminalColors::default();
    let white = TerminalColors {
        background: Some(rgb("#ffffff")),
        ..TerminalColors::default()
    };
    let light = Some(Appearance::Light);
    let dark = Some(Appearance::Dark);
    assert_eq!(
        detect_appearance(&white, dark, Some("15;0")),
        Appearance::Light
    );
    assert_eq!(
        detect_appearance(&none, light, Some("15;0")),
        Appearance::Light
    );
    assert_eq!(
        detect_appearance(&none, dark, Some("0;15")),
        Appearance::Dark
    );
    assert_eq!(
        detect_appearance(&none, None, Some("0;15")),
        Appearance::Light
    );
    assert_eq!(detect_appearance(&none, None, None), Appearance::Dark);
}
