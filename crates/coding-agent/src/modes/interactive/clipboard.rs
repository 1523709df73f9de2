//! Copying text to the system clipboard: a clipboard program when one is installed,
//! and always the OSC 52 sequence, which terminals (also over SSH) turn into a copy.

use std::io::Write;
use std::process::{Command, Stdio};

use base64::Engine as _;

/// The OSC 52 sequence that asks the terminal to put `text` on the clipboard.
pub fn osc52(text: &str) -> String {
    let encoded = base64::engine::general_purpose::STANDARD.encode(text);
    format!("\x1b]52;c;{encoded}\x07")
}

/// Pipes `text` into the first clipboard program that works; returns its name.
pub fn copy_with_program(text: &str) -> Option<&'static str> {
    const PROGRAMS: &[(&str, &[&str])] = &[
        ("pbcopy", &[]),
        ("wl-copy", &[]),
        ("xclip", &["-selection", "clipboard"]),
        ("xsel", &["--clipboard", "--input"]),
    ];
    for (program, args) in PROGRAMS {
        if *program == "wl-copy" && std::env::var_os("WAYLAND_DISPLAY").is_none() {
            continue;
        }
        if (*program == "xclip" || *program == "xsel") && std::env::var_os("DISPLAY").is_none() {
            continue;
        }
        let Ok(mut child) = Command::new(program)
            .args(*args)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
        else {
            continue;
        };
        let written = child
            .stdin
            .take()
            .is_some_and(|mut stdin| stdin.write_all(text.as_bytes()).is_ok());
        if written && child.wait().is_ok_and(|s| s.success()) {
            return Some(program);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn osc52_carries_base64() {
        assert_eq!(osc52("hi"), "\x1b]52;c;aGk=\x07");
    }
}
