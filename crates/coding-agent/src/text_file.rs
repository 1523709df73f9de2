//! Reading the user's text files (settings, auth, models, trust, keybindings, package
//! manifests, context files, skills, prompt templates) as pi 1.6.0 does: a leading UTF-8
//! byte order mark, which Windows editors and PowerShell write, is dropped before parsing.

use std::path::Path;

/// The UTF-8 byte order mark as a character.
const BOM: char = '\u{feff}';

/// `text` without a leading byte order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// The file's text without a leading byte order mark.
pub fn read_text(path: impl AsRef<Path>) -> std::io::Result<String> {
    let mut text = std::fs::read_to_string(path)?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len_utf8());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_leading_mark_is_dropped_and_nothing_else() {
        assert_eq!(strip_bom("\u{feff}{\"a\":1}"), "{\"a\":1}");
        assert_eq!(strip_bom("{\"a\":1}"), "{\"a\":1}");
        assert_eq!(strip_bom("x\u{feff}"), "x\u{feff}");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, "\u{feff}\u{feff}{}").unwrap();
        assert_eq!(read_text(&path).unwrap(), "\u{feff}{}");
        assert!(read_text(dir.path().join("missing")).is_err());
    }
}
