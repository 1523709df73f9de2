//! Bracketed pastes: control sequences decoded and filtered, and large pastes collapsed
//! into a `[paste #N …]` marker whose content is kept aside.

use super::Editor;
use super::editing::normalize_text;

/// Pastes above this many lines are collapsed into a marker.
const PASTE_MAX_LINES: usize = 10;
/// Pastes above this many characters are collapsed into a marker.
const PASTE_MAX_CHARS: usize = 1000;

impl Editor {
    pub(super) fn handle_paste(&mut self, pasted: &str) {
        self.cancel_autocomplete();
        self.history_index = None;
        self.last_action = None;
        self.push_undo();

        let decoded = decode_csi_u_controls(pasted);
        let clean = normalize_text(&decoded);
        let mut filtered: String = clean
            .chars()
            .filter(|&c| c == '\n' || u32::from(c) >= 32)
            .collect();
        if filtered.starts_with(['/', '~', '.'])
            && self
                .char_before_cursor()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            filtered.insert(0, ' ');
        }
        let line_count = filtered.split('\n').count();
        let char_count = filtered.chars().count();
        if line_count > PASTE_MAX_LINES || char_count > PASTE_MAX_CHARS {
            self.paste_counter += 1;
            let id = self.paste_counter;
            self.pastes.insert(id, filtered);
            let marker = if line_count > PASTE_MAX_LINES {
                format!("[paste #{id} +{line_count} lines]")
            } else {
                format!("[paste #{id} {char_count} chars]")
            };
            self.insert_text_internal(&marker);
            return;
        }
        self.insert_text_internal(&filtered);
    }
}

/// `ESC [ <code> ; 5 u` (Ctrl+letter re-encoded by some terminals inside a paste) back
/// to the control byte.
fn decode_csi_u_controls(text: &str) -> String {
    if !text.contains("\x1b[") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("\x1b[") {
        out.push_str(&rest[..pos]);
        let tail = &rest[pos + 2..];
        let digits = tail.bytes().take_while(u8::is_ascii_digit).count();
        let decoded = (digits > 0 && tail[digits..].starts_with(";5u"))
            .then(|| tail[..digits].parse::<u32>().ok())
            .flatten()
            .and_then(|cp| match cp {
                97..=122 => char::from_u32(cp - 96),
                65..=90 => char::from_u32(cp - 64),
                _ => None,
            });
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &tail[digits + 3..];
            }
            None => {
                out.push_str("\x1b[");
                rest = tail;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_csi_u_controls_in_pastes() {
        assert_eq!(decode_csi_u_controls("a\x1b[106;5ub"), "a\nb");
        assert_eq!(decode_csi_u_controls("a\x1b[1;2Ab"), "a\x1b[1;2Ab");
    }
}
