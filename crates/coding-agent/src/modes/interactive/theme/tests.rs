#![allow(clippy::unwrap_used)]

use std::path::Path;

use pi_tui::style::{Color, ColorMode};

use super::*;

/// The dark theme's JSON with `colors` edited by `edit`.
fn dark_with(edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) -> String {
    let mut value: serde_json::Value = serde_json::from_str(DARK_JSON).unwrap();
    let colors = value["colors"].as_object_mut().unwrap();
    edit(colors);
    value.to_string()
}

fn write(dir: &Path, name: &str, text: &str) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(name), text).unwrap();
}

#[test]
fn builtins_parse_and_resolve_every_key() {
    for (name, text) in [("dark", DARK_JSON), ("light", LIGHT_JSON)] {
        let json = parse_theme_json(name, text).unwrap();
        assert_eq!(json.name, name);
        let theme = Theme::from_json(&json, name, ColorMode::TrueColor, None).unwrap();
        // Backgrounds are all real colors; foregrounds other than text-like keys too.
        for key in ThemeBg::ALL {
            assert!(
                matches!(theme.bg_color(*key), Color::Rgb(..)),
                "{name} {key}"
            );
        }
        let defaults = [
            ThemeColor::Text,
            ThemeColor::UserMessageText,
            ThemeColor::CustomMessageText,
            ThemeColor::ToolTitle,
        ];
        for key in ThemeColor::ALL {
            if !defaults.contains(key) {
                assert!(matches!(theme.color(*key), Color::Rgb(..)), "{name} {key}");
            }
        }
        assert_eq!(theme.is_light(), name == "light");
        assert!(theme.export_colors().page_bg.is_some());
        assert_eq!(
            theme.css_colors().len(),
            ThemeColor::ALL.len() + ThemeBg::ALL.len(),
            "{name}"
        );
        assert!(Theme::builtin(name, ColorMode::TrueColor).is_some());
    }
    assert_eq!(ThemeColor::ALL.len() + ThemeBg::ALL.len(), 56);
    assert_eq!(REQUIRED_COLOR_KEYS.len(), 51);
}

#[test]
fn keys_round_trip_through_their_names() {
    for key in ThemeColor::ALL {
        assert_eq!(key.key().parse::<ThemeColor>().unwrap(), *key);
    }
    for key in ThemeBg::ALL {
        assert_eq!(ThemeBg::from_key(key.key()), Some(*key));
    }
    assert!("nope".parse::<ThemeColor>().is_err());
    assert_eq!(ThemeColor::from_key("userMessageBg"), None);
}

#[test]
fn vars_resolve_recursively_and_formats_round_trip() {
    let mut value: serde_json::Value = serde_json::from_str(DARK_JSON).unwrap();
    value["name"] = "mine".into();
    value["vars"]["base"] = "#102030".into();
    value["vars"]["alias"] = "base".into();
    value["vars"]["idx"] = 33.into();
    // Overriding a var the built-in palette uses changes every key that names it.
    value["vars"]["red"] = "#ff0000".into();
    value["colors"]["accent"] = "alias".into();
    value["colors"]["error"] = 196.into();
    value["colors"]["warning"] = "idx".into();
    value["colors"]["muted"] = "".into();
    let text = value.to_string();
    let json = parse_theme_json("mine.json", &text).unwrap();
    assert_eq!(json.colors.error, ColorValue::Index(196));
    assert_eq!(json.colors.accent, ColorValue::Var("alias".into()));
    let theme = Theme::from_json(&json, "mine.json", ColorMode::TrueColor, None).unwrap();
    assert_eq!(theme.name(), "mine");
    assert_eq!(
        theme.color(ThemeColor::Accent),
        Color::Rgb(0x10, 0x20, 0x30)
    );
    assert_eq!(theme.color(ThemeColor::Error), Color::Ansi256(196));
    assert_eq!(theme.color(ThemeColor::Warning), Color::Ansi256(33));
    assert_eq!(theme.color(ThemeColor::Muted), Color::Default);
    assert_eq!(theme.fg(ThemeColor::Muted).paint("x"), "x");
    assert_eq!(
        theme.color(ThemeColor::ToolDiffRemoved),
        Color::Rgb(255, 0, 0)
    );
    assert_eq!(
        theme.fg(ThemeColor::Accent).paint("x"),
        "\x1b[38;2;16;32;48mx\x1b[39m"
    );
    // Serializing gives the same file back.
    let again: ThemeJson = serde_json::from_str(&serde_json::to_string(&json).unwrap()).unwrap();
    assert_eq!(again, json);
}

#[test]
fn reports_missing_keys() {
    let text = dark_with(|c| {
        c.remove("bashMode");
        c.remove("accent");
    });
    let err = Theme::parse("/t/broken.json", &text, ColorMode::TrueColor).unwrap_err();
    assert_eq!(
        err.to_string(),
        "theme /t/broken.json: missing color keys: accent, bashMode"
    );
}

/// pi 1.6's optional colors: left out, each takes its fallback's color; written, its own.
#[test]
fn optional_colors_fall_back_when_left_out() {
    let text = dark_with(|c| {
        for key in [
            "scrollbarTrack",
            "scrollbarThumb",
            "searchMatchBg",
            "searchMatchText",
            "thinkingMax",
        ] {
            c.remove(key);
        }
    });
    let theme = Theme::parse("plain.json", &text, ColorMode::TrueColor).unwrap();
    for (key, fallback) in [
        (ThemeColor::ScrollbarTrack, ThemeColor::Muted),
        (ThemeColor::ScrollbarThumb, ThemeColor::Text),
        (ThemeColor::SearchMatchText, ThemeColor::Text),
        (ThemeColor::ThinkingMax, ThemeColor::ThinkingXhigh),
    ] {
        assert_eq!(theme.color(key), theme.color(fallback), "{key}");
        assert_eq!(key.fallback(), Some(fallback));
    }
    assert_eq!(
        theme.bg_color(ThemeBg::SearchMatchBg),
        theme.bg_color(ThemeBg::SelectedBg)
    );
    let text = dark_with(|c| {
        c.insert("scrollbarThumb".into(), "#123456".into());
        c.insert("thinkingMax".into(), "#654321".into());
    });
    let theme = Theme::parse("own.json", &text, ColorMode::TrueColor).unwrap();
    assert_eq!(
        theme.color(ThemeColor::ScrollbarThumb),
        Color::Rgb(0x12, 0x34, 0x56)
    );
    assert_eq!(
        theme.color(ThemeColor::ThinkingMax),
        Color::Rgb(0x65, 0x43, 0x21)
    );
}

#[test]
fn reports_bad_hex_unknown_var_and_cycles() {
    let text = dark_with(|c| {
        c.insert("mdLink".into(), "#12345g".into());
    });
    let err = Theme::parse("a.json", &text, ColorMode::TrueColor).unwrap_err();
    assert_eq!(
        err.to_string(),
        "theme a.json: colors.mdLink: invalid hex color \"#12345g\" (expected #rrggbb)"
    );

    let text = dark_with(|c| {
        c.insert("dim".into(), "nosuchvar".into());
    });
    let err = Theme::parse("b.json", &text, ColorMode::TrueColor).unwrap_err();
    assert_eq!(
        err.to_string(),
        "theme b.json: colors.dim: unknown variable \"nosuchvar\""
    );

    let mut value: serde_json::Value = serde_json::from_str(DARK_JSON).unwrap();
    value["vars"]["a"] = "b".into();
    value["vars"]["b"] = "a".into();
    value["colors"]["success"] = "a".into();
    let err = Theme::parse("c.json", &value.to_string(), ColorMode::TrueColor).unwrap_err();
    assert_eq!(
        err.to_string(),
        "theme c.json: colors.success: variable cycle a -> b -> a"
    );

    let text = dark_with(|c| {
        c.insert("dim".into(), 300.into());
    });
    let err = Theme::parse("d.json", &text, ColorMode::TrueColor).unwrap_err();
    assert!(
        err.to_string().contains("color index 300 is out of range"),
        "{err}"
    );

    let err = Theme::parse("e.json", "{", ColorMode::TrueColor).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("theme e.json: invalid theme file"),
        "{err}"
    );
}

#[test]
fn paints_in_256_color_mode() {
    let theme = Theme::builtin("dark", ColorMode::Ansi256).unwrap();
    assert_eq!(theme.mode(), ColorMode::Ansi256);
    let Color::Rgb(r, g, b) = theme.color(ThemeColor::Error) else {
        panic!("error is not rgb");
    };
    let idx = pi_tui::style::rgb_to_256(r, g, b);
    assert_eq!(
        theme.fg(ThemeColor::Error).paint("e"),
        format!("\x1b[38;5;{idx}me\x1b[39m")
    );
    let Color::Rgb(r, g, b) = theme.bg_color(ThemeBg::ToolErrorBg) else {
        panic!("toolErrorBg is not rgb");
    };
    let idx = pi_tui::style::rgb_to_256(r, g, b);
    assert_eq!(
        theme.bg(ThemeBg::ToolErrorBg).paint("e"),
        format!("\x1b[48;5;{idx}me\x1b[49m")
    );
    let true_color = theme.clone().with_mode(ColorMode::TrueColor);
    assert!(
        true_color
            .fg(ThemeColor::Error)
            .paint("e")
            .contains("38;2;")
    );
}

#[test]
fn loads_custom_themes_and_falls_back_on_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let cwd = tmp.path().join("proj");
    let mode = ColorMode::TrueColor;

    let mut ocean: serde_json::Value = serde_json::from_str(DARK_JSON).unwrap();
    ocean["name"] = "ocean".into();
    ocean["vars"]["violet"] = "#0000ff".into();
    write(&agent.join("themes"), "sea.json", &ocean.to_string());

    let mut proj: serde_json::Value = serde_json::from_str(LIGHT_JSON).unwrap();
    proj["name"] = "paper".into();
    write(&cwd.join(".pi/themes"), "paper.json", &proj.to_string());

    let extra_dir = tmp.path().join("extra");
    let mut sand: serde_json::Value = serde_json::from_str(LIGHT_JSON).unwrap();
    sand["name"] = "sand".into();
    write(&extra_dir, "sand.json", &sand.to_string());

    let extra = ThemeSources {
        settings: vec![extra_dir.display().to_string()],
        ..ThemeSources::default()
    };
    let names = available_themes(&agent, &cwd, &extra);
    assert_eq!(names, ["system", "dark", "light", "ocean", "paper", "sand"]);

    let (theme, warnings) = load_theme_with_mode(Some("ocean"), &agent, &cwd, &extra, mode);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(theme.name(), "ocean");
    assert_eq!(theme.color(ThemeColor::Accent), Color::Rgb(0, 0, 255));
    assert_eq!(
        theme.source_path(),
        Some(agent.join("themes/sea.json").as_path())
    );
    // Also selectable by file stem.
    let (theme, _) = load_theme_with_mode(Some("sea"), &agent, &cwd, &extra, mode);
    assert_eq!(theme.name(), "ocean");
    let (theme, _) = load_theme_with_mode(Some("sand"), &agent, &cwd, &extra, mode);
    assert!(theme.is_light());

    // A broken file: a clear warning and the dark theme.
    let broken = dark_with(|c| {
        c.insert("accent".into(), "#zzz".into());
    })
    .replace("\"name\":\"dark\"", "\"name\":\"broken\"");
    write(&agent.join("themes"), "broken.json", &broken);
    let none = ThemeSources::default();
    let (theme, warnings) = load_theme_with_mode(Some("broken"), &agent, &cwd, &none, mode);
    assert_eq!(theme.name(), "dark");
    let path = agent.join("themes/broken.json");
    assert_eq!(
        warnings,
        [
            format!(
                "theme {}: colors.accent: invalid hex color \"#zzz\" (expected #rrggbb)",
                path.display()
            ),
            format!(
                "theme \"broken\" ({}) could not be loaded; using \"dark\"",
                path.display()
            ),
        ]
    );

    let missing = ThemeSources {
        cli: vec!["x.json".into()],
        ..ThemeSources::default()
    };
    let (theme, warnings) = load_theme_with_mode(Some("nope"), &agent, &cwd, &missing, mode);
    assert_eq!(theme.name(), "dark");
    assert!(warnings.iter().any(|w| w.contains("x.json does not exist")));
    assert!(
        warnings
            .iter()
            .any(|w| w == "theme \"nope\" not found; using \"dark\"")
    );
}

#[test]
fn no_themes_skips_discovery_but_loads_theme_paths() {
    let tmp = tempfile::tempdir().unwrap();
    let agent = tmp.path().join("agent");
    let cwd = tmp.path().join("proj");
    let mut ocean: serde_json::Value = serde_json::from_str(DARK_JSON).unwrap();
    ocean["name"] = "ocean".into();
    write(&agent.join("themes"), "sea.json", &ocean.to_string());
    let mut sand: serde_json::Value = serde_json::from_str(LIGHT_JSON).unwrap();
    sand["name"] = "sand".into();
    let given = tmp.path().join("given");
    write(&given, "sand.json", &sand.to_string());
    let mut reef: serde_json::Value = serde_json::from_str(LIGHT_JSON).unwrap();
    reef["name"] = "reef".into();
    let package = tmp.path().join("pkg/themes");
    write(&package, "reef.json", &reef.to_string());
    let sources = ThemeSources {
        settings: vec![agent.join("themes").display().to_string()],
        cli: vec![given.join("sand.json").display().to_string()],
        no_discovery: true,
        packages: vec![package.join("reef.json")],
        skip_project: false,
    };
    assert_eq!(
        available_themes(&agent, &cwd, &sources),
        ["system", "dark", "light", "sand"]
    );
    let with_discovery = ThemeSources {
        no_discovery: false,
        ..sources
    };
    assert_eq!(
        available_themes(&agent, &cwd, &with_discovery),
        ["system", "dark", "light", "ocean", "reef", "sand"]
    );
}

#[test]
fn default_theme_follows_colorfgbg() {
    assert_eq!(theme_name_for_background(None), "dark");
    assert_eq!(theme_name_for_background(Some("15;0")), "dark");
    assert_eq!(theme_name_for_background(Some("0;15")), "light");
    // pi 1.6 reads the last field.
    assert_eq!(theme_name_for_background(Some("0;default;15")), "light");
    assert_eq!(theme_name_for_background(Some("15;8")), "dark");
    assert_eq!(theme_name_for_background(Some("15;7")), "light");
    assert_eq!(theme_name_for_background(Some("0;99")), "dark");
}

#[test]
fn palette_indices_map_to_rgb() {
    assert_eq!(ansi256_rgb(196), (255, 0, 0));
    assert_eq!(ansi256_rgb(16), (0, 0, 0));
    assert_eq!(ansi256_rgb(244), (128, 128, 128));
    assert_eq!(ansi256_rgb(9), (255, 0, 0));
    assert_eq!(css_hex(Color::Ansi256(231)).as_deref(), Some("#ffffff"));
    assert_eq!(css_hex(Color::Default), None);
}

#[test]
fn pi_16_color_functions_short_hex_and_appearance_load() {
    for name in ["dark", "light"] {
        let theme = Theme::builtin(name, ColorMode::TrueColor).unwrap();
        assert!(matches!(theme.color(ThemeColor::Accent), Color::Rgb(..)));
        assert_eq!(theme.is_light(), name == "light");
    }
    let mut value: serde_json::Value = serde_json::from_str(DARK_JSON).unwrap();
    value["name"] = "mine".into();
    value["appearance"] = "light".into();
    value["colors"]["accent"] = "#f0a".into();
    value["colors"]["error"] = "oklch(62.8% 0.2577 29.23deg)".into();
    let theme = Theme::parse("mine.json", &value.to_string(), ColorMode::TrueColor).unwrap();
    assert_eq!(theme.color(ThemeColor::Accent), Color::Rgb(0xff, 0, 0xaa));
    assert_eq!(theme.color(ThemeColor::Error), Color::Rgb(255, 0, 0));
    assert!(theme.is_light());
    value["colors"]["error"] = "okhsl(10 150% 50%)".into();
    let err = Theme::parse("mine.json", &value.to_string(), ColorMode::TrueColor).unwrap_err();
    assert!(
        err.to_string().contains("colors.error: invalid color"),
        "{err}"
    );
}

#[test]
fn host_spec_paints_the_palette_fallback_as_pi_16_does() {
    // pi 1.6.0's system theme when the terminal reported no colors (print/json/rpc mode):
    // palette indices, and the neutrals the terminal default, drawn faint.
    let generated = super::system::generate(
        &pi_tui::terminal_colors::TerminalColors::default(),
        1.0,
        Some(super::system::Appearance::Dark),
    );
    let spec = Theme::from_system(&generated, ColorMode::Ansi256).host_spec();
    assert_eq!(spec["name"], "system");
    assert_eq!(spec["mode"], "256color");
    assert_eq!(spec["fg"]["accent"], "\x1b[38;5;5m");
    assert_eq!(spec["fg"]["warning"], "\x1b[38;5;3m");
    assert_eq!(spec["fg"]["muted"], "\x1b[39m");
    assert_eq!(spec["fg"]["text"], "\x1b[39m");
    assert_eq!(spec["bg"]["selectedBg"], "\x1b[49m");
    let dim: Vec<&str> = spec["dim"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|v| v.as_str())
        .collect();
    assert!(dim.contains(&"muted") && dim.contains(&"dim"));
    assert!(!dim.contains(&"text") && !dim.contains(&"accent"));
}

#[test]
fn host_spec_paints_a_theme_file_in_its_mode() {
    let dark = Theme::dark(ColorMode::TrueColor).host_spec();
    assert_eq!(dark["mode"], "truecolor");
    assert!(
        dark["fg"]["accent"]
            .as_str()
            .unwrap()
            .starts_with("\x1b[38;2;")
    );
    assert_eq!(dark["dim"], serde_json::json!([]));
    let dark = Theme::dark(ColorMode::Ansi256).host_spec();
    assert!(
        dark["fg"]["accent"]
            .as_str()
            .unwrap()
            .starts_with("\x1b[38;5;")
    );
}

#[test]
fn non_interactive_theme_follows_the_settings_else_system() {
    let dir = tempfile::tempdir().unwrap();
    let (agent, cwd) = (dir.path().join("agent"), dir.path().join("work"));
    std::fs::create_dir_all(&agent).unwrap();
    std::fs::create_dir_all(&cwd).unwrap();
    assert_eq!(non_interactive_theme(&agent, &cwd, true).name(), "system");
    for (setting, name) in [
        ("dark", "dark"),
        ("light/dark", "system"),
        ("nope", "system"),
    ] {
        std::fs::write(
            agent.join("settings.json"),
            serde_json::json!({ "theme": setting }).to_string(),
        )
        .unwrap();
        assert_eq!(
            non_interactive_theme(&agent, &cwd, true).name(),
            name,
            "{setting}"
        );
    }
}
