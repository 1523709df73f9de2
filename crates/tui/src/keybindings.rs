//! Keybinding definitions, user overrides and matching.

use serde_json::{Map, Value};

use crate::input::{Input, normalize_key_id};

/// One bindable action: its id, default keys and a description for `/hotkeys`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeybindingDef {
    pub id: &'static str,
    pub default_keys: &'static [&'static str],
    pub description: &'static str,
}

const fn def(
    id: &'static str,
    default_keys: &'static [&'static str],
    description: &'static str,
) -> KeybindingDef {
    KeybindingDef {
        id,
        default_keys,
        description,
    }
}

/// The editor, input and selection bindings of pi-tui, with pi's defaults.
pub const TUI_KEYBINDINGS: &[KeybindingDef] = &[
    def("tui.editor.cursorUp", &["up"], "Move cursor up"),
    def("tui.editor.cursorDown", &["down"], "Move cursor down"),
    def(
        "tui.editor.cursorLeft",
        &["left", "ctrl+b"],
        "Move cursor left",
    ),
    def(
        "tui.editor.cursorRight",
        &["right", "ctrl+f"],
        "Move cursor right",
    ),
    def(
        "tui.editor.cursorWordLeft",
        &["alt+left", "ctrl+left", "alt+b"],
        "Move cursor word left",
    ),
    def(
        "tui.editor.cursorWordRight",
        &["alt+right", "ctrl+right", "alt+f"],
        "Move cursor word right",
    ),
    def(
        "tui.editor.cursorLineStart",
        &["home", "ctrl+a"],
        "Move to line start",
    ),
    def(
        "tui.editor.cursorLineEnd",
        &["end", "ctrl+e"],
        "Move to line end",
    ),
    def(
        "tui.editor.jumpForward",
        &["ctrl+]"],
        "Jump forward to character",
    ),
    def(
        "tui.editor.jumpBackward",
        &["ctrl+alt+]"],
        "Jump backward to character",
    ),
    def(
        "tui.editor.pageUp",
        &["pageUp", "ctrl+pageUp"],
        "Scroll up by page",
    ),
    def(
        "tui.editor.pageDown",
        &["pageDown", "ctrl+pageDown"],
        "Scroll down by page",
    ),
    def(
        "tui.editor.deleteCharBackward",
        &["backspace"],
        "Delete character backward",
    ),
    def(
        "tui.editor.deleteCharForward",
        &["delete", "ctrl+d"],
        "Delete character forward",
    ),
    def(
        "tui.editor.deleteWordBackward",
        &["ctrl+w", "alt+backspace"],
        "Delete word backward",
    ),
    def(
        "tui.editor.deleteWordForward",
        &["alt+d", "alt+delete"],
        "Delete word forward",
    ),
    def(
        "tui.editor.deleteToLineStart",
        &["ctrl+u"],
        "Delete to line start",
    ),
    def(
        "tui.editor.deleteToLineEnd",
        &["ctrl+k"],
        "Delete to line end",
    ),
    def("tui.editor.yank", &["ctrl+y"], "Yank"),
    def("tui.editor.yankPop", &["alt+y"], "Yank pop"),
    def("tui.editor.undo", &["ctrl+-"], "Undo"),
    def(
        "tui.input.newLine",
        &["shift+enter", "ctrl+j"],
        "Insert newline",
    ),
    def("tui.input.submit", &["enter"], "Submit input"),
    def("tui.input.tab", &["tab"], "Tab / autocomplete"),
    def("tui.input.copy", &["ctrl+c"], "Copy selection"),
    def("tui.select.up", &["up"], "Move selection up"),
    def("tui.select.down", &["down"], "Move selection down"),
    // Fullscreen mode: the transcript viewport (pi 1.6), ahead of the editor's keys.
    def(
        "tui.altScreen.pageUp",
        &["pageUp"],
        "Scroll the transcript up by one page",
    ),
    def(
        "tui.altScreen.pageDown",
        &["pageDown"],
        "Scroll the transcript down by one page",
    ),
    def(
        "tui.altScreen.halfPageUp",
        &[],
        "Scroll the transcript up by half a page",
    ),
    def(
        "tui.altScreen.halfPageDown",
        &[],
        "Scroll the transcript down by half a page",
    ),
    def(
        "tui.altScreen.lineUp",
        &[],
        "Scroll the transcript up by one line",
    ),
    def(
        "tui.altScreen.lineDown",
        &[],
        "Scroll the transcript down by one line",
    ),
    def(
        "tui.altScreen.previousPrompt",
        &["ctrl+shift+up"],
        "Jump to the previous marked message",
    ),
    def(
        "tui.altScreen.nextPrompt",
        &["ctrl+shift+down"],
        "Jump to the next marked message",
    ),
    def(
        "tui.altScreen.search",
        &["ctrl+shift+f"],
        "Search the rendered transcript",
    ),
    def(
        "tui.altScreen.searchNext",
        &["enter", "ctrl+g"],
        "Select the next search match while searching",
    ),
    def(
        "tui.altScreen.searchPrevious",
        &["shift+enter", "ctrl+shift+g"],
        "Select the previous search match while searching",
    ),
    def(
        "tui.altScreen.searchClose",
        &["escape"],
        "Close transcript search",
    ),
    def(
        "tui.altScreen.top",
        &["ctrl+home"],
        "Scroll to the beginning of the transcript",
    ),
    def(
        "tui.altScreen.bottom",
        &["ctrl+end"],
        "Scroll to the transcript end and follow new output",
    ),
    def("tui.select.pageUp", &["pageUp"], "Selection page up"),
    def("tui.select.pageDown", &["pageDown"], "Selection page down"),
    def("tui.select.confirm", &["enter"], "Confirm selection"),
    def(
        "tui.select.cancel",
        &["escape", "ctrl+c"],
        "Cancel selection",
    ),
];

/// A key that the user config gives to more than one action.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeybindingConflict {
    pub key: String,
    pub ids: Vec<String>,
}

/// One resolved binding, for listings such as `/hotkeys`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeybindingEntry {
    pub id: &'static str,
    pub keys: Vec<String>,
    pub description: &'static str,
}

/// Resolved keybindings: defaults with user overrides applied.
#[derive(Debug, Clone)]
pub struct Keybindings {
    entries: Vec<KeybindingEntry>,
    conflicts: Vec<KeybindingConflict>,
}

impl Default for Keybindings {
    fn default() -> Self {
        Keybindings::new(TUI_KEYBINDINGS.to_vec(), &Map::new())
    }
}

/// Normalized, de-duplicated keys, order kept.
fn normalize_keys<'a>(keys: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for key in keys {
        let key = normalize_key_id(key);
        if !key.is_empty() && !out.contains(&key) {
            out.push(key);
        }
    }
    out
}

/// A user value: a key or a list of keys; anything else is not a binding.
fn user_keys(value: &Value) -> Option<Vec<String>> {
    match value {
        Value::String(key) => Some(normalize_keys([key.as_str()])),
        Value::Array(items) => Some(normalize_keys(items.iter().filter_map(Value::as_str))),
        _ => None,
    }
}

impl Keybindings {
    /// Resolve `defs` against the user's config (`{"id": "key" | ["key", …]}`); a user
    /// entry replaces that action's defaults, unknown ids are ignored.
    pub fn new(defs: Vec<KeybindingDef>, user: &Map<String, Value>) -> Self {
        let mut entries: Vec<KeybindingEntry> = Vec::with_capacity(defs.len());
        for d in defs {
            if entries.iter().any(|e| e.id == d.id) {
                continue;
            }
            let keys = user
                .get(d.id)
                .and_then(user_keys)
                .unwrap_or_else(|| normalize_keys(d.default_keys.iter().copied()));
            entries.push(KeybindingEntry {
                id: d.id,
                keys,
                description: d.description,
            });
        }

        let mut claims: Vec<(String, Vec<String>)> = Vec::new();
        for (id, value) in user {
            if !entries.iter().any(|e| e.id == id) {
                continue;
            }
            for key in user_keys(value).unwrap_or_default() {
                match claims.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, ids)) if !ids.contains(id) => ids.push(id.clone()),
                    Some(_) => {}
                    None => claims.push((key, vec![id.clone()])),
                }
            }
        }
        let conflicts = claims
            .into_iter()
            .filter(|(_, ids)| ids.len() > 1)
            .map(|(key, ids)| KeybindingConflict { key, ids })
            .collect();
        Keybindings { entries, conflicts }
    }

    /// True when `input` is one of the keys bound to action `id`.
    pub fn matches(&self, input: &Input, id: &str) -> bool {
        let Some(key) = input.id() else {
            return false;
        };
        self.entries
            .iter()
            .find(|e| e.id == id)
            .is_some_and(|e| e.keys.contains(&key))
    }

    /// The keys bound to action `id` (empty for unknown ids).
    pub fn keys(&self, id: &str) -> Vec<String> {
        self.entries
            .iter()
            .find(|e| e.id == id)
            .map(|e| e.keys.clone())
            .unwrap_or_default()
    }

    /// Keys the user config gives to several actions.
    pub fn conflicts(&self) -> &[KeybindingConflict] {
        &self.conflicts
    }

    /// Every action with its resolved keys and description, in definition order.
    pub fn definitions(&self) -> &[KeybindingEntry] {
        &self.entries
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::input::{KeyCode, KeyModifiers};
    use serde_json::json;

    fn user(v: Value) -> Map<String, Value> {
        v.as_object().cloned().unwrap()
    }

    #[test]
    fn defaults_match_keys() {
        let kb = Keybindings::default();
        assert_eq!(kb.definitions().len(), 45);
        assert!(kb.matches(&Input::key(KeyCode::Up), "tui.select.up"));
        assert!(kb.matches(&Input::key(KeyCode::Esc), "tui.select.cancel"));
        let ctrl_c = Input::key_with(KeyCode::Char('c'), KeyModifiers::CONTROL);
        assert!(kb.matches(&ctrl_c, "tui.select.cancel"));
        assert!(kb.matches(&ctrl_c, "tui.input.copy"));
        assert!(!kb.matches(&ctrl_c, "tui.select.up"));
        let undo = Input::key_with(KeyCode::Char('-'), KeyModifiers::CONTROL);
        assert!(kb.matches(&undo, "tui.editor.undo"));
        let jump_back = Input::key_with(
            KeyCode::Char(']'),
            KeyModifiers::CONTROL | KeyModifiers::ALT,
        );
        assert!(kb.matches(&jump_back, "tui.editor.jumpBackward"));
        assert!(kb.matches(&Input::key(KeyCode::PageDown), "tui.select.pageDown"));
        assert!(!kb.matches(&Input::Paste("x".into()), "tui.input.submit"));
        assert_eq!(kb.keys("tui.editor.cursorLeft"), vec!["left", "ctrl+b"]);
        assert!(kb.keys("nope").is_empty());
        assert!(kb.conflicts().is_empty());
    }

    #[test]
    fn user_entries_replace_defaults_and_report_conflicts() {
        let kb = Keybindings::new(
            TUI_KEYBINDINGS.to_vec(),
            &user(json!({
                "tui.select.up": ["K", "ctrl+P", "k"],
                "tui.select.down": "Ctrl+P",
                "tui.select.cancel": 42,
                "app.unknown": "ctrl+p",
            })),
        );
        assert_eq!(kb.keys("tui.select.up"), vec!["k", "ctrl+p"]);
        assert_eq!(kb.keys("tui.select.down"), vec!["ctrl+p"]);
        // A value that is not a key keeps the defaults.
        assert_eq!(kb.keys("tui.select.cancel"), vec!["escape", "ctrl+c"]);
        assert!(!kb.matches(&Input::key(KeyCode::Up), "tui.select.up"));
        assert!(kb.matches(&Input::key(KeyCode::Char('k')), "tui.select.up"));
        assert_eq!(
            kb.conflicts(),
            &[KeybindingConflict {
                key: "ctrl+p".into(),
                ids: vec!["tui.select.up".into(), "tui.select.down".into()],
            }]
        );
        let entry = &kb.definitions()[0];
        assert_eq!(entry.id, "tui.editor.cursorUp");
        assert_eq!(entry.description, "Move cursor up");
    }
}
