//! Terminal input as components see it, and the key ids keybindings are written in.

pub use crossterm::event::{
    KeyCode, KeyEvent, KeyEventKind, KeyModifiers, MouseButton, MouseEvent, MouseEventKind,
};

/// One input event for a component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// A key press (releases are filtered out before components see them).
    Key(KeyEvent),
    /// Bracketed paste: the whole pasted text at once.
    Paste(String),
}

impl Input {
    /// A plain key press without modifiers (handy in tests).
    pub fn key(code: KeyCode) -> Self {
        Input::Key(KeyEvent::new(code, KeyModifiers::NONE))
    }

    /// A key press with modifiers.
    pub fn key_with(code: KeyCode, modifiers: KeyModifiers) -> Self {
        Input::Key(KeyEvent::new(code, modifiers))
    }

    /// The key id of a key press (`"ctrl+c"`), `None` for paste.
    pub fn id(&self) -> Option<String> {
        match self {
            Input::Key(key) => key_id(key),
            Input::Paste(_) => None,
        }
    }
}

/// The keybinding id of a key press, in the TypeScript pi's spelling, modifiers in
/// `ctrl+alt+shift+` order (user-written ids go through [`normalize_key_id`]).
///
/// Keys: letters lowercase (`a`), `enter`, `escape`, `tab`, `backspace`, `delete`,
/// `up`/`down`/`left`/`right`, `home`, `end`, `pageUp`, `pageDown`, `insert`, `space`,
/// `f1`…`f12`, and other characters as themselves (`-`, `]`).
pub fn key_id(key: &KeyEvent) -> Option<String> {
    let mut mods = key.modifiers;
    let base = match key.code {
        KeyCode::Char(' ') => "space".to_string(),
        // Legacy terminals send Ctrl+- as 0x1f and Ctrl+] as 0x1d, which crossterm
        // reports as Ctrl+7 and Ctrl+5.
        KeyCode::Char('7') if mods.contains(KeyModifiers::CONTROL) => "-".to_string(),
        KeyCode::Char('5') if mods.contains(KeyModifiers::CONTROL) => "]".to_string(),
        KeyCode::Char(c) => {
            // Shifted letters arrive as uppercase with SHIFT; keep "shift+a".
            if c.is_ascii_uppercase() {
                mods |= KeyModifiers::SHIFT;
                c.to_ascii_lowercase().to_string()
            } else {
                if !c.is_alphanumeric() {
                    // "?" already carries its shift; do not spell it twice.
                    mods -= KeyModifiers::SHIFT;
                }
                c.to_string()
            }
        }
        KeyCode::Enter => "enter".into(),
        KeyCode::Esc => "escape".into(),
        KeyCode::Tab => "tab".into(),
        KeyCode::BackTab => {
            mods |= KeyModifiers::SHIFT;
            "tab".into()
        }
        KeyCode::Backspace => "backspace".into(),
        KeyCode::Delete => "delete".into(),
        KeyCode::Insert => "insert".into(),
        KeyCode::Up => "up".into(),
        KeyCode::Down => "down".into(),
        KeyCode::Left => "left".into(),
        KeyCode::Right => "right".into(),
        KeyCode::Home => "home".into(),
        KeyCode::End => "end".into(),
        KeyCode::PageUp => "pageUp".into(),
        KeyCode::PageDown => "pageDown".into(),
        KeyCode::F(n) => format!("f{n}"),
        _ => return None,
    };
    let mut id = String::new();
    if mods.contains(KeyModifiers::CONTROL) {
        id.push_str("ctrl+");
    }
    if mods.contains(KeyModifiers::ALT) {
        id.push_str("alt+");
    }
    if mods.contains(KeyModifiers::SHIFT) {
        id.push_str("shift+");
    }
    if mods.contains(KeyModifiers::SUPER) {
        id.push_str("super+");
    }
    id.push_str(&base);
    Some(id)
}

/// Normalize a key id as written by a user (`"Shift+Ctrl+P"`, `"esc"`, `"return"`) to
/// the form [`key_id`] produces, so both compare equal.
pub fn normalize_key_id(id: &str) -> String {
    let lower = id.trim().to_ascii_lowercase();
    let parts: Vec<&str> = lower.split('+').collect();
    let (key, mods) = match parts.split_last() {
        // "ctrl++" style: the key itself is '+'.
        Some((last, rest)) if last.is_empty() && !rest.is_empty() => ("+", &rest[..rest.len() - 1]),
        Some((last, rest)) => (*last, rest),
        None => return String::new(),
    };
    let key = match key {
        "esc" => "escape",
        "return" => "enter",
        "pageup" => "pageUp",
        "pagedown" => "pageDown",
        "del" => "delete",
        " " => "space",
        other => other,
    };
    let has = |m: &str| mods.contains(&m);
    let mut out = String::new();
    if has("ctrl") || has("control") {
        out.push_str("ctrl+");
    }
    if has("alt") || has("option") || has("meta") {
        out.push_str("alt+");
    }
    if has("shift") {
        out.push_str("shift+");
    }
    if has("super") || has("cmd") {
        out.push_str("super+");
    }
    out.push_str(key);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_follow_the_keybindings_spelling() {
        let k = |c, m| key_id(&KeyEvent::new(c, m)).unwrap_or_default();
        assert_eq!(k(KeyCode::Char('c'), KeyModifiers::CONTROL), "ctrl+c");
        assert_eq!(k(KeyCode::BackTab, KeyModifiers::SHIFT), "shift+tab");
        assert_eq!(k(KeyCode::Enter, KeyModifiers::ALT), "alt+enter");
        assert_eq!(
            k(
                KeyCode::Char('P'),
                KeyModifiers::CONTROL | KeyModifiers::SHIFT
            ),
            "ctrl+shift+p"
        );
        assert_eq!(k(KeyCode::Char('?'), KeyModifiers::SHIFT), "?");
        assert_eq!(k(KeyCode::PageUp, KeyModifiers::NONE), "pageUp");
        assert_eq!(k(KeyCode::Char('7'), KeyModifiers::CONTROL), "ctrl+-");
        assert_eq!(k(KeyCode::Char('5'), KeyModifiers::CONTROL), "ctrl+]");
        assert_eq!(normalize_key_id("Shift+Ctrl+P"), "ctrl+shift+p");
        assert_eq!(normalize_key_id("esc"), "escape");
        assert_eq!(normalize_key_id("ctrl+-"), "ctrl+-");
        assert_eq!(normalize_key_id("pageDown"), "pageDown");
    }
}
