//! What the terminal can show beyond text: OSC 8 hyperlinks, inline images (Kitty or
//! iTerm2 protocol) and 24-bit color. Detected from the environment as pi 1.6 does, with
//! `PI_HYPERLINKS`, `PI_IMAGE_PROTOCOL` and `PI_TRUE_COLOR` (and the `terminal.*` settings,
//! applied by the caller) overriding what was detected.

use std::sync::RwLock;

/// An inline image protocol.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ImageProtocol {
    Kitty,
    Iterm2,
}

/// The terminal's capabilities.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities {
    pub images: Option<ImageProtocol>,
    pub true_color: bool,
    pub hyperlinks: bool,
}

static CURRENT: RwLock<Option<Capabilities>> = RwLock::new(None);

/// The capabilities in effect: those set at startup, else detected from the environment.
pub fn get() -> Capabilities {
    if let Some(current) = CURRENT.read().ok().and_then(|c| *c) {
        return current;
    }
    let detected = detect(&|name| std::env::var(name).ok(), &probe_tmux_hyperlinks);
    if let Ok(mut slot) = CURRENT.write() {
        *slot = Some(detected);
    }
    detected
}

/// Sets the capabilities in effect (detection with the settings' overrides applied).
pub fn set(capabilities: Capabilities) {
    if let Ok(mut slot) = CURRENT.write() {
        *slot = Some(capabilities);
    }
}

/// Whether the tmux client forwards hyperlinks (`client_termfeatures` lists them).
pub fn probe_tmux_hyperlinks() -> bool {
    std::process::Command::new("tmux")
        .args(["display-message", "-p", "#{client_termfeatures}"])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .output()
        .ok()
        .filter(|o| o.status.success())
        .is_some_and(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split(',')
                .any(|f| f.trim() == "hyperlinks")
        })
}

/// `1` → yes, `0` → no, anything else → detect.
fn boolean_override(value: Option<String>) -> Option<bool> {
    match value.as_deref() {
        Some("1") => Some(true),
        Some("0") => Some(false),
        _ => None,
    }
}

/// Detection from environment variables (`env` looks one up) as pi 1.6 does, with the
/// `PI_*` overrides applied; `tmux_hyperlinks` asks tmux when running inside it.
pub fn detect(
    env: &dyn Fn(&str) -> Option<String>,
    tmux_hyperlinks: &dyn Fn() -> bool,
) -> Capabilities {
    let hyperlinks_override = boolean_override(env("PI_HYPERLINKS"));
    let mut caps = from_environment(env, &|| hyperlinks_override.unwrap_or_else(tmux_hyperlinks));
    if let Some(hyperlinks) = hyperlinks_override {
        caps.hyperlinks = hyperlinks;
    }
    match env("PI_IMAGE_PROTOCOL")
        .map(|v| v.to_ascii_lowercase())
        .as_deref()
    {
        Some("kitty") => caps.images = Some(ImageProtocol::Kitty),
        Some("iterm2") => caps.images = Some(ImageProtocol::Iterm2),
        Some("none" | "0") => caps.images = None,
        _ => {}
    }
    if let Some(true_color) = boolean_override(env("PI_TRUE_COLOR")) {
        caps.true_color = true_color;
    }
    caps
}

fn from_environment(
    env: &dyn Fn(&str) -> Option<String>,
    tmux_hyperlinks: &dyn Fn() -> bool,
) -> Capabilities {
    let lower = |name: &str| env(name).unwrap_or_default().to_ascii_lowercase();
    let set = |name: &str| env(name).is_some_and(|v| !v.is_empty());
    let program = lower("TERM_PROGRAM");
    let emulator = lower("TERMINAL_EMULATOR");
    let term = lower("TERM");
    let colorterm = lower("COLORTERM");
    let true_color_hint =
        colorterm == "truecolor" || colorterm == "24bit" || term.ends_with("-direct");
    let caps = |images, true_color, hyperlinks| Capabilities {
        images,
        true_color,
        hyperlinks,
    };
    let kitty = Some(ImageProtocol::Kitty);
    if set("TMUX") || term.starts_with("tmux") {
        return caps(None, true_color_hint, tmux_hyperlinks());
    }
    if term.starts_with("screen") {
        return caps(None, true_color_hint, false);
    }
    if program == "herdr" {
        return caps(kitty, true_color_hint, true);
    }
    if program == "rex" {
        return caps(kitty, true, true);
    }
    if program == "orca" && env("ORCA_IMAGE_PROTOCOL").as_deref() == Some("kitty") {
        return caps(kitty, true, true);
    }
    if set("KITTY_WINDOW_ID") || program == "kitty" {
        return caps(kitty, true, true);
    }
    if program == "ghostty" || term.contains("ghostty") || set("GHOSTTY_RESOURCES_DIR") {
        return caps(kitty, true, true);
    }
    if set("WEZTERM_PANE") || program == "wezterm" {
        return caps(kitty, true, true);
    }
    if program == "warpterminal" || set("WARP_SESSION_ID") || set("WARP_TERMINAL_SESSION_UUID") {
        return caps(kitty, true, true);
    }
    if set("ITERM_SESSION_ID") || program == "iterm.app" {
        return caps(Some(ImageProtocol::Iterm2), true, true);
    }
    if set("WT_SESSION") {
        return caps(None, true, true);
    }
    if program == "alacritty"
        || term.starts_with("alacritty")
        || set("ALACRITTY_WINDOW_ID")
        || program == "vscode"
        || program == "zed"
    {
        return caps(None, true, true);
    }
    if emulator == "jetbrains-jediterm" {
        return caps(None, true, false);
    }
    caps(None, true_color_hint, false)
}

/// `text` as an OSC 8 hyperlink to `url` (pi's `hyperlink()`).
pub fn hyperlink(text: &str, url: &str) -> String {
    format!("\x1b]8;;{url}\x1b\\{text}\x1b]8;;\x1b\\")
}

/// `text` linked to `url` when the terminal shows hyperlinks, else `text` as it is.
pub fn link_if_supported(text: &str, url: &str) -> String {
    if get().hyperlinks {
        hyperlink(text, url)
    } else {
        text.to_owned()
    }
}

/// A `file://` URL for an absolute path (pi's `pathToFileURL`): each segment
/// percent-encoded except unreserved characters.
pub fn file_url(path: &std::path::Path) -> String {
    let mut out = String::from("file://");
    for byte in path.to_string_lossy().bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' | b'/' => {
                out.push(char::from(byte))
            }
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detect_with(vars: &[(&str, &str)], tmux: bool) -> Capabilities {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        detect(
            &|name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            &|| tmux,
        )
    }

    #[test]
    fn terminals_are_recognised_as_pi_does() {
        let kitty = detect_with(&[("TERM", "xterm-kitty"), ("KITTY_WINDOW_ID", "1")], false);
        assert_eq!(kitty.images, Some(ImageProtocol::Kitty));
        assert!(kitty.hyperlinks && kitty.true_color);
        let iterm = detect_with(&[("TERM_PROGRAM", "iTerm.app")], false);
        assert_eq!(iterm.images, Some(ImageProtocol::Iterm2));
        let tmux = detect_with(&[("TMUX", "/tmp/x"), ("KITTY_WINDOW_ID", "1")], true);
        assert_eq!(
            tmux,
            Capabilities {
                images: None,
                true_color: false,
                hyperlinks: true
            }
        );
        let jetbrains = detect_with(&[("TERMINAL_EMULATOR", "JetBrains-JediTerm")], false);
        assert!(jetbrains.true_color && !jetbrains.hyperlinks);
        assert!(detect_with(&[("TERM", "xterm-direct")], false).true_color);
        let rex = detect_with(&[("TERM_PROGRAM", "rex")], false);
        assert_eq!(rex.images, Some(ImageProtocol::Kitty));
        for kitty_like in [
            &[("TERM_PROGRAM", "WarpTerminal")][..],
            &[("WARP_SESSION_ID", "1")],
            &[("TERM_PROGRAM", "herdr")],
            &[("TERM_PROGRAM", "ghostty")],
            &[("WEZTERM_PANE", "0")],
            &[("TERM_PROGRAM", "orca"), ("ORCA_IMAGE_PROTOCOL", "kitty")],
        ] {
            let caps = detect_with(kitty_like, false);
            assert_eq!(caps.images, Some(ImageProtocol::Kitty), "{kitty_like:?}");
        }
        let orca = detect_with(&[("TERM_PROGRAM", "orca")], false);
        assert_eq!(orca.images, None);
        // Alacritty without TERM_PROGRAM: its TERM or its window id.
        for alacritty in [
            &[("TERM", "alacritty")][..],
            &[("ALACRITTY_WINDOW_ID", "1"), ("TERM", "xterm-256color")],
        ] {
            let caps = detect_with(alacritty, false);
            assert!(caps.hyperlinks && caps.true_color, "{alacritty:?}");
        }
        let plain = detect_with(
            &[("TERM", "xterm-256color"), ("COLORTERM", "truecolor")],
            false,
        );
        assert_eq!(
            plain,
            Capabilities {
                images: None,
                true_color: true,
                hyperlinks: false
            }
        );
    }

    #[test]
    fn overrides_win() {
        let caps = detect_with(
            &[
                ("TMUX", "/tmp/x"),
                ("PI_HYPERLINKS", "1"),
                ("PI_IMAGE_PROTOCOL", "iterm2"),
                ("PI_TRUE_COLOR", "1"),
            ],
            false,
        );
        assert_eq!(
            caps,
            Capabilities {
                images: Some(ImageProtocol::Iterm2),
                true_color: true,
                hyperlinks: true
            }
        );
        let off = detect_with(
            &[("KITTY_WINDOW_ID", "1"), ("PI_IMAGE_PROTOCOL", "none")],
            false,
        );
        assert_eq!(off.images, None);
    }

    #[test]
    fn links_and_file_urls() {
        assert_eq!(
            hyperlink("a", "http://x"),
            "\x1b]8;;http://x\x1b\\a\x1b]8;;\x1b\\"
        );
        assert_eq!(
            file_url(std::path::Path::new("/tmp/a b/ü.rs")),
            "file:///tmp/a%20b/%C3%BC.rs"
        );
    }
}
