//! `/hotkeys`: the keyboard shortcuts table, with the user's keybindings.

use pi_tui::keybindings::Keybindings;
use pi_tui::width::{truncate_to_width, visible_width, wrap_text_with_ansi};

use super::{border, fit};
use crate::modes::interactive::theme::{Theme, ThemeColor};

/// A row: the actions whose keys are shown (joined by ` / `) and what they do.
type Row = (&'static [&'static str], &'static str);

const NAVIGATION: &[Row] = &[
    (
        &[
            "tui.editor.cursorUp",
            "tui.editor.cursorDown",
            "tui.editor.cursorLeft",
            "tui.editor.cursorRight",
        ],
        "Move cursor / browse history (Up when empty)",
    ),
    (
        &["tui.editor.cursorWordLeft", "tui.editor.cursorWordRight"],
        "Move by word",
    ),
    (&["tui.editor.cursorLineStart"], "Start of line"),
    (&["tui.editor.cursorLineEnd"], "End of line"),
    (&["tui.editor.jumpForward"], "Jump forward to character"),
    (&["tui.editor.jumpBackward"], "Jump backward to character"),
    (
        &["tui.editor.pageUp", "tui.editor.pageDown"],
        "Scroll by page",
    ),
];

const EDITING: &[Row] = &[
    (&["tui.input.submit"], "Send message"),
    (&["tui.input.newLine"], "New line"),
    (&["tui.editor.deleteWordBackward"], "Delete word backwards"),
    (&["tui.editor.deleteWordForward"], "Delete word forwards"),
    (&["tui.editor.deleteToLineStart"], "Delete to start of line"),
    (&["tui.editor.deleteToLineEnd"], "Delete to end of line"),
    (&["tui.editor.yank"], "Paste the most-recently-deleted text"),
    (
        &["tui.editor.yankPop"],
        "Cycle through the deleted text after pasting",
    ),
    (&["tui.editor.undo"], "Undo"),
];

const OTHER: &[Row] = &[
    (&["tui.input.tab"], "Path completion / accept autocomplete"),
    (&["app.interrupt"], "Cancel autocomplete / abort streaming"),
    (&["app.clear"], "Clear editor (first) / exit (second)"),
    (&["app.exit"], "Exit (when editor is empty)"),
    (&["app.suspend"], "Suspend to background"),
    (&["app.thinking.cycle"], "Cycle thinking level"),
    (
        &["app.model.cycleForward", "app.model.cycleBackward"],
        "Cycle models",
    ),
    (&["app.model.select"], "Open model selector"),
    (&["app.tools.expand"], "Toggle tool output expansion"),
    (&["app.thinking.toggle"], "Toggle thinking block visibility"),
    (&["app.editor.external"], "Edit message in external editor"),
    (&["app.message.followUp"], "Queue follow-up message"),
    (&["app.message.dequeue"], "Restore queued messages"),
    (&["app.clipboard.pasteImage"], "Paste image from clipboard"),
];

/// Keys typed into the editor rather than bound to actions.
const FIXED: &[(&str, &str)] = &[
    ("/", "Slash commands"),
    ("!", "Run bash command"),
    ("!!", "Run bash command (excluded from context)"),
    ("@", "Reference a file (fuzzy search)"),
];

/// `ctrl+shift+p` → `Ctrl+Shift+P`; several keys joined by `/`.
pub fn key_display(keys: &[String]) -> String {
    keys.iter()
        .map(|key| {
            key.split('+')
                .map(|part| {
                    let mut chars = part.chars();
                    match chars.next() {
                        Some(first) => first.to_uppercase().chain(chars).collect(),
                        None => String::new(),
                    }
                })
                .collect::<Vec<_>>()
                .join("+")
        })
        .collect::<Vec<_>>()
        .join("/")
}

/// The keys column of a row; `None` when none of its actions has a key.
fn row_keys(keys: &Keybindings, ids: &[&str]) -> Option<String> {
    let parts: Vec<String> = ids
        .iter()
        .map(|id| key_display(&keys.keys(id)))
        .filter(|k| !k.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(" / "))
}

/// The `/hotkeys` table: sections Navigation, Editing and Other, keys then actions.
pub fn hotkeys_lines(keys: &Keybindings, theme: &Theme, width: usize) -> Vec<String> {
    let sections: Vec<(&str, Vec<(String, String)>)> = vec![
        ("Navigation", resolve(keys, NAVIGATION)),
        ("Editing", resolve(keys, EDITING)),
        ("Other", {
            let mut rows = resolve(keys, OTHER);
            rows.extend(
                FIXED
                    .iter()
                    .map(|(k, d)| ((*k).to_owned(), (*d).to_owned())),
            );
            rows
        }),
    ];
    let key_style = theme.fg(ThemeColor::MdCode);
    let heading = theme.fg(ThemeColor::MdHeading).bold();
    // One key column for all sections, at most a third of the width; longer keys get
    // a line of their own.
    let widest = sections
        .iter()
        .flat_map(|(_, rows)| rows.iter().map(|(k, _)| visible_width(k)))
        .max()
        .unwrap_or(0);
    let column = widest.min(width / 3).max(6);
    let indent = 3;
    let text_width = width.saturating_sub(indent + column + 2).max(10);

    let mut lines = vec![
        border(theme, width),
        fit(
            &format!(
                " {}",
                theme
                    .fg(ThemeColor::Accent)
                    .bold()
                    .paint("Keyboard Shortcuts")
            ),
            width,
        ),
    ];
    for (name, rows) in sections {
        lines.push(String::new());
        lines.push(fit(&format!(" {}", heading.paint(name)), width));
        for (key, description) in rows {
            let mut wrapped = wrap_text_with_ansi(&description, text_width).into_iter();
            let first = wrapped.next().unwrap_or_default();
            let pad = " ".repeat(indent);
            if visible_width(&key) > column {
                lines.push(fit(&format!("{pad}{}", key_style.paint(&key)), width));
                let blank = " ".repeat(column);
                lines.push(fit(&format!("{pad}{blank}  {first}"), width));
            } else {
                let key_text = truncate_to_width(&key, column, "…", true);
                lines.push(fit(
                    &format!("{pad}{}  {first}", key_style.paint(&key_text)),
                    width,
                ));
            }
            for rest in wrapped {
                lines.push(fit(&format!("{pad}{}  {rest}", " ".repeat(column)), width));
            }
        }
    }
    lines.push(String::new());
    lines.push(border(theme, width));
    lines
}

fn resolve(keys: &Keybindings, rows: &[Row]) -> Vec<(String, String)> {
    rows.iter()
        .filter_map(|(ids, description)| {
            row_keys(keys, ids).map(|k| (k, (*description).to_owned()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::test_support::*;
    use super::*;

    #[test]
    fn capitalizes_keys() {
        assert_eq!(
            key_display(&["ctrl+shift+p".into(), "alt+left".into()]),
            "Ctrl+Shift+P/Alt+Left"
        );
        assert_eq!(key_display(&[]), "");
    }

    #[test]
    fn lists_sections_with_the_bound_keys() {
        let keys = keys();
        let lines = hotkeys_lines(&keys, &theme(), 100);
        assert_fits(&lines, 100);
        let plain = plain(&lines);
        for heading in ["Keyboard Shortcuts", "Navigation", "Editing", "Other"] {
            assert!(plain.iter().any(|l| l.trim() == heading), "{heading}");
        }
        let row = |needle: &str| {
            plain
                .iter()
                .find(|l| l.contains(needle))
                .cloned()
                .unwrap_or_default()
        };
        assert!(row("Open model selector").contains("Ctrl+L"));
        assert!(row("Cycle models").contains("Ctrl+P / Ctrl+Shift+P"));
        assert!(row("Send message").contains("Enter"));
        assert!(row("Clear editor (first) / exit (second)").contains("Ctrl+C"));
        assert!(row("(excluded from context)").contains("!!"));
        assert!(row("Reference a file").contains('@'));
        assert!(row("Slash commands").trim_start().starts_with('/'));
    }

    #[test]
    fn user_keys_and_narrow_width() {
        let Some(user) = serde_json::json!({"app.model.select": "ctrl+k"})
            .as_object()
            .cloned()
        else {
            return;
        };
        let keys = Keybindings::new(crate::modes::interactive::keymap::definitions(), &user);
        let lines = hotkeys_lines(&keys, &theme(), 40);
        assert_fits(&lines, 40);
        let plain = plain(&lines);
        assert!(plain.iter().any(|l| l.contains("Ctrl+K")));
        // Only the tui bindings: app rows without keys are left out.
        let lines = hotkeys_lines(&Keybindings::default(), &theme(), 40);
        assert_fits(&lines, 40);
        assert!(!plain_has(&lines, "Open model selector"));
        assert!(plain_has(&lines, "Send message"));
    }

    fn plain_has(lines: &[String], needle: &str) -> bool {
        plain(lines).iter().any(|l| l.contains(needle))
    }
}
