//! The startup header of pi 1.6: the two-line pi logo carrying the version and the first
//! key hints, then a line on the full help (Ctrl+O shows it) and the onboarding line.

use pi_tui::style::{Color, ColorMode, Style};

use crate::modes::interactive::theme::{Theme, ThemeColor};

const CORAL: Color = Color::Rgb(228, 138, 122);
const BLUE: Color = Color::Rgb(79, 142, 179);
const YELLOW: Color = Color::Rgb(234, 182, 93);

/// The logo, four cells by two lines of half blocks in pi's brand colors (fixed across
/// themes; they follow the terminal's color mode). The top line is padded to four cells.
pub fn logo_lines(mode: ColorMode) -> (String, String) {
    let fg = |color: Color| Style::fg(color).with_mode(mode);
    let top = format!(
        "{} ",
        fg(CORAL).with_bg(BLUE).paint("▀") + &fg(CORAL).paint("▀█")
    );
    let bottom = format!("{} {}", fg(BLUE).paint("█▀"), fg(YELLOW).paint("█"));
    (top, bottom)
}

/// Apple Terminal misdraws the half blocks; it gets the `Pi` wordmark instead.
fn supports_logo() -> bool {
    std::env::var("TERM_PROGRAM").map_or(true, |p| p != "Apple_Terminal")
}

/// Key text as pi shows it: every key of the action, joined by `/`.
pub type KeyText<'a> = &'a dyn Fn(&str) -> String;

/// The compact header (`compact`) and the full one Ctrl+O expands it to.
pub fn header_variants(
    theme: &Theme,
    version: &str,
    key: KeyText<'_>,
    show_details: bool,
) -> (String, String) {
    let dim = theme.fg(ThemeColor::Dim);
    let muted = theme.fg(ThemeColor::Muted);
    let hint =
        |keys: &str, what: &str| format!("{}{}", dim.paint(keys), muted.paint(&format!(" {what}")));
    let with_logo = |hints: &str| {
        let version = dim.paint(&format!("v{version}"));
        if supports_logo() {
            let (top, bottom) = logo_lines(theme.mode());
            format!("{top} {version}\n{bottom} {hints}")
        } else {
            let word = format!(
                "{}{}",
                Style::fg(CORAL).with_mode(theme.mode()).paint("P"),
                Style::fg(YELLOW).with_mode(theme.mode()).paint("i")
            );
            format!("{word} {version}\n{hints}")
        }
    };
    let compact_hints = [
        hint(&key("app.interrupt"), "interrupt"),
        hint(
            &format!("{}/{}", key("app.clear"), key("app.exit")),
            "clear/exit",
        ),
        hint("/", "commands"),
        hint("!", "bash"),
        hint(&key("app.tools.expand"), "more"),
    ]
    .join(&muted.paint(" · "));
    let full_hints = [
        hint(&key("app.interrupt"), "to interrupt"),
        hint(&key("app.clear"), "to clear"),
        hint(&format!("{} twice", key("app.clear")), "to exit"),
        hint(&key("app.exit"), "to exit (empty)"),
        hint(&key("app.suspend"), "to suspend"),
        hint(&key("tui.editor.deleteToLineEnd"), "to delete to end"),
        hint(&key("app.thinking.cycle"), "to cycle thinking level"),
        hint(
            &format!(
                "{}/{}",
                key("app.model.cycleForward"),
                key("app.model.cycleBackward")
            ),
            "to cycle models",
        ),
        hint(&key("app.model.select"), "to select model"),
        hint(&key("app.tools.expand"), "to expand tools"),
        hint(&key("app.thinking.toggle"), "to expand thinking"),
        hint(&key("app.editor.external"), "for external editor"),
        hint("/", "for commands"),
        hint("!", "to run bash"),
        hint("!!", "to run bash (no context)"),
        hint(&key("app.message.followUp"), "to queue follow-up"),
        hint(&key("app.message.dequeue"), "to edit all queued messages"),
        hint(
            &key("app.clipboard.pasteImage"),
            "to paste files on macOS, images, or text",
        ),
        hint("drop files", "to attach"),
    ]
    .join("\n");
    let more = dim.paint(&format!(
        "Press {} to show full startup help{}.",
        key("app.tools.expand"),
        if show_details {
            " and loaded resources"
        } else {
            ""
        }
    ));
    let onboarding = dim.paint(
        "Pi can explain its own features and look up its docs. Ask it how to use or extend Pi.",
    );
    (
        format!("{}\n{more}\n\n{onboarding}", with_logo(&compact_hints)),
        format!("{}\n\n{onboarding}", with_logo(&full_hints)),
    )
}
